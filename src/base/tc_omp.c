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
