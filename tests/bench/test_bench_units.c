/* test_bench_units: the pieces of tcmini-bench that decide a verdict or a
 * size, checked against hand-computed values: the verification norm and
 * tolerance, layout conversion, the checks of sampled cells (--check-cells),
 * option parsing, the cells chosen for --memory, --shapes, and the random
 * shapes of --sweep. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_case.h"
#include "bench_options.h"
#include "bench_sweep.h"
#include "tc_parallel.h"

static int failures = 0;

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void test_verdicts(void) {
  const double reference[4] = {3.0, -4.0, 0.0, 12.0}; /* norm 13 */
  double output[4];
  memcpy(output, reference, sizeof output);
  EXPECT(bench_relative_error(TC_DOUBLE, 4, output, reference) == 0.0, "identical arrays");

  output[2] = 1.3; /* difference norm 1.3: relative 0.1 */
  double error = bench_relative_error(TC_DOUBLE, 4, output, reference);
  EXPECT(fabs(error - 0.1) < 1e-15, "one wrong entry: got %g, expected 0.1", error);

  memcpy(output, reference, sizeof output);
  output[0] = reference[1]; /* two entries swapped: an index-order bug */
  output[1] = reference[0];
  error = bench_relative_error(TC_DOUBLE, 4, output, reference);
  EXPECT(fabs(error - sqrt(98.0) / 13.0) < 1e-15, "swap: got %g", error);

  output[3] = NAN; /* an entry never written */
  error = bench_relative_error(TC_DOUBLE, 4, output, reference);
  EXPECT(!(error <= 1.0), "NaN output must not pass, got %g", error);

  const float reference_f[2] = {1.0f, 2.0f}, output_f[2] = {1.0f, 2.5f};
  error = bench_relative_error(TC_FLOAT, 2, output_f, reference_f);
  EXPECT(fabs(error - 0.5 / sqrt(5.0)) < 1e-7, "float: got %g", error);

  /* Tolerances: u * (8 + 2K); K = P*D1*D2 = 216*3*3 = 1944 for FieldFieldTensor p125. */
  tc_contraction shape = {.kernel = TC_FIELD_FIELD_TENSOR, .num_cells = 1, .num_left_fields = 125,
                          .num_right_fields = 125, .num_points = 216, .num_data_points = 1,
                          .dim1 = 3, .dim2 = 3, .precision = TC_DOUBLE};
  double tolerance = bench_tolerance(&shape);
  EXPECT(fabs(tolerance - 0x1.0p-53 * 3896.0) < 1e-20, "double tolerance %g", tolerance);
  shape.precision = TC_FLOAT;
  tolerance = bench_tolerance(&shape);
  EXPECT(fabs(tolerance - 0x1.0p-24 * 3896.0) < 1e-12, "float tolerance %g", tolerance);
  EXPECT(tolerance < 1e-3, "a float tolerance of %g would hide real errors", tolerance);
}

static void test_relayout(void) {
  /* FieldFieldScalar left input (C,L,P) = (2,3,4): in layout LEFT the entry
   * (c,l,p) sits at c + C*(l + L*p) (cell index fastest). */
  tc_contraction shape = {.kernel = TC_FIELD_FIELD_SCALAR, .num_cells = 2, .num_left_fields = 3,
                          .num_right_fields = 1, .num_points = 4, .num_data_points = 1,
                          .dim1 = 1, .dim2 = 1, .layout = TC_LAYOUT_LEFT, .precision = TC_DOUBLE};
  double row_major[24], physical[24], back[24];
  for (int i = 0; i < 24; ++i)
    row_major[i] = i; /* row-major (c,l,p) -> 12c + 4l + p */
  bench_relayout(&shape, BENCH_ARRAY_LEFT, row_major, physical, true);
  for (int c = 0; c < 2; ++c)
    for (int l = 0; l < 3; ++l)
      for (int p = 0; p < 4; ++p)
        EXPECT(physical[c + 2 * (l + 3 * p)] == 12 * c + 4 * l + p, "left layout (%d,%d,%d)", c, l, p);
  bench_relayout(&shape, BENCH_ARRAY_LEFT, physical, back, false);
  EXPECT(memcmp(back, row_major, sizeof back) == 0, "layout round trip");
}

/* A case checked on 3 of its 10 cells (0, 4 and 9): a wrong entry in a
 * checked cell fails, in either layout; the other cells are not looked at. */
