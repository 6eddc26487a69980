/* test_contract_api: the backend-independent API of tc_contract: name
 * round-trips and parsers, normalisation, validation of bad shapes (code and
 * message, and tc_contract never touching memory then), extents, counts,
 * flops and bytes of a hand-worked shape, layout offsets, variant
 * support and resolution on the CPU backends, and the vendor variant's names
 * and refusals. */
#include <string.h>

#include "contract_test.h"

/* A valid FieldFieldVector shape: C=4, L=3, R=5, P=6, D1=2. */
static tc_contraction valid_shape(void) {
  return (tc_contraction){.kernel = TC_FIELD_FIELD_VECTOR, .num_cells = 4, .num_left_fields = 3,
                          .num_right_fields = 5, .num_points = 6, .num_data_points = 1,
                          .dim1 = 2, .dim2 = 1, .layout = TC_LAYOUT_RIGHT,
                          .precision = TC_DOUBLE};
}

static void check_names(void) {
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    tc_kernel parsed = TC_KERNEL_COUNT;
    char prefixed[64];
    snprintf(prefixed, sizeof prefixed, "contract%s", tc_kernel_name(k));
    test_check(tc_kernel_from_name(tc_kernel_name(k), &parsed) == TC_SUCCESS && (int)parsed == k,
               "kernel %d does not round-trip through '%s'", k, tc_kernel_name(k));
    parsed = TC_KERNEL_COUNT;
    test_check(tc_kernel_from_name(prefixed, &parsed) == TC_SUCCESS && (int)parsed == k,
               "kernel name '%s' not accepted", prefixed);
  }
  tc_kernel kernel;
  test_check(tc_kernel_from_name("fieldfieldSCALAR", &kernel) == TC_SUCCESS &&
                 kernel == TC_FIELD_FIELD_SCALAR,
             "kernel names are not case-insensitive");
  test_check(strcmp(tc_kernel_name(TC_DATA_FIELD_TENSOR), "DataFieldTensor") == 0 &&
                 strcmp(tc_kernel_name(TC_KERNEL_COUNT), "unknown") == 0,
             "kernel names");
  tc_error_clear();
  test_check(tc_kernel_from_name("FieldFieldMatrix", &kernel) == TC_ERR_INPUT &&
                 strstr(tc_error_message(), "FieldFieldMatrix") != NULL,
             "unknown kernel name accepted or not named: '%s'", tc_error_message());
  tc_error_clear();
  test_check(tc_kernel_from_name("Contract", &kernel) == TC_ERR_INPUT, "bare prefix accepted");
  tc_error_clear();

  for (int l = 0; l < TC_LAYOUT_COUNT; ++l) {
    tc_layout parsed = TC_LAYOUT_COUNT;
    test_check(tc_layout_from_name(tc_layout_name(l), &parsed) == TC_SUCCESS && (int)parsed == l,
               "layout %d does not round-trip", l);
  }
  for (int p = 0; p < TC_PRECISION_COUNT; ++p) {
    tc_precision parsed = TC_PRECISION_COUNT;
    test_check(tc_precision_from_name(tc_precision_name(p), &parsed) == TC_SUCCESS &&
                   (int)parsed == p,
               "precision %d does not round-trip", p);
  }
  for (int v = 0; v < TC_VARIANT_COUNT; ++v) {
    tc_variant parsed = TC_VARIANT_COUNT;
    test_check(strcmp(tc_variant_name(v), "unknown") != 0 &&
                   tc_variant_from_name(tc_variant_name(v), &parsed) == TC_SUCCESS &&
                   (int)parsed == v,
               "variant %d does not round-trip", v);
  }
  for (int b = 0; b < TC_BACKEND_COUNT; ++b) {
    tc_backend_kind parsed = TC_BACKEND_COUNT;
    test_check(tc_backend_from_name(tc_backend_name(b), &parsed) == TC_SUCCESS && (int)parsed == b,
               "backend %d does not round-trip", b);
  }
  test_check(strcmp(tc_layout_name(TC_LAYOUT_LEFT), "left") == 0 &&
                 strcmp(tc_precision_name(TC_FLOAT), "float") == 0 &&
                 strcmp(tc_variant_name(TC_VARIANT_TEAM_DEPTH1), "team-depth1") == 0 &&
                 strcmp(tc_backend_name(TC_BACKEND_OPENMP), "openmp") == 0,
             "documented names");
  tc_layout layout;
  tc_precision precision;
  tc_variant variant;
  tc_backend_kind backend;
  test_check(tc_layout_from_name("middle", &layout) == TC_ERR_INPUT &&
                 tc_precision_from_name("half", &precision) == TC_ERR_INPUT &&
                 tc_variant_from_name("fastest", &variant) == TC_ERR_INPUT &&
                 tc_backend_from_name("opencl", &backend) == TC_ERR_INPUT,
             "unknown names accepted");
  tc_error_clear();
}

