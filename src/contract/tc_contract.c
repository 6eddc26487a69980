/* tc_contract: the backend-independent half of the contraction library:
 * names and parsers, shape normalisation and validation, array extents,
 * counts, flops and bytes, layout offsets, variant resolution and the one
 * entry point tc_contract() that dispatches through the backend table. */
#include "tc_contract.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>

#include "tc_build.h"
#include "tc_contract_backend.h"
#include "tc_fault.h"
#include "tc_tuning.h"

static const char *const kernel_names[TC_KERNEL_COUNT] = {
    [TC_FIELD_FIELD_SCALAR] = "FieldFieldScalar", [TC_FIELD_FIELD_VECTOR] = "FieldFieldVector",
    [TC_FIELD_FIELD_TENSOR] = "FieldFieldTensor", [TC_DATA_FIELD_SCALAR] = "DataFieldScalar",
    [TC_DATA_FIELD_VECTOR] = "DataFieldVector",   [TC_DATA_FIELD_TENSOR] = "DataFieldTensor",
    [TC_DATA_DATA_SCALAR] = "DataDataScalar",     [TC_DATA_DATA_VECTOR] = "DataDataVector",
    [TC_DATA_DATA_TENSOR] = "DataDataTensor",
};
static const char *const layout_names[TC_LAYOUT_COUNT] = {
    [TC_LAYOUT_RIGHT] = "right", [TC_LAYOUT_LEFT] = "left"};
static const char *const precision_names[TC_PRECISION_COUNT] = {
    [TC_DOUBLE] = "double", [TC_FLOAT] = "float"};
static const char *const variant_names[TC_VARIANT_COUNT] = {
    [TC_VARIANT_AUTO] = "auto",
    [TC_VARIANT_REFERENCE] = "reference",
    [TC_VARIANT_FLAT] = "flat",
    [TC_VARIANT_BLOCKED] = "blocked",
    [TC_VARIANT_TEAM_DEPTH1] = "team-depth1",
    [TC_VARIANT_TEAM_DEPTH2] = "team-depth2",
    [TC_VARIANT_TEAMSTRIDE] = "teamstride",
    [TC_VARIANT_TEAM_PACKED] = "team-packed",
    [TC_VARIANT_SLICING] = "slicing",
    [TC_VARIANT_ADAPTIVE_SLICING] = "adaptive-slicing",
    [TC_VARIANT_TILING] = "tiling",
    [TC_VARIANT_STAGED] = "staged",
    [TC_VARIANT_CELL_ROWS] = "cell-rows",
    [TC_VARIANT_VENDOR] = "vendor",
};
/* What the vendor variant is also called: the name the CUDA users know. */
static const char vendor_alias[] = "cublas";
static const char *const choice_names[TC_CHOICE_COUNT] = {
    [TC_CHOICE_ASKED] = "asked", [TC_CHOICE_RULE] = "rule", [TC_CHOICE_TUNING] = "tuning",
    [TC_CHOICE_PROBE] = "probe"};
static const char *const backend_names[TC_BACKEND_COUNT] = {
    [TC_BACKEND_SERIAL] = "serial", [TC_BACKEND_OPENMP] = "openmp", [TC_BACKEND_CUDA] = "cuda"};

/* Name of value in a table of count names, "unknown" when out of range. */
static const char *table_name(const char *const *names, int count, int value) {
  if (value < 0 || value >= count || names[value] == NULL)
    return "unknown";
  return names[value];
}

static bool equal_ignoring_case(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return false;
  return *a == *b;
}

/* Index of name in the table (case-insensitive), or -1. */
static int table_lookup(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (names[i] != NULL && equal_ignoring_case(names[i], name))
      return i;
  return -1;
}

/* Looks name up and fails with TC_ERR_INPUT listing what it is not. */
static tc_err lookup_or_fail(const char *const *names, int count, const char *what,
                             const char *name, int *value) {
  TC_CHECK(name != NULL, TC_ERR_ARGUMENT, "no %s name given", what);
  *value = table_lookup(names, count, name);
  TC_CHECK(*value >= 0, TC_ERR_INPUT, "unknown %s '%s'", what, name);
  return TC_SUCCESS;
}

const char *tc_kernel_name(tc_kernel kernel) {
  return table_name(kernel_names, TC_KERNEL_COUNT, (int)kernel);
}

