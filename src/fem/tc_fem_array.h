/* tc_fem_array: writing double, row-major arrays into the physical layout
 * and precision that tc_contract reads (tc_layout, tc_precision). */
#ifndef TC_FEM_ARRAY_H
#define TC_FEM_ARRAY_H

#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// Largest logical rank handled (the contractions use at most 5).
#define TC_FEM_ARRAY_MAX_RANK 5

/// Element strides of an array of logical extents dims[0..rank-1] in a
/// layout: TC_LAYOUT_RIGHT makes the last index fastest, TC_LAYOUT_LEFT the
/// first; the offset of index i is sum_k i[k] * strides[k], the same as
/// tc_layout_offset. TC_ERR_ARGUMENT for a bad layout, a rank outside
/// 1..TC_FEM_ARRAY_MAX_RANK or a negative extent.
tc_err tc_fem_layout_strides(tc_layout layout, int rank, const int64_t dims[],
                             int64_t strides[]);

/// Copies values, a double array of logical extents dims (row-major), into
/// output in the given layout and precision (double, or float rounded to
/// nearest). Threads over the first (cell) index. TC_ERR_ARGUMENT as for
/// tc_fem_layout_strides, or for a bad precision.
tc_err tc_fem_array_export(int rank, const int64_t dims[], const double *values, tc_layout layout,
                           tc_precision precision, void *output);

/// Stores one value at an element offset of an output array of the precision.
static inline void tc_fem_store(void *output, tc_precision precision, int64_t offset,
                                double value) {
  if (precision == TC_FLOAT)
    ((float *)output)[offset] = (float)value;
  else
    ((double *)output)[offset] = value;
}

/// The value as an array of the precision stores it (float: rounded to
/// nearest), in double.
static inline double tc_fem_rounded(double value, tc_precision precision) {
  return precision == TC_FLOAT ? (double)(float)value : value;
}

#endif