static void check_kernel_classes(void) {
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    const int classes = tc_kernel_is_field_field(k) + tc_kernel_is_data_field(k) +
                        tc_kernel_is_data_data(k);
    test_check(classes == 1, "kernel %s is in %d classes", tc_kernel_name(k), classes);
  }
  test_check(tc_kernel_is_field_field(TC_FIELD_FIELD_TENSOR) &&
                 tc_kernel_is_data_field(TC_DATA_FIELD_SCALAR) &&
                 tc_kernel_is_data_data(TC_DATA_DATA_VECTOR) &&
                 tc_kernel_tensor_rank(TC_DATA_DATA_SCALAR) == 0 &&
                 tc_kernel_tensor_rank(TC_FIELD_FIELD_VECTOR) == 1 &&
                 tc_kernel_tensor_rank(TC_DATA_FIELD_TENSOR) == 2,
             "kernel classes and tensor ranks");
}

/* A shape that must be rejected with TC_ERR_SHAPE and a message containing
 * `needle`; tc_contract must then leave all three arrays alone. */
static void expect_rejected(const tc_contraction *shape, const char *needle, const char *what) {
  tc_error_clear();
  const tc_err err = tc_contraction_validate(shape);
  test_check(err == TC_ERR_SHAPE && strstr(tc_error_message(), needle) != NULL,
             "%s: validate gave %s '%s', expected a shape error naming '%s'", what,
             tc_err_name(err), tc_error_message(), needle);
  double left[4], right[4], output[4];
  for (int i = 0; i < 4; ++i)
    left[i] = right[i] = output[i] = 1234.5;
  for (int kind = 0; kind < TC_BACKEND_COUNT; ++kind) {
    const tc_contract_backend *backend = tc_contract_backend_get(kind);
    if (backend == NULL || kind == TC_BACKEND_CUDA)
      continue;
    tc_error_clear();
    const tc_err run = tc_contract(backend, shape, TC_VARIANT_AUTO, left, right, output, NULL);
    test_check(run == TC_ERR_SHAPE, "%s: tc_contract on %s gave %s", what, tc_backend_name(kind),
               tc_err_name(run));
    tc_variant resolved;
    test_check(tc_contract_resolve(backend, shape, TC_VARIANT_AUTO, &resolved) == TC_ERR_SHAPE,
               "%s: resolve accepted the shape", what);
  }
  for (int i = 0; i < 4; ++i)
    test_check(left[i] == 1234.5 && right[i] == 1234.5 && output[i] == 1234.5,
               "%s: tc_contract touched memory", what);
  tc_error_clear();
}

