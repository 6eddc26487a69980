/* tc_replay: reading a contraction's inputs from HDF5 and writing the rows of
 * its replay (serial calls on one process; the parallel library's default
 * driver is fine). Messages speak of the file, the group, the datasets and
 * the letters of tc_contract.h, never of tcmini's structures. */
#define _POSIX_C_SOURCE 200809L /* link, getpid */
#include "tc_replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_fault.h"
#include "tc_h5.h"
#include "tc_host_memory.h"

#define TC_REPLAY_MAX_RANK 5

/* Runs an HDF5 step only while no earlier step of a sequence has failed, so
 * that the identifiers opened so far can still be closed on the way out. */
#define TC_H5_STEP(err, expr, ...)                                             \
  do {                                                                         \
    if ((err) == TC_SUCCESS && (expr) < 0)                                     \
      (err) = tc_error_raise(TC_ERR_HDF5, __FILE__, __LINE__, __func__,        \
                             __VA_ARGS__);                                     \
  } while (0)

/* Closes id when it is open; a failure is recorded unless one came first. */
static void close_id(tc_err *err, hid_t id, herr_t (*close)(hid_t), const char *what) {
  if (id >= 0 && close(id) < 0 && *err == TC_SUCCESS)
    *err = tc_error_raise(TC_ERR_HDF5, __FILE__, __LINE__, __func__,
                          "closing the HDF5 %s failed", what);
}

static hid_t native_type(tc_precision precision) {
  return precision == TC_DOUBLE ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
}

static bool is_root(const char *group) {
  return group == NULL || group[0] == '\0' || strcmp(group, "/") == 0;
}

/* "'f.h5'" or "group '/a/b' of 'f.h5'", for messages. */
static void place_text(const char *path, const char *group, char *text, size_t size) {
  if (is_root(group))
    snprintf(text, size, "'%s'", path);
  else
    snprintf(text, size, "group '%s' of '%s'", group, path);
}

/* ---- attributes ---------------------------------------------------------- */

static tc_err write_string_attribute(hid_t object, const char *name, const char *value) {
  tc_err err = TC_SUCCESS;
  hid_t type = -1, space = -1, attribute = -1;
  TC_H5_STEP(err, type = H5Tcopy(H5T_C_S1), "H5Tcopy failed");
  TC_H5_STEP(err, H5Tset_size(type, strlen(value) + 1), "H5Tset_size failed");
  TC_H5_STEP(err, H5Tset_strpad(type, H5T_STR_NULLTERM), "H5Tset_strpad failed");
  TC_H5_STEP(err, space = H5Screate(H5S_SCALAR), "H5Screate failed");
  TC_H5_STEP(err, attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT),
             "creating attribute '%s' failed", name);
  TC_H5_STEP(err, H5Awrite(attribute, type, value), "writing attribute '%s' failed", name);
  close_id(&err, attribute, H5Aclose, "attribute");
  close_id(&err, space, H5Sclose, "dataspace");
  close_id(&err, type, H5Tclose, "datatype");
  return err;
}

static tc_err write_number_attribute(hid_t object, const char *name, hid_t file_type,
                                     hid_t memory_type, const void *value) {
  tc_err err = TC_SUCCESS;
  hid_t space = -1, attribute = -1;
  TC_H5_STEP(err, space = H5Screate(H5S_SCALAR), "H5Screate failed");
  TC_H5_STEP(err, attribute = H5Acreate2(object, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT),
             "creating attribute '%s' failed", name);
  TC_H5_STEP(err, H5Awrite(attribute, memory_type, value), "writing attribute '%s' failed", name);
  close_id(&err, attribute, H5Aclose, "attribute");
  close_id(&err, space, H5Sclose, "dataspace");
  return err;
}

