/* tc_output_h5: the HDF5 primitives of the results file: attributes,
 * groups, and the collective write of one dataset of rows (or of a dataset
 * only rank 0 fills), each agreed over the ranks. */
#include <stdlib.h>
#include <string.h>

#include "tc_fault.h"
#include "tc_h5.h"
#include "tc_output_impl.h"

/* HDF5 wants a buffer even when a rank selects nothing to write. */
static const double nothing_to_write = 0;

/* Closes whichever of ids are open (any kind of HDF5 id) and marks them
 * closed; returns the first failure. */
tc_err tc_output_close_ids(hid_t *ids, int count) {
  tc_err first = TC_SUCCESS;
  for (int i = count - 1; i >= 0; i--) {
    if (ids[i] < 0)
      continue;
    if (H5Idec_ref(ids[i]) < 0 && first == TC_SUCCESS)
      first = tc_h5_failure("H5Idec_ref", __FILE__, __LINE__, __func__);
    ids[i] = -1;
  }
  return first;
}

/* ids: string type, scalar space, attribute. */
static tc_err put_string_attribute_with(hid_t object, const char *name, const char *value,
                                        hid_t ids[3]) {
  TC_H5_CALL(ids[0] = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(ids[0], H5T_VARIABLE));
  TC_H5_CALL(H5Tset_cset(ids[0], H5T_CSET_UTF8));
  TC_H5_CALL(ids[1] = H5Screate(H5S_SCALAR));
  TC_H5_CALL(ids[2] = H5Acreate2(object, name, ids[0], ids[1], H5P_DEFAULT, H5P_DEFAULT));
  const char *text = value ? value : "";
  TC_H5_CALL(H5Awrite(ids[2], ids[0], &text));
  return TC_SUCCESS;
}

/* A variable-length UTF-8 string attribute (h5py reads it as str). */
tc_err tc_output_put_string_attribute(hid_t object, const char *name, const char *value) {
  hid_t ids[3] = {-1, -1, -1};
  tc_err err = put_string_attribute_with(object, name, value, ids);
  return tc_output_first_error(err, tc_output_close_ids(ids, 3));
}

/* ids: space, attribute. */
static tc_err put_int64_attribute_with(hid_t object, const char *name, const int64_t *values,
                                       int count, hid_t ids[2]) {
  hsize_t dims[1] = {(hsize_t)count};
  TC_H5_CALL(ids[0] = count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL));
  TC_H5_CALL(ids[1] = H5Acreate2(object, name, H5T_STD_I64LE, ids[0], H5P_DEFAULT, H5P_DEFAULT));
  TC_H5_CALL(H5Awrite(ids[1], H5T_NATIVE_INT64, values));
  return TC_SUCCESS;
}

/* A 64-bit integer attribute: a scalar when count is 1, else an array. */
tc_err tc_output_put_int64_attribute(hid_t object, const char *name, const int64_t *values,
                                     int count) {
  hid_t ids[2] = {-1, -1};
  tc_err err = put_int64_attribute_with(object, name, values, count, ids);
  return tc_output_first_error(err, tc_output_close_ids(ids, 2));
}

tc_err tc_output_make_group(hid_t file, const char *path, const char *description) {
  hid_t group = H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group < 0)
    return tc_h5_failure("H5Gcreate2", __FILE__, __LINE__, __func__);
  tc_err err = tc_output_put_string_attribute(group, "description", description);
  return tc_output_first_error(err, tc_output_close_ids(&group, 1));
}

static size_t row_bytes_of(const tc_output_dataset_shape *shape) {
  size_t bytes = shape->element_bytes;
  for (int d = 0; d < shape->trailing_rank; d++)
    bytes *= (size_t)shape->trailing[d];
  return bytes;
}

static tc_err note_transfer(tc_output_session *s) {
  H5D_mpio_actual_io_mode_t mode;
  TC_H5_CALL(H5Pget_mpio_actual_io_mode(s->transfer, &mode));
  if (mode == H5D_MPIO_NO_COLLECTIVE)
    s->collective = false;
  return TC_SUCCESS;
}