static void check_validation(void) {
  tc_contraction shape = valid_shape();
  tc_error_clear();
  test_ok(tc_contraction_validate(&shape), "valid shape");

  shape.num_points = 0;
  expect_rejected(&shape, "num_points must be >= 1, got 0", "zero points");
  shape = valid_shape();
  shape.num_cells = -3;
  expect_rejected(&shape, "num_cells must be >= 1, got -3", "negative cells");
  shape = valid_shape();
  shape.num_right_fields = 0;
  expect_rejected(&shape, "num_right_fields must be >= 1, got 0", "zero right fields");
  shape = valid_shape();
  shape.dim1 = 0;
  expect_rejected(&shape, "dim1 must be >= 1, got 0", "zero dim1");
  shape = valid_shape();
  shape.dim2 = 3;
  expect_rejected(&shape, "dim2 is not used by FieldFieldVector and must be 1, got 3", "unused dim2");

  shape = valid_shape();
  shape.kernel = TC_DATA_FIELD_SCALAR;
  shape.num_right_fields = 1;
  shape.dim1 = 1;
  shape.num_points = 8;
  shape.num_data_points = 3;
  expect_rejected(&shape, "num_data_points must be 1 or num_points (8), got 3", "data points");
  shape.num_data_points = 8;
  shape.num_right_fields = 4;
  expect_rejected(&shape, "num_right_fields is not used by DataFieldScalar and must be 1, got 4",
                  "unused right fields");

  shape = valid_shape();
  shape.kernel = TC_DATA_DATA_TENSOR;
  shape.num_left_fields = 1, shape.num_right_fields = 1, shape.dim2 = 3;
  shape.num_data_points = 2;
  expect_rejected(&shape, "num_data_points is not used by DataDataTensor and must be 1, got 2",
                  "unused data points");

  shape = valid_shape();
  shape.num_cells = INT64_MAX / 4;
  expect_rejected(&shape, "overflows int64", "element count overflow");
  shape = valid_shape();
  shape.kernel = TC_DATA_DATA_SCALAR;
  shape.num_left_fields = 1, shape.num_right_fields = 1, shape.dim1 = 1;
  shape.num_cells = 3, shape.num_points = INT64_MAX / 5;
  expect_rejected(&shape, "overflows int64", "byte count overflow");

  shape = valid_shape();
  shape.kernel = TC_KERNEL_COUNT;
  expect_rejected(&shape, "unknown kernel", "unknown kernel");
  shape = valid_shape();
  shape.layout = TC_LAYOUT_COUNT;
  expect_rejected(&shape, "unknown layout", "unknown layout");
  shape = valid_shape();
  shape.precision = TC_PRECISION_COUNT;
  expect_rejected(&shape, "unknown precision", "unknown precision");
}

static void check_normalize(void) {
  tc_contraction shape = {.kernel = TC_DATA_FIELD_SCALAR, .num_cells = 2, .num_left_fields = 3,
                          .num_points = 4, .num_data_points = 4};
  tc_contraction_normalize(&shape);
  test_check(shape.num_right_fields == 1 && shape.dim1 == 1 && shape.dim2 == 1 &&
                 shape.num_data_points == 4 && shape.num_left_fields == 3,
             "normalize: unused sizes must become 1 and used ones stay");
  tc_error_clear();
  test_ok(tc_contraction_validate(&shape), "normalized DataFieldScalar");
  shape.num_data_points = 0;
  tc_contraction_normalize(&shape);
  test_check(shape.num_data_points == 0, "normalize changed a used size");
  shape = (tc_contraction){.kernel = TC_DATA_DATA_SCALAR, .num_cells = 2, .num_points = 4,
                           .dim1 = 5};
  tc_contraction_normalize(&shape);
  test_check(shape.dim1 == 5 && shape.num_left_fields == 1,
             "normalize must only replace zeros, so validate can name a wrong unused size");
}

static void check_counts(void) {
  /* FieldFieldVector C=4 L=3 R=5 P=6 D1=2: left 4*3*6*2 = 144, right
   * 4*5*6*2 = 240, output 4*3*5 = 60; length 12; flops 60*2*12 = 1440 (+60
   * with sum_into); bytes (144+240+60)*8 = 3552 (+60*8 with sum_into). */
  tc_contraction shape = valid_shape();
  int64_t dims[5];
  test_check(tc_contraction_left_dims(&shape, dims) == 4 && dims[0] == 4 && dims[1] == 3 &&
                 dims[2] == 6 && dims[3] == 2,
             "left dims");
  test_check(tc_contraction_right_dims(&shape, dims) == 4 && dims[1] == 5 && dims[3] == 2,
             "right dims");
  test_check(tc_contraction_output_dims(&shape, dims) == 3 && dims[1] == 3 && dims[2] == 5,
             "output dims");
  test_check(tc_contraction_left_count(&shape) == 144 && tc_contraction_right_count(&shape) == 240 &&
                 tc_contraction_output_count(&shape) == 60 && tc_contraction_length(&shape) == 12,
             "counts");
  test_check(tc_contraction_flops(&shape) == 1440.0 && tc_contraction_bytes(&shape) == 3552.0,
             "flops %g bytes %g", tc_contraction_flops(&shape), tc_contraction_bytes(&shape));
  shape.sum_into = true;
  shape.precision = TC_FLOAT;
  test_check(tc_contraction_flops(&shape) == 1500.0 && tc_contraction_bytes(&shape) == 504.0 * 4,
             "sum_into flops %g bytes %g", tc_contraction_flops(&shape), tc_contraction_bytes(&shape));
  test_check(tc_precision_size(TC_DOUBLE) == 8 && tc_precision_size(TC_FLOAT) == 4, "sizes");

  /* DataFieldTensor with one data value per cell: data (C,1,D1,D2). */
  shape = (tc_contraction){.kernel = TC_DATA_FIELD_TENSOR, .num_cells = 2, .num_left_fields = 7,
                           .num_right_fields = 1, .num_points = 5, .num_data_points = 1,
                           .dim1 = 3, .dim2 = 2};
  test_check(tc_contraction_left_dims(&shape, dims) == 4 && dims[1] == 1 && dims[2] == 3 &&
                 dims[3] == 2 && tc_contraction_left_count(&shape) == 12 &&
                 tc_contraction_right_count(&shape) == 2 * 7 * 5 * 6 &&
                 tc_contraction_output_count(&shape) == 14,
             "DataFieldTensor extents");
  shape = (tc_contraction){.kernel = TC_DATA_DATA_SCALAR, .num_cells = 9, .num_left_fields = 1,
                           .num_right_fields = 1, .num_points = 4, .num_data_points = 1,
                           .dim1 = 1, .dim2 = 1};
  test_check(tc_contraction_output_dims(&shape, dims) == 1 && dims[0] == 9 &&
                 tc_contraction_left_dims(&shape, dims) == 2 && dims[1] == 4,
             "DataDataScalar extents");
}

