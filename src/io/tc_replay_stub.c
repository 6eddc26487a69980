/* tc_replay_stub: the replay-file API of a build without HDF5
 * (-DTCMINI_ENABLE_HDF5=OFF): every call fails with one message that says
 * how to get replay files. */
#include "tc_replay.h"

#define TC_REPLAY_UNSUPPORTED                                                                 \
  TC_FAIL(TC_ERR_UNSUPPORTED, "this build of tcmini-bench has no HDF5, so no --replay "       \
                              "(configure with -DTCMINI_ENABLE_HDF5=ON)")

tc_err tc_replay_read_inputs(const char *path, const tc_kernel *kernel_override,
                             tc_contraction *shape, void **left, void **right) {
  (void)path, (void)kernel_override, (void)shape, (void)left, (void)right;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_write_inputs(const char *path, const tc_contraction *shape, const void *left,
                              const void *right) {
  (void)path, (void)shape, (void)left, (void)right;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_write_output(const char *path, const tc_contraction *shape,
                              const void *output) {
  (void)path, (void)shape, (void)output;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_read_output(const char *path, const tc_contraction *shape, void *output) {
  (void)path, (void)shape, (void)output;
  TC_REPLAY_UNSUPPORTED;
}
