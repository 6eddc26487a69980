/* tc_omp: the OpenMP team of the per-batch regions. A parallel region costs
 * libgomp a team and a futex system call at its end even when it has one
 * thread, about a microsecond on a virtual machine; a batch of the assembly
 * loop runs some twenty regions, and most ranks run one thread. tc_omp_team
 * runs a region's body directly where its team would have one thread, and on
 * a team otherwise; the body splits its work by the thread number it is
 * given (tc_omp_share), not by orphaned worksharing constructs, so it is
 * right both ways and when called from inside a caller's own region. */
#ifndef TC_OMP_H
#define TC_OMP_H

#include <stdint.h>

/// A region's body: the share of thread `thread` of `threads`.
typedef void tc_omp_body(void *context, int thread, int threads);

/// Threads a region started here would have: omp_get_max_threads() outside
/// any region, 1 inside an active one (nested regions are not used) and in a
/// build without OpenMP.
int tc_omp_threads(void);

/// Runs body on a team of `threads` threads (at most tc_omp_threads()), or,
/// where that is one thread, as body(context, 0, 1) on the calling thread
/// without starting a region.
void tc_omp_team(int threads, tc_omp_body *body, void *context);

/// A loop's body over the items [begin, end).
typedef void tc_omp_range(void *context, int64_t begin, int64_t end);

/// Runs range over [0, count) on the OpenMP threads (tc_omp_threads() of
/// them, through tc_omp_team), each thread its tc_omp_share of the items:
/// for loops whose body needs no per-thread state.
void tc_omp_for(int64_t count, tc_omp_range *range, void *context);

/// Thread `thread` of `threads`'s part [*begin, *end) of `count` items, as
/// schedule(static) splits them: contiguous, the first count % threads
/// threads one item more.
static inline void tc_omp_share(int64_t count, int thread, int threads, int64_t *begin,
                                int64_t *end) {
  const int64_t base = count / threads, extra = count % threads;
  *begin = thread * base + (thread < extra ? thread : extra);
  *end = *begin + base + (thread < extra ? 1 : 0);
}

#endif