tc_err tc_kernel_from_name(const char *name, tc_kernel *kernel) {
  static const char prefix[] = "contract";
  TC_CHECK(name != NULL, TC_ERR_ARGUMENT, "no kernel name given");
  const char *bare = name;
  size_t matched = 0;
  while (prefix[matched] && tolower((unsigned char)name[matched]) == prefix[matched])
    ++matched;
  if (prefix[matched] == '\0')
    bare = name + matched;
  int value = table_lookup(kernel_names, TC_KERNEL_COUNT, bare);
  TC_CHECK(value >= 0, TC_ERR_INPUT,
           "unknown kernel '%s' (expected e.g. FieldFieldScalar or ContractDataDataTensor)", name);
  *kernel = (tc_kernel)value;
  return TC_SUCCESS;
}

const char *tc_layout_name(tc_layout layout) {
  return table_name(layout_names, TC_LAYOUT_COUNT, (int)layout);
}

tc_err tc_layout_from_name(const char *name, tc_layout *layout) {
  int value = 0;
  TC_CALL(lookup_or_fail(layout_names, TC_LAYOUT_COUNT, "layout", name, &value));
  *layout = (tc_layout)value;
  return TC_SUCCESS;
}

const char *tc_precision_name(tc_precision precision) {
  return table_name(precision_names, TC_PRECISION_COUNT, (int)precision);
}

tc_err tc_precision_from_name(const char *name, tc_precision *precision) {
  int value = 0;
  TC_CALL(lookup_or_fail(precision_names, TC_PRECISION_COUNT, "precision", name, &value));
  *precision = (tc_precision)value;
  return TC_SUCCESS;
}

const char *tc_variant_name(tc_variant variant) {
  return table_name(variant_names, TC_VARIANT_COUNT, (int)variant);
}

tc_err tc_variant_from_name(const char *name, tc_variant *variant) {
  if (name != NULL && equal_ignoring_case(name, vendor_alias)) {
    *variant = TC_VARIANT_VENDOR;
    return TC_SUCCESS;
  }
  int value = 0;
  TC_CALL(lookup_or_fail(variant_names, TC_VARIANT_COUNT, "variant", name, &value));
  *variant = (tc_variant)value;
  return TC_SUCCESS;
}

const char *tc_choice_name(tc_choice choice) {
  return table_name(choice_names, TC_CHOICE_COUNT, (int)choice);
}

const char *tc_backend_name(tc_backend_kind backend) {
  return table_name(backend_names, TC_BACKEND_COUNT, (int)backend);
}

tc_err tc_backend_from_name(const char *name, tc_backend_kind *backend) {
  int value = 0;
  TC_CALL(lookup_or_fail(backend_names, TC_BACKEND_COUNT, "backend", name, &value));
  *backend = (tc_backend_kind)value;
  return TC_SUCCESS;
}

bool tc_kernel_is_field_field(tc_kernel kernel) {
  return kernel >= TC_FIELD_FIELD_SCALAR && kernel <= TC_FIELD_FIELD_TENSOR;
}

bool tc_kernel_is_data_field(tc_kernel kernel) {
  return kernel >= TC_DATA_FIELD_SCALAR && kernel <= TC_DATA_FIELD_TENSOR;
}

bool tc_kernel_is_data_data(tc_kernel kernel) {
  return kernel >= TC_DATA_DATA_SCALAR && kernel <= TC_DATA_DATA_TENSOR;
}

int tc_kernel_tensor_rank(tc_kernel kernel) {
  if (kernel < 0 || kernel >= TC_KERNEL_COUNT)
    return 0;
  return (int)kernel % 3;
}

/* The sizes of a shape, by name, with whether the kernel uses each. */
typedef struct {
  const char *name;
  int64_t value;
  bool used;
} shape_size;

enum { SHAPE_SIZE_COUNT = 7 };

