/* tc_geometry_cuda: the GPU twin of tc_geometry for the assembly loop: the
 * geometry of a batch of cells formed on the device, with the same
 * arithmetic in the same order as tc_geometry_jacobians,
 * tc_geometry_invert_jacobians and tc_geometry_measures. The batch is kept
 * cell index fastest ([...][stride]) so that neighbouring threads
 * (neighbouring cells) read neighbouring words. Plain C interface; without
 * the CUDA backend in the build the call fails with TC_ERR_UNSUPPORTED. */
#ifndef TC_GEOMETRY_CUDA_H
#define TC_GEOMETRY_CUDA_H

#include <stdint.h>

#include "tc_build.h"
#include "tc_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The geometry of one batch of `cells` cells in device memory, entry
/// (..., c) at [... * stride + c] (stride >= cells: the batch capacity),
/// with the reference basis it was formed from (device copies).
typedef struct {
  int num_fields;               ///< F, nodes per cell
  int64_t num_points;           ///< P
  int64_t cells, stride;
  double *node_coords;          ///< [F][3][stride]
  double *inverses;             ///< [P][9][stride], J^{-1} row-major
  double *measures;             ///< [P][stride], w_q det J
  const double *ref_values;     ///< (F,P)
  const double *ref_gradients;  ///< (F,P,3)
  const double *weights;        ///< (P)
} tc_geometry_cuda_batch;

#if TCMINI_HAVE_CUDA
/// Forms the geometry of cells [begin, begin + batch->cells) of a mesh whose
/// node coordinates ([nodes][3]) and cell nodes ([cells][F]) are in device
/// memory: gathers the node coordinates, forms J, det J, J^{-1} and the
/// measures into batch's arrays, the cell volumes (sum of the measures,
/// ascending q) into volume[begin + c] when volume is not NULL, and sets the
/// device int *inverted to 1 where some det J <= 0 or is not a number (it is
/// not cleared). Asynchronous on stream (cudaStream_t).
tc_err tc_geometry_cuda_form(const double *coords, const int64_t *cell_nodes, int64_t begin,
                             const tc_geometry_cuda_batch *batch, double *volume, int *inverted,
                             void *stream);
#else
static inline tc_err tc_geometry_cuda_form(const double *coords, const int64_t *cell_nodes,
                                           int64_t begin, const tc_geometry_cuda_batch *batch,
                                           double *volume, int *inverted, void *stream) {
  (void)coords, (void)cell_nodes, (void)begin, (void)batch, (void)volume, (void)inverted;
  (void)stream;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the GPU geometry is not in this build (configure with "
                        "-DTCMINI_ENABLE_CUDA=ON)");
}
#endif

#ifdef __cplusplus
}
#endif

#endif
