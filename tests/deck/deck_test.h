/* deck_test: checking macros shared by the tests of src/io's deck, timers
 * and report. Failures are counted per rank; deck_test_finish agrees on them
 * so that every rank exits with the same status. */
#ifndef DECK_TEST_H
#define DECK_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_contract.h"
#include "tc_error.h"
#include "tc_parallel.h"

static int deck_test_failures;

/// Counts a failure and says where (and on which rank), unless cond holds.
#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "rank %d: %s:%d: FAILED %s: ", tc_rank(MPI_COMM_WORLD),  \
              __FILE__, __LINE__, #cond);                                      \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      ++deck_test_failures;                                                    \
    }                                                                          \
  } while (0)

/// Two strings must be equal.
#define EXPECT_STREQ(got, want)                                                \
  do {                                                                         \
    const char *deck_got_ = (got), *deck_want_ = (want);                       \
    EXPECT(deck_got_ && strcmp(deck_got_, deck_want_) == 0,                    \
           "got '%s', want '%s'", deck_got_ ? deck_got_ : "(null)", deck_want_); \
  } while (0)

/// A call that must succeed; on failure the test function gives up.
#define REQUIRE_CALL(expr)                                                     \
  do {                                                                         \
    tc_err deck_err_ = (expr);                                                 \
    if (deck_err_ != TC_SUCCESS) {                                             \
      EXPECT(deck_err_ == TC_SUCCESS, "%s", tc_error_message());               \
      tc_error_clear();                                                        \
      return;                                                                  \
    }                                                                          \
  } while (0)

/// Fills overrides[0] and returns 1 when the default backend (openmp) is not
/// compiled into this build, so that a configuration of defaults validates:
/// "run.backend=serial"; returns 0 otherwise.
static inline int deck_test_fallback(char *overrides[1]) {
  static char serial[] = "run.backend=serial";
  if (tc_contract_backend_get(TC_BACKEND_OPENMP))
    return 0;
  overrides[0] = serial;
  return 1;
}

/// Starts MPI for a test program.
static inline void deck_test_init(int *argc, char ***argv) {
  if (tc_parallel_init(argc, argv) != TC_SUCCESS) {
    fprintf(stderr, "cannot start MPI: %s\n", tc_error_message());
    exit(EXIT_FAILURE);
  }
}

/// Agrees on the failure count, prints the verdict on rank 0, stops MPI and
/// returns main's exit status (the same on every rank).
static inline int deck_test_finish(const char *name) {
  int64_t failures = deck_test_failures;
  if (tc_allreduce_sum_int64(MPI_COMM_WORLD, &failures, 1) != TC_SUCCESS) {
    fprintf(stderr, "%s: cannot agree on failures: %s\n", name, tc_error_message());
    failures = 1;
  }
  if (tc_rank(MPI_COMM_WORLD) == 0)
    printf("%s: %s (%lld failures over %d ranks)\n", name, failures ? "FAILED" : "passed",
           (long long)failures, tc_size(MPI_COMM_WORLD));
  if (tc_parallel_finalize() != TC_SUCCESS)
    failures = 1;
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