static void shape_sizes(const tc_contraction *shape, shape_size sizes[SHAPE_SIZE_COUNT]) {
  const tc_kernel kernel = shape->kernel;
  const int rank = tc_kernel_tensor_rank(kernel);
  sizes[0] = (shape_size){"num_cells", shape->num_cells, true};
  sizes[1] = (shape_size){"num_left_fields", shape->num_left_fields, !tc_kernel_is_data_data(kernel)};
  sizes[2] = (shape_size){"num_right_fields", shape->num_right_fields, tc_kernel_is_field_field(kernel)};
  sizes[3] = (shape_size){"num_points", shape->num_points, true};
  sizes[4] = (shape_size){"num_data_points", shape->num_data_points, tc_kernel_is_data_field(kernel)};
  sizes[5] = (shape_size){"dim1", shape->dim1, rank >= 1};
  sizes[6] = (shape_size){"dim2", shape->dim2, rank >= 2};
}

bool tc_contraction_equal(const tc_contraction *a, const tc_contraction *b) {
  return a->kernel == b->kernel && a->num_cells == b->num_cells &&
         a->num_left_fields == b->num_left_fields && a->num_right_fields == b->num_right_fields &&
         a->num_points == b->num_points && a->num_data_points == b->num_data_points &&
         a->dim1 == b->dim1 && a->dim2 == b->dim2 && a->layout == b->layout &&
         a->precision == b->precision && a->sum_into == b->sum_into;
}

void tc_contraction_normalize(tc_contraction *shape) {
  const tc_kernel kernel = shape->kernel;
  const int rank = tc_kernel_tensor_rank(kernel);
  int64_t *unused[] = {
      tc_kernel_is_data_data(kernel) ? &shape->num_left_fields : NULL,
      tc_kernel_is_field_field(kernel) ? NULL : &shape->num_right_fields,
      tc_kernel_is_data_field(kernel) ? NULL : &shape->num_data_points,
      rank >= 1 ? NULL : &shape->dim1,
      rank >= 2 ? NULL : &shape->dim2,
  };
  for (size_t i = 0; i < sizeof unused / sizeof unused[0]; ++i)
    if (unused[i] != NULL && *unused[i] == 0)
      *unused[i] = 1;
}

/* *product *= factor, false on int64 overflow (factors are >= 1). */
static bool multiply_checked(int64_t *product, int64_t factor) {
  if (*product > INT64_MAX / factor)
    return false;
  *product *= factor;
  return true;
}

/* Product of the dims, or -1 when it overflows int64 once scaled by bytes. */
static int64_t checked_count(int rank, const int64_t dims[5], int64_t element_bytes) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d)
    if (!multiply_checked(&count, dims[d]))
      return -1;
  int64_t bytes = count;
  if (!multiply_checked(&bytes, element_bytes))
    return -1;
  return count;
}

tc_err tc_contraction_validate(const tc_contraction *shape) {
  TC_CHECK(shape != NULL, TC_ERR_ARGUMENT, "no contraction shape given");
  TC_CHECK(shape->kernel >= 0 && shape->kernel < TC_KERNEL_COUNT, TC_ERR_SHAPE,
           "unknown kernel %d", (int)shape->kernel);
  TC_CHECK(shape->layout >= 0 && shape->layout < TC_LAYOUT_COUNT, TC_ERR_SHAPE,
           "unknown layout %d", (int)shape->layout);
  TC_CHECK(shape->precision >= 0 && shape->precision < TC_PRECISION_COUNT, TC_ERR_SHAPE,
           "unknown precision %d", (int)shape->precision);
  const char *kernel = tc_kernel_name(shape->kernel);
  shape_size sizes[SHAPE_SIZE_COUNT];
  shape_sizes(shape, sizes);
  for (int i = 0; i < SHAPE_SIZE_COUNT; ++i) {
    if (sizes[i].used)
      TC_CHECK(sizes[i].value >= 1, TC_ERR_SHAPE, "%s must be >= 1, got %lld", sizes[i].name,
               (long long)sizes[i].value);
    else
      TC_CHECK(sizes[i].value == 1, TC_ERR_SHAPE, "%s is not used by %s and must be 1, got %lld",
               sizes[i].name, kernel, (long long)sizes[i].value);
  }
  if (tc_kernel_is_data_field(shape->kernel))
    TC_CHECK(shape->num_data_points == 1 || shape->num_data_points == shape->num_points,
             TC_ERR_SHAPE, "num_data_points must be 1 or num_points (%lld), got %lld",
             (long long)shape->num_points, (long long)shape->num_data_points);
  static const char *const array_names[3] = {"left", "right", "output"};
  int (*const dims_of[3])(const tc_contraction *, int64_t[5]) = {
      tc_contraction_left_dims, tc_contraction_right_dims, tc_contraction_output_dims};
  const int64_t element_bytes = tc_precision_size(shape->precision);
  for (int a = 0; a < 3; ++a) {
    int64_t dims[5];
    const int rank = dims_of[a](shape, dims);
    TC_CHECK(checked_count(rank, dims, element_bytes) >= 0, TC_ERR_SHAPE,
             "the %s array of %s (%lld cells) is too large: its size in bytes overflows int64",
             array_names[a], kernel, (long long)shape->num_cells);
  }
  int64_t length = 1;
  TC_CHECK(multiply_checked(&length, shape->num_points) && multiply_checked(&length, shape->dim1) &&
               multiply_checked(&length, shape->dim2),
           TC_ERR_SHAPE, "contraction length num_points*dim1*dim2 of %s overflows int64", kernel);
  return TC_SUCCESS;
}