/* ids: file space, memory space, creation properties, dataset. */
static tc_err write_dataset_with(tc_output_session *s, const tc_output_dataset_shape *shape,
                                 const tc_row_set *rows, const void *data, hid_t ids[4]) {
  int rank = 1 + shape->trailing_rank;
  hsize_t file_dims[3] = {(hsize_t)shape->global_rows, shape->trailing[0], shape->trailing[1]};
  hsize_t memory_dims[3] = {(hsize_t)rows->count, shape->trailing[0], shape->trailing[1]};
  TC_H5_CALL(ids[0] = H5Screate_simple(rank, file_dims, NULL));
  TC_H5_CALL(ids[1] = H5Screate_simple(rank, memory_dims, NULL));
  /* Every element is written, so HDF5's fill pass would only double the
   * traffic. */
  TC_H5_CALL(ids[2] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_fill_time(ids[2], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[3] = H5Dcreate2(s->file, shape->path, shape->file_type, ids[0], H5P_DEFAULT,
                                 ids[2], H5P_DEFAULT));
  TC_CALL(tc_row_set_select(ids[0], rows, shape->trailing_rank, shape->trailing));
  if (rows->count == 0)
    TC_H5_CALL(H5Sselect_none(ids[1]));
  /* An empty dataset has no storage to write to. */
  if (shape->global_rows > 0) {
    TC_H5_CALL(H5Dwrite(ids[3], shape->memory_type, ids[1], ids[0], s->transfer,
                        data ? data : &nothing_to_write));
    TC_CALL(note_transfer(s));
    s->payload_bytes += rows->count * (int64_t)row_bytes_of(shape);
  }
  if (shape->units)
    TC_CALL(tc_output_put_string_attribute(ids[3], "units", shape->units));
  if (shape->description)
    TC_CALL(tc_output_put_string_attribute(ids[3], "description", shape->description));
  return TC_SUCCESS;
}

/* Creates the dataset and writes this rank's rows (data: [rows->count] rows
 * in global order), collectively. */
static tc_err write_dataset(tc_output_session *s, const tc_output_dataset_shape *shape,
                            const tc_row_set *rows, const void *data) {
  hid_t ids[4] = {-1, -1, -1, -1};
  tc_err err = write_dataset_with(s, shape, rows, data, ids);
  tc_err closed = tc_output_close_ids(ids, 4);
  return err != TC_SUCCESS ? err : closed;
}

static tc_err fail_point(const tc_output *output, const char *path) {
  TC_CALL(tc_fault_check("io")); /* test-only: TCMINI_FAULT=io */
  TC_CHECK(output->fail_rank != output->rank || strcmp(output->fail_after, path) != 0, TC_ERR_IO,
           "injected failure after writing %s (test hook)", path);
  return TC_SUCCESS;
}

/* One dataset from start to end: local packing, agreed; the collective write,
 * agreed (and the test hook). */
tc_err tc_output_write_rows(const tc_output *output, tc_output_session *s,
                            const tc_output_dataset_shape *shape, const tc_row_set *rows,
                            const void *values) {
  void *packed = NULL;
  const void *data = NULL;
  tc_err err = tc_parallel_agree(
      output->comm, tc_row_set_gather(rows, values, row_bytes_of(shape), &packed, &data));
  if (err == TC_SUCCESS) {
    err = write_dataset(s, shape, rows, data);
    if (err == TC_SUCCESS)
      err = fail_point(output, shape->path);
    err = tc_parallel_agree(output->comm, err);
  }
  free(packed);
  return err;
}

/* ids: element type, file space, memory space, creation properties, dataset. */
static tc_err write_root_only_with(const tc_output *output, tc_output_session *s, const char *path,
                                   int64_t rows, const void *data, const char *description,
                                   hid_t ids[5]) {
  hsize_t dims[1] = {(hsize_t)(rows < 0 ? 1 : rows)};
  TC_H5_CALL(ids[1] = rows < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL));
  TC_H5_CALL(ids[2] = H5Scopy(ids[1]));
  TC_H5_CALL(ids[3] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_fill_time(ids[3], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[4] = H5Dcreate2(s->file, path, ids[0], ids[1], H5P_DEFAULT, ids[3], H5P_DEFAULT));
  if (output->rank != 0) {
    TC_H5_CALL(H5Sselect_none(ids[1]));
    TC_H5_CALL(H5Sselect_none(ids[2]));
  }
  /* An empty dataset has no storage to write to. */
  if (rows != 0) {
    TC_H5_CALL(
        H5Dwrite(ids[4], ids[0], ids[2], ids[1], s->transfer, data ? data : &nothing_to_write));
    TC_CALL(note_transfer(s));
    if (output->rank == 0)
      s->payload_bytes += (int64_t)dims[0] * (int64_t)H5Tget_size(ids[0]);
  }
  TC_CALL(tc_output_put_string_attribute(ids[4], "description", description));
  return fail_point(output, path);
}

/* A dataset that rank 0 alone fills (rows < 0: a scalar), written
 * collectively. Takes over (closes) type. */
tc_err tc_output_write_root_only(const tc_output *output, tc_output_session *s, const char *path,
                                 hid_t type, int64_t rows, const void *data,
                                 const char *description) {
  hid_t ids[5] = {type, -1, -1, -1, -1};
  tc_err err = write_root_only_with(output, s, path, rows, data, description, ids);
  err = tc_output_first_error(err, tc_output_close_ids(ids, 5));
  return tc_parallel_agree(output->comm, err);
}

/* Opens the group at path and lets put add its attributes. */
tc_err tc_output_group_attributes(const tc_output *output, tc_output_session *s, const char *path,
                                  tc_err (*put)(const tc_output *, hid_t, const void *),
                                  const void *context) {
  hid_t group = H5Gopen2(s->file, path, H5P_DEFAULT);
  if (group < 0)
    return tc_h5_failure("H5Gopen2", __FILE__, __LINE__, __func__);
  tc_err err = put(output, group, context);
  return tc_output_first_error(err, tc_output_close_ids(&group, 1));
}