static tc_err write_int_attribute(hid_t object, const char *name, int64_t value) {
  return write_number_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

static tc_err write_double_attribute(hid_t object, const char *name, double value) {
  return write_number_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

/* Reads a fixed- or variable-length string attribute (h5py writes the latter). */
static tc_err read_string_attribute(hid_t object, const char *name, char *text, size_t capacity) {
  tc_err err = TC_SUCCESS;
  hid_t attribute = -1, type = -1, memory_type = -1;
  htri_t variable = -1;
  TC_H5_STEP(err, attribute = H5Aopen(object, name, H5P_DEFAULT), "opening attribute '%s' failed",
             name);
  TC_H5_STEP(err, type = H5Aget_type(attribute), "H5Aget_type failed");
  if (err == TC_SUCCESS && H5Tget_class(type) != H5T_STRING)
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "attribute '%s' is not a string", name);
  TC_H5_STEP(err, variable = H5Tis_variable_str(type), "H5Tis_variable_str failed");
  TC_H5_STEP(err, memory_type = H5Tcopy(type), "H5Tcopy failed");
  if (err == TC_SUCCESS && variable > 0) {
    char *value = NULL;
    TC_H5_STEP(err, H5Aread(attribute, memory_type, &value), "reading attribute '%s' failed", name);
    if (err == TC_SUCCESS) {
      snprintf(text, capacity, "%s", value ? value : "");
      TC_H5_STEP(err, H5free_memory(value), "H5free_memory failed");
    }
  } else if (err == TC_SUCCESS) {
    size_t size = H5Tget_size(type);
    if (size == 0 || size >= capacity)
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "attribute '%s' holds a string of %zu bytes", name, size);
    memset(text, 0, capacity);
    TC_H5_STEP(err, H5Aread(attribute, memory_type, text), "reading attribute '%s' failed", name);
  }
  close_id(&err, memory_type, H5Tclose, "datatype");
  close_id(&err, type, H5Tclose, "datatype");
  close_id(&err, attribute, H5Aclose, "attribute");
  return err;
}

static tc_err read_number_attribute(hid_t object, const char *name, hid_t memory_type, void *value) {
  tc_err err = TC_SUCCESS;
  hid_t attribute = -1;
  TC_H5_STEP(err, attribute = H5Aopen(object, name, H5P_DEFAULT), "no attribute '%s'", name);
  TC_H5_STEP(err, H5Aread(attribute, memory_type, value), "reading attribute '%s' failed", name);
  close_id(&err, attribute, H5Aclose, "attribute");
  return err;
}

/* ---- arrays -------------------------------------------------------------- */

typedef struct {
  int rank;
  int64_t dims[TC_REPLAY_MAX_RANK];
  tc_precision precision;
} array_info;

static int64_t array_count(const array_info *info) {
  int64_t count = 1;
  for (int i = 0; i < info->rank; ++i)
    count *= info->dims[i];
  return count;
}

static void format_dims(const int64_t dims[], int rank, char *text, size_t capacity) {
  size_t used = (size_t)snprintf(text, capacity, "(");
  for (int i = 0; i < rank && used < capacity; ++i)
    used += (size_t)snprintf(text + used, capacity - used, "%s%lld", i ? "," : "",
                             (long long)dims[i]);
  if (used < capacity)
    snprintf(text + used, capacity - used, ")");
}

static array_info logical_array(const tc_contraction *shape,
                                int (*dims_of)(const tc_contraction *, int64_t[5])) {
  array_info info;
  info.rank = dims_of(shape, info.dims);
  info.precision = shape->precision;
  return info;
}

