/* tc_replay_dims: the logical dims of a contraction's arrays in the letters
 * of tc_contract.h, for replay messages and tcmini-bench --help (compiled
 * with and without HDF5). */
#include <stdio.h>

#include "tc_replay.h"

void tc_replay_dims_text(tc_kernel kernel, tc_replay_array which, char *text, size_t size) {
  static const char *const tensor[] = {"", ",D1", ",D1,D2"};
  const char *t = tensor[tc_kernel_tensor_rank(kernel)];
  if (which == TC_REPLAY_OUTPUT)
    snprintf(text, size, "%s", tc_kernel_is_field_field(kernel)  ? "(C,L,R)"
                               : tc_kernel_is_data_field(kernel) ? "(C,F)"
                                                                 : "(C)");
  else if (tc_kernel_is_field_field(kernel))
    snprintf(text, size, "(C,%s,P%s)", which == TC_REPLAY_LEFT ? "L" : "R", t);
  else if (tc_kernel_is_data_field(kernel) && which == TC_REPLAY_LEFT)
    snprintf(text, size, "data (C,P%s) or (C,1%s)", t, t);
  else if (tc_kernel_is_data_field(kernel))
    snprintf(text, size, "fields (C,F,P%s)", t);
  else
    snprintf(text, size, "(C,P%s)", t);
}

