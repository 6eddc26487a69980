/* contract_serial: the serial backend, the reference (oracle) for every other
 * backend. One loop nest over the logical indices (cell, a, b, point, d1, d2)
 * of all nine kernels; each array is addressed through the stride of each
 * logical index in its layout, taken from tc_layout_offset. Accumulates in
 * double (for float too): written for clarity, not speed. */
#include "tc_contract_backend.h"

/* The logical indices of one term: output entry (cell, a, b), a = l or f,
 * b = r, and the contracted point and tensor indices. */
enum { TERM_CELL, TERM_A, TERM_B, TERM_POINT, TERM_D1, TERM_D2, TERM_INDEX_COUNT };

/* Element stride of each term index in one array (0: the array does not
 * depend on that index). */
typedef struct {
  int64_t stride[TERM_INDEX_COUNT];
} array_strides;

/* Strides of an array of logical extents dims[rank] in the layout, whose
 * logical axes are the term indices axes[rank] (TERM_INDEX_COUNT for an axis
 * of extent 1 that stays 0, as the point of one-value-per-cell data). */
static array_strides strides_of(tc_layout layout, int rank, const int64_t dims[5],
                                const int axes[5]) {
  array_strides s = {{0}};
  for (int axis = 0; axis < rank; ++axis) {
    int64_t unit[5] = {0};
    unit[axis] = 1;
    if (axes[axis] < TERM_INDEX_COUNT)
      s.stride[axes[axis]] = tc_layout_offset(layout, rank, dims, unit);
  }
  return s;
}

static int64_t offset_of(const array_strides *s, const int64_t term[TERM_INDEX_COUNT]) {
  int64_t offset = 0;
  for (int t = 0; t < TERM_INDEX_COUNT; ++t)
    offset += s->stride[t] * term[t];
  return offset;
}

/* array[offset] of an array of the given precision, as double. */
static double load(tc_precision precision, const void *array, int64_t offset) {
  if (precision == TC_FLOAT)
    return (double)((const float *)array)[offset];
  return ((const double *)array)[offset];
}

static void store(tc_precision precision, void *array, int64_t offset, double value) {
  if (precision == TC_FLOAT)
    ((float *)array)[offset] = (float)value;
  else
    ((double *)array)[offset] = value;
}

static tc_err serial_run(const tc_contraction *shape, tc_variant variant, const void *left,
                         const void *right, void *output, void *stream) {
  (void)stream;
  TC_CHECK(variant == TC_VARIANT_REFERENCE, TC_ERR_INTERNAL, "serial backend given variant %s",
           tc_variant_name(variant));
  const bool field_field = tc_kernel_is_field_field(shape->kernel);
  const bool data_field = tc_kernel_is_data_field(shape->kernel);
  /* The logical axes of each array, as Intrepid defines the kernels:
   * FieldField left(c,l,p,..) right(c,r,p,..) out(c,l,r); DataField
   * data(c,p or one value,..) fields(c,f,p,..) out(c,f); DataData left(c,p,..)
   * right(c,p,..) out(c). Tensor axes follow the point axis. */
  const int shared_point = data_field && shape->num_data_points == 1 ? TERM_INDEX_COUNT : TERM_POINT;
  const int left_axes[3][5] = {
      {TERM_CELL, TERM_A, TERM_POINT, TERM_D1, TERM_D2},
      {TERM_CELL, shared_point, TERM_D1, TERM_D2},
      {TERM_CELL, TERM_POINT, TERM_D1, TERM_D2}};
  const int right_axes[3][5] = {
      {TERM_CELL, TERM_B, TERM_POINT, TERM_D1, TERM_D2},
      {TERM_CELL, TERM_A, TERM_POINT, TERM_D1, TERM_D2},
      {TERM_CELL, TERM_POINT, TERM_D1, TERM_D2}};
  const int out_axes[5] = {TERM_CELL, TERM_A, TERM_B};
  const int family = field_field ? 0 : data_field ? 1 : 2;
  int64_t left_dims[5], right_dims[5], out_dims[5];
  const int left_rank = tc_contraction_left_dims(shape, left_dims);
  const int right_rank = tc_contraction_right_dims(shape, right_dims);
  const int out_rank = tc_contraction_output_dims(shape, out_dims);
  const array_strides ls = strides_of(shape->layout, left_rank, left_dims, left_axes[family]);
  const array_strides rs = strides_of(shape->layout, right_rank, right_dims, right_axes[family]);
  const array_strides os = strides_of(shape->layout, out_rank, out_dims, out_axes);
  const int64_t num_a = out_rank >= 2 ? out_dims[1] : 1;
  const int64_t num_b = out_rank >= 3 ? out_dims[2] : 1;
  const tc_precision precision = shape->precision;
  int64_t t[TERM_INDEX_COUNT];
  for (t[TERM_CELL] = 0; t[TERM_CELL] < shape->num_cells; ++t[TERM_CELL])
    for (t[TERM_A] = 0; t[TERM_A] < num_a; ++t[TERM_A])
      for (t[TERM_B] = 0; t[TERM_B] < num_b; ++t[TERM_B]) {
        double sum = 0.0;
        for (t[TERM_POINT] = 0; t[TERM_POINT] < shape->num_points; ++t[TERM_POINT])
          for (t[TERM_D1] = 0; t[TERM_D1] < shape->dim1; ++t[TERM_D1])
            for (t[TERM_D2] = 0; t[TERM_D2] < shape->dim2; ++t[TERM_D2])
              sum += load(precision, left, offset_of(&ls, t)) *
                     load(precision, right, offset_of(&rs, t));
        /* The output's strides along the contracted indices are 0. */
        const int64_t offset = offset_of(&os, t);
        if (shape->sum_into)
          sum += load(precision, output, offset);
        store(precision, output, offset, sum);
      }
  return TC_SUCCESS;
}

static bool serial_supports(const tc_contraction *shape, tc_variant variant) {
  (void)shape;
  return variant == TC_VARIANT_REFERENCE;
}

static tc_variant serial_choose(const tc_contraction *shape) {
  (void)shape;
  return TC_VARIANT_REFERENCE;
}

const tc_contract_backend tc_contract_backend_serial = {
    .kind = TC_BACKEND_SERIAL,
    .supports = serial_supports,
    .choose = serial_choose,
    .run = serial_run,
};
