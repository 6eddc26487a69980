/* tc_replay: reading and writing one contraction's arrays with HDF5 (serial
 * calls on one process; the parallel library's default driver is fine). */
#include "tc_replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"

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

/* ---- files ------------------------------------------------------------- */

typedef tc_err (*file_action)(hid_t file, const char *path, void *context);

/* Opens (or creates) the file, runs action on it and closes it, with HDF5's
 * own error printing silenced: failures travel as tc_err values. */
static tc_err with_file(const char *path, bool create, file_action action, void *context) {
  TC_CHECK(path != NULL && path[0] != '\0', TC_ERR_ARGUMENT, "no HDF5 file name given");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_h5_quiet_begin(&quiet));

  tc_err err = TC_SUCCESS;
  hid_t file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                      : H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__,
                         "cannot %s HDF5 file '%s'", create ? "create" : "open", path);
  else
    err = action(file, path, context);
  close_id(&err, file, H5Fclose, "file");

  tc_err restored = tc_h5_quiet_end(&quiet);
  return err != TC_SUCCESS ? err : restored;
}

/* ---- the kernel attribute ------------------------------------------------ */

static tc_err write_kernel_attribute(hid_t file, tc_kernel kernel) {
  const char *name = tc_kernel_name(kernel);
  tc_err err = TC_SUCCESS;
  hid_t type = -1, space = -1, attribute = -1;
  TC_H5_STEP(err, type = H5Tcopy(H5T_C_S1), "H5Tcopy failed");
  TC_H5_STEP(err, H5Tset_size(type, strlen(name) + 1), "H5Tset_size failed");
  TC_H5_STEP(err, H5Tset_strpad(type, H5T_STR_NULLTERM), "H5Tset_strpad failed");
  TC_H5_STEP(err, space = H5Screate(H5S_SCALAR), "H5Screate failed");
  TC_H5_STEP(err, attribute = H5Acreate2(file, "kernel", type, space, H5P_DEFAULT, H5P_DEFAULT),
             "creating attribute 'kernel' failed");
  TC_H5_STEP(err, H5Awrite(attribute, type, name), "writing attribute 'kernel' failed");
  close_id(&err, attribute, H5Aclose, "attribute");
  close_id(&err, space, H5Sclose, "dataspace");
  close_id(&err, type, H5Tclose, "datatype");
  return err;
}

/* Reads a fixed- or variable-length string attribute (h5py writes the latter). */
static tc_err read_string_attribute(hid_t attribute, char *text, size_t capacity) {
  tc_err err = TC_SUCCESS;
  hid_t type = -1, memory_type = -1;
  htri_t variable = -1;
  TC_H5_STEP(err, type = H5Aget_type(attribute), "H5Aget_type failed");
  if (err == TC_SUCCESS && H5Tget_class(type) != H5T_STRING)
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "attribute 'kernel' is not a string");
  TC_H5_STEP(err, variable = H5Tis_variable_str(type), "H5Tis_variable_str failed");
  TC_H5_STEP(err, memory_type = H5Tcopy(type), "H5Tcopy failed");
  if (err == TC_SUCCESS && variable > 0) {
    char *value = NULL;
    TC_H5_STEP(err, H5Aread(attribute, memory_type, &value), "reading attribute 'kernel' failed");
    if (err == TC_SUCCESS) {
      snprintf(text, capacity, "%s", value ? value : "");
      TC_H5_STEP(err, H5free_memory(value), "H5free_memory failed");
    }
  } else if (err == TC_SUCCESS) {
    size_t size = H5Tget_size(type);
    if (size == 0 || size >= capacity)
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "attribute 'kernel' has a string of %zu bytes", size);
    memset(text, 0, capacity);
    TC_H5_STEP(err, H5Aread(attribute, memory_type, text), "reading attribute 'kernel' failed");
  }
  close_id(&err, memory_type, H5Tclose, "datatype");
  close_id(&err, type, H5Tclose, "datatype");
  return err;
}

