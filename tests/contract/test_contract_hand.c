/* test_contract_hand: small hand-checkable cases per kernel, with expected
 * outputs typed in, run on every backend compiled in (serial reference,
 * OpenMP, CUDA when a GPU is present), every variant it runs, both layouts,
 * both precisions, with and without sum_into. Distinct values and unequal
 * sizes make a wrong index order, a left/right mix-up or a layout mix-up fail.
 *
 * Inputs, in row-major logical order n = 0, 1, ...:
 *   left[n] = n + 1,   right[n] = (7n mod 13) - 6
 * (for DataField, left is the data and right the fields). The expected values
 * were worked out from the definitions in tc_contract.h, independently of
 * tcmini (a few lines of Python over the logical indices). By hand, e.g.
 * FieldFieldScalar C=2 L=3 R=2 P=2: left(0,0,:) = (1,2), right(0,0,:) =
 * (-6,1), right(0,1,:) = (-5,2), so out(0,0,0) = -6+2 = -4, out(0,0,1) = -5+4
 * = -1; left(1,0,:) = (7,8), right(1,0,:) = (-4,3): out(1,0,0) = -28+24 = -4.
 * With sum_into the output starts as 100 + 10m (m its row-major position). */
#include <string.h>

#include "contract_test.h"
#include "tc_parallel.h"

enum { MAX_OUTPUTS = 12, MAX_INPUTS = 64 };

typedef struct {
  tc_kernel kernel;
  int64_t cells, left_fields, right_fields, points, data_points, dim1, dim2;
  int num_outputs;
  double expected[MAX_OUTPUTS]; /* row-major logical order */
} hand_case;

static const hand_case cases[] = {
    {TC_FIELD_FIELD_SCALAR, 2, 3, 2, 2, 1, 1, 1, 12,
     {-4, -1, -14, -7, -24, -13, -4, 11, -6, 13, -8, 15}},
    {TC_FIELD_FIELD_VECTOR, 2, 2, 3, 2, 1, 2, 1, 12,
     {-11, 9, 29, -43, 9, 61, -109, -25, 59, -149, -33, 83}},
    {TC_FIELD_FIELD_TENSOR, 2, 2, 2, 2, 1, 2, 3, 8, {91, 13, 91, -59, 50, -159, 62, -219}},
    {TC_DATA_FIELD_SCALAR, 2, 3, 1, 2, 2, 1, 1, 6, {-4, -1, 2, 7, 14, 21}},
    {TC_DATA_FIELD_SCALAR, 2, 3, 1, 2, 1, 1, 1, 6, {-5, -3, -1, 2, 6, 10}},
    {TC_DATA_FIELD_VECTOR, 2, 2, 1, 2, 2, 3, 1, 4, {-13, 50, -115, 56}},
    {TC_DATA_FIELD_VECTOR, 2, 2, 1, 2, 1, 3, 1, 4, {-16, 20, -58, 32}},
    {TC_DATA_FIELD_TENSOR, 2, 2, 1, 2, 2, 2, 3, 4, {91, 13, 38, -99}},
    {TC_DATA_FIELD_TENSOR, 2, 2, 1, 2, 1, 2, 3, 4, {37, -23, 14, -69}},
    {TC_DATA_DATA_SCALAR, 3, 1, 1, 2, 1, 1, 1, 3, {-4, -7, -2}},
    {TC_DATA_DATA_VECTOR, 2, 1, 1, 2, 1, 3, 1, 2, {-13, 104}},
    {TC_DATA_DATA_TENSOR, 2, 1, 1, 2, 1, 2, 3, 2, {91, -59}},
};

static double left_value(int64_t n) { return (double)(n + 1); }
static double right_value(int64_t n) { return (double)((7 * n) % 13 - 6); }

/* Host storage for either precision. */
typedef union {
  double d[MAX_INPUTS];
  float f[MAX_INPUTS];
} hand_array;

