/* tc_omp: see tc_omp.h. */
#include "tc_omp.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int tc_omp_threads(void) {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

void tc_omp_team(int threads, tc_omp_body *body, void *context) {
  const int available = tc_omp_threads();
  if (threads > available)
    threads = available;
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(context, omp_get_thread_num(), omp_get_num_threads());
    return;
  }
#endif
  body(context, 0, 1);
}

/* What the threads of tc_omp_for share. */
typedef struct {
  int64_t count;
  tc_omp_range *range;
  void *context;
} for_team;

static void for_share(void *context, int thread, int threads) {
  const for_team *team = context;
  int64_t begin, end;
  tc_omp_share(team->count, thread, threads, &begin, &end);
  team->range(team->context, begin, end);
}

void tc_omp_for(int64_t count, tc_omp_range *range, void *context) {
  for_team team = {.count = count, .range = range, .context = context};
  tc_omp_team(tc_omp_threads(), for_share, &team);
}
