/* bench_case: benchmark inputs, the serial reference, layout conversion and
 * the verification norm. */
#include "bench_case.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a small, good, reproducible generator. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A value of +-[0.5, 1.5): never zero, so a skipped term always shows. */
static double random_value(uint64_t *state) {
  uint64_t bits = next_random(state);
  double magnitude = 0.5 + (double)(bits >> 11) * 0x1.0p-53;
  return (bits & 1u) ? -magnitude : magnitude;
}

static tc_err allocate_random(tc_precision precision, int64_t count, uint64_t *state, void **data) {
  size_t bytes = (size_t)count * (size_t)tc_precision_size(precision);
  *data = malloc(bytes);
  TC_CHECK(*data != NULL, TC_ERR_MEMORY, "out of memory allocating %zu bytes of input", bytes);
  for (int64_t i = 0; i < count; ++i) {
    double value = random_value(state);
    if (precision == TC_DOUBLE)
      ((double *)*data)[i] = value;
    else
      ((float *)*data)[i] = (float)value;
  }
  return TC_SUCCESS;
}

int64_t bench_array_count(const tc_contraction *shape, bench_array which) {
  switch (which) {
  case BENCH_ARRAY_LEFT:
    return tc_contraction_left_count(shape);
  case BENCH_ARRAY_RIGHT:
    return tc_contraction_right_count(shape);
  case BENCH_ARRAY_OUTPUT:
    return tc_contraction_output_count(shape);
  }
  return 0;
}

static int array_dims(const tc_contraction *shape, bench_array which, int64_t dims[5]) {
  switch (which) {
  case BENCH_ARRAY_LEFT:
    return tc_contraction_left_dims(shape, dims);
  case BENCH_ARRAY_RIGHT:
    return tc_contraction_right_dims(shape, dims);
  case BENCH_ARRAY_OUTPUT:
    return tc_contraction_output_dims(shape, dims);
  }
  return 0;
}

/* The serial backend's REFERENCE variant is the oracle of every row. */
static tc_err compute_reference(bench_case *c) {
  c->num_checked = c->shape.num_cells;
  size_t bytes = (size_t)tc_contraction_output_count(&c->shape) *
                 (size_t)tc_precision_size(c->shape.precision);
  c->reference = malloc(bytes);
  TC_CHECK(c->reference != NULL, TC_ERR_MEMORY, "out of memory allocating %zu bytes", bytes);
  if (c->shape.sum_into)
    memcpy(c->reference, c->initial_output, bytes);
  return tc_contract(tc_contract_backend_get(TC_BACKEND_SERIAL), &c->shape, TC_VARIANT_REFERENCE,
                     c->left, c->right, c->reference, NULL);
}

/* Bytes of one cell's part of an array (layout RIGHT: each cell's contiguous). */
static size_t cell_bytes(const tc_contraction *shape, bench_array which) {
  tc_contraction one = *shape;
  one.num_cells = 1;
  return (size_t)bench_array_count(&one, which) * (size_t)tc_precision_size(shape->precision);
}

/* The reference of check_cells cells spread over the case: their inputs
 * gathered into a small case of their own and run through the reference. */
static tc_err compute_sampled_reference(bench_case *c, int64_t check_cells) {
  const int64_t cells = c->shape.num_cells;
  c->num_checked = check_cells;
  TC_CALLOC(c->checked, check_cells);
  for (int64_t i = 0; i < check_cells; ++i) /* ascending, 0 and C-1 included */
    c->checked[i] = check_cells == 1 ? 0 : i * (cells - 1) / (check_cells - 1);
  tc_contraction sample = c->shape;
  sample.num_cells = check_cells;
  const size_t left_bytes = cell_bytes(&c->shape, BENCH_ARRAY_LEFT);
  const size_t right_bytes = cell_bytes(&c->shape, BENCH_ARRAY_RIGHT);
  const size_t out_bytes = cell_bytes(&c->shape, BENCH_ARRAY_OUTPUT);
  char *left = malloc(left_bytes * (size_t)check_cells);
  char *right = malloc(right_bytes * (size_t)check_cells);
  c->reference = calloc((size_t)check_cells, out_bytes);
  tc_err err = TC_SUCCESS;
  if (left == NULL || right == NULL || c->reference == NULL)
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                         "out of memory gathering %lld cells to check", (long long)check_cells);
  for (int64_t i = 0; err == TC_SUCCESS && i < check_cells; ++i) {
    const size_t cell = (size_t)c->checked[i];
    memcpy(left + (size_t)i * left_bytes, (const char *)c->left + cell * left_bytes, left_bytes);
    memcpy(right + (size_t)i * right_bytes, (const char *)c->right + cell * right_bytes,
           right_bytes);
    if (c->shape.sum_into)
      memcpy((char *)c->reference + (size_t)i * out_bytes,
             (const char *)c->initial_output + cell * out_bytes, out_bytes);
  }
  if (err == TC_SUCCESS)
    err = tc_contract(tc_contract_backend_get(TC_BACKEND_SERIAL), &sample, TC_VARIANT_REFERENCE,
                      left, right, c->reference, NULL);
  free(left);
  free(right);
  return err;
}

