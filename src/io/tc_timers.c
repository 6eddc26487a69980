/* tc_timers: the phase names (generated from TC_PHASE_LIST), the monotonic
 * clock, per-rank accumulation with nested phases timed exclusively (a stack
 * of the running phases, the innermost one accumulating), and the
 * min/avg/max reduction over ranks. */
#define _POSIX_C_SOURCE 200809L
#include "tc_timers.h"

#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "tc_parallel.h"

#define TC_IGNORE_PHASE_(id, name)
#define TC_COUNT_KERNEL_(id) +1
_Static_assert(0 TC_PHASE_LIST(TC_IGNORE_PHASE_, TC_COUNT_KERNEL_) == TC_KERNEL_COUNT,
               "TC_PHASE_LIST must hold one KERNEL entry per tc_kernel");
#undef TC_IGNORE_PHASE_
#undef TC_COUNT_KERNEL_

struct tc_timers {
  double total[TC_PHASE_COUNT];
  double started[TC_PHASE_COUNT]; ///< when the phase last started or resumed
  bool running[TC_PHASE_COUNT];
  int64_t count[TC_PHASE_COUNT];
  tc_phase nested[TC_PHASE_COUNT]; ///< the running phases but total, innermost last
  int depth;
};

const char *tc_phase_name(tc_phase phase) {
  switch (phase) {
#define TC_PHASE_NAME_(id, name)                                               \
  case TC_PHASE_##id:                                                          \
    return name;
#define TC_KERNEL_NAME_(id)                                                    \
  case TC_PHASE_##id:                                                          \
    return tc_kernel_name(TC_##id);
    TC_PHASE_LIST(TC_PHASE_NAME_, TC_KERNEL_NAME_)
#undef TC_PHASE_NAME_
#undef TC_KERNEL_NAME_
  case TC_PHASE_COUNT:
    break;
  }
  return "unknown";
}

tc_phase tc_phase_of_kernel(tc_kernel kernel) {
  switch (kernel) {
#define TC_IGNORE_PHASE_(id, name)
#define TC_KERNEL_PHASE_(id)                                                   \
  case TC_##id:                                                                \
    return TC_PHASE_##id;
    TC_PHASE_LIST(TC_IGNORE_PHASE_, TC_KERNEL_PHASE_)
#undef TC_IGNORE_PHASE_
#undef TC_KERNEL_PHASE_
  case TC_KERNEL_COUNT:
    break;
  }
  return TC_PHASE_COUNT;
}

double tc_wall_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

tc_err tc_timers_create(tc_timers **timers) {
  TC_CALLOC(*timers, 1);
  return TC_SUCCESS;
}

void tc_timers_destroy(tc_timers **timers) {
  free(*timers);
  *timers = NULL;
}

static tc_err check_phase(tc_phase phase) {
  TC_CHECK((int)phase >= 0 && phase < TC_PHASE_COUNT, TC_ERR_ARGUMENT, "unknown phase %d",
           (int)phase);
  return TC_SUCCESS;
}

tc_err tc_timer_start(tc_timers *timers, tc_phase phase) {
  const double now = tc_wall_seconds();
  if ((unsigned)phase >= (unsigned)TC_PHASE_COUNT)
    return check_phase(phase);
  TC_CHECK(!timers->running[phase], TC_ERR_INTERNAL, "timer '%s' started while running",
           tc_phase_name(phase));
  if (phase != TC_PHASE_TOTAL) {
    if (timers->depth > 0) { /* pause the phase this one runs inside */
      const tc_phase outer = timers->nested[timers->depth - 1];
      timers->total[outer] += now - timers->started[outer];
    }
    timers->nested[timers->depth++] = phase;
  }
  timers->running[phase] = true;
  timers->started[phase] = now;
  return TC_SUCCESS;
}

tc_err tc_timer_stop(tc_timers *timers, tc_phase phase) {
  const double now = tc_wall_seconds();
  if ((unsigned)phase >= (unsigned)TC_PHASE_COUNT)
    return check_phase(phase);
  TC_CHECK(timers->running[phase], TC_ERR_INTERNAL, "timer '%s' stopped while not running",
           tc_phase_name(phase));
  if (phase != TC_PHASE_TOTAL) {
    const tc_phase inner = timers->nested[timers->depth - 1];
    TC_CHECK(inner == phase, TC_ERR_INTERNAL, "timer '%s' stopped while '%s' runs inside it",
             tc_phase_name(phase), tc_phase_name(inner));
    if (--timers->depth > 0) /* resume the phase this one paused */
      timers->started[timers->nested[timers->depth - 1]] = now;
  }
  timers->running[phase] = false;
  timers->total[phase] += now - timers->started[phase];
  timers->count[phase]++;
  return TC_SUCCESS;
}

tc_err tc_timer_add(tc_timers *timers, tc_phase phase, double seconds) {
  TC_CALL(check_phase(phase));
  TC_CHECK(seconds >= 0, TC_ERR_ARGUMENT, "negative time %g s added to timer '%s'", seconds,
           tc_phase_name(phase));
  timers->total[phase] += seconds;
  timers->count[phase]++;
  return TC_SUCCESS;
}

double tc_timer_seconds(const tc_timers *timers, tc_phase phase) {
  return check_phase(phase) == TC_SUCCESS ? timers->total[phase] : 0.0;
}

int64_t tc_timer_count(const tc_timers *timers, tc_phase phase) {
  return check_phase(phase) == TC_SUCCESS ? timers->count[phase] : 0;
}

tc_err tc_timers_reduce(MPI_Comm comm, const tc_timers *timers,
                        tc_phase_stats stats[TC_PHASE_COUNT]) {
  double min[TC_PHASE_COUNT], sum[TC_PHASE_COUNT], max[TC_PHASE_COUNT];
  int64_t count[TC_PHASE_COUNT];
  for (int p = 0; p < TC_PHASE_COUNT; p++) {
    min[p] = sum[p] = max[p] = timers->total[p];
    count[p] = timers->count[p];
  }
  TC_CALL(tc_allreduce_min_double(comm, min, TC_PHASE_COUNT));
  TC_CALL(tc_allreduce_sum_double(comm, sum, TC_PHASE_COUNT));
  TC_CALL(tc_allreduce_max_double(comm, max, TC_PHASE_COUNT));
  TC_CALL(tc_allreduce_max_int64(comm, count, TC_PHASE_COUNT));
  int ranks = tc_size(comm);
  for (int p = 0; p < TC_PHASE_COUNT; p++)
    stats[p] = (tc_phase_stats){min[p], sum[p] / ranks, max[p], count[p]};
  return TC_SUCCESS;
}

double tc_phase_stats_accounted(const tc_phase_stats stats[TC_PHASE_COUNT], bool average) {
  double sum = 0.0;
  for (int p = 0; p < TC_PHASE_COUNT; p++)
    if (p != TC_PHASE_TOTAL)
      sum += average ? stats[p].avg : stats[p].max;
  return sum;
}
