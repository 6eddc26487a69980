/* tc_physics_fused_cuda: the elasticity trio with its inputs built on chip,
 * on the GPU (see tc_physics_fused.h). A block takes a few cells at a time
 * (one for Q2); for each chunk of quadrature points its threads build the
 * chunk's rows of A and B for those cells in shared memory from the batch's
 * geometry (computed in double as tc_physics_cuda's builders do, rounded
 * once to Real), then every thread adds the chunk's products into a TM x TM
 * register tile of its cell's (3F+1) x (3F+1) output, rows and columns
 * strided by the tile grid's side. Only the outputs go to device memory. */
#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_grid.cuh"

namespace {

/// Largest output side (3F+1) the kernels take: 7 tiles of 6 and more.
constexpr int kMaxTile = 6;
constexpr int kMaxSide = 127;
constexpr int kBlockThreads = 256;
/// Shared memory a block may take without raising its limit.
constexpr int kSharedBytes = 48 * 1024;

/// How a launch splits its work; the same on host and device.
struct fused_plan {
  int side;        ///< rows of A and of B: 3F + 1
  int grid;        ///< side of a cell's thread grid: ceil(side / TM)
  int cell_threads;///< grid * grid
  int cells;       ///< cells a block takes at a time
  int points;      ///< quadrature points a chunk holds
  int pitch;       ///< Real words a row of A or B takes in shared memory (odd)
};

/// J^{-T} grad_ref phi_a at point q of cell c (HGRADtransformGRAD), as
/// tc_physics_cuda's physical_gradient.
__device__ void basis_gradient(const tc_geometry_cuda_batch &g, int64_t c, int a, int64_t q,
                               double out[3]) {
  double inv[9];
  for (int k = 0; k < 9; ++k)
    inv[k] = g.inverses[(q * 9 + k) * g.stride + c];
  const double *ref = g.ref_gradients + (a * g.num_points + q) * 3;
  for (int i = 0; i < 3; ++i)
    out[i] = inv[0 * 3 + i] * ref[0] + inv[1 * 3 + i] * ref[1] + inv[2 * 3 + i] * ref[2];
}

/// Row `row` of A and B of cell c at point q, 9 values each: rows 3a+i of
/// the basis (a weighted stress and a strain), or row 3F of w_h.
template <typename Real>
__device__ void build_rows(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                           int64_t c, int row, int64_t q, Real *A, Real *B) {
  const int F = g.num_fields;
  const double dV = g.measures[q * g.stride + c];
  double eps[9], sigma[9];
  if (row < 3 * F) {
    double grad[3];
    basis_gradient(g, c, row / 3, q, grad);
    tc_physics_basis_strain(row % 3, grad, eps);
  } else {
    double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int a = 0; a < F; ++a) {
      double x[3], w[3], grad[3];
      for (int i = 0; i < 3; ++i)
        x[i] = g.node_coords[(a * 3 + i) * g.stride + c];
      tc_physics_field_w(&f, x, w);
      basis_gradient(g, c, a, q, grad);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          H[3 * i + j] += w[i] * grad[j];
    }
    tc_physics_symmetric_part(H, eps);
  }
  tc_physics_stress_of_strain(&f, eps, sigma);
  for (int k = 0; k < 9; ++k) {
    A[k] = (Real)(dV * sigma[k]);
    B[k] = (Real)eps[k];
  }
}

template <typename Real, int TM>
__global__ void __launch_bounds__(kBlockThreads)
    fused_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, fused_plan plan, bool left,
                 Real *__restrict__ stiffness, Real *__restrict__ internal_force,
                 Real *__restrict__ stress_strain) {
  extern __shared__ unsigned char shared_bytes[];
  Real *A = reinterpret_cast<Real *>(shared_bytes);
  Real *B = A + plan.cells * plan.side * plan.pitch;
  const int side = plan.side, N = side - 1, grid = plan.grid;
  const int64_t C = g.cells, P = g.num_points;
  const int local_cell = threadIdx.x / plan.cell_threads;
  const int t = threadIdx.x % plan.cell_threads;
  const int ty = t / grid, tx = t % grid;
  const bool computes = local_cell < plan.cells;
  const int chunk_items = plan.cells * side * plan.points;
  for (int64_t c0 = (int64_t)blockIdx.x * plan.cells; c0 < C;
       c0 += (int64_t)gridDim.x * plan.cells) {
    const int64_t c = c0 + local_cell;
    Real acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j)
        acc[i][j] = (Real)0;
    for (int64_t q0 = 0; q0 < P; q0 += plan.points) {
      const int points = (int)(P - q0 < plan.points ? P - q0 : plan.points);
      /* build the chunk's rows: item = (cell, row, point) */
      for (int item = threadIdx.x; item < chunk_items; item += blockDim.x) {
        const int p = item % plan.points, row = (item / plan.points) % side;
        const int cell = item / (plan.points * side);
        const int64_t cc = c0 + cell;
        Real *a_row = A + (cell * side + row) * plan.pitch + p * 9;
        Real *b_row = B + (cell * side + row) * plan.pitch + p * 9;
        if (cc < C && p < points) {
          build_rows<Real>(g, f, cc, row, q0 + p, a_row, b_row);
        } else {
          for (int k = 0; k < 9; ++k)
            a_row[k] = b_row[k] = (Real)0;
        }
      }
      __syncthreads();
      if (computes) {
        const Real *a_cell = A + local_cell * side * plan.pitch;
        const Real *b_cell = B + local_cell * side * plan.pitch;
        for (int k = 0; k < points * 9; ++k) {
          Real a[TM], b[TM];
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const int row = ty + grid * i, column = tx + grid * i;
            a[i] = row < side ? a_cell[row * plan.pitch + k] : (Real)0;
            b[i] = column < side ? b_cell[column * plan.pitch + k] : (Real)0;
          }
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TM; ++j)
              acc[i][j] += a[i] * b[j];
        }
      }
      __syncthreads();
    }
    if (!computes || c >= C)
      continue;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j) {
        const int l = ty + grid * i, r = tx + grid * j;
        if (l < N && r < N && stiffness)
          stiffness[left ? c + C * (l + (int64_t)N * r) : (c * N + l) * N + r] = acc[i][j];
        else if (l == N && r < N && internal_force)
          internal_force[left ? c + C * r : c * N + r] = acc[i][j];
        else if (l == N && r == N && stress_strain)
          stress_strain[c] = acc[i][j];
      }
  }
}