/* Appends the tensor dimensions of the kernel to dims from position rank. */
static int append_tensor_dims(const tc_contraction *shape, int rank, int64_t dims[5]) {
  const int tensor_rank = tc_kernel_tensor_rank(shape->kernel);
  if (tensor_rank >= 1)
    dims[rank++] = shape->dim1;
  if (tensor_rank >= 2)
    dims[rank++] = shape->dim2;
  return rank;
}

int tc_contraction_left_dims(const tc_contraction *shape, int64_t dims[5]) {
  int rank = 0;
  dims[rank++] = shape->num_cells;
  if (tc_kernel_is_field_field(shape->kernel))
    dims[rank++] = shape->num_left_fields;
  dims[rank++] = tc_kernel_is_data_field(shape->kernel) ? shape->num_data_points : shape->num_points;
  return append_tensor_dims(shape, rank, dims);
}

int tc_contraction_right_dims(const tc_contraction *shape, int64_t dims[5]) {
  int rank = 0;
  dims[rank++] = shape->num_cells;
  if (tc_kernel_is_field_field(shape->kernel))
    dims[rank++] = shape->num_right_fields;
  else if (tc_kernel_is_data_field(shape->kernel))
    dims[rank++] = shape->num_left_fields;
  dims[rank++] = shape->num_points;
  return append_tensor_dims(shape, rank, dims);
}

int tc_contraction_output_dims(const tc_contraction *shape, int64_t dims[5]) {
  int rank = 0;
  dims[rank++] = shape->num_cells;
  if (!tc_kernel_is_data_data(shape->kernel))
    dims[rank++] = shape->num_left_fields;
  if (tc_kernel_is_field_field(shape->kernel))
    dims[rank++] = shape->num_right_fields;
  return rank;
}

static int64_t dims_product(int rank, const int64_t dims[5]) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d)
    count *= dims[d];
  return count;
}

int64_t tc_contraction_left_count(const tc_contraction *shape) {
  int64_t dims[5];
  const int rank = tc_contraction_left_dims(shape, dims);
  return dims_product(rank, dims);
}

int64_t tc_contraction_right_count(const tc_contraction *shape) {
  int64_t dims[5];
  const int rank = tc_contraction_right_dims(shape, dims);
  return dims_product(rank, dims);
}

int64_t tc_contraction_output_count(const tc_contraction *shape) {
  int64_t dims[5];
  const int rank = tc_contraction_output_dims(shape, dims);
  return dims_product(rank, dims);
}

int64_t tc_precision_size(tc_precision precision) {
  return precision == TC_FLOAT ? (int64_t)sizeof(float) : (int64_t)sizeof(double);
}

int64_t tc_contraction_length(const tc_contraction *shape) {
  return shape->num_points * shape->dim1 * shape->dim2;
}

double tc_contraction_flops(const tc_contraction *shape) {
  const double outputs = (double)tc_contraction_output_count(shape);
  return outputs * (2.0 * (double)tc_contraction_length(shape) + (shape->sum_into ? 1.0 : 0.0));
}

double tc_contraction_bytes(const tc_contraction *shape) {
  const double elements = (double)tc_contraction_left_count(shape) +
                          (double)tc_contraction_right_count(shape) +
                          (double)tc_contraction_output_count(shape) * (shape->sum_into ? 2.0 : 1.0);
  return elements * (double)tc_precision_size(shape->precision);
}