static void check_offsets(void) {
  /* dims (2,3,4), index (1,2,3): right 1*12 + 2*4 + 3 = 23; left 1 + 2*2 +
   * 3*6 = 23 as well, so also (1,0,2): right 12+2 = 14, left 1+12 = 13. */
  const int64_t dims[3] = {2, 3, 4};
  const int64_t a[3] = {1, 2, 3}, b[3] = {1, 0, 2}, c[3] = {0, 1, 0};
  test_check(tc_layout_offset(TC_LAYOUT_RIGHT, 3, dims, a) == 23 &&
                 tc_layout_offset(TC_LAYOUT_LEFT, 3, dims, a) == 23 &&
                 tc_layout_offset(TC_LAYOUT_RIGHT, 3, dims, b) == 14 &&
                 tc_layout_offset(TC_LAYOUT_LEFT, 3, dims, b) == 13 &&
                 tc_layout_offset(TC_LAYOUT_RIGHT, 3, dims, c) == 4 &&
                 tc_layout_offset(TC_LAYOUT_LEFT, 3, dims, c) == 2,
             "layout offsets");
  const int64_t one_dim[1] = {7}, one_index[1] = {5};
  test_check(tc_layout_offset(TC_LAYOUT_LEFT, 1, one_dim, one_index) == 5 &&
                 tc_layout_offset(TC_LAYOUT_RIGHT, 1, one_dim, one_index) == 5,
             "rank-1 offsets");
}

