/* fused_cuda_fma: the FMA form of the fused elasticity (float Q2, and
 * double in binaries without sm_90 code): a block takes a group of cells at
 * a time (ten for Q1, one for Q2), parks the group's geometry (inverse
 * Jacobians, measures, node coordinates) in shared memory, then, chunk of
 * quadrature points by chunk, builds the rows of A and B of those points in
 * shared memory (computed in double as tc_physics_cuda's builders do,
 * rounded once to Real; each basis gradient once, for its three rows) and
 * adds their products into TM x TM register tiles of each cell's
 * (3F+1) x (3F+1) output, a tile's rows and columns strided by the side of
 * the cell's thread grid. Private to tc_physics_fused_cuda.cu. */
#ifndef TC_FUSED_CUDA_FMA_CUH
#define TC_FUSED_CUDA_FMA_CUH

#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_limits.cuh"

#include "fused_cuda_common.cuh"

namespace tc_fused {

constexpr int kMaxTile = 6;
/// Tiles up to this side keep two blocks an SM without spilling registers;
/// larger ones (only where a smaller grid does not fit a block: Q2) run one.
constexpr int kTwoBlockTile = 4;
constexpr int kMaxSide = 127; ///< 3F + 1 for F <= 42
constexpr int kMaxThreads = 256;
/// Shared memory a block takes at most: two blocks fit on an SM.
constexpr int kSharedBytes = 100 * 1024;

/// How a launch splits its work; the same on host and device.
struct fused_plan {
  int side;         ///< rows of A and of B: 3F + 1
  int grid;         ///< side of a cell's thread grid: ceil(side / TM)
  int cell_threads; ///< grid * grid
  int cells;        ///< cells a block takes at a time
  int points;       ///< quadrature points a chunk holds
  int pitch;        ///< Real words a row of A or B takes in shared memory (odd)
};

/// The shared memory of a block: the rows of A and B of a chunk, then the
/// group's geometry (double).
template <typename Real> struct fused_shared {
  Real *A, *B;
  double *inverses; ///< [cell][P][9]
  double *measures; ///< [cell][P]
  double *coords;   ///< [cell][F][3]
  __device__ fused_shared(unsigned char *bytes, const fused_plan &plan, int64_t P, int F) {
    const int64_t rows = (int64_t)plan.cells * plan.side * plan.pitch;
    A = reinterpret_cast<Real *>(bytes);
    B = A + rows;
    double *geometry = reinterpret_cast<double *>(
        bytes + ((2 * rows * (int64_t)sizeof(Real) + 15) / 16) * 16);
    inverses = geometry;
    measures = inverses + plan.cells * P * 9;
    coords = measures + plan.cells * P;
    (void)F;
  }
};

inline size_t shared_bytes(const fused_plan &plan, size_t real_size, int64_t P, int F) {
  const size_t rows = (size_t)plan.cells * plan.side * plan.pitch;
  return ((2 * rows * real_size + 15) / 16) * 16 +
         (size_t)plan.cells * (size_t)(P * 10 + F * 3) * sizeof(double);
}


/// Writes sigma-and-eps rows: A = dV sigma(eps), B = eps, 9 values each.
template <typename Real>
__device__ void write_rows(const tc_physics_fields &f, const double eps[9], double dV, Real *A,
                           Real *B) {
  double sigma[9];
  tc_physics_stress_of_strain(&f, eps, sigma);
  for (int k = 0; k < 9; ++k) {
    A[k] = (Real)(dV * sigma[k]);
    B[k] = (Real)eps[k];
  }
}

template <typename Real, int TM>
__global__ void __launch_bounds__(kMaxThreads, TM <= kTwoBlockTile ? 2 : 1)
    fused_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, fused_plan plan, bool left,
                 Real *__restrict__ stiffness, Real *__restrict__ internal_force,
                 Real *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells, P = g.num_points;
  const int F = g.num_fields, side = plan.side, N = side - 1, grid = plan.grid;
  const fused_shared<Real> s(shared_memory, plan, P, F);
  const int local_cell = threadIdx.x / plan.cell_threads;
  const int t = threadIdx.x % plan.cell_threads;
  const int ty = t / grid, tx = t % grid;
  const bool computes = local_cell < plan.cells;
  for (int64_t c0 = (int64_t)blockIdx.x * plan.cells; c0 < C;
       c0 += (int64_t)gridDim.x * plan.cells) {
    /* the group's geometry, cell index fastest in the batch */
    for (int i = threadIdx.x; i < plan.cells * P * 10 + plan.cells * F * 3; i += blockDim.x) {
      if (i < plan.cells * P * 9) {
        const int cell = i % plan.cells, k = (i / plan.cells) % 9, q = i / (plan.cells * 9);
        s.inverses[(cell * P + q) * 9 + k] =
            c0 + cell < C ? g.inverses[((int64_t)q * 9 + k) * g.stride + c0 + cell] : 1.0;
      } else if (i < plan.cells * P * 10) {
        const int j = i - plan.cells * (int)P * 9, cell = j % plan.cells, q = j / plan.cells;
        s.measures[cell * P + q] =
            c0 + cell < C ? g.measures[(int64_t)q * g.stride + c0 + cell] : 0.0;
      } else {
        const int j = i - plan.cells * (int)P * 10, cell = j % plan.cells, ai = j / plan.cells;
        s.coords[cell * F * 3 + ai] =
            c0 + cell < C ? g.node_coords[(int64_t)ai * g.stride + c0 + cell] : 0.0;
      }
    }
    Real acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j)
        acc[i][j] = (Real)0;
    for (int64_t q0 = 0; q0 < P; q0 += plan.points) {
      __syncthreads(); /* the geometry is parked; the last chunk's rows are used */
      /* the chunk's rows: item (cell, a, point) writes rows 3a..3a+2 of A and
       * B; item (cell, F, point) the row of w_h */
      const int points = (int)(P - q0 < plan.points ? P - q0 : plan.points);
      const int items = plan.cells * (F + 1) * points;
      for (int item = threadIdx.x; item < items; item += blockDim.x) {
        const int p = item % points, a = (item / points) % (F + 1);
        const int cell = item / (points * (F + 1));
        const int64_t q = q0 + p;
        Real *A = s.A + (cell * side + 3 * a) * plan.pitch + p * 9;
        Real *B = s.B + (cell * side + 3 * a) * plan.pitch + p * 9;
        const double *inverse = s.inverses + (cell * P + q) * 9;
        const double dV = s.measures[cell * P + q];
        double eps[9];
        if (a < F) {
          double grad[3];
          basis_gradient(inverse, g.ref_gradients + (a * P + q) * 3, grad);
          for (int i = 0; i < 3; ++i) {
            tc_physics_basis_strain(i, grad, eps);
            write_rows<Real>(f, eps, dV, A + i * plan.pitch, B + i * plan.pitch);
          }
        } else {
          double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
          for (int b = 0; b < F; ++b) {
            double w[3], grad[3];
            tc_physics_field_w(&f, s.coords + (cell * F + b) * 3, w);
            basis_gradient(inverse, g.ref_gradients + (b * P + q) * 3, grad);
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j)
                H[3 * i + j] += w[i] * grad[j];
          }
          tc_physics_symmetric_part(H, eps);
          write_rows<Real>(f, eps, dV, A, B);
        }
      }
      __syncthreads();
      if (computes) {
        const Real *a_cell = s.A + local_cell * side * plan.pitch;
        const Real *b_cell = s.B + local_cell * side * plan.pitch;
        const int length = points * 9;
        for (int k = 0; k < length; ++k) {
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
    }
    __syncthreads(); /* the group's geometry and rows are no longer read */
    const int64_t c = c0 + local_cell;
    if (!computes || c >= C)
      continue;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j) {
        if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                     ty + grid * i, tx + grid * j))
          *at = acc[i][j];
      }
  }
}