static void test_checked_cells(void) {
  const tc_contraction shape = {.kernel = TC_FIELD_FIELD_VECTOR, .num_cells = 10,
                                .num_left_fields = 3, .num_right_fields = 4, .num_points = 5,
                                .num_data_points = 1, .dim1 = 2, .dim2 = 1,
                                .layout = TC_LAYOUT_RIGHT, .precision = TC_DOUBLE};
  bench_case sampled, full;
  tc_err err = bench_case_create_random_checked(&shape, 42, 3, &sampled);
  EXPECT(err == TC_SUCCESS, "sampled case: %s", tc_error_message());
  err = bench_case_create_random(&shape, 42, &full);
  EXPECT(err == TC_SUCCESS, "full case: %s", tc_error_message());
  if (err != TC_SUCCESS)
    return;
  EXPECT(sampled.num_checked == 3 && sampled.checked[0] == 0 && sampled.checked[1] == 4 &&
             sampled.checked[2] == 9,
         "checked cells");
  EXPECT(full.num_checked == 10 && full.checked == NULL, "every cell checked");
  /* The full reference is a right answer for both. */
  double output[10 * 12], left_output[10 * 12];
  memcpy(output, full.reference, sizeof output);
  EXPECT(bench_case_error(&sampled, TC_LAYOUT_RIGHT, output) == 0.0, "exact answer");
  tc_contraction left_shape = shape;
  left_shape.layout = TC_LAYOUT_LEFT;
  bench_relayout(&left_shape, BENCH_ARRAY_OUTPUT, output, left_output, true);
  EXPECT(bench_case_error(&sampled, TC_LAYOUT_LEFT, left_output) == 0.0, "exact answer, left");
  output[4 * 12 + 7] += 1.0; /* cell 4 is checked */
  EXPECT(bench_case_error(&sampled, TC_LAYOUT_RIGHT, output) > bench_tolerance(&shape),
         "a wrong checked entry passed");
  EXPECT(bench_case_error(&full, TC_LAYOUT_RIGHT, output) > bench_tolerance(&shape),
         "a wrong entry passed the full check");
  output[4 * 12 + 7] -= 1.0;
  output[5 * 12 + 7] += 1.0; /* cell 5 is not */
  EXPECT(bench_case_error(&sampled, TC_LAYOUT_RIGHT, output) == 0.0, "cell 5 is not checked");
  left_output[9 + 10 * (1 + 3 * 2)] = NAN; /* cell 9, entry (1, 2), in layout left */
  EXPECT(isnan(bench_case_error(&sampled, TC_LAYOUT_LEFT, left_output)), "NaN is an error");
  bench_case_destroy(&sampled);
  bench_case_destroy(&full);
  EXPECT(sampled.checked == NULL && sampled.reference == NULL, "destroy empties the case");
}

/* The sweep's shapes: in range, the same for a seed and index whatever N. */
static void test_sweep_shapes(void) {
  int kernels[3] = {0, 0, 0};
  for (int64_t i = 0; i < 300; ++i) {
    tc_contraction a, b;
    bench_sweep_shape(7, i, TC_LAYOUT_RIGHT, TC_FLOAT, 64, &a);
    bench_sweep_shape(7, i, TC_LAYOUT_RIGHT, TC_FLOAT, 64, &b);
    EXPECT(memcmp(&a, &b, sizeof a) == 0, "shape %lld is not reproducible", (long long)i);
    EXPECT(tc_kernel_is_field_field(a.kernel) && a.num_left_fields >= 4 &&
               a.num_left_fields <= 130 && a.num_right_fields >= 4 && a.num_right_fields <= 130 &&
               a.num_points >= 1 && a.num_points <= 343 && a.dim1 >= 1 && a.dim1 <= 3 &&
               a.dim2 >= 1 && a.dim2 <= 3 && a.precision == TC_FLOAT && !a.sum_into,
           "shape %lld out of range", (long long)i);
    EXPECT(tc_contraction_validate(&a) == TC_SUCCESS, "shape %lld invalid", (long long)i);
    a.num_cells = 1;
    const double per_cell = (double)(tc_contraction_left_count(&a) +
                                     tc_contraction_right_count(&a) +
                                     tc_contraction_output_count(&a)) * 4.0;
    EXPECT(b.num_cells == (int64_t)(64.0 * 1048576 / per_cell) || b.num_cells == 1,
           "shape %lld: %lld cells for 64 MiB", (long long)i, (long long)b.num_cells);
    kernels[a.kernel - TC_FIELD_FIELD_SCALAR]++;
  }
  EXPECT(kernels[0] > 60 && kernels[1] > 60 && kernels[2] > 60, "kernels %d %d %d", kernels[0],
         kernels[1], kernels[2]);
  tc_contraction other;
  bench_sweep_shape(8, 0, TC_LAYOUT_RIGHT, TC_FLOAT, 64, &other);
  tc_contraction first;
  bench_sweep_shape(7, 0, TC_LAYOUT_RIGHT, TC_FLOAT, 64, &first);
  EXPECT(memcmp(&other, &first, sizeof other) != 0, "seeds 7 and 8 give the same first shape");
}

