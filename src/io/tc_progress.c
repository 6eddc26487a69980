/* tc_progress: the progress line on rank 0's stderr (see tc_progress.h). */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno */
#include "tc_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tc_timers.h"

/* Whether an MPI launcher started this process (Open MPI, MPICH and other
 * PMI-based launchers, Slurm's srun). */
static bool under_launcher(void) {
  static const char *const variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                          "PMI_SIZE", "SLURM_STEP_ID"};
  for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++)
    if (getenv(variables[i]) != NULL)
      return true;
  return false;
}

void tc_progress_start(tc_progress *progress, tc_progress_mode mode, int rank, int64_t steps) {
  bool wanted = mode == TC_PROGRESS_ON ||
                (mode == TC_PROGRESS_AUTO && !under_launcher() && isatty(fileno(stderr)));
  *progress = (tc_progress){rank == 0 && wanted, steps, tc_wall_seconds(), 0.0};
}

void tc_progress_step(tc_progress *progress, int64_t step) {
  if (!progress->shown)
    return;
  double now = tc_wall_seconds();
  if (now - progress->started < 2.0 || now - progress->drawn < 1.0)
    return;
  fprintf(stderr, "\rtcmini: step %lld of %lld, %.0f s", (long long)step + 1,
          (long long)progress->steps, now - progress->started);
  fflush(stderr);
  progress->drawn = now;
}

void tc_progress_finish(tc_progress *progress) {
  if (!progress->shown || progress->drawn == 0.0)
    return;
  fprintf(stderr, "\r%50s\r", "");
  fflush(stderr);
  progress->drawn = 0.0;
}
