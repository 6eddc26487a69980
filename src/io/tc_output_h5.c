/* tc_output_h5: the HDF5 primitives of the results file's layout:
 * attributes, groups, datasets whose storage is allocated for the ranks to
 * fill, and small datasets written whole. Rank 0 alone calls them, on the
 * file it builds in memory (tc_h5_image). */
#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"
#include "tc_output_impl.h"

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

int64_t tc_output_row_bytes(const tc_output_dataset *dataset) {
  int64_t bytes = (int64_t)dataset->element_bytes;
  for (int d = 0; d < dataset->trailing_rank; d++)
    bytes *= (int64_t)dataset->trailing[d];
  return bytes;
}

tc_err tc_output_group_attributes(const tc_output *output, hid_t file, const char *path,
                                  tc_err (*put)(const tc_output *, hid_t, const void *),
                                  const void *context) {
  hid_t group = H5Gopen2(file, path, H5P_DEFAULT);
  if (group < 0)
    return tc_h5_failure("H5Gopen2", __FILE__, __LINE__, __func__);
  tc_err err = put(output, group, context);
  return tc_output_first_error(err, tc_output_close_ids(&group, 1));
}

/* ids: file space, creation properties, dataset. */
static tc_err create_dataset_with(hid_t file, tc_output_dataset *dataset, hid_t ids[3]) {
  int rank = 1 + dataset->trailing_rank;
  hsize_t dims[3] = {(hsize_t)dataset->global_rows, dataset->trailing[0], dataset->trailing[1]};
  TC_H5_CALL(ids[0] = H5Screate_simple(rank, dims, NULL));
  /* Contiguous storage allocated now, so that it has an address the ranks
   * can write to; never filled (every element is written). */
  TC_H5_CALL(ids[1] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_layout(ids[1], H5D_CONTIGUOUS));
  TC_H5_CALL(H5Pset_alloc_time(ids[1], H5D_ALLOC_TIME_EARLY));
  TC_H5_CALL(H5Pset_fill_time(ids[1], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[2] = H5Dcreate2(file, dataset->path, dataset->file_type, ids[0], H5P_DEFAULT,
                                 ids[1], H5P_DEFAULT));
  dataset->offset = -1;
  if (dataset->global_rows > 0 && tc_output_row_bytes(dataset) > 0) {
    haddr_t address = H5Dget_offset(ids[2]);
    TC_CHECK(address != HADDR_UNDEF, TC_ERR_HDF5, "HDF5 gave dataset '%s' no storage",
             dataset->path);
    dataset->offset = (int64_t)address;
  }
  if (dataset->units)
    TC_CALL(tc_output_put_string_attribute(ids[2], "units", dataset->units));
  if (dataset->description)
    TC_CALL(tc_output_put_string_attribute(ids[2], "description", dataset->description));
  return TC_SUCCESS;
}

tc_err tc_output_create_dataset(hid_t file, tc_output_dataset *dataset) {
  hid_t ids[3] = {-1, -1, -1};
  tc_err err = create_dataset_with(file, dataset, ids);
  return tc_output_first_error(err, tc_output_close_ids(ids, 3));
}

/* ids: element type, space, creation properties, dataset. */
static tc_err write_small_with(hid_t file, const char *path, int64_t rows, const void *data,
                               const char *description, int64_t *offset, hid_t ids[4]) {
  hsize_t dims[1] = {(hsize_t)(rows < 0 ? 1 : rows)};
  TC_H5_CALL(ids[1] = rows < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL));
  TC_H5_CALL(ids[2] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_fill_time(ids[2], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[3] = H5Dcreate2(file, path, ids[0], ids[1], H5P_DEFAULT, ids[2], H5P_DEFAULT));
  /* An empty dataset has no storage to write to. */
  if (rows != 0)
    TC_H5_CALL(H5Dwrite(ids[3], ids[0], H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  if (offset) {
    haddr_t address = rows != 0 ? H5Dget_offset(ids[3]) : HADDR_UNDEF;
    *offset = address == HADDR_UNDEF ? -1 : (int64_t)address;
  }
  return tc_output_put_string_attribute(ids[3], "description", description);
}

tc_err tc_output_write_small_dataset(hid_t file, const char *path, hid_t type, int64_t rows,
                                     const void *data, const char *description, int64_t *offset) {
  hid_t ids[4] = {type, -1, -1, -1};
  tc_err err = write_small_with(file, path, rows, data, description, offset, ids);
  return tc_output_first_error(err, tc_output_close_ids(ids, 4));
}