/* Creates dataset name in location and returns it open in *set. */
static tc_err write_array(hid_t location, const char *name, const array_info *info,
                          const void *data, hid_t *set_out) {
  hsize_t dims[TC_REPLAY_MAX_RANK];
  for (int i = 0; i < info->rank; ++i)
    dims[i] = (hsize_t)info->dims[i];
  tc_err err = TC_SUCCESS;
  hid_t space = -1, set = -1;
  TC_H5_STEP(err, space = H5Screate_simple(info->rank, dims, NULL), "H5Screate_simple failed");
  TC_H5_STEP(err, set = H5Dcreate2(location, name, native_type(info->precision), space,
                                   H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             "creating dataset '%s' failed", name);
  TC_H5_STEP(err, H5Dwrite(set, native_type(info->precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
             "writing dataset '%s' failed", name);
  close_id(&err, space, H5Sclose, "dataspace");
  if (err == TC_SUCCESS && set_out != NULL) {
    *set_out = set;
    return TC_SUCCESS;
  }
  close_id(&err, set, H5Dclose, "dataset");
  return err;
}

/* The rank, dims and element type of an open dataset. */
static tc_err dataset_info(hid_t set, const char *name, const char *place, array_info *info) {
  tc_err err = TC_SUCCESS;
  hid_t type = -1, space = -1;
  TC_H5_STEP(err, type = H5Dget_type(set), "H5Dget_type failed");
  if (err == TC_SUCCESS) {
    size_t size = H5Tget_size(type);
    if (H5Tget_class(type) != H5T_FLOAT || (size != 8 && size != 4))
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "dataset '%s' of %s is not of 64- or 32-bit floats (replay files hold "
                           "double or float arrays)",
                           name, place);
    info->precision = size == 8 ? TC_DOUBLE : TC_FLOAT;
  }
  TC_H5_STEP(err, space = H5Dget_space(set), "H5Dget_space failed");
  TC_H5_STEP(err, info->rank = H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims failed");
  if (err == TC_SUCCESS && (info->rank < 1 || info->rank > TC_REPLAY_MAX_RANK))
    err = tc_error_raise(TC_ERR_SHAPE, __FILE__, __LINE__, __func__,
                         "dataset '%s' of %s has %d dimensions; contraction arrays have 1 to %d",
                         name, place, info->rank, TC_REPLAY_MAX_RANK);
  if (err == TC_SUCCESS) {
    hsize_t dims[TC_REPLAY_MAX_RANK];
    TC_H5_STEP(err, H5Sget_simple_extent_dims(space, dims, NULL), "H5Sget_simple_extent_dims failed");
    for (int i = 0; i < info->rank; ++i)
      info->dims[i] = (int64_t)dims[i];
  }
  close_id(&err, space, H5Sclose, "dataspace");
  close_id(&err, type, H5Tclose, "datatype");
  return err;
}

/* Whether location holds a link called name (a missing link is no error). */
static tc_err has_link(hid_t location, const char *name, const char *place, bool *exists) {
  htri_t found = H5Lexists(location, name, H5P_DEFAULT);
  TC_CHECK(found >= 0, TC_ERR_HDF5, "looking for '%s' in %s failed", name, place);
  *exists = found > 0;
  return TC_SUCCESS;
}

/* A replay's inputs are values a contraction's result can be checked with:
 * a NaN or an infinity is refused, naming the first. */
static tc_err check_finite(const void *data, const array_info *info, const char *name,
                           const char *place) {
  const int64_t count = array_count(info);
  for (int64_t i = 0; i < count; ++i) {
    const double value = info->precision == TC_DOUBLE ? ((const double *)data)[i]
                                                      : (double)((const float *)data)[i];
    TC_CHECK(isfinite(value), TC_ERR_INPUT,
             "dataset '%s' of %s holds %s at entry %lld (of %lld, in storage order): a "
             "replay's values must be finite numbers",
             name, place, isnan(value) ? "NaN" : "an infinity", (long long)i, (long long)count);
  }
  return TC_SUCCESS;
}

/* Describes dataset name of location and, when data is not NULL, reads all
 * of it into a new host array of info's precision. */
static tc_err read_array(hid_t location, const char *place, const char *name, array_info *info,
                         void **data) {
  bool exists = false;
  TC_CALL(has_link(location, name, place, &exists));
  TC_CHECK(exists, TC_ERR_INPUT, "%s has no dataset '%s'", place, name);
  hid_t set = H5Dopen2(location, name, H5P_DEFAULT);
  TC_CHECK(set >= 0, TC_ERR_INPUT, "'%s' in %s is not a dataset", name, place);
  tc_err err = dataset_info(set, name, place, info);
  if (err == TC_SUCCESS && data != NULL) {
    size_t bytes = (size_t)array_count(info) * (size_t)tc_precision_size(info->precision);
    const int64_t memory = tc_host_memory_bytes(); /* 0: not known */
    if (memory > 0 && (double)bytes > (double)memory)
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "dataset '%s' of %s takes %.1f GiB, more than this machine's memory "
                           "(%.1f GiB)",
                           name, place, (double)bytes / (1 << 30), (double)memory / (1 << 30));
    *data = err == TC_SUCCESS ? malloc(bytes ? bytes : 1) : NULL;
    if (err == TC_SUCCESS && *data == NULL)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory allocating %zu bytes for dataset '%s'", bytes, name);
    TC_H5_STEP(err, H5Dread(set, native_type(info->precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, *data),
               "reading dataset '%s' of %s failed", name, place);
    if (err == TC_SUCCESS)
      err = check_finite(*data, info, name, place);
    if (err != TC_SUCCESS) {
      free(*data);
      *data = NULL;
    }
  }
  close_id(&err, set, H5Dclose, "dataset");
  return err;
}

/* ---- shapes from dataset dims ------------------------------------------- */

/* The shape whose logical left and right dims are the datasets' exactly, or
 * false when there is none for kernel. */
static bool fit_shape(tc_kernel kernel, const array_info *left, const array_info *right,
                      tc_contraction *shape) {
  int tensor_rank = tc_kernel_tensor_rank(kernel);
  bool field_field = tc_kernel_is_field_field(kernel);
  bool data_data = tc_kernel_is_data_data(kernel);
  int point_index = data_data ? 1 : 2;
  if (left->rank != (field_field ? 3 : 2) + tensor_rank || right->rank != point_index + 1 + tensor_rank)
    return false;
  memset(shape, 0, sizeof *shape);
  shape->kernel = kernel;
  shape->layout = TC_LAYOUT_RIGHT;
  shape->precision = right->precision;
  shape->num_cells = right->dims[0];
  shape->num_points = right->dims[point_index];
  if (field_field) {
    shape->num_left_fields = left->dims[1];
    shape->num_right_fields = right->dims[1];
  } else if (tc_kernel_is_data_field(kernel)) {
    shape->num_left_fields = right->dims[1];
    shape->num_data_points = left->dims[1];
  }
  if (tensor_rank >= 1)
    shape->dim1 = right->dims[point_index + 1];
  if (tensor_rank == 2)
    shape->dim2 = right->dims[point_index + 2];
  tc_contraction_normalize(shape);
  if (shape->num_data_points != 1 && shape->num_data_points != shape->num_points)
    return false;
  const array_info *arrays[2] = {left, right};
  int (*dims_of[2])(const tc_contraction *, int64_t[5]) = {tc_contraction_left_dims,
                                                            tc_contraction_right_dims};
  for (int a = 0; a < 2; ++a) {
    array_info expected = logical_array(shape, dims_of[a]);
    if (expected.rank != arrays[a]->rank)
      return false;
    for (int i = 0; i < expected.rank; ++i)
      if (expected.dims[i] != arrays[a]->dims[i] || arrays[a]->dims[i] < 1)
        return false;
  }
  return true;
}

/* The shape of the inputs, or one message with the dims expected and found. */
static tc_err shape_from_arrays(tc_kernel kernel, const char *place, const array_info *left,
                                const array_info *right, tc_contraction *shape) {
  TC_CHECK(left->precision == right->precision, TC_ERR_INPUT,
           "datasets 'left' (%s) and 'right' (%s) of %s differ in precision",
           tc_precision_name(left->precision), tc_precision_name(right->precision), place);
  if (!fit_shape(kernel, left, right, shape)) {
    char need_left[64], need_right[64], have_left[128], have_right[128];
    tc_replay_dims_text(kernel, TC_REPLAY_LEFT, need_left, sizeof need_left);
    tc_replay_dims_text(kernel, TC_REPLAY_RIGHT, need_right, sizeof need_right);
    format_dims(left->dims, left->rank, have_left, sizeof have_left);
    format_dims(right->dims, right->rank, have_right, sizeof have_right);
    tc_contraction swapped;
    bool looks_swapped = fit_shape(kernel, right, left, &swapped);
    TC_FAIL(TC_ERR_SHAPE, "%s: %s needs left = %s and right = %s; found left %s and right %s%s",
            place, tc_kernel_name(kernel), need_left, need_right, have_left, have_right,
            looks_swapped ? " ('left' and 'right' look swapped)" : "");
  }
  return tc_contraction_validate(shape);
}

/* ---- files --------------------------------------------------------------- */

typedef tc_err (*file_action)(hid_t file, const char *path, void *context);

/* Opens (or creates) the file, runs action on it and closes it, with HDF5's
 * own error printing silenced: failures travel as tc_err values. */
static tc_err with_file(const char *path, bool create, file_action action, void *context) {
  TC_CHECK(path != NULL && path[0] != '\0', TC_ERR_ARGUMENT, "no HDF5 file name given");
  if (!create) {
    struct stat status;
    TC_CHECK(stat(path, &status) == 0, TC_ERR_INPUT, "no file '%s'", path);
    TC_CHECK(S_ISREG(status.st_mode), TC_ERR_INPUT, "'%s' is not a file", path);
  }
  tc_h5_quiet_state quiet;
  TC_CALL(tc_h5_quiet_begin(&quiet));

  tc_err err = TC_SUCCESS;
  hid_t file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                      : H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    err = tc_error_raise(create ? TC_ERR_IO : TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         create ? "cannot create HDF5 file '%s'" : "'%s' is not an HDF5 file",
                         path);
  else
    err = action(file, path, context);
  close_id(&err, file, H5Fclose, "file");
  /* HDF5 1.10's failed open of a damaged file can leave objects it cannot
   * close, and its library, closing at exit, then prints "infinite loop
   * closing library" unless its error printing is off: left off (failures
   * travel as tc_err values anyway). */
  if (file < 0 && !create)
    return err;
  tc_err restored = tc_h5_quiet_end(&quiet);
  return err != TC_SUCCESS ? err : restored;
}

/* Opens the group of a replay (the root for NULL or "/"). */
static tc_err open_group(hid_t file, const char *path, const char *group, hid_t *opened) {
  const char *name = is_root(group) ? "/" : group;
  if (!is_root(group)) {
    /* Each link of the path must exist before H5Gopen2 may follow it. */
    char prefix[1024];
    TC_CHECK(strlen(group) < sizeof prefix, TC_ERR_INPUT, "group name '%s' is too long", group);
    for (size_t end = 1; end <= strlen(group); ++end) {
      if (group[end] != '/' && group[end] != '\0')
        continue;
      memcpy(prefix, group, end);
      prefix[end] = '\0';
      htri_t exists = H5Lexists(file, prefix, H5P_DEFAULT);
      TC_CHECK(exists > 0, TC_ERR_INPUT, "'%s' has no group '%s'", path, prefix);
    }
  }
  *opened = H5Gopen2(file, name, H5P_DEFAULT);
  TC_CHECK(*opened >= 0, TC_ERR_INPUT, "'%s' in '%s' is not a group", name, path);
  return TC_SUCCESS;
}

/* ---- reading inputs ------------------------------------------------------ */

typedef struct {
  const tc_replay_source *source;
  tc_replay_case *replay;
} read_context;

static tc_err read_kernel_attribute(hid_t group, const char *place, tc_kernel *kernel) {
  htri_t exists = H5Aexists(group, "kernel");
  TC_CHECK(exists >= 0, TC_ERR_HDF5, "looking for attribute 'kernel' of %s failed", place);
  TC_CHECK(exists > 0, TC_ERR_INPUT,
           "%s has no attribute 'kernel' naming the contraction, and no kernel was given", place);
  char name[64];
  TC_CALL(read_string_attribute(group, "kernel", name, sizeof name));
  tc_err err = tc_kernel_from_name(name, kernel);
  TC_CHECK(err == TC_SUCCESS, TC_ERR_INPUT, "attribute 'kernel' of %s names no kernel: '%s'", place,
           name);
  return TC_SUCCESS;
}

static tc_err read_inputs(hid_t group, const char *place, const tc_replay_source *source,
                          tc_replay_case *replay) {
  tc_kernel kernel;
  if (source->kernel != NULL)
    kernel = *source->kernel;
  else
    TC_CALL(read_kernel_attribute(group, place, &kernel));
  array_info left, right;
  TC_CALL(read_array(group, place, "left", &left, NULL));
  TC_CALL(read_array(group, place, "right", &right, NULL));
  TC_CALL(shape_from_arrays(kernel, place, &left, &right, &replay->shape));
  TC_CALL(has_link(group, "output", place, &replay->has_output));
  if (source->sum_into) {
    TC_CHECK(replay->has_output, TC_ERR_INPUT,
             "%s has no dataset 'output' for the contraction to add to (sum into)", place);
    array_info expected = logical_array(&replay->shape, tc_contraction_output_dims);
    array_info found;
    TC_CALL(read_array(group, place, "output", &found, NULL));
    bool same = found.rank == expected.rank && found.precision == expected.precision;
    for (int i = 0; same && i < found.rank; ++i)
      same = found.dims[i] == expected.dims[i];
    if (!same) {
      char need[64], have[128], sizes[128];
      tc_replay_dims_text(kernel, TC_REPLAY_OUTPUT, need, sizeof need);
      format_dims(found.dims, found.rank, have, sizeof have);
      format_dims(expected.dims, expected.rank, sizes, sizeof sizes);
      TC_FAIL(TC_ERR_SHAPE, "%s: the initial 'output' of %s must be %s = %s in %s; found %s of %s",
              place, tc_kernel_name(kernel), need, sizes,
              tc_precision_name(expected.precision), have, tc_precision_name(found.precision));
    }
    replay->shape.sum_into = true;
    TC_CALL(read_array(group, place, "output", &found, &replay->initial_output));
  }
  TC_CALL(read_array(group, place, "left", &left, &replay->left));
  return read_array(group, place, "right", &right, &replay->right);
}

static tc_err read_action(hid_t file, const char *path, void *context) {
  read_context *c = context;
  char place[1200];
  place_text(path, c->source->group, place, sizeof place);
  hid_t group = -1;
  TC_CALL(open_group(file, path, c->source->group, &group));
  tc_err err = read_inputs(group, place, c->source, c->replay);
  close_id(&err, group, H5Gclose, "group");
  return err;
}

tc_err tc_replay_read(const tc_replay_source *source, tc_replay_case *replay) {
  TC_CHECK(source && replay, TC_ERR_ARGUMENT, "NULL argument");
  memset(replay, 0, sizeof *replay);
  read_context context = {source, replay};
  tc_err err = with_file(source->path, false, read_action, &context);
  if (err != TC_SUCCESS)
    tc_replay_case_free(replay);
  return err;
}

void tc_replay_case_free(tc_replay_case *replay) {
  free(replay->left);
  free(replay->right);
  free(replay->initial_output);
  memset(replay, 0, sizeof *replay);
}

/* ---- writing inputs ------------------------------------------------------ */

typedef struct {
  const char *group;
  const tc_contraction *shape;
  const void *left, *right, *initial_output;
} write_inputs_context;

static tc_err write_inputs_action(hid_t file, const char *path, void *context) {
  (void)path;
  write_inputs_context *c = context;
  hid_t group = -1, links = -1;
  tc_err err = TC_SUCCESS;
  if (is_root(c->group)) {
    TC_H5_STEP(err, group = H5Gopen2(file, "/", H5P_DEFAULT), "opening the root group failed");
  } else {
    TC_H5_STEP(err, links = H5Pcreate(H5P_LINK_CREATE), "H5Pcreate failed");
    TC_H5_STEP(err, H5Pset_create_intermediate_group(links, 1), "H5Pset_create_intermediate_group failed");
    TC_H5_STEP(err, group = H5Gcreate2(file, c->group, links, H5P_DEFAULT, H5P_DEFAULT),
               "creating group '%s' failed", c->group);
  }
  array_info left = logical_array(c->shape, tc_contraction_left_dims);
  array_info right = logical_array(c->shape, tc_contraction_right_dims);
  array_info output = logical_array(c->shape, tc_contraction_output_dims);
  if (err == TC_SUCCESS)
    err = write_array(group, "left", &left, c->left, NULL);
  if (err == TC_SUCCESS)
    err = write_array(group, "right", &right, c->right, NULL);
  if (err == TC_SUCCESS && c->shape->sum_into)
    err = write_array(group, "output", &output, c->initial_output, NULL);
  if (err == TC_SUCCESS)
    err = write_string_attribute(group, "kernel", tc_kernel_name(c->shape->kernel));
  close_id(&err, group, H5Gclose, "group");
  close_id(&err, links, H5Pclose, "property list");
  return err;
}

tc_err tc_replay_write_inputs(const char *path, const char *group, const tc_contraction *shape,
                              const void *left, const void *right, const void *initial_output) {
  TC_CHECK(shape && left && right && (!shape->sum_into || initial_output), TC_ERR_ARGUMENT,
           "NULL argument");
  TC_CALL(tc_contraction_validate(shape));
  write_inputs_context context = {group, shape, left, right, initial_output};
  return with_file(path, true, write_inputs_action, &context);
}

/* ---- reading results ----------------------------------------------------- */

typedef struct {
  const char *name; /* "output" or "rows/N" */
  const tc_contraction *shape;
  void *output;
  tc_replay_row *row;
  int *count;
} read_result_context;

static tc_err read_row_info(hid_t set, tc_replay_row *row) {
  memset(row, 0, sizeof *row);
  int64_t threads = 0, verified = 0;
  TC_CALL(read_string_attribute(set, "backend", row->backend, sizeof row->backend));
  TC_CALL(read_number_attribute(set, "threads", H5T_NATIVE_INT64, &threads));
  TC_CALL(read_string_attribute(set, "layout", row->layout, sizeof row->layout));
  TC_CALL(read_string_attribute(set, "variant", row->variant, sizeof row->variant));
  TC_CALL(read_string_attribute(set, "chosen", row->chosen, sizeof row->chosen));
  TC_CALL(read_string_attribute(set, "precision", row->precision, sizeof row->precision));
  TC_CALL(read_number_attribute(set, "verified", H5T_NATIVE_INT64, &verified));
  TC_CALL(read_number_attribute(set, "relative_error", H5T_NATIVE_DOUBLE, &row->relative_error));
  row->threads = (int)threads;
  row->verified = verified != 0;
  return TC_SUCCESS;
}

static tc_err read_result_action(hid_t file, const char *path, void *context) {
  read_result_context *c = context;
  char place[1100];
  place_text(path, NULL, place, sizeof place);
  if (c->count != NULL) {
    int64_t rows = 0;
    TC_CALL(read_number_attribute(file, "rows", H5T_NATIVE_INT64, &rows));
    *c->count = (int)rows;
  }
  array_info expected = logical_array(c->shape, tc_contraction_output_dims);
  array_info found;
  void *data = NULL;
  TC_CALL(read_array(file, place, c->name, &found, NULL));
  TC_CHECK(found.precision == expected.precision, TC_ERR_SHAPE,
           "dataset '%s' of '%s' holds %s, expected %s", c->name, path,
           tc_precision_name(found.precision), tc_precision_name(expected.precision));
  bool same = found.rank == expected.rank;
  for (int i = 0; same && i < found.rank; ++i)
    same = found.dims[i] == expected.dims[i];
  if (!same) {
    char have[128], need[128];
    format_dims(found.dims, found.rank, have, sizeof have);
    format_dims(expected.dims, expected.rank, need, sizeof need);
    TC_FAIL(TC_ERR_SHAPE, "dataset '%s' of '%s' has dims %s, expected %s", c->name, path, have,
            need);
  }
  if (c->row != NULL) {
    hid_t set = H5Dopen2(file, c->name, H5P_DEFAULT);
    TC_CHECK(set >= 0, TC_ERR_INPUT, "'%s' in '%s' is not a dataset", c->name, path);
    tc_err err = read_row_info(set, c->row);
    close_id(&err, set, H5Dclose, "dataset");
    TC_CALL(err);
  }
  TC_CALL(read_array(file, place, c->name, &found, &data));
  memcpy(c->output, data, (size_t)array_count(&found) * (size_t)tc_precision_size(found.precision));
  free(data);
  return TC_SUCCESS;
}

tc_err tc_replay_read_output(const char *path, const tc_contraction *shape, void *output) {
  TC_CHECK(shape && output, TC_ERR_ARGUMENT, "NULL argument");
  read_result_context context = {"output", shape, output, NULL, NULL};
  return with_file(path, false, read_result_action, &context);
}

tc_err tc_replay_read_row(const char *path, int index, const tc_contraction *shape,
                          tc_replay_row *row, void *output, int *count) {
  TC_CHECK(shape && output && index >= 0, TC_ERR_ARGUMENT, "NULL argument or negative row");
  char name[32];
  snprintf(name, sizeof name, "rows/%d", index);
  read_result_context context = {name, shape, output, row, count};
  return with_file(path, false, read_result_action, &context);
}

/* ---- writing results ----------------------------------------------------- */

struct tc_replay_writer {
  char path[4096];
  char temporary[4160];
  bool overwrite;
  tc_contraction shape;
  hid_t file, rows;
  tc_h5_quiet_state quiet;
  bool quiet_on;
  int64_t count;
  bool committed;
};

/* True when a and b name the same existing file. */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

tc_err tc_replay_writer_create(const char *path, bool overwrite, const tc_replay_source *source,
                               const tc_contraction *shape, tc_replay_writer **writer) {
  *writer = NULL;
  TC_CHECK(path && path[0] && shape && source, TC_ERR_ARGUMENT, "NULL argument");
  TC_CHECK(strlen(path) < sizeof((tc_replay_writer *)0)->path, TC_ERR_INPUT,
           "results file name '%s' is too long", path);
  TC_CHECK(!same_file(path, source->path), TC_ERR_INPUT,
           "results file '%s' is the replay's input file; choose another name", path);
  TC_CHECK(overwrite || access(path, F_OK) != 0, TC_ERR_INPUT,
           "results file '%s' exists; give --overwrite to replace it or choose another name", path);
  tc_replay_writer *w;
  TC_CALLOC(w, 1);
  snprintf(w->path, sizeof w->path, "%s", path);
  snprintf(w->temporary, sizeof w->temporary, "%s.tmp.%ld", path, (long)getpid());
  w->overwrite = overwrite;
  w->shape = *shape;
  w->file = w->rows = -1;
  tc_err err = tc_h5_quiet_begin(&w->quiet);
  w->quiet_on = err == TC_SUCCESS;
  if (err == TC_SUCCESS) {
    w->file = H5Fcreate(w->temporary, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file >= 0)
      (void)tc_fault_track_temporary(w->temporary); /* a signal removes it (tc_signals) */
    if (w->file < 0)
      err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__,
                           "cannot create results file '%s' (is its directory writable?)", path);
  }
  TC_H5_STEP(err, w->rows = H5Gcreate2(w->file, "rows", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             "creating group 'rows' failed");
  if (err == TC_SUCCESS)
    err = write_string_attribute(w->file, "kernel", tc_kernel_name(shape->kernel));
  if (err == TC_SUCCESS) {
    char input[4200];
    snprintf(input, sizeof input, "%s%s%s", source->path, is_root(source->group) ? "" : ":",
             is_root(source->group) ? "" : source->group);
    err = write_string_attribute(w->file, "input", input);
  }
  if (err != TC_SUCCESS) {
    tc_replay_writer_destroy(&w);
    return err;
  }
  *writer = w;
  return TC_SUCCESS;
}

tc_err tc_replay_writer_add(tc_replay_writer *w, const tc_replay_row *row, const void *output) {
  TC_CHECK(w && row && output && !w->committed && w->file >= 0, TC_ERR_ARGUMENT,
           "no open results file");
  char name[32];
  snprintf(name, sizeof name, "%lld", (long long)w->count);
  array_info info = logical_array(&w->shape, tc_contraction_output_dims);
  hid_t set = -1;
  TC_CALL(write_array(w->rows, name, &info, output, &set));
  tc_err err = write_string_attribute(set, "backend", row->backend);
  if (err == TC_SUCCESS)
    err = write_int_attribute(set, "threads", row->threads);
  if (err == TC_SUCCESS)
    err = write_string_attribute(set, "layout", row->layout);
  if (err == TC_SUCCESS)
    err = write_string_attribute(set, "variant", row->variant);
  if (err == TC_SUCCESS)
    err = write_string_attribute(set, "chosen", row->chosen);
  if (err == TC_SUCCESS)
    err = write_string_attribute(set, "precision", row->precision);
  if (err == TC_SUCCESS)
    err = write_int_attribute(set, "verified", row->verified ? 1 : 0);
  if (err == TC_SUCCESS)
    err = write_double_attribute(set, "relative_error", row->relative_error);
  close_id(&err, set, H5Dclose, "dataset");
  if (err == TC_SUCCESS && w->count == 0)
    TC_H5_STEP(err, H5Lcreate_hard(w->rows, "0", w->file, "output", H5P_DEFAULT, H5P_DEFAULT),
               "linking 'output' to 'rows/0' failed");
  TC_CALL(err);
  w->count++;
  return TC_SUCCESS;
}

tc_err tc_replay_writer_commit(tc_replay_writer *w) {
  TC_CHECK(w && !w->committed && w->file >= 0, TC_ERR_ARGUMENT, "no open results file");
  TC_CHECK(w->count > 0, TC_ERR_INPUT, "no row ran, so no results file '%s' was written", w->path);
  tc_err err = write_int_attribute(w->file, "rows", w->count);
  close_id(&err, w->rows, H5Gclose, "group");
  close_id(&err, w->file, H5Fclose, "file");
  w->rows = w->file = -1;
  TC_CALL(err);
  if (w->overwrite) {
    TC_CHECK(rename(w->temporary, w->path) == 0, TC_ERR_IO, "cannot write results file '%s': %s",
             w->path, strerror(errno));
  } else {
    /* link + unlink never replaces a file that appeared since the start. */
    TC_CHECK(link(w->temporary, w->path) == 0, TC_ERR_IO, "cannot write results file '%s': %s",
             w->path, strerror(errno));
    (void)unlink(w->temporary);
  }
  tc_fault_untrack_temporary(w->temporary);
  w->committed = true;
  return TC_SUCCESS;
}

void tc_replay_writer_destroy(tc_replay_writer **writer) {
  tc_replay_writer *w = *writer;
  if (w == NULL)
    return;
  if (w->rows >= 0)
    (void)H5Gclose(w->rows); /* a failure here changes nothing: the file is removed */
  if (w->file >= 0)
    (void)H5Fclose(w->file);
  if (!w->committed) {
    (void)unlink(w->temporary);
    tc_fault_untrack_temporary(w->temporary);
  }
  if (w->quiet_on)
    (void)tc_h5_quiet_end(&w->quiet);
  free(w);
  *writer = NULL;
}
