/* test_bench_replay: the two ends of the replay round trip of tcmini-bench.
 *   test_bench_replay write FILE  writes a FieldFieldVector case with known
 *                                 inputs through tc_replay's writer;
 *   test_bench_replay check FILE  reads dataset "output" that
 *                                 tcmini-bench --replay-output wrote and
 *                                 compares it with values computed by hand.
 * CTest runs write, then the bench, then check (fixtures in CMakeLists.txt). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tc_parallel.h"
#include "tc_replay.h"

/* FieldFieldVector with C=2, L=2, R=3, P=2, D1=2: small enough to check by
 * hand, with L != R and every size distinct where it can be. */
enum { C = 2, L = 2, R = 3, P = 2, D = 2 };

static tc_contraction case_shape(void) {
  tc_contraction shape = {.kernel = TC_FIELD_FIELD_VECTOR,
                          .num_cells = C,
                          .num_left_fields = L,
                          .num_right_fields = R,
                          .num_points = P,
                          .num_data_points = 1,
                          .dim1 = D,
                          .dim2 = 1,
                          .layout = TC_LAYOUT_RIGHT,
                          .precision = TC_DOUBLE,
                          .sum_into = false};
  return shape;
}

/* left[c][l][p][d] = 1 + c + 2l + p - d (small integers, some negative
 * products through right); right[c][r][p][d] = (r + 1) * (p ? -1 : 1) + c*d. */
static void fill_inputs(double left[C][L][P][D], double right[C][R][P][D]) {
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < P; ++p)
      for (int d = 0; d < D; ++d) {
        for (int l = 0; l < L; ++l)
          left[c][l][p][d] = 1 + c + 2 * l + p - d;
        for (int r = 0; r < R; ++r)
          right[c][r][p][d] = (r + 1) * (p ? -1 : 1) + c * d;
      }
}

/* out[c][l][r] = sum_{p,d} left[c][l][p][d] * right[c][r][p][d], worked out by
 * hand from the formulas above:
 *   c=0: left(l,p,d) = 1+2l+p-d, right(r,p,d) = (r+1)(1 if p=0 else -1)
 *        p=0: (1+2l) + (2l) = 4l+1 times (r+1); p=1: (2+2l)+(1+2l) = 4l+3 times -(r+1)
 *        out = (r+1)(4l+1-4l-3) = -2(r+1)
 *   c=1: left(l,p,d) = 2+2l+p-d, right(r,p,d) = (r+1)s_p + d
 *        p=0 (s=+1): d=0: (2+2l)(r+1); d=1: (1+2l)(r+2)
 *        p=1 (s=-1): d=0: (3+2l)(-(r+1)); d=1: (2+2l)(-(r+1)+1) = -(2+2l)r
 *        out = (r+1)(2+2l-3-2l) + (1+2l)(r+2) - (2+2l)r = -(r+1) + (1+2l)(r+2) - (2+2l)r */
static const double expected[C][L][R] = {
    {{-2, -4, -6}, {-2, -4, -6}},
    {{1, -1, -3}, {5, 3, 1}},
};

static int write_case(const char *path) {
  double left[C][L][P][D], right[C][R][P][D];
  fill_inputs(left, right);
  tc_contraction shape = case_shape();
  if (tc_replay_write_inputs(path, &shape, left, right) != TC_SUCCESS) {
    fprintf(stderr, "test_bench_replay: %s\n", tc_error_message());
    return 1;
  }
  return 0;
}

static int check_output(const char *path) {
  double output[C][L][R];
  tc_contraction shape = case_shape();
  if (tc_replay_read_output(path, &shape, output) != TC_SUCCESS) {
    fprintf(stderr, "test_bench_replay: %s\n", tc_error_message());
    return 1;
  }
  /* The hand values agree with a direct evaluation of the definition. */
  double left[C][L][P][D], right[C][R][P][D];
  fill_inputs(left, right);
  int failures = 0;
  for (int c = 0; c < C; ++c)
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < R; ++r) {
        double direct = 0.0;
        for (int p = 0; p < P; ++p)
          for (int d = 0; d < D; ++d)
            direct += left[c][l][p][d] * right[c][r][p][d];
        if (direct != expected[c][l][r] || fabs(output[c][l][r] - expected[c][l][r]) > 1e-12) {
          fprintf(stderr, "output[%d][%d][%d] = %g, expected %g (direct sum %g)\n", c, l, r,
                  output[c][l][r], expected[c][l][r], direct);
          ++failures;
        }
      }
  /* A file without "output", or with other dims, is refused. */
  tc_contraction other = shape;
  other.num_right_fields = R + 1;
  double larger[C * L * (R + 1)];
  if (tc_replay_read_output(path, &other, larger) != TC_ERR_SHAPE) {
    fprintf(stderr, "reading output with the wrong dims was not refused with TC_ERR_SHAPE\n");
    ++failures;
  }
  printf("%s: %d of %d output entries wrong\n", path, failures, C * L * R);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS)
    return 1;
  int status = 2;
  if (argc == 3 && strcmp(argv[1], "write") == 0)
    status = write_case(argv[2]);
  else if (argc == 3 && strcmp(argv[1], "check") == 0)
    status = check_output(argv[2]);
  else
    fprintf(stderr, "usage: test_bench_replay write|check FILE\n");
  if (tc_parallel_finalize() != TC_SUCCESS)
    return 1;
  return status;
}