int64_t tc_layout_offset(tc_layout layout, int rank, const int64_t dims[], const int64_t index[]) {
  int64_t offset = 0;
  if (layout == TC_LAYOUT_RIGHT) {
    for (int d = 0; d < rank; ++d)
      offset = offset * dims[d] + index[d];
  } else {
    for (int d = rank - 1; d >= 0; --d)
      offset = offset * dims[d] + index[d];
  }
  return offset;
}

void tc_contract_backend_release(const tc_contract_backend *backend) {
  if (backend != NULL && backend->release != NULL)
    backend->release();
}

const tc_contract_backend *tc_contract_backend_get(tc_backend_kind kind) {
  switch (kind) {
  case TC_BACKEND_SERIAL:
    return &tc_contract_backend_serial;
  case TC_BACKEND_OPENMP:
#if TCMINI_HAVE_OPENMP
    return &tc_contract_backend_openmp;
#else
    return NULL;
#endif
  case TC_BACKEND_CUDA:
#if TCMINI_HAVE_CUDA
    return &tc_contract_backend_cuda;
#else
    return NULL;
#endif
  default:
    return NULL;
  }
}

/* A normalized copy of shape, validated. */
static tc_err normalized_valid_copy(const tc_contraction *shape, tc_contraction *copy) {
  TC_CHECK(shape != NULL, TC_ERR_ARGUMENT, "no contraction shape given");
  *copy = *shape;
  tc_contraction_normalize(copy);
  TC_CALL(tc_contraction_validate(copy));
  return TC_SUCCESS;
}

bool tc_contract_supports(const tc_contract_backend *backend, const tc_contraction *shape,
                          tc_variant variant) {
  if (backend == NULL || shape == NULL || variant < 0 || variant >= TC_VARIANT_COUNT)
    return false;
  if (variant == TC_VARIANT_AUTO)
    return true;
  tc_contraction copy = *shape;
  tc_contraction_normalize(&copy);
  return backend->supports(&copy, variant);
}

const char *tc_contract_vendor_library(const tc_contract_backend *backend) {
  return backend != NULL && backend->vendor_library != NULL ? backend->vendor_library() : NULL;
}

const char *tc_contract_vendor_refusal(const tc_contract_backend *backend,
                                       const tc_contraction *shape) {
  if (backend == NULL)
    return "the backend is not compiled into this build";
  if (tc_contract_vendor_library(backend) == NULL)
    return backend->kind == TC_BACKEND_SERIAL
               ? "the serial backend is the reference and has no vendor library"
           : backend->kind == TC_BACKEND_OPENMP
               ? "this build has no libxsmm, the openmp backend's vendor library (install "
                 "libxsmm-dev and configure again)"
               : "this build has no vendor library for the backend";
  if (shape == NULL)
    return "no contraction shape given";
  tc_contraction copy = *shape;
  tc_contraction_normalize(&copy);
  if (!tc_kernel_is_field_field(copy.kernel))
    return "the vendor variant runs the FieldField kernels only (batches of matrix products)";
  if (backend->supports(&copy, TC_VARIANT_VENDOR))
    return NULL;
  /* the layout, where the backend refuses even the smallest shape in it */
  tc_contraction smallest = copy;
  smallest.num_cells = smallest.num_left_fields = smallest.num_right_fields = 1;
  smallest.num_points = smallest.dim1 = smallest.dim2 = 1;
  if (copy.layout != TC_LAYOUT_RIGHT && !backend->supports(&smallest, TC_VARIANT_VENDOR))
    return "the vendor variant runs layout right only on this backend: in layout left the "
           "cell index is fastest, so no matrix of a cell has the unit-stride dimension a "
           "vendor GEMM needs (the openmp backend gathers blocks of cells into per-cell "
           "matrices first)";
  return "the shape is beyond the vendor library's sizes (L, R, K = P*D1*D2, C and the "
         "matrices L*K, R*K and L*R must fit in a 32-bit int)";
}

/* Resolution on a shape already normalized and validated: AUTO through the
 * tuning (when it covers the shape with a variant the backend runs) or the
 * backend's rules. */
