/* tc_replay_stub: the replay-file API of a build without HDF5
 * (-DTCMINI_ENABLE_HDF5=OFF): every call fails with one message that says
 * how to get replay files. */
#include "tc_replay.h"

#include <string.h>

#define TC_REPLAY_UNSUPPORTED                                                                 \
  TC_FAIL(TC_ERR_UNSUPPORTED, "this build of tcmini-bench has no HDF5, so no --replay "       \
                              "(configure with -DTCMINI_ENABLE_HDF5=ON)")

tc_err tc_replay_read(const tc_replay_source *source, tc_replay_case *replay) {
  (void)source;
  memset(replay, 0, sizeof *replay);
  TC_REPLAY_UNSUPPORTED;
}

void tc_replay_case_free(tc_replay_case *replay) { memset(replay, 0, sizeof *replay); }

tc_err tc_replay_write_inputs(const char *path, const char *group, const tc_contraction *shape,
                              const void *left, const void *right, const void *initial_output) {
  (void)path, (void)group, (void)shape, (void)left, (void)right, (void)initial_output;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_read_output(const char *path, const tc_contraction *shape, void *output) {
  (void)path, (void)shape, (void)output;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_read_row(const char *path, int index, const tc_contraction *shape,
                          tc_replay_row *row, void *output, int *count) {
  (void)path, (void)index, (void)shape, (void)row, (void)output, (void)count;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_writer_create(const char *path, bool overwrite, const tc_replay_source *source,
                               const tc_contraction *shape, tc_replay_writer **writer) {
  (void)path, (void)overwrite, (void)source, (void)shape;
  *writer = NULL;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_writer_add(tc_replay_writer *writer, const tc_replay_row *row,
                            const void *output) {
  (void)writer, (void)row, (void)output;
  TC_REPLAY_UNSUPPORTED;
}

tc_err tc_replay_writer_commit(tc_replay_writer *writer) {
  (void)writer;
  TC_REPLAY_UNSUPPORTED;
}

void tc_replay_writer_destroy(tc_replay_writer **writer) { *writer = NULL; }
