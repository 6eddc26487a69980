/* test_contract_conformance: every backend compiled in (other than the serial
 * oracle itself) against the serial reference, for every kernel, layout,
 * precision, sum_into, one-value-per-cell data, and every variant the backend
 * runs, on edge and random shapes (C = 1, L != R, P = 1, D1 != D2, sizes that
 * divide no block size). Outputs are poisoned with NaN before each run (unless
 * sum_into). Tolerances scale with the contraction length times the sum of
 * |terms| (the reference run on |left|, |right|). Backend-generic: a GPU
 * backend is covered when compiled and a GPU is present, "skipped" otherwise;
 * exits 77 when there is nothing to test. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "contract_test.h"
#include "tc_parallel.h"

typedef struct {
  int64_t cells, left_fields, right_fields, points, dim1, dim2;
} test_sizes;

/* Edge shapes: all ones; C = 1 with L != R, P = 1, D1 != D2; odd sizes just
 * past the micro-kernel tile (8 x 16) and the cell blocks; a Tensor length
 * (9*5*7 = 315) past the k block; enough cells for several left-layout
 * stream blocks; left-layout FieldField tiles large enough (64 x 40) that
 * each thread walks several blocks of cell groups, the last one partial,
 * with a Tensor length (36) past the k block. Then random ones. */
static const test_sizes edge_sizes[] = {
    {1, 1, 1, 1, 1, 1},    {1, 3, 5, 1, 2, 3},     {13, 9, 17, 7, 3, 2},
    {11, 16, 33, 9, 5, 7}, {100, 40, 2, 5, 2, 2},  {600, 2, 3, 3, 2, 1},
    {400, 64, 40, 4, 3, 3},
};
enum { RANDOM_SHAPES = 4 };

/* A deterministic generator (xorshift64*), independent of libc. */
static uint64_t next_bits(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

static double next_uniform(uint64_t *state) {
  return (double)(next_bits(state) >> 11) / 4503599627370496.0 - 1.0;
}

static int64_t next_int(uint64_t *state, int64_t low, int64_t high) {
  return low + (int64_t)(next_bits(state) % (uint64_t)(high - low + 1));
}

static double get(tc_precision precision, const void *array, int64_t i) {
  return precision == TC_FLOAT ? ((const float *)array)[i] : ((const double *)array)[i];
}

static void set(tc_precision precision, void *array, int64_t i, double value) {
  if (precision == TC_FLOAT)
    ((float *)array)[i] = (float)value;
  else
    ((double *)array)[i] = value;
}

static void fill_random(tc_precision precision, void *array, int64_t count, uint64_t *state) {
  for (int64_t i = 0; i < count; ++i)
    set(precision, array, i, next_uniform(state));
}

static void copy_abs(tc_precision precision, const void *from, void *to, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    set(precision, to, i, fabs(get(precision, from, i)));
}

/* Host arrays of one case: inputs, the initial output, the reference, the
 * sum of |terms| per output and the backend's result. */
typedef struct {
  void *left, *right, *initial, *expected, *magnitude, *result;
  void *abs_left, *abs_right;
} case_arrays;

static void case_free(case_arrays *arrays) {
  void **all[] = {&arrays->left,     &arrays->right,     &arrays->initial,  &arrays->expected,
                  &arrays->magnitude, &arrays->result, &arrays->abs_left, &arrays->abs_right};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    free(*all[i]);
    *all[i] = NULL;
  }
}

static bool case_alloc(const tc_contraction *shape, case_arrays *arrays) {
  const size_t size = (size_t)tc_precision_size(shape->precision);
  const size_t nl = (size_t)tc_contraction_left_count(shape);
  const size_t nr = (size_t)tc_contraction_right_count(shape);
  const size_t no = (size_t)tc_contraction_output_count(shape);
  *arrays = (case_arrays){calloc(nl, size), calloc(nr, size), calloc(no, size), calloc(no, size),
                          calloc(no, size), calloc(no, size), calloc(nl, size), calloc(nr, size)};
  return test_check(arrays->left && arrays->right && arrays->initial && arrays->expected &&
                        arrays->magnitude && arrays->result && arrays->abs_left && arrays->abs_right,
                    "out of memory for a case");
}

/* Builds the inputs, the reference and the magnitudes of one shape. */
static bool case_prepare(const tc_contraction *shape, uint64_t *state, case_arrays *arrays) {
  const tc_contract_backend *serial = tc_contract_backend_get(TC_BACKEND_SERIAL);
  const tc_precision precision = shape->precision;
  const int64_t no = tc_contraction_output_count(shape);
  fill_random(precision, arrays->left, tc_contraction_left_count(shape), state);
  fill_random(precision, arrays->right, tc_contraction_right_count(shape), state);
  fill_random(precision, arrays->initial, no, state);
  copy_abs(precision, arrays->left, arrays->abs_left, tc_contraction_left_count(shape));
  copy_abs(precision, arrays->right, arrays->abs_right, tc_contraction_right_count(shape));
  const size_t out_bytes = (size_t)(no * tc_precision_size(precision));
  memcpy(arrays->expected, arrays->initial, out_bytes);
  copy_abs(precision, arrays->initial, arrays->magnitude, no);
  return test_ok(tc_contract(serial, shape, TC_VARIANT_REFERENCE, arrays->left, arrays->right,
                             arrays->expected, NULL),
                 "serial reference") &&
         test_ok(tc_contract(serial, shape, TC_VARIANT_REFERENCE, arrays->abs_left,
                             arrays->abs_right, arrays->magnitude, NULL),
                 "serial reference on |inputs|");
}