/// The tile side TM for an output side: among the tiles whose cell grid
/// fits in a block, the one that pads the output least, the larger on a tie
/// (more products per value read). Q1 (side 25): 5; Q2 (side 82): 6.
int tile_for(int side) {
  int best = 0, best_padded = 0;
  for (int tm = 1; tm <= kMaxTile; ++tm) {
    const int grid = (side + tm - 1) / tm;
    if (grid * grid > kBlockThreads)
      continue;
    const int padded = grid * tm;
    if (best == 0 || padded <= best_padded) {
      best = tm;
      best_padded = padded;
    }
  }
  return best;
}

template <typename Real, int TM>
tc_err launch(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, fused_plan plan,
              bool left, const tc_physics_fused_outputs *out, cudaStream_t stream) {
  plan.grid = (plan.side + TM - 1) / TM;
  plan.cell_threads = plan.grid * plan.grid;
  plan.cells = kBlockThreads / plan.cell_threads;
  /* points a chunk holds: as many as fit in the shared memory (a row's
   * pitch odd, so that the rows a warp reads fall in different banks) */
  const int row_words = kSharedBytes / (2 * plan.cells * plan.side * (int)sizeof(Real));
  int points = (row_words - 1) / 9;
  points = points < 1 ? 1 : points > g.num_points ? (int)g.num_points : points;
  plan.points = points;
  plan.pitch = 9 * points + ((9 * points) % 2 == 0 ? 1 : 0);
  const size_t shared = (size_t)2 * plan.cells * plan.side * plan.pitch * sizeof(Real);
  TC_CHECK(shared <= (size_t)kSharedBytes, TC_ERR_UNSUPPORTED,
           "the fused elasticity needs %zu bytes of shared memory for elements of %d nodes",
           shared, g.num_fields);
  const int64_t groups = (g.cells + plan.cells - 1) / plan.cells;
  const unsigned blocks = (unsigned)(groups < tc_cuda_grid::kMaxBlocks ? groups
                                                                      : tc_cuda_grid::kMaxBlocks);
  if (blocks == 0)
    return TC_SUCCESS;
  fused_kernel<Real, TM><<<blocks, kBlockThreads, shared, stream>>>(
      g, f, plan, left, (Real *)out->stiffness, (Real *)out->internal_force,
      (Real *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

template <typename Real>
tc_err launch_tile(int tm, const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                   fused_plan plan, bool left, const tc_physics_fused_outputs *out,
                   cudaStream_t stream) {
  switch (tm) {
  case 1:
    return launch<Real, 1>(g, f, plan, left, out, stream);
  case 2:
    return launch<Real, 2>(g, f, plan, left, out, stream);
  case 3:
    return launch<Real, 3>(g, f, plan, left, out, stream);
  case 4:
    return launch<Real, 4>(g, f, plan, left, out, stream);
  case 5:
    return launch<Real, 5>(g, f, plan, left, out, stream);
  default:
    return launch<Real, 6>(g, f, plan, left, out, stream);
  }
}

} // namespace

extern "C" tc_err tc_physics_cuda_fused_elasticity(const tc_geometry_cuda_batch *batch,
                                                   const tc_physics_fields *fields,
                                                   tc_layout layout, tc_precision precision,
                                                   const tc_physics_fused_outputs *outputs,
                                                   void *stream) {
  fused_plan plan = {};
  plan.side = 3 * batch->num_fields + 1;
  const int tm = plan.side <= kMaxSide ? tile_for(plan.side) : 0;
  TC_CHECK(tm > 0, TC_ERR_UNSUPPORTED,
           "the fused elasticity takes elements of at most 42 nodes (got %d)",
           batch->num_fields);
  TC_CHECK(batch->cells >= 0 && batch->cells <= batch->stride, TC_ERR_ARGUMENT,
           "fused elasticity of %lld cells in a batch of %lld", (long long)batch->cells,
           (long long)batch->stride);
  const bool left = layout == TC_LAYOUT_LEFT;
  cudaStream_t s = (cudaStream_t)stream;
  if (precision == TC_DOUBLE)
    return launch_tile<double>(tm, *batch, *fields, plan, left, outputs, s);
  return launch_tile<float>(tm, *batch, *fields, plan, left, outputs, s);
}
