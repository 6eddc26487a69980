/* tc_function_space: HGRAD value and gradient transforms, optionally
 * weighted by the cell measures, into a contraction's layout/precision.
 * Threads take blocks of cells. In layout right a block is one cell, walked
 * in storage order; in layout left a block is CELL_BLOCK_LEFT cells walked
 * innermost, so that consecutive stores fill whole cache lines. */
#include "tc_function_space.h"

#include <stddef.h>

#include "tc_fem_array.h"
#include "tc_omp.h"

enum { CELL_BLOCK_LEFT = 16 };

// Validates the common arguments and gives the output strides for the
// logical extents (C, F, P[, 3]) and the cells per block.
static tc_err output_strides(int64_t num_cells, int num_fields, int64_t num_points, int rank,
                             tc_layout layout, tc_precision precision, int64_t strides[4],
                             int64_t *cell_block) {
  TC_CHECK(num_cells >= 0 && num_fields >= 1 && num_points >= 0, TC_ERR_ARGUMENT,
           "bad field batch: %lld cells, %d fields, %lld points", (long long)num_cells,
           num_fields, (long long)num_points);
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  const int64_t dims[4] = {num_cells, num_fields, num_points, 3};
  TC_CALL(tc_fem_layout_strides(layout, rank, dims, strides));
  *cell_block = layout == TC_LAYOUT_LEFT ? CELL_BLOCK_LEFT : 1;
  return TC_SUCCESS;
}

// The loops of both transforms for one block of cells. Inlined into each
// caller with a constant precision and gradient flag, so the compiler emits
// one straight loop per case instead of testing them at every store.
static inline __attribute__((always_inline)) void
transform_block(int64_t first, int64_t last, int num_fields, int64_t num_points,
                const double *restrict reference, const double *restrict inverse_jacobians,
                const double *restrict measures, const int64_t s[4], tc_precision precision,
                int gradient, void *restrict output) {
  for (int f = 0; f < num_fields; ++f)
    for (int64_t p = 0; p < num_points; ++p) {
      const double *ref = reference + (f * num_points + p) * (gradient ? 3 : 1);
      for (int64_t c = first; c < last; ++c) {
        const double scale = measures ? measures[c * num_points + p] : 1.0;
        const int64_t at = c * s[0] + f * s[1] + p * s[2];
        if (!gradient) {
          tc_fem_store(output, precision, at, scale * ref[0]);
          continue;
        }
        const double *inv = inverse_jacobians + (c * num_points + p) * 9;
        for (int i = 0; i < 3; ++i)
          tc_fem_store(output, precision, at + i * s[3],
                       scale * (inv[0 * 3 + i] * ref[0] + inv[1 * 3 + i] * ref[1] +
                                inv[2 * 3 + i] * ref[2]));
      }
    }
}

// What the threads of transform share.
typedef struct {
  int64_t num_cells, block;
  int num_fields;
  int64_t num_points;
  const double *reference, *inverse_jacobians, *measures;
  const int64_t *s;
  tc_precision precision;
  int gradient;
  void *output;
} transform_team;

// The blocks of cells [begin, end) of transform, specialised per precision.
static void transform_range(void *context, int64_t begin, int64_t end) {
  const transform_team *t = context;
  for (int64_t b = begin; b < end; ++b) {
    const int64_t first = b * t->block;
    const int64_t last = first + t->block < t->num_cells ? first + t->block : t->num_cells;
    if (t->precision == TC_FLOAT && t->gradient)
      transform_block(first, last, t->num_fields, t->num_points, t->reference,
                      t->inverse_jacobians, t->measures, t->s, TC_FLOAT, 1, t->output);
    else if (t->precision == TC_FLOAT)
      transform_block(first, last, t->num_fields, t->num_points, t->reference, NULL, t->measures,
                      t->s, TC_FLOAT, 0, t->output);
    else if (t->gradient)
      transform_block(first, last, t->num_fields, t->num_points, t->reference,
                      t->inverse_jacobians, t->measures, t->s, TC_DOUBLE, 1, t->output);
    else
      transform_block(first, last, t->num_fields, t->num_points, t->reference, NULL, t->measures,
                      t->s, TC_DOUBLE, 0, t->output);
  }
}

// Runs transform_block over every block of cells on the OpenMP threads.
static void transform(int64_t num_cells, int64_t block, int num_fields, int64_t num_points,
                      const double *reference, const double *inverse_jacobians,
                      const double *measures, const int64_t s[4], tc_precision precision,
                      int gradient, void *output) {
  transform_team team = {.num_cells = num_cells, .block = block, .num_fields = num_fields,
                         .num_points = num_points, .reference = reference,
                         .inverse_jacobians = inverse_jacobians, .measures = measures, .s = s,
                         .precision = precision, .gradient = gradient, .output = output};
  tc_omp_for((num_cells + block - 1) / block, transform_range, &team);
}

tc_err tc_hgrad_values(int64_t num_cells, int num_fields, int64_t num_points,
                       const double *ref_values, const double *measures, tc_layout layout,
                       tc_precision precision, void *output) {
  int64_t s[4], block = 1;
  TC_CALL(output_strides(num_cells, num_fields, num_points, 3, layout, precision, s, &block));
  transform(num_cells, block, num_fields, num_points, ref_values, NULL, measures, s, precision, 0,
            output);
  return TC_SUCCESS;
}

tc_err tc_hgrad_gradients(int64_t num_cells, int num_fields, int64_t num_points,
                          const double *ref_gradients, const double *inverse_jacobians,
                          const double *measures, tc_layout layout, tc_precision precision,
                          void *output) {
  int64_t s[4], block = 1;
  TC_CALL(output_strides(num_cells, num_fields, num_points, 4, layout, precision, s, &block));
  transform(num_cells, block, num_fields, num_points, ref_gradients, inverse_jacobians, measures, s,
            precision, 1, output);
  return TC_SUCCESS;
}