/// The tile side TM for an output side: among the tiles whose cell grid
/// fits in a block, the one that pads the output least, the larger on a tie
/// (more products per value read), up to kTwoBlockTile where one fits
/// there. Q1 (side 25): 4; Q2 (side 82): 6.
inline int tile_for(int side) {
  int best = 0, best_padded = 0;
  for (int tm = 1; tm <= kMaxTile; ++tm) {
    if (tm > kTwoBlockTile && best > 0)
      break;
    const int grid = (side + tm - 1) / tm;
    if (grid * grid > kMaxThreads)
      continue;
    const int padded = grid * tm;
    if (best == 0 || padded <= best_padded) {
      best = tm;
      best_padded = padded;
    }
  }
  return best;
}

/// Launches the FMA form with TM x TM tiles: as many cells a block and
/// points a chunk as kSharedBytes hold beside the group's geometry.
template <typename Real, int TM>
tc_err launch_fma_tiles(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                        fused_plan plan, bool left, const tc_physics_fused_outputs *out,
                        cudaStream_t stream) {
  const int64_t P = g.num_points;
  const int F = g.num_fields;
  plan.grid = (plan.side + TM - 1) / TM;
  plan.cell_threads = plan.grid * plan.grid;
  plan.cells = kMaxThreads / plan.cell_threads;
  /* the most points a chunk can hold beside the geometry (a row's pitch
   * odd, so that the rows a warp reads fall in different banks); fewer
   * cells a block when not even one point fits */
  for (;;) {
    plan.points = 1;
    plan.pitch = 9;
    while (plan.points < P) {
      fused_plan more = plan;
      ++more.points;
      more.pitch = 9 * more.points + ((9 * more.points) % 2 == 0 ? 1 : 0);
      if (shared_bytes(more, sizeof(Real), P, F) > (size_t)kSharedBytes)
        break;
      plan = more;
    }
    if (shared_bytes(plan, sizeof(Real), P, F) <= (size_t)kSharedBytes || plan.cells == 1)
      break;
    --plan.cells;
  }
  const size_t shared = shared_bytes(plan, sizeof(Real), P, F);
  TC_CHECK(shared <= (size_t)kSharedBytes, TC_ERR_UNSUPPORTED,
           "the fused elasticity needs %zu bytes of shared memory for elements of %d nodes and "
           "%lld points",
           shared, F, (long long)P);
  const int threads = ((plan.cells * plan.cell_threads + 31) / 32) * 32;
  auto kernel = fused_kernel<Real, TM>;
  const int64_t groups = (g.cells + plan.cells - 1) / plan.cells;
  if (groups == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(kernel, threads, shared, groups, "fused elasticity", &blocks));
  kernel<<<blocks, threads, shared, stream>>>(g, f, plan, left, (Real *)out->stiffness,
                                              (Real *)out->internal_force,
                                              (Real *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/// Launches the FMA form with the tile side tm (tile_for).
template <typename Real>
tc_err launch_fma(int tm, const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                   fused_plan plan, bool left, const tc_physics_fused_outputs *out,
                   cudaStream_t stream) {
  switch (tm) {
  case 1:
    return launch_fma_tiles<Real, 1>(g, f, plan, left, out, stream);
  case 2:
    return launch_fma_tiles<Real, 2>(g, f, plan, left, out, stream);
  case 3:
    return launch_fma_tiles<Real, 3>(g, f, plan, left, out, stream);
  case 4:
    return launch_fma_tiles<Real, 4>(g, f, plan, left, out, stream);
  case 5:
    return launch_fma_tiles<Real, 5>(g, f, plan, left, out, stream);
  default:
    return launch_fma_tiles<Real, 6>(g, f, plan, left, out, stream);
  }
}

} // namespace tc_fused

#endif
