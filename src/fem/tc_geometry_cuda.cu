/* tc_geometry_cuda: the geometry of the assembly loop's batches on the GPU
 * (see tc_geometry_cuda.h) in one kernel, a port of tc_geometry.c with the
 * same arithmetic in the same order. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_geometry_cuda.h"
}

#include "tc_cuda_grid.cuh"

namespace {

/// Cells a block of geometry_kernel takes at a time (a tile), and the most
/// points it forms at once for each of them (its slots: at least 4, so that
/// a tile's gather has threads enough).
constexpr int kTileCells = 8;
constexpr int kMostSlots = 32;

/// The geometry of a batch in one launch. For each tile of kTileCells cells
/// a block of kTileCells x slots threads (cell fastest): gathers the tile's
/// node coordinates into node_coords(a,i,c) = coords of node a of cell
/// begin + c and into shared memory; forms per (cell, point), point q on
/// slot q % slots, J, det J, J^{-1} and measure = w_q det J, and flags
/// det J <= 0; then, where volume is not NULL, sums each cell's measures,
/// ascending q (as the host), into volume[begin + c]: __syncthreads makes the
/// block's stores of them visible to its loads (measures is not read
/// through the read-only path).
__global__ void geometry_kernel(const double *__restrict__ coords,
                                const int64_t *__restrict__ cell_nodes, int64_t begin,
                                const double *__restrict__ ref_gradients,
                                const double *__restrict__ weights, int num_fields,
                                int64_t num_points, int64_t cells, int64_t stride,
                                double *__restrict__ node_coords, double *__restrict__ inverses,
                                double *measures, double *__restrict__ volume, int *inverted) {
  extern __shared__ double tile_coords[]; // [F * 3][kTileCells]
  const int lane = threadIdx.x % kTileCells;
  const int slot = threadIdx.x / kTileCells, slots = blockDim.x / kTileCells;
  const int entries = num_fields * 3;
  for (int64_t c0 = blockIdx.x * (int64_t)kTileCells; c0 < cells;
       c0 += (int64_t)gridDim.x * kTileCells) {
    const int64_t c = c0 + lane;
    const bool in_batch = c < cells;
    for (int e = slot; e < entries; e += slots) {
      double x = 0.0;
      if (in_batch) {
        const int64_t node = cell_nodes[(begin + c) * num_fields + e / 3];
        x = coords[3 * node + e % 3];
        node_coords[e * stride + c] = x;
      }
      tile_coords[e * kTileCells + lane] = x;
    }
    __syncthreads();
    for (int64_t q = slot; q < num_points && in_batch; q += slots) {
      double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
      for (int a = 0; a < num_fields; ++a) {
        const double *g = ref_gradients + (a * num_points + q) * 3;
        for (int i = 0; i < 3; ++i) {
          const double x = tile_coords[(a * 3 + i) * kTileCells + lane];
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
    __syncthreads();
    if (volume && slot == 0 && in_batch) {
      double sum = 0.0;
      for (int64_t q = 0; q < num_points; ++q)
        sum += measures[q * stride + c];
      volume[begin + c] = sum;
    }
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
  if (g->cells == 0)
    return TC_SUCCESS;
  const int slots = (int)std::min<int64_t>(std::max<int64_t>(g->num_points, 4), kMostSlots);
  const int64_t tiles = (g->cells + kTileCells - 1) / kTileCells;
  const size_t shared = (size_t)g->num_fields * 3 * kTileCells * sizeof(double);
  geometry_kernel<<<(unsigned)std::min(tiles, tc_cuda_grid::kMaxBlocks), kTileCells * slots,
                    shared, (cudaStream_t)stream>>>(
      coords, cell_nodes, begin, g->ref_gradients, g->weights, g->num_fields, g->num_points,
      g->cells, g->stride, g->node_coords, g->inverses, g->measures, volume, inverted);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}