static tc_err resolve_valid(const tc_contract_backend *backend, const tc_tuning *tuning,
                            const tc_contraction *shape, tc_variant variant,
                            tc_variant *resolved, tc_choice *source) {
  TC_CHECK(variant >= 0 && variant < TC_VARIANT_COUNT, TC_ERR_ARGUMENT, "unknown variant %d",
           (int)variant);
  TC_CHECK(tuning == NULL || tc_tuning_backend(tuning) == backend->kind, TC_ERR_ARGUMENT,
           "a tuning file of the %s backend given to the %s backend",
           tc_backend_name(tc_tuning_backend(tuning)), tc_backend_name(backend->kind));
  if (variant == TC_VARIANT_AUTO) {
    tc_variant tuned = TC_VARIANT_AUTO;
    if (tuning != NULL && tc_tuning_lookup(tuning, shape, &tuned) && tuned != TC_VARIANT_AUTO &&
        backend->supports(shape, tuned)) {
      *resolved = tuned;
      *source = TC_CHOICE_TUNING;
    } else {
      *resolved = backend->choose(shape);
      *source = TC_CHOICE_RULE;
    }
    return TC_SUCCESS;
  }
  if (variant == TC_VARIANT_VENDOR) {
    const char *refusal = tc_contract_vendor_refusal(backend, shape);
    TC_CHECK(refusal == NULL, TC_ERR_UNSUPPORTED,
             "the %s backend does not run variant 'vendor' on %s (%s layout, %s): %s",
             tc_backend_name(backend->kind), tc_kernel_name(shape->kernel),
             tc_layout_name(shape->layout), tc_precision_name(shape->precision), refusal);
  }
  TC_CHECK(backend->supports(shape, variant), TC_ERR_UNSUPPORTED,
           "the %s backend does not run variant '%s' on %s (%s layout, %s)",
           tc_backend_name(backend->kind), tc_variant_name(variant), tc_kernel_name(shape->kernel),
           tc_layout_name(shape->layout), tc_precision_name(shape->precision));
  *resolved = variant;
  *source = TC_CHOICE_ASKED;
  return TC_SUCCESS;
}

/* ---- AUTO's first-call probe (tc_contract_set_probe) ---- */

enum { PROBE_SHAPES = 256, PROBE_RUNS = 2 };

static struct {
  bool disabled;
  int next; ///< the slot the next probe fills (the oldest is replaced)
  struct {
    bool used;
    tc_backend_kind kind;
    tc_contraction shape;
    tc_variant best;
  } entries[PROBE_SHAPES];
} probes;

void tc_contract_set_probe(bool enabled) { probes.disabled = !enabled; }
bool tc_contract_probe_enabled(void) { return !probes.disabled; }

/* Whether AUTO probes this (normalized, valid) shape on this backend. */
static bool probe_applies(const tc_contract_backend *backend, const tc_contraction *shape) {
  return !probes.disabled && backend->time_run != NULL && tc_kernel_is_field_field(shape->kernel) &&
         !shape->sum_into && tc_contract_vendor_refusal(backend, shape) == NULL;
}

/* The variant a probe chose for this shape, if one did. */
static bool probed(const tc_contract_backend *backend, const tc_contraction *shape,
                   tc_variant *best) {
  for (int i = 0; i < PROBE_SHAPES; ++i)
    if (probes.entries[i].used && probes.entries[i].kind == backend->kind &&
        tc_contraction_equal(&probes.entries[i].shape, shape)) {
      *best = probes.entries[i].best;
      return true;
    }
  return false;
}

/* Times the rule's variant and the vendor's on the caller's arrays, the
 * better of PROBE_RUNS runs each, and keeps the faster for this shape. */
static tc_err probe(const tc_contract_backend *backend, const tc_contraction *shape,
                    tc_variant rule, const void *left, const void *right, void *output,
                    void *stream, tc_variant *best) {
  const tc_variant candidates[2] = {rule, TC_VARIANT_VENDOR};
  double fastest[2] = {0.0, 0.0};
  for (int c = 0; c < 2; ++c)
    for (int run = 0; run < PROBE_RUNS; ++run) {
      double seconds = 0.0;
      TC_CALL(backend->time_run(shape, candidates[c], left, right, output, stream, &seconds));
      fastest[c] = run == 0 || seconds < fastest[c] ? seconds : fastest[c];
    }
  *best = fastest[1] < fastest[0] ? TC_VARIANT_VENDOR : rule;
  probes.entries[probes.next].used = true;
  probes.entries[probes.next].kind = backend->kind;
  probes.entries[probes.next].shape = *shape;
  probes.entries[probes.next].best = *best;
  probes.next = (probes.next + 1) % PROBE_SHAPES;
  return TC_SUCCESS;
}

