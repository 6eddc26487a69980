/* tc_geometry_cuda: the geometry kernels of the assembly loop on the GPU
 * (see tc_geometry_cuda.h), ports of tc_geometry.c with the same arithmetic
 * in the same order. */
#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_geometry_cuda.h"
}

#include "tc_cuda_grid.cuh"

namespace {

using tc_cuda_grid::first_item;
using tc_cuda_grid::item_stride;

/// node_coords(a,i,c) = coords of node a of cell begin + c.
__global__ void gather_coords_kernel(const double *__restrict__ coords,
                                     const int64_t *__restrict__ cell_nodes, int num_fields,
                                     int64_t begin, int64_t cells, int64_t stride,
                                     double *__restrict__ node_coords) {
  for (int64_t t = first_item(); t < cells * num_fields; t += item_stride()) {
    const int64_t c = t % cells, a = t / cells;
    const int64_t node = cell_nodes[(begin + c) * num_fields + a];
    for (int i = 0; i < 3; ++i)
      node_coords[(a * 3 + i) * stride + c] = coords[3 * node + i];
  }
}

/// Per (cell, point): J, det J, J^{-1}, measure = w_q det J; flags det J <= 0.
__global__ void geometry_kernel(const double *__restrict__ node_coords,
                                const double *__restrict__ ref_gradients,
                                const double *__restrict__ weights, int num_fields,
                                int64_t num_points, int64_t cells, int64_t stride,
                                double *__restrict__ inverses, double *__restrict__ measures,
                                int *inverted) {
  for (int64_t t = first_item(); t < cells * num_points; t += item_stride()) {
    const int64_t c = t % cells, q = t / cells;
    double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int a = 0; a < num_fields; ++a) {
      const double *g = ref_gradients + (a * num_points + q) * 3;
      for (int i = 0; i < 3; ++i) {
        const double x = node_coords[(a * 3 + i) * stride + c];
        for (int j = 0; j < 3; ++j)
          J[3 * i + j] += x * g[j];
      }
    }
    const double c00 = J[4] * J[8] - J[5] * J[7];
    const double c01 = J[5] * J[6] - J[3] * J[8];
    const double c02 = J[3] * J[7] - J[4] * J[6];
    const double det = J[0] * c00 + J[1] * c01 + J[2] * c02;
    if (!(det > 0.0))
      *inverted = 1;
    const double r = 1.0 / det;
    const double inv[9] = {
        c00 * r, (J[2] * J[7] - J[1] * J[8]) * r, (J[1] * J[5] - J[2] * J[4]) * r,
        c01 * r, (J[0] * J[8] - J[2] * J[6]) * r, (J[2] * J[3] - J[0] * J[5]) * r,
        c02 * r, (J[1] * J[6] - J[0] * J[7]) * r, (J[0] * J[4] - J[1] * J[3]) * r};
    for (int k = 0; k < 9; ++k)
      inverses[(q * 9 + k) * stride + c] = inv[k];
    measures[q * stride + c] = weights[q] * det;
  }
}

/// volume[begin + c] = sum of cell c's measures, ascending q (as the host).
__global__ void volume_kernel(const double *__restrict__ measures, int64_t num_points,
                              int64_t begin, int64_t cells, int64_t stride,
                              double *__restrict__ volume) {
  for (int64_t c = first_item(); c < cells; c += item_stride()) {
    double sum = 0.0;
    for (int64_t q = 0; q < num_points; ++q)
      sum += measures[q * stride + c];
    volume[begin + c] = sum;
  }
}

} // namespace

extern "C" tc_err tc_geometry_cuda_form(const double *coords, const int64_t *cell_nodes,
                                        int64_t begin, const tc_geometry_cuda_batch *batch,
                                        double *volume, int *inverted, void *stream) {
  const tc_geometry_cuda_batch *g = batch;
  TC_CHECK(g->cells >= 0 && g->cells <= g->stride, TC_ERR_ARGUMENT,
           "GPU geometry of %lld cells in a batch of %lld", (long long)g->cells,
           (long long)g->stride);
  cudaStream_t s = (cudaStream_t)stream;
  TC_LAUNCH(gather_coords_kernel, g->cells * g->num_fields, s, coords, cell_nodes, g->num_fields,
            begin, g->cells, g->stride, g->node_coords);
  TC_LAUNCH(geometry_kernel, g->cells * g->num_points, s, g->node_coords, g->ref_gradients,
            g->weights, g->num_fields, g->num_points, g->cells, g->stride, g->inverses,
            g->measures, inverted);
  if (volume)
    TC_LAUNCH(volume_kernel, g->cells, s, g->measures, g->num_points, begin, g->cells, g->stride,
              volume);
  return TC_SUCCESS;
}
