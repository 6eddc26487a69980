/* mesh_test: the check macro, failure count and verdict shared by the mesh
 * tests, and small independent references (the tests do not reuse the
 * generator's own index arithmetic). */
#ifndef MESH_TEST_H
#define MESH_TEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "tc_mesh.h"
#include "tc_parallel.h"

static int test_failures = 0;

/// Counts a failed check on this rank and prints the first few.
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      if (test_failures++ < 20) {                                                                  \
        fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", tc_rank(MPI_COMM_WORLD), __FILE__,   \
                __LINE__, #cond);                                                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/// Fails the test when a tc call fails, printing the recorded error.
#define CHECK_CALL(expr)                                                                           \
  do {                                                                                             \
    tc_err check_err_ = (expr);                                                                    \
    CHECK(check_err_ == TC_SUCCESS, "%s returned '%s': %s (%s)", #expr, tc_err_name(check_err_),   \
          tc_error_message(), tc_error_origin());                                                  \
  } while (0)

/// Number of cells of an n-cell line touching node index i (0..order*n)
/// of the same line: a vertex between two cells touches both, an edge
/// midpoint (order 2, odd i) only its own cell.
static inline int64_t cells_touching_node_index(int64_t n, int order, int64_t i) {
  if (order == 2 && i % 2 == 1)
    return 1;
  return (i > 0) + (i < order * n);
}

/// Sums the failures over all ranks, prints the verdict on rank 0 and stops
/// MPI. Returns main's exit status (the same on every rank).
static inline int test_finish(const char *name) {
  int64_t total = test_failures;
  if (tc_allreduce_sum_int64(MPI_COMM_WORLD, &total, 1) != TC_SUCCESS)
    total = 1;
  if (tc_rank(MPI_COMM_WORLD) == 0)
    printf("%s on %d ranks: %s (%lld failed checks)\n", name, tc_size(MPI_COMM_WORLD),
           total == 0 ? "PASS" : "FAIL", (long long)total);
  if (tc_parallel_finalize() != TC_SUCCESS)
    return 1;
  return total == 0 ? 0 : 1;
}

#endif