/* Stores the logical array value(n) (n row-major) in layout order. */
static void store_logical(tc_layout layout, tc_precision precision, int rank, const int64_t dims[],
                          double (*value)(int64_t), hand_array *array) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d)
    count *= dims[d];
  for (int64_t n = 0; n < count; ++n) {
    int64_t index[5];
    test_unravel(rank, dims, n, index);
    const int64_t offset = test_offset(layout, rank, dims, index);
    if (precision == TC_FLOAT)
      array->f[offset] = (float)value(n);
    else
      array->d[offset] = value(n);
  }
}

static double initial_value(int64_t n) { return (double)(100 + 10 * n); }

/* Runs one case on one device with one variant, layout, precision, sum_into;
 * false when the backend does not run that variant. */
static bool check_case(tc_device *device, const hand_case *hc, tc_variant variant, tc_layout layout,
                       tc_precision precision, bool sum_into) {
  const tc_contraction shape = {
      .kernel = hc->kernel, .num_cells = hc->cells, .num_left_fields = hc->left_fields,
      .num_right_fields = hc->right_fields, .num_points = hc->points,
      .num_data_points = hc->data_points, .dim1 = hc->dim1, .dim2 = hc->dim2, .layout = layout,
      .precision = precision, .sum_into = sum_into};
  const tc_backend_kind kind = tc_device_backend(device);
  if (!tc_contract_supports(tc_device_contract_backend(device), &shape, variant))
    return false;
  hand_array left, right, output;
  int64_t left_dims[5], right_dims[5], out_dims[5];
  const int left_rank = tc_contraction_left_dims(&shape, left_dims);
  const int right_rank = tc_contraction_right_dims(&shape, right_dims);
  const int out_rank = tc_contraction_output_dims(&shape, out_dims);
  if (!test_check(tc_contraction_left_count(&shape) <= MAX_INPUTS &&
                 tc_contraction_right_count(&shape) <= MAX_INPUTS &&
                 tc_contraction_output_count(&shape) == hc->num_outputs,
                  "%s: case sizes disagree with its expected values", tc_kernel_name(hc->kernel)))
    return true;
  store_logical(layout, precision, left_rank, left_dims, left_value, &left);
  store_logical(layout, precision, right_rank, right_dims, right_value, &right);
  store_logical(layout, precision, out_rank, out_dims, initial_value, &output);
  char what[160];
  snprintf(what, sizeof what, "%s Pd=%lld on %s, variant %s, %s layout, %s%s",
           tc_kernel_name(hc->kernel), (long long)hc->data_points, tc_backend_name(kind),
           tc_variant_name(variant), tc_layout_name(layout), tc_precision_name(precision),
           sum_into ? ", sum_into" : "");
  tc_error_clear();
  if (!test_ok(test_run_on_device(device, &shape, variant, &left, &right, &output), what))
    return true;
  for (int m = 0; m < hc->num_outputs; ++m) {
    int64_t index[5];
    test_unravel(out_rank, out_dims, m, index);
    const int64_t offset = test_offset(layout, out_rank, out_dims, index);
    const double got = precision == TC_FLOAT ? output.f[offset] : output.d[offset];
    const double want = hc->expected[m] + (sum_into ? initial_value(m) : 0.0);
    test_check(got == want, "%s: output %d (row-major) = %g, expected %g", what, m, got, want);
  }
  return true;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI initialisation failed: %s\n", tc_error_message());
    return 1;
  }
  for (int kind = 0; kind < TC_BACKEND_COUNT; ++kind) {
    tc_device *device = NULL;
    if (!test_open_device(kind, &device))
      continue;
    int runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
      for (int variant = 0; variant < TC_VARIANT_COUNT; ++variant)
        for (int layout = 0; layout < TC_LAYOUT_COUNT; ++layout)
          for (int precision = 0; precision < TC_PRECISION_COUNT; ++precision)
            for (int sum_into = 0; sum_into <= 1; ++sum_into)
              runs += check_case(device, &cases[c], variant, layout, precision, sum_into);
    printf("%s: %d hand-case runs\n", tc_backend_name(kind), runs);
    tc_device_destroy(&device);
  }
  printf("hand cases: %d failure(s)\n", test_failures);
  tc_parallel_finalize();
  return test_failures == 0 ? 0 : 1;
}