static tc_err read_kernel_attribute(hid_t file, const char *path, tc_kernel *kernel) {
  htri_t exists = H5Aexists(file, "kernel");
  TC_CHECK(exists >= 0, TC_ERR_HDF5, "H5Aexists failed on '%s'", path);
  TC_CHECK(exists > 0, TC_ERR_INPUT,
           "'%s' has no root attribute 'kernel' and no kernel was named", path);
  hid_t attribute = H5Aopen(file, "kernel", H5P_DEFAULT);
  TC_CHECK(attribute >= 0, TC_ERR_HDF5, "opening attribute 'kernel' of '%s' failed", path);
  char name[64];
  tc_err err = read_string_attribute(attribute, name, sizeof name);
  close_id(&err, attribute, H5Aclose, "attribute");
  TC_CALL(err);
  return tc_kernel_from_name(name, kernel);
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

static tc_err write_array(hid_t file, const char *name, const array_info *info, const void *data) {
  hsize_t dims[TC_REPLAY_MAX_RANK];
  for (int i = 0; i < info->rank; ++i)
    dims[i] = (hsize_t)info->dims[i];
  tc_err err = TC_SUCCESS;
  hid_t space = -1, set = -1;
  TC_H5_STEP(err, space = H5Screate_simple(info->rank, dims, NULL), "H5Screate_simple failed");
  TC_H5_STEP(err, set = H5Dcreate2(file, name, native_type(info->precision), space,
                                   H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             "creating dataset '%s' failed", name);
  TC_H5_STEP(err, H5Dwrite(set, native_type(info->precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
             "writing dataset '%s' failed", name);
  close_id(&err, set, H5Dclose, "dataset");
  close_id(&err, space, H5Sclose, "dataspace");
  return err;
}

/* The rank, dims and element type of an open dataset. */
static tc_err dataset_info(hid_t set, const char *name, array_info *info) {
  tc_err err = TC_SUCCESS;
  hid_t type = -1, space = -1;
  TC_H5_STEP(err, type = H5Dget_type(set), "H5Dget_type failed");
  if (err == TC_SUCCESS) {
    size_t size = H5Tget_size(type);
    if (H5Tget_class(type) != H5T_FLOAT || (size != 8 && size != 4))
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "dataset '%s' is not of a 64- or 32-bit floating-point type", name);
    info->precision = size == 8 ? TC_DOUBLE : TC_FLOAT;
  }
  TC_H5_STEP(err, space = H5Dget_space(set), "H5Dget_space failed");
  TC_H5_STEP(err, info->rank = H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims failed");
  if (err == TC_SUCCESS && (info->rank < 1 || info->rank > TC_REPLAY_MAX_RANK))
    err = tc_error_raise(TC_ERR_SHAPE, __FILE__, __LINE__, __func__,
                         "dataset '%s' has rank %d; contraction arrays have rank 1 to %d",
                         name, info->rank, TC_REPLAY_MAX_RANK);
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

/* Describes dataset name and, when data is not NULL, reads all of it into a
 * new host array of info's precision. */
static tc_err read_array(hid_t file, const char *path, const char *name, array_info *info,
                         void **data) {
  htri_t exists = H5Lexists(file, name, H5P_DEFAULT);
  TC_CHECK(exists >= 0, TC_ERR_HDF5, "H5Lexists failed on '%s'", path);
  TC_CHECK(exists > 0, TC_ERR_INPUT, "'%s' has no dataset '%s'", path, name);
  hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  TC_CHECK(set >= 0, TC_ERR_HDF5, "opening dataset '%s' of '%s' failed", name, path);
  tc_err err = dataset_info(set, name, info);
  if (err == TC_SUCCESS && data != NULL) {
    size_t bytes = (size_t)array_count(info) * (size_t)tc_precision_size(info->precision);
    *data = malloc(bytes);
    if (*data == NULL)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory allocating %zu bytes for dataset '%s'", bytes, name);
    TC_H5_STEP(err, H5Dread(set, native_type(info->precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, *data),
               "reading dataset '%s' of '%s' failed", name, path);
    if (err != TC_SUCCESS) {
      free(*data);
      *data = NULL;
    }
  }
  close_id(&err, set, H5Dclose, "dataset");
  return err;
}

/* ---- shapes from dataset dims ------------------------------------------- */

static tc_err check_dims(const char *name, const array_info *found, int rank,
                         const int64_t dims[], tc_kernel kernel) {
  bool same = found->rank == rank;
  for (int i = 0; same && i < rank; ++i)
    same = found->dims[i] == dims[i];
  if (!same) {
    char have[128], need[128];
    format_dims(found->dims, found->rank, have, sizeof have);
    format_dims(dims, rank, need, sizeof need);
    TC_FAIL(TC_ERR_SHAPE, "dataset '%s' has dims %s but %s needs %s with the other input's sizes",
            name, have, tc_kernel_name(kernel), need);
  }
  return TC_SUCCESS;
}

/* Reads the sizes off the right input (it names every size but the data
 * points and, for FieldField, L), then requires both inputs' dims to be the
 * shape's logical dims exactly. */
static tc_err shape_from_arrays(tc_kernel kernel, const array_info *left, const array_info *right,
                                tc_contraction *shape) {
  TC_CHECK(left->precision == right->precision, TC_ERR_INPUT,
           "datasets 'left' (%s) and 'right' (%s) differ in precision",
           tc_precision_name(left->precision), tc_precision_name(right->precision));
  int tensor_rank = tc_kernel_tensor_rank(kernel);
  int point_index = tc_kernel_is_data_data(kernel) ? 1 : 2;
  TC_CHECK(right->rank == point_index + 1 + tensor_rank, TC_ERR_SHAPE,
           "dataset 'right' has rank %d but %s needs %d", right->rank, tc_kernel_name(kernel),
           point_index + 1 + tensor_rank);
  TC_CHECK(left->rank >= 2, TC_ERR_SHAPE, "dataset 'left' has rank %d", left->rank);

  memset(shape, 0, sizeof *shape);
  shape->kernel = kernel;
  shape->layout = TC_LAYOUT_RIGHT;
  shape->precision = right->precision;
  shape->num_cells = right->dims[0];
  shape->num_points = right->dims[point_index];
  if (tc_kernel_is_field_field(kernel)) {
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
  TC_CALL(tc_contraction_validate(shape));

  int64_t dims[TC_REPLAY_MAX_RANK];
  int rank = tc_contraction_left_dims(shape, dims);
  TC_CALL(check_dims("left", left, rank, dims, kernel));
  rank = tc_contraction_right_dims(shape, dims);
  return check_dims("right", right, rank, dims, kernel);
}

/* ---- public functions ---------------------------------------------------- */

typedef struct {
  const tc_kernel *kernel_override;
  tc_contraction *shape;
  void **left;
  void **right;
} read_inputs_context;

static tc_err read_inputs_action(hid_t file, const char *path, void *context) {
  read_inputs_context *c = context;
  tc_kernel kernel;
  if (c->kernel_override != NULL)
    kernel = *c->kernel_override;
  else
    TC_CALL(read_kernel_attribute(file, path, &kernel));
  array_info left, right;
  TC_CALL(read_array(file, path, "left", &left, NULL));
  TC_CALL(read_array(file, path, "right", &right, NULL));
  TC_CALL(shape_from_arrays(kernel, &left, &right, c->shape));
  TC_CALL(read_array(file, path, "left", &left, c->left));
  tc_err err = read_array(file, path, "right", &right, c->right);
  if (err != TC_SUCCESS) {
    free(*c->left);
    *c->left = NULL;
  }
  return err;
}

tc_err tc_replay_read_inputs(const char *path, const tc_kernel *kernel_override,
                             tc_contraction *shape, void **left, void **right) {
  TC_CHECK(shape && left && right, TC_ERR_ARGUMENT, "NULL argument");
  *left = *right = NULL;
  read_inputs_context context = {kernel_override, shape, left, right};
  return with_file(path, false, read_inputs_action, &context);
}

typedef struct {
  const tc_contraction *shape;
  const void *left;
  const void *right;
  const void *output;
} write_context;

static array_info logical_array(const tc_contraction *shape,
                                int (*dims_of)(const tc_contraction *, int64_t[5])) {
  array_info info;
  info.rank = dims_of(shape, info.dims);
  info.precision = shape->precision;
  return info;
}

static tc_err write_action(hid_t file, const char *path, void *context) {
  (void)path;
  write_context *c = context;
  if (c->left != NULL) {
    array_info left = logical_array(c->shape, tc_contraction_left_dims);
    array_info right = logical_array(c->shape, tc_contraction_right_dims);
    TC_CALL(write_array(file, "left", &left, c->left));
    TC_CALL(write_array(file, "right", &right, c->right));
  }
  if (c->output != NULL) {
    array_info output = logical_array(c->shape, tc_contraction_output_dims);
    TC_CALL(write_array(file, "output", &output, c->output));
  }
  return write_kernel_attribute(file, c->shape->kernel);
}

tc_err tc_replay_write_inputs(const char *path, const tc_contraction *shape,
                              const void *left, const void *right) {
  TC_CHECK(shape && left && right, TC_ERR_ARGUMENT, "NULL argument");
  TC_CALL(tc_contraction_validate(shape));
  write_context context = {shape, left, right, NULL};
  return with_file(path, true, write_action, &context);
}

tc_err tc_replay_write_output(const char *path, const tc_contraction *shape,
                              const void *output) {
  TC_CHECK(shape && output, TC_ERR_ARGUMENT, "NULL argument");
  TC_CALL(tc_contraction_validate(shape));
  write_context context = {shape, NULL, NULL, output};
  return with_file(path, true, write_action, &context);
}

typedef struct {
  const tc_contraction *shape;
  void *output;
} read_output_context;

static tc_err read_output_action(hid_t file, const char *path, void *context) {
  read_output_context *c = context;
  array_info expected = logical_array(c->shape, tc_contraction_output_dims);
  array_info found;
  void *data = NULL;
  TC_CALL(read_array(file, path, "output", &found, NULL));
  TC_CHECK(found.precision == expected.precision, TC_ERR_SHAPE,
           "dataset 'output' of '%s' holds %s, expected %s", path,
           tc_precision_name(found.precision), tc_precision_name(expected.precision));
  TC_CALL(check_dims("output", &found, expected.rank, expected.dims, c->shape->kernel));
  TC_CALL(read_array(file, path, "output", &found, &data));
  memcpy(c->output, data, (size_t)array_count(&found) * (size_t)tc_precision_size(found.precision));
  free(data);
  return TC_SUCCESS;
}

tc_err tc_replay_read_output(const char *path, const tc_contraction *shape, void *output) {
  TC_CHECK(shape && output, TC_ERR_ARGUMENT, "NULL argument");
  read_output_context context = {shape, output};
  return with_file(path, false, read_output_action, &context);
}