static tc_err fill_random(bench_case *c, uint64_t seed, int64_t check_cells) {
  TC_CALL(tc_contraction_validate(&c->shape));
  uint64_t state = seed;
  tc_precision precision = c->shape.precision;
  TC_CALL(allocate_random(precision, tc_contraction_left_count(&c->shape), &state, &c->left));
  TC_CALL(allocate_random(precision, tc_contraction_right_count(&c->shape), &state, &c->right));
  if (c->shape.sum_into)
    TC_CALL(allocate_random(precision, tc_contraction_output_count(&c->shape), &state,
                            &c->initial_output));
  if (check_cells > 0 && check_cells < c->shape.num_cells)
    return compute_sampled_reference(c, check_cells);
  return compute_reference(c);
}

tc_err bench_case_create_random_checked(const tc_contraction *shape, uint64_t seed,
                                        int64_t check_cells, bench_case *c) {
  memset(c, 0, sizeof *c);
  c->shape = *shape;
  c->shape.layout = TC_LAYOUT_RIGHT;
  tc_err err = fill_random(c, seed, check_cells);
  if (err != TC_SUCCESS)
    bench_case_destroy(c);
  return err;
}

tc_err bench_case_create_random(const tc_contraction *shape, uint64_t seed, bench_case *c) {
  return bench_case_create_random_checked(shape, seed, 0, c);
}

tc_err bench_case_create_from(const tc_contraction *shape, void *left, void *right,
                              void *initial_output, bench_case *c) {
  memset(c, 0, sizeof *c);
  c->shape = *shape;
  c->shape.layout = TC_LAYOUT_RIGHT;
  c->left = left;
  c->right = right;
  c->initial_output = initial_output;
  tc_err err = c->shape.sum_into && initial_output == NULL
                   ? tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                    "a sum-into case needs its initial output")
                   : tc_contraction_validate(&c->shape);
  if (err == TC_SUCCESS)
    err = compute_reference(c);
  if (err != TC_SUCCESS)
    bench_case_destroy(c);
  return err;
}

void bench_case_destroy(bench_case *c) {
  free(c->left);
  free(c->right);
  free(c->initial_output);
  free(c->reference);
  free(c->checked);
  memset(c, 0, sizeof *c);
}

void bench_relayout(const tc_contraction *shape, bench_array which, const void *source,
                    void *target, bool to_layout) {
  int64_t dims[5];
  int rank = array_dims(shape, which, dims);
  size_t size = (size_t)tc_precision_size(shape->precision);
  int64_t count = bench_array_count(shape, which);
  if (shape->layout == TC_LAYOUT_RIGHT) {
    memcpy(target, source, (size_t)count * size);
    return;
  }
  const char *from = source;
  char *to = target;
  int64_t index[5] = {0, 0, 0, 0, 0};
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t physical = tc_layout_offset(shape->layout, rank, dims, index);
    if (to_layout)
      memcpy(to + (size_t)physical * size, from + (size_t)linear * size, size);
    else
      memcpy(to + (size_t)linear * size, from + (size_t)physical * size, size);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[d])
        break;
      index[d] = 0;
    }
  }
}

double bench_relative_error(tc_precision precision, int64_t count, const void *output,
                            const void *reference) {
  double difference = 0.0, norm = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    double out = precision == TC_DOUBLE ? ((const double *)output)[i] : ((const float *)output)[i];
    double ref = precision == TC_DOUBLE ? ((const double *)reference)[i]
                                        : ((const float *)reference)[i];
    difference += (out - ref) * (out - ref);
    norm += ref * ref;
  }
  return norm > 0.0 ? sqrt(difference / norm) : sqrt(difference);
}

double bench_case_error(const bench_case *c, tc_layout layout, const void *output) {
  tc_contraction shape = c->shape;
  shape.layout = layout;
  int64_t dims[5];
  const int rank = tc_contraction_output_dims(&shape, dims);
  int64_t per_cell = 1;
  for (int d = 1; d < rank; ++d)
    per_cell *= dims[d];
  const bool single = shape.precision == TC_FLOAT;
  double difference = 0.0, norm = 0.0;
  for (int64_t i = 0; i < c->num_checked; ++i) {
    int64_t index[5] = {c->checked ? c->checked[i] : i, 0, 0, 0, 0};
    for (int64_t j = 0; j < per_cell; ++j) {
      const int64_t at = tc_layout_offset(layout, rank, dims, index);
      const int64_t ref_at = i * per_cell + j;
      const double out = single ? ((const float *)output)[at] : ((const double *)output)[at];
      const double ref = single ? ((const float *)c->reference)[ref_at]
                                : ((const double *)c->reference)[ref_at];
      difference += (out - ref) * (out - ref);
      norm += ref * ref;
      for (int d = rank - 1; d >= 1; --d) { /* the next entry of the cell, row-major */
        if (++index[d] < dims[d])
          break;
        index[d] = 0;
      }
    }
  }
  return norm > 0.0 ? sqrt(difference / norm) : sqrt(difference);
}

/* Summing K products in working precision has a worst-case relative error
 * near K*u against sum |a*b| (Higham, Accuracy and Stability, eq. 3.5); with
 * the mixed-sign inputs above the norm-wise error observed is far smaller, and
 * a real indexing bug gives an error of order 1. 2*K*u + 8u (u = unit
 * roundoff, the reference's own rounding included) sits between the two. */
double bench_tolerance(const tc_contraction *shape) {
  double unit_roundoff = shape->precision == TC_DOUBLE ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
  double length = (double)tc_contraction_length(shape) + (shape->sum_into ? 1.0 : 0.0);
  return unit_roundoff * (8.0 + 2.0 * length);
}