static void describe(const tc_contraction *s, char *text, size_t size) {
  snprintf(text, size, "%s %s %s%s C=%lld L=%lld R=%lld P=%lld Pd=%lld D1=%lld D2=%lld",
           tc_kernel_name(s->kernel), tc_layout_name(s->layout), tc_precision_name(s->precision),
           s->sum_into ? " sum_into" : "", (long long)s->num_cells, (long long)s->num_left_fields,
           (long long)s->num_right_fields, (long long)s->num_points, (long long)s->num_data_points,
           (long long)s->dim1, (long long)s->dim2);
}

/* Runs one variant on the device and compares with the reference. */
static void check_variant(tc_device *device, const tc_contraction *shape, tc_variant variant,
                          case_arrays *arrays) {
  const tc_precision precision = shape->precision;
  const int64_t no = tc_contraction_output_count(shape);
  if (shape->sum_into)
    memcpy(arrays->result, arrays->initial, (size_t)(no * tc_precision_size(precision)));
  else
    for (int64_t i = 0; i < no; ++i)
      set(precision, arrays->result, i, NAN);
  char text[256];
  describe(shape, text, sizeof text);
  tc_error_clear();
  if (!test_ok(test_run_on_device(device, shape, variant, arrays->left, arrays->right,
                                  arrays->result),
               text))
    return;
  const double eps = precision == TC_FLOAT ? FLT_EPSILON : DBL_EPSILON;
  const double length = (double)tc_contraction_length(shape);
  int reported = 0;
  for (int64_t i = 0; i < no && reported < 3; ++i) {
    const double got = get(precision, arrays->result, i);
    const double want = get(precision, arrays->expected, i);
    const double bound = 2.0 * (length + 2.0) * eps * get(precision, arrays->magnitude, i) + DBL_MIN;
    if (!test_check(fabs(got - want) <= bound, "%s variant %s: output[%lld] = %.9g, expected %.9g",
                    text, tc_variant_name(variant), (long long)i, got, want))
      ++reported;
  }
}

/* Every kernel x layout x precision x sum_into x data points of one size set
 * on one device; returns the number of runs. */
static int check_sizes(tc_device *device, const test_sizes *sizes, uint64_t *state) {
  const tc_contract_backend *backend = tc_device_contract_backend(device);
  int runs = 0;
  for (int kernel = 0; kernel < TC_KERNEL_COUNT; ++kernel)
    for (int layout = 0; layout < TC_LAYOUT_COUNT; ++layout)
      for (int precision = 0; precision < TC_PRECISION_COUNT; ++precision)
        for (int sum_into = 0; sum_into <= 1; ++sum_into)
          for (int shared_data = 0; shared_data <= tc_kernel_is_data_field(kernel); ++shared_data) {
            tc_contraction shape = {
                .kernel = kernel, .num_cells = sizes->cells, .num_left_fields = sizes->left_fields,
                .num_right_fields = sizes->right_fields, .num_points = sizes->points,
                .num_data_points = shared_data ? 1 : sizes->points, .dim1 = sizes->dim1,
                .dim2 = sizes->dim2, .layout = layout, .precision = precision,
                .sum_into = sum_into};
            /* Unused sizes to 0 (normalize makes them 1). */
            const int rank = tc_kernel_tensor_rank(kernel);
            if (!tc_kernel_is_field_field(kernel))
              shape.num_right_fields = 0;
            if (tc_kernel_is_data_data(kernel))
              shape.num_left_fields = 0;
            if (!tc_kernel_is_data_field(kernel))
              shape.num_data_points = 0;
            if (rank < 1)
              shape.dim1 = 0;
            if (rank < 2)
              shape.dim2 = 0;
            tc_contraction_normalize(&shape);
            case_arrays arrays;
            if (case_alloc(&shape, &arrays) && case_prepare(&shape, state, &arrays))
              for (int variant = 0; variant < TC_VARIANT_COUNT; ++variant)
                if (tc_contract_supports(backend, &shape, variant)) {
                  check_variant(device, &shape, variant, &arrays);
                  ++runs;
                }
            case_free(&arrays);
          }
  return runs;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI initialisation failed: %s\n", tc_error_message());
    return 1;
  }
  int backends_tested = 0;
  for (int kind = 0; kind < TC_BACKEND_COUNT; ++kind) {
    const char *name = tc_backend_name(kind);
    if (kind == TC_BACKEND_SERIAL) {
      printf("%s: the reference itself (checked by test_contract_hand)\n", name);
      continue;
    }
    tc_device *device = NULL;
    if (!test_open_device(kind, &device))
      continue;
    uint64_t state = 0x9e3779b97f4a7c15ull + (uint64_t)kind;
    int runs = 0;
    for (size_t s = 0; s < sizeof edge_sizes / sizeof edge_sizes[0]; ++s)
      runs += check_sizes(device, &edge_sizes[s], &state);
    for (int s = 0; s < RANDOM_SHAPES; ++s) {
      const test_sizes sizes = {next_int(&state, 1, 40), next_int(&state, 1, 20),
                                next_int(&state, 1, 20), next_int(&state, 1, 10),
                                next_int(&state, 1, 4),  next_int(&state, 1, 4)};
      runs += check_sizes(device, &sizes, &state);
    }
    printf("%s (%s): %d runs compared with the serial reference\n", name,
           tc_device_description(device), runs);
    tc_device_destroy(&device);
    ++backends_tested;
  }
  const bool skipped = backends_tested == 0 && test_failures == 0;
  printf("%s: %d failure(s)\n", skipped ? "nothing to test" : "conformance", test_failures);
  tc_parallel_finalize();
  return skipped ? TC_TEST_SKIP : (test_failures == 0 ? 0 : 1);
}
