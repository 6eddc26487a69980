/* tc_progress: the "step k of n" line that tells a user at a terminal that a
 * long run is alive. It goes to rank 0's stderr, never into stdout (which
 * holds the report a user may redirect), and by default only when tcmini was
 * started without an MPI launcher and its stderr is a terminal: under
 * mpirun, a rank's stdout and stderr are a pseudo-terminal whatever the user
 * redirected mpirun's output to, so a rank cannot tell that anyone sees the
 * line. run.progress = on shows it anyway (on stderr), off never. */
#ifndef TC_PROGRESS_H
#define TC_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_config.h"

/// The state of the line.
typedef struct {
  bool shown;     ///< this rank shows the line
  int64_t steps;  ///< steps in the run
  double started; ///< wall seconds at tc_progress_start
  double drawn;   ///< wall seconds when the line was last drawn, 0 before
} tc_progress;

/// Starts the line for a run of steps steps on this rank (shown on rank 0
/// as mode and the environment say). Not collective.
void tc_progress_start(tc_progress *progress, tc_progress_mode mode, int rank, int64_t steps);

/// Before step step (0-based): redraws the line once the steps have taken
/// more than two seconds, at most once a second. Not collective.
void tc_progress_step(tc_progress *progress, int64_t step);

/// Clears the line, if it was drawn. Not collective.
void tc_progress_finish(tc_progress *progress);

#endif
