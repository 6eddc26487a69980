/* tc_h5: private to src/io. The HDF5 error check (every HDF5 return value
 * goes through TC_H5_CALL) and the switch that keeps HDF5 from printing its
 * own error stack, so that a failure reads as one clear line. */
#ifndef TC_H5_H
#define TC_H5_H

#include <hdf5.h>

#include "tc_error.h"

/// Records TC_ERR_HDF5 naming the HDF5 function in call_text (the source text
/// of the failed expression) and the most specific messages of HDF5's error
/// stack, clears that stack and returns TC_ERR_HDF5. Not collective.
tc_err tc_h5_failure(const char *call_text, const char *file, int line, const char *func);

/// Fails the current function with TC_ERR_HDF5 when expr (an herr_t, hid_t or
/// htri_t expression, possibly an assignment) is negative.
#define TC_H5_CALL(expr)                                                       \
  do {                                                                         \
    if ((expr) < 0)                                                            \
      return tc_h5_failure(#expr, __FILE__, __LINE__, __func__);               \
  } while (0)

/// HDF5's automatic error printing, saved so that it can be put back.
typedef struct {
  H5E_auto2_t func;
  void *data;
} tc_h5_quiet_state;

/// Turns HDF5's own error-stack printing off for this process, saving the
/// previous setting in *saved. Not collective.
tc_err tc_h5_quiet_begin(tc_h5_quiet_state *saved);

/// Puts back the setting saved by tc_h5_quiet_begin. Not collective.
tc_err tc_h5_quiet_end(const tc_h5_quiet_state *saved);

#endif