static void test_options(void) {
  char *argv[] = {"tcmini-bench", "--kernel", "FieldFieldScalar,DataDataTensor", "--preset",
                  "p8,p125", "--memory", "1", "--threads=1,2", "--precision", "all", NULL};
  bench_options options;
  tc_err err = bench_options_parse(10, argv, &options);
  EXPECT(err == TC_SUCCESS, "parse: %s", tc_error_message());
  EXPECT(options.num_kernels == 2 && options.kernels[1] == TC_DATA_DATA_TENSOR, "kernels");
  EXPECT(options.num_thread_counts == 2 && options.thread_counts[1] == 2, "threads");
  EXPECT(options.num_precisions == 2 && options.reps == 10, "precisions and default reps");

  /* p8 FieldFieldScalar, double: per cell (L*P + R*P + L*R) * 8 = 1536 bytes,
   * so 1 MB holds 1048576 / 1536 = 682 cells. p125 FieldFieldScalar, float:
   * (2*125*216 + 125*125) * 4 = 278500 bytes, 3 cells. */
  tc_contraction shapes[BENCH_PRESET_COUNT];
  int preset_of[BENCH_PRESET_COUNT], count = 0;
  err = bench_options_shapes(&options, TC_FIELD_FIELD_SCALAR, TC_DOUBLE, shapes, preset_of, &count);
  EXPECT(err == TC_SUCCESS && count == 2, "shapes");
  EXPECT(shapes[0].num_cells == 682 && shapes[0].num_left_fields == 8 && shapes[0].num_points == 8,
         "p8 cells %lld", (long long)shapes[0].num_cells);
  err = bench_options_shapes(&options, TC_FIELD_FIELD_SCALAR, TC_FLOAT, shapes, preset_of, &count);
  EXPECT(err == TC_SUCCESS && shapes[1].num_cells == 3 && shapes[1].num_right_fields == 125,
         "p125 cells %lld", (long long)shapes[1].num_cells);
  /* DataDataTensor p8: data (C,P,3,3) twice, output (C): D1 = D2 = 3 by default. */
  err = bench_options_shapes(&options, TC_DATA_DATA_TENSOR, TC_DOUBLE, shapes, preset_of, &count);
  EXPECT(err == TC_SUCCESS && shapes[0].dim1 == 3 && shapes[0].dim2 == 3 &&
             shapes[0].num_left_fields == 1 && shapes[0].num_cells == 1048576 / ((72 + 72 + 1) * 8),
         "DataDataTensor p8 shape");

  /* --shapes: each shape for every kernel; C from --memory. */
  char *listed[] = {"tcmini-bench", "--kernel", "FieldFieldTensor,DataDataScalar", "--shapes",
                    "81x81x27,3x5x7", "--memory", "1", NULL};
  err = bench_options_parse(7, listed, &options);
  EXPECT(err == TC_SUCCESS && options.num_shapes == 4 && options.num_presets == 0,
         "--shapes: %s", tc_error_message());
  tc_contraction shape;
  err = bench_options_listed_shape(&options, 0, TC_DOUBLE, &shape);
  EXPECT(err == TC_SUCCESS && shape.kernel == TC_FIELD_FIELD_TENSOR &&
             shape.num_left_fields == 81 && shape.num_right_fields == 81 &&
             shape.num_points == 27 && shape.dim1 == 3 && shape.dim2 == 3 &&
             shape.num_cells == 1048576 / ((81 * 243 * 2 + 81 * 81) * 8),
         "listed Q2 shape");
  err = bench_options_listed_shape(&options, 3, TC_FLOAT, &shape);
  EXPECT(err == TC_SUCCESS && shape.kernel == TC_DATA_DATA_SCALAR && shape.num_points == 7 &&
             shape.num_left_fields == 1 && shape.precision == TC_FLOAT,
         "listed DataDataScalar shape");
  /* --sweep and --tune check 16 cells unless told, --sweep takes 1024 MB. */
  char *sweep[] = {"tcmini-bench", "--sweep", "5", NULL};
  err = bench_options_parse(3, sweep, &options);
  EXPECT(err == TC_SUCCESS && options.sweep == 5 && options.check_cells == 16 &&
             options.memory_mb == 1024 && options.seed == 1,
         "--sweep defaults");
  char *tune[] = {"tcmini-bench", "--tune", "t.txt", "--check-cells", "0", NULL};
  err = bench_options_parse(5, tune, &options);
  EXPECT(err == TC_SUCCESS && options.all_variants && options.check_cells == 0 &&
             options.memory_mb == 256,
         "--tune options");

  char *bad[] = {"tcmini-bench", "--threads", "1,x", NULL};
  err = bench_options_parse(3, bad, &options);
  EXPECT(err == TC_ERR_INPUT && strstr(tc_error_message(), "--threads") != NULL,
         "bad thread list: %s", tc_error_message());
  tc_error_clear();
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS)
    return 1;
  test_verdicts();
  test_relayout();
  test_checked_cells();
  test_sweep_shapes();
  test_options();
  printf("test_bench_units: %d failure%s\n", failures, failures == 1 ? "" : "s");
  if (tc_parallel_finalize() != TC_SUCCESS)
    return 1;
  return failures ? 1 : 0;
}