tc_err tc_contract_resolve(const tc_contract_backend *backend, const tc_contraction *shape,
                           tc_variant variant, tc_variant *resolved) {
  tc_choice source;
  return tc_contract_choose(backend, NULL, shape, variant, resolved, &source);
}

tc_err tc_contract_choose(const tc_contract_backend *backend, const tc_tuning *tuning,
                          const tc_contraction *shape, tc_variant variant, tc_variant *resolved,
                          tc_choice *source) {
  TC_CHECK(backend != NULL, TC_ERR_UNSUPPORTED, "backend not compiled into this build");
  tc_contraction copy;
  TC_CALL(normalized_valid_copy(shape, &copy));
  TC_CALL(resolve_valid(backend, tuning, &copy, variant, resolved, source));
  if (*source == TC_CHOICE_RULE && probe_applies(backend, &copy) &&
      probed(backend, &copy, resolved))
    *source = TC_CHOICE_PROBE;
  return TC_SUCCESS;
}

/* Test-only (TCMINI_FAULT=wrong_<Kernel>, src/base/tc_fault.h): a
 * deliberately wrong kernel, whose first output entry of every cell is off
 * by a thousandth of the cell's largest entry, as a kernel with one wrong
 * index would be, for the checks to catch. Host backends only (a CUDA
 * backend's output is in device memory). */
static void make_wrong_if_asked(const tc_contract_backend *backend, const tc_contraction *shape,
                                void *output) {
  char point[48];
  snprintf(point, sizeof point, "wrong_%s", tc_kernel_name(shape->kernel));
  if (backend->kind == TC_BACKEND_CUDA || !tc_fault_wrong(point))
    return;
  const int64_t cells = shape->num_cells, per_cell = tc_contraction_output_count(shape) / cells;
  /* Entry e of cell c: layout right keeps a cell's entries together, layout
   * left puts the cell index fastest. */
  const bool right = shape->layout == TC_LAYOUT_RIGHT;
  for (int64_t c = 0; c < cells; ++c) {
    const int64_t first = right ? c * per_cell : c, stride = right ? 1 : cells;
    double largest = 0.0;
    for (int64_t e = 0; e < per_cell; ++e) {
      const int64_t at = first + e * stride;
      const double value = shape->precision == TC_FLOAT ? (double)((const float *)output)[at]
                                                        : ((const double *)output)[at];
      largest = value > largest ? value : -value > largest ? -value : largest;
    }
    if (shape->precision == TC_FLOAT)
      ((float *)output)[first] += (float)(1e-3 * largest);
    else
      ((double *)output)[first] += 1e-3 * largest;
  }
}

tc_err tc_contract(const tc_contract_backend *backend, const tc_contraction *shape,
                   tc_variant variant, const void *left, const void *right, void *output,
                   void *stream) {
  TC_CHECK(backend != NULL, TC_ERR_UNSUPPORTED, "backend not compiled into this build");
  tc_contraction copy;
  TC_CALL(normalized_valid_copy(shape, &copy));
  tc_variant resolved = TC_VARIANT_AUTO;
  tc_choice source;
  TC_CALL(resolve_valid(backend, NULL, &copy, variant, &resolved, &source));
  TC_CHECK(left != NULL && right != NULL && output != NULL, TC_ERR_ARGUMENT,
           "%s needs left, right and output arrays (got %p, %p, %p)", tc_kernel_name(copy.kernel),
           left, right, output);
  if (source == TC_CHOICE_RULE && resolved != TC_VARIANT_VENDOR && probe_applies(backend, &copy) &&
      !probed(backend, &copy, &resolved))
    TC_CALL(probe(backend, &copy, resolved, left, right, output, stream, &resolved));
  TC_CALL(backend->run(&copy, resolved, left, right, output, stream));
  make_wrong_if_asked(backend, &copy, output);
  return TC_SUCCESS;
}