static void check_variants(void) {
  const tc_contraction shape = valid_shape();
  const tc_contract_backend *serial = tc_contract_backend_get(TC_BACKEND_SERIAL);
  test_check(serial != NULL && tc_contract_backend_get(TC_BACKEND_COUNT) == NULL, "backend table");
  tc_variant resolved = TC_VARIANT_COUNT;
  tc_error_clear();
  test_check(tc_contract_supports(serial, &shape, TC_VARIANT_AUTO) &&
                 tc_contract_supports(serial, &shape, TC_VARIANT_REFERENCE) &&
                 !tc_contract_supports(serial, &shape, TC_VARIANT_TILING) &&
                 !tc_contract_supports(NULL, &shape, TC_VARIANT_AUTO),
             "serial supports");
  test_check(tc_contract_resolve(serial, &shape, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                 resolved == TC_VARIANT_REFERENCE,
             "serial AUTO must resolve to reference");
  tc_error_clear();
  test_check(tc_contract_resolve(serial, &shape, TC_VARIANT_BLOCKED, &resolved) ==
                     TC_ERR_UNSUPPORTED &&
                 strstr(tc_error_message(), "blocked") != NULL,
             "serial must refuse blocked with a message: '%s'", tc_error_message());
  double left[144] = {0}, right[240] = {0}, output[60];
  for (int i = 0; i < 60; ++i)
    output[i] = 1234.5;
  tc_error_clear();
  test_check(tc_contract(serial, &shape, TC_VARIANT_FLAT, left, right, output, NULL) ==
                 TC_ERR_UNSUPPORTED && output[0] == 1234.5,
             "unsupported variant must fail before touching memory");
  tc_error_clear();
  test_check(tc_contract(serial, &shape, TC_VARIANT_AUTO, NULL, right, output, NULL) ==
                 TC_ERR_ARGUMENT,
             "NULL array must be refused");
  tc_error_clear();
  test_check(tc_contract(NULL, &shape, TC_VARIANT_AUTO, left, right, output, NULL) ==
                 TC_ERR_UNSUPPORTED,
             "NULL backend must be refused");
  const tc_contract_backend *openmp = tc_contract_backend_get(TC_BACKEND_OPENMP);
  if (openmp != NULL) {
    tc_error_clear();
    /* AUTO: the vendor (libxsmm) on FieldField where it is built, but on
     * cells of 96 x 96 or more with K >= 512 in double and K >= 1024 in
     * float in layout right; BLOCKED otherwise and for DataField. */
    const tc_variant small = tc_contract_vendor_library(openmp) ? TC_VARIANT_VENDOR
                                                               : TC_VARIANT_BLOCKED;
    test_check(tc_contract_resolve(openmp, &shape, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == small &&
                   tc_contract_supports(openmp, &shape, TC_VARIANT_FLAT) &&
                   !tc_contract_supports(openmp, &shape, TC_VARIANT_REFERENCE),
               "OpenMP: AUTO must resolve to %s; flat supported, reference not",
               tc_variant_name(small));
    tc_contraction large = shape, left = shape, data = shape;
    large.num_left_fields = large.num_right_fields = 96;
    large.num_points = 256; /* K = 512 */
    left.layout = TC_LAYOUT_LEFT;
    data.kernel = TC_DATA_FIELD_VECTOR;
    data.num_right_fields = 1;
    data.num_data_points = data.num_points;
    const tc_contraction blocked_shapes[] = {large, data};
    for (size_t i = 0; i < sizeof blocked_shapes / sizeof blocked_shapes[0]; ++i)
      test_check(tc_contract_resolve(openmp, &blocked_shapes[i], TC_VARIANT_AUTO, &resolved) ==
                         TC_SUCCESS &&
                     resolved == TC_VARIANT_BLOCKED,
                 "OpenMP: AUTO must resolve to blocked on shape %zu, got %s", i,
                 tc_variant_name(resolved));
    /* layout left: the vendor even on the large cell (its blocks of
     * gathered cells beat BLOCKED on every shape measured) */
    tc_contraction large_left = large;
    large_left.layout = TC_LAYOUT_LEFT;
    test_check(tc_contract_resolve(openmp, &left, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == small &&
                   tc_contract_resolve(openmp, &large_left, TC_VARIANT_AUTO, &resolved) ==
                       TC_SUCCESS &&
                   resolved == small,
               "OpenMP: AUTO in layout left must resolve to %s", tc_variant_name(small));
    /* ... but BLOCKED in float where the outputs are at least 45% of the
     * inputs' words (96 x 96 outputs, (96 + 96) x 48 inputs: exactly 1) */
    large_left.precision = TC_FLOAT;
    large_left.num_points = 24; /* K = 48 */
    test_check(tc_contract_resolve(openmp, &large_left, TC_VARIANT_AUTO, &resolved) ==
                       TC_SUCCESS &&
                   resolved == TC_VARIANT_BLOCKED,
               "OpenMP: AUTO must resolve to blocked on 96 x 96 x 48 float in layout left");
    large_left.num_points = 54; /* K = 108: outputs 0.44 of the inputs */
    test_check(tc_contract_resolve(openmp, &large_left, TC_VARIANT_AUTO, &resolved) ==
                       TC_SUCCESS &&
                   resolved == small,
               "OpenMP: AUTO must resolve to %s on 96 x 96 x 108 float in layout left",
               tc_variant_name(small));
    large.precision = TC_FLOAT;
    large.num_points = 512; /* K = 1024 */
    test_check(tc_contract_resolve(openmp, &large, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == TC_VARIANT_BLOCKED,
               "OpenMP: AUTO must resolve to blocked on 96 x 96 x 1024 float");
    large.num_points = 511;
    test_check(tc_contract_resolve(openmp, &large, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == small,
               "OpenMP: AUTO must resolve to %s on 96 x 96 x 1022 float", tc_variant_name(small));
    large.precision = TC_DOUBLE;
    large.num_left_fields = 95;
    test_check(tc_contract_resolve(openmp, &large, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == small,
               "OpenMP: AUTO must resolve to %s on 95 x 96 double", tc_variant_name(small));
    large.num_left_fields = 96;
    large.num_points = 255; /* K = 510 */
    test_check(tc_contract_resolve(openmp, &large, TC_VARIANT_AUTO, &resolved) == TC_SUCCESS &&
                   resolved == small,
               "OpenMP: AUTO must resolve to %s on 96 x 96 x 510 double", tc_variant_name(small));
  }
  tc_error_clear();
}

/* The vendor variant: its names, and refusals that say why. */
static void check_vendor(void) {
  tc_variant variant = TC_VARIANT_AUTO;
  test_check(strcmp(tc_variant_name(TC_VARIANT_VENDOR), "vendor") == 0 &&
                 tc_variant_from_name("cuBLAS", &variant) == TC_SUCCESS &&
                 variant == TC_VARIANT_VENDOR,
             "vendor is named vendor and cublas is read as it");
  const tc_contraction shape = valid_shape();
  const tc_contract_backend *serial = tc_contract_backend_get(TC_BACKEND_SERIAL);
  test_check(tc_contract_vendor_library(serial) == NULL &&
                 !tc_contract_supports(serial, &shape, TC_VARIANT_VENDOR) &&
                 strstr(tc_contract_vendor_refusal(serial, &shape), "reference") != NULL,
             "serial has no vendor library");
  const tc_contract_backend *openmp = tc_contract_backend_get(TC_BACKEND_OPENMP);
  if (openmp == NULL)
    return;
  tc_variant resolved;
  tc_error_clear();
  if (tc_contract_vendor_library(openmp) == NULL) {
    test_check(tc_contract_resolve(openmp, &shape, TC_VARIANT_VENDOR, &resolved) ==
                       TC_ERR_UNSUPPORTED &&
                   strstr(tc_error_message(), "libxsmm") != NULL,
               "without libxsmm, vendor is refused naming it: '%s'", tc_error_message());
    tc_error_clear();
    return;
  }
  test_check(strncmp(tc_contract_vendor_library(openmp), "libxsmm ", 8) == 0,
             "OpenMP's vendor library is libxsmm: '%s'", tc_contract_vendor_library(openmp));
  test_check(tc_contract_supports(openmp, &shape, TC_VARIANT_VENDOR) &&
                 tc_contract_vendor_refusal(openmp, &shape) == NULL,
             "vendor runs FieldField in layout right");
  tc_contraction left = shape;
  left.layout = TC_LAYOUT_LEFT;
  test_check(tc_contract_supports(openmp, &left, TC_VARIANT_VENDOR) &&
                 tc_contract_vendor_refusal(openmp, &left) == NULL &&
                 tc_contract_resolve(openmp, &left, TC_VARIANT_VENDOR, &resolved) ==
                     TC_SUCCESS &&
                 resolved == TC_VARIANT_VENDOR,
             "vendor runs FieldField in layout left (gathered cells): '%s'",
             tc_error_message());
  tc_error_clear();
  /* beyond the gather's 32-bit sizes: refused saying why */
  tc_contraction huge = left;
  huge.num_left_fields = 70000;
  huge.num_right_fields = 70000;
  test_check(!tc_contract_supports(openmp, &huge, TC_VARIANT_VENDOR) &&
                 tc_contract_resolve(openmp, &huge, TC_VARIANT_VENDOR, &resolved) ==
                     TC_ERR_UNSUPPORTED &&
                 strstr(tc_error_message(), "32-bit") != NULL,
             "vendor refuses layout left past 32-bit sizes saying why: '%s'",
             tc_error_message());
  tc_error_clear();
  tc_contraction data = {.kernel = TC_DATA_DATA_SCALAR, .num_cells = 2, .num_points = 3,
                         .layout = TC_LAYOUT_RIGHT, .precision = TC_DOUBLE};
  test_check(tc_contract_resolve(openmp, &data, TC_VARIANT_VENDOR, &resolved) ==
                     TC_ERR_UNSUPPORTED &&
                 strstr(tc_error_message(), "FieldField kernels only") != NULL,
             "vendor refuses DataData saying why: '%s'", tc_error_message());
  tc_error_clear();
}

int main(void) {
  check_names();
  check_vendor();
  check_kernel_classes();
  check_normalize();
  check_validation();
  check_counts();
  check_offsets();
  check_variants();
  printf("contract API: %d failure(s)\n", test_failures);
  return test_failures == 0 ? 0 : 1;
}
