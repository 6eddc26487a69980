/* tc_output_stub: the results-file API of a build without HDF5
 * (-DTCMINI_ENABLE_HDF5=OFF). Creating a writer fails with one message that
 * says how to get one; the other calls cannot be reached without a writer. */
#include "tc_output.h"

#define TC_OUTPUT_UNSUPPORTED                                                                 \
  TC_FAIL(TC_ERR_UNSUPPORTED, "this build of tcmini has no HDF5 output (configure with "      \
                              "-DTCMINI_ENABLE_HDF5=ON, or set output.path = none)")

tc_err tc_output_create(MPI_Comm comm, const char *path, bool overwrite, const tc_mesh *mesh,
                        tc_output **output) {
  (void)comm, (void)path, (void)overwrite, (void)mesh;
  *output = NULL;
  TC_OUTPUT_UNSUPPORTED;
}

void tc_output_destroy(tc_output **output) { *output = NULL; }

tc_err tc_output_add_cell_field(tc_output *output, const tc_output_field *field) {
  (void)output, (void)field;
  TC_OUTPUT_UNSUPPORTED;
}

tc_err tc_output_add_node_field(tc_output *output, const tc_output_field *field) {
  (void)output, (void)field;
  TC_OUTPUT_UNSUPPORTED;
}

tc_err tc_output_add_element_matrix(tc_output *output, const tc_output_matrix *matrix) {
  (void)output, (void)matrix;
  TC_OUTPUT_UNSUPPORTED;
}

tc_err tc_output_write(tc_output *output, const tc_output_run_info *run, tc_output_stats *stats) {
  (void)output, (void)run, (void)stats;
  TC_OUTPUT_UNSUPPORTED;
}

tc_err tc_output_update_phases(tc_output *output, const tc_output_phase *phases,
                               int num_phases) {
  (void)output, (void)phases, (void)num_phases;
  TC_OUTPUT_UNSUPPORTED;
}

tc_err tc_output_divert_failed(tc_output *output) {
  (void)output;
  TC_OUTPUT_UNSUPPORTED;
}

const char *tc_output_h5_path(const tc_output *output) {
  (void)output;
  return "";
}

const char *tc_output_note(const tc_output *output) {
  (void)output;
  return "";
}

const char *tc_output_xdmf_path(const tc_output *output) {
  (void)output;
  return "";
}

tc_err tc_output_fail_after(tc_output *output, const char *dataset_path, int rank) {
  (void)output, (void)dataset_path, (void)rank;
  TC_OUTPUT_UNSUPPORTED;
}
