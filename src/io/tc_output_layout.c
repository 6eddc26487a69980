/* tc_output_layout: rank 0 lays out the whole results file in memory
 * (tc_h5_image): the root attributes, the groups and their attributes, every
 * dataset of rows with its storage allocated at an address the ranks will
 * write to, and the run metadata with the small datasets written whole.
 * The ranks then write the rows, and rank 0 the image's bytes, themselves. */
#include "tc_h5.h"
#include "tc_h5_image.h"
#include "tc_output_impl.h"

/* Datasets of 1 MiB or more start on 1 MiB boundaries: the stripe size of
 * Lustre's default layout and a divisor of GPFS block sizes, so that the
 * ranks' writes of one dataset line up with the file system's locks and
 * stripes. Smaller objects are packed (aligning them would only leave
 * holes). */
static const hsize_t alignment_threshold = 1 << 20;
static const hsize_t alignment_bytes = 1 << 20;

static tc_err put_root_attributes(const tc_output *output, hid_t root, const void *context) {
  (void)output;
  int64_t version = TC_OUTPUT_FORMAT_VERSION;
  TC_CALL(tc_output_put_string_attribute(root, "format", "tcmini results"));
  TC_CALL(tc_output_put_int64_attribute(root, "format_version", &version, 1));
  return tc_output_put_string_attribute(root, "created", context);
}

static tc_err describe(const tc_output *output, hid_t file, tc_output_dataset *datasets, int count,
                       const tc_output_run_info *run, const char *created,
                       tc_output_layout *layout) {
  TC_CALL(tc_output_group_attributes(output, file, "/", put_root_attributes, created));
  TC_CALL(tc_output_make_group(file, "/mesh", "the hexahedral mesh in global numbering"));
  TC_CALL(tc_output_make_group(file, "/cells", "per-cell fields, row = global cell id"));
  TC_CALL(tc_output_make_group(file, "/nodes", "per-node fields, row = global node id"));
  TC_CALL(tc_output_make_group(file, "/element_matrices",
                               "per-cell matrices [cell][row][col], row = global cell id"));
  TC_CALL(tc_output_make_group(file, "/run", "how the results were made"));
  TC_CALL(tc_output_group_attributes(output, file, "/mesh", tc_output_put_mesh_attributes, NULL));
  for (int i = 0; i < count; i++)
    TC_CALL(tc_output_create_dataset(file, &datasets[i]));
  return tc_output_describe_run(output, file, run, created, &layout->small_bytes, &layout->phases);
}

/* The rows are written as they are in memory: the file's types must be the
 * machine's own. */
static tc_err check_native_types(void) {
  TC_CHECK(H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0 &&
               H5Tequal(H5T_NATIVE_INT64, H5T_STD_I64LE) > 0 &&
               H5Tequal(H5T_NATIVE_INT32, H5T_STD_I32LE) > 0,
           TC_ERR_UNSUPPORTED,
           "the results file stores little-endian IEEE numbers, and this machine's are not");
  return TC_SUCCESS;
}

static tc_err access_list(hid_t *list) {
  TC_H5_CALL(*list = H5Pcreate(H5P_FILE_ACCESS));
  TC_H5_CALL(H5Pset_alignment(*list, alignment_threshold, alignment_bytes));
  return TC_SUCCESS;
}

tc_err tc_output_lay_out(const tc_output *output, tc_output_dataset *datasets, int count,
                         const tc_output_run_info *run, const char *created,
                         tc_output_layout *layout) {
  *layout = (tc_output_layout){NULL, 0, 0, {-1, 0, 0}};
  TC_CALL(check_native_types());
  hid_t list = -1, file = -1;
  tc_err err = access_list(&list);
  if (err == TC_SUCCESS)
    err = tc_h5_image_create(list, &layout->image, &file);
  err = tc_output_first_error(err, tc_output_close_ids(&list, 1));
  if (err == TC_SUCCESS)
    err = describe(output, file, datasets, count, run, created, layout);
  /* The file is in memory: closing it does no I/O that could fail. */
  if (file >= 0 && H5Fclose(file) < 0)
    err = tc_output_first_error(err, tc_h5_failure("H5Fclose", __FILE__, __LINE__, __func__));
  if (err == TC_SUCCESS) {
    int64_t extents;
    const tc_h5_extent *extent;
    tc_h5_image_contents(layout->image, &extents, &extent, &layout->file_bytes);
  } else {
    tc_output_free_layout(layout);
  }
  return err;
}

void tc_output_free_layout(tc_output_layout *layout) {
  tc_h5_image_destroy(&layout->image);
  *layout = (tc_output_layout){NULL, 0, 0, {-1, 0, 0}};
}
