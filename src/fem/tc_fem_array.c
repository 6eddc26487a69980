/* tc_fem_array: layout strides and the export of double row-major arrays
 * into a contraction's layout and precision. */
#include "tc_fem_array.h"

#include "tc_omp.h"

tc_err tc_fem_layout_strides(tc_layout layout, int rank, const int64_t dims[],
                             int64_t strides[]) {
  TC_CHECK(layout == TC_LAYOUT_RIGHT || layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)layout);
  TC_CHECK(rank >= 1 && rank <= TC_FEM_ARRAY_MAX_RANK, TC_ERR_ARGUMENT,
           "array rank %d outside 1..%d", rank, TC_FEM_ARRAY_MAX_RANK);
  int64_t stride = 1;
  for (int k = 0; k < rank; ++k) {
    int axis = layout == TC_LAYOUT_RIGHT ? rank - 1 - k : k;
    TC_CHECK(dims[axis] >= 0, TC_ERR_ARGUMENT, "negative extent %lld of axis %d",
             (long long)dims[axis], axis);
    strides[axis] = stride;
    stride *= dims[axis];
  }
  return TC_SUCCESS;
}

// What the threads of tc_fem_array_export share.
typedef struct {
  int rank;
  const int64_t *dims, *strides;
  int64_t inner; // elements per first-index slice
  const double *values;
  tc_precision precision;
  void *output;
} export_team;

// The first-index slices [begin, end) of tc_fem_array_export.
static void export_range(void *context, int64_t begin, int64_t end) {
  const export_team *t = context;
  for (int64_t first = begin; first < end; ++first)
    for (int64_t e = 0; e < t->inner; ++e) {
      int64_t offset = first * t->strides[0], rest = e;
      for (int k = t->rank - 1; k >= 1; --k) {
        offset += (rest % t->dims[k]) * t->strides[k];
        rest /= t->dims[k];
      }
      tc_fem_store(t->output, t->precision, offset, t->values[first * t->inner + e]);
    }
}

tc_err tc_fem_array_export(int rank, const int64_t dims[], const double *values, tc_layout layout,
                           tc_precision precision, void *output) {
  int64_t strides[TC_FEM_ARRAY_MAX_RANK];
  TC_CALL(tc_fem_layout_strides(layout, rank, dims, strides));
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  int64_t inner = 1;
  for (int k = 1; k < rank; ++k)
    inner *= dims[k];
  export_team team = {.rank = rank, .dims = dims, .strides = strides, .inner = inner,
                      .values = values, .precision = precision, .output = output};
  tc_omp_for(dims[0], export_range, &team);
  return TC_SUCCESS;
}
