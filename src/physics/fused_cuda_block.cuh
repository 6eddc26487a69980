/* fused_cuda_block: the tensor-core block form of the fused elasticity
 * (double, sm_90, elements larger than the pair form takes: Q2): a block
 * per cell, chunks of 16 points by a few stress and strain components, the
 * chunk's k ordered component-major so that each 16 of k is one component
 * at 16 points, the rows of A and B built in shared memory and the warps'
 * 16 x 8 DMMA tiles of the padded output summing them (tc_cuda_mma.cuh).
 * Private to tc_physics_fused_cuda.cu. */
#ifndef TC_FUSED_CUDA_BLOCK_CUH
#define TC_FUSED_CUDA_BLOCK_CUH

#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_limits.cuh"
#include "tc_cuda_mma.cuh"

#include "fused_cuda_common.cuh"

namespace tc_fused {

constexpr int kMmaWarps = 8;
constexpr int kMmaMostTiles = 12; ///< 16 x 8 tiles a warp holds at most
/// Shared memory of a block of the tensor-core form: two blocks an SM when a
/// chunk of 3 components fits in half of it.
constexpr int kMmaSharedBytes = 200 * 1024;
/// Forms of up to this many tiles a warp are held to two blocks an SM (128
/// registers a thread; T = 9 then spills 232 bytes), so that one block's
/// rows are built while the other's products run. H100, Q2 32^3, 5 points:
/// fused_elasticity 0.063 -> 0.047 s (T = 9, 204 registers, one block).
constexpr int kMmaTwoBlockTiles = 9;

/// How the tensor-core form splits a cell: the padded output, the chunk.
struct mma_plan {
  int side;            ///< 3F + 1
  int m_tiles, n_tiles;///< 16-row and 8-column tiles over the padded output
  int components;      ///< stress and strain components a chunk holds: 1, 3 or 9
  int pitch;           ///< doubles a row of A or B takes: 16 components + 2
};

/// The rows of A and B, the cell's geometry, then per chunk of 16 points
/// the basis gradients and grad w, and w at the cell's nodes (doubles).
inline size_t mma_shared_bytes(const mma_plan &plan, int64_t P, int F) {
  return (size_t)(plan.m_tiles * 16 + plan.n_tiles * 8) * plan.pitch * sizeof(double) +
         (size_t)(P * 10 + F * 3) * sizeof(double) +
         (size_t)(F * 16 * 3 + 16 * 9 + F * 3) * sizeof(double);
}

/// Components c0 .. c0 + count - 1 of a point's rows, A = dV sigma(eps) and
/// B = eps, at stride 16 (k = 16 s + point); every index a constant, so the
/// tensors stay in registers.
__device__ inline void write_chunk(const tc_physics_fields &f, const double eps[9], double dV,
                                   int c0, int count, double *A, double *B) {
  double sigma[9];
  tc_physics_stress_of_strain(&f, eps, sigma);
#pragma unroll
  for (int k = 0; k < 9; ++k)
    if (k >= c0 && k < c0 + count) {
      A[16 * (k - c0)] = dV * sigma[k];
      B[16 * (k - c0)] = eps[k];
    }
}

/// The whole trio of a cell on the tensor cores: A and B of 16 points by
/// `components` components a chunk, row r holding component c0 + s of
/// point q0 + p at k = 16 s + p (rows and points past the element's are
/// zero), and each warp's tiles (tile w, w + warps, ...) adding the chunk's
/// 16 x 8 x 16 products. The basis gradients and grad w of the 16 points
/// are formed once for all their component chunks, grad w by 144 threads
/// (point, i, j) each summing over the nodes in order (one thread a point
/// summing all nine entries kept the other warps waiting at the barrier).
template <int T>
__global__ void __launch_bounds__(kMmaWarps * 32, T <= kMmaTwoBlockTiles ? 2 : 1)
    fused_mma_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, mma_plan plan, bool left,
                     double *__restrict__ stiffness, double *__restrict__ internal_force,
                     double *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells, P = g.num_points;
  const int F = g.num_fields, side = plan.side, N = side - 1, pitch = plan.pitch;
  const int a_rows = plan.m_tiles * 16, b_rows = plan.n_tiles * 8;
  double *A = reinterpret_cast<double *>(shared_memory);
  double *B = A + a_rows * pitch;
  double *inverses = B + b_rows * pitch, *measures = inverses + P * 9,
         *coords = measures + P;
  double *grads = coords + F * 3; ///< [a][p][3]: basis gradients at the chunk's points
  double *grad_w = grads + F * 16 * 3; ///< [p][9]: grad w at the chunk's points
  double *w = grad_w + 16 * 9;         ///< [b][3]: w at the cell's nodes
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = lane / 4, member = lane % 4;
  const int tiles = plan.m_tiles * plan.n_tiles;
  /* the padding rows stay zero */
  for (int i = threadIdx.x; i < (a_rows - side) * pitch; i += blockDim.x)
    A[side * pitch + i] = 0.0;
  for (int i = threadIdx.x; i < (b_rows - side) * pitch; i += blockDim.x)
    B[side * pitch + i] = 0.0;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    __syncthreads(); /* the last cell's geometry and rows are used */
    park_cell_geometry(g, c, blockDim.x, inverses, measures, coords);
    double acc[T][4];
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[t][v] = 0.0;
    for (int64_t q0 = 0; q0 < P; q0 += 16) {
      __syncthreads(); /* the geometry is parked; the last chunk's gradients are used */
      for (int item = threadIdx.x; item < F * 16; item += blockDim.x) {
        const int p = item % 16, a = item / 16;
        double grad[3] = {0.0, 0.0, 0.0};
        if (q0 + p < P)
          basis_gradient(inverses + (q0 + p) * 9, g.ref_gradients + (a * P + q0 + p) * 3, grad);
        for (int i = 0; i < 3; ++i)
          grads[item * 3 + i] = grad[i];
      }
      if (q0 == 0)
        for (int b = threadIdx.x; b < F; b += blockDim.x)
          tc_physics_field_w(&f, coords + b * 3, w + b * 3);
      __syncthreads();
      /* grad w = sum over the nodes b of w(b) grad phi_b^T, entry (i, j) */
      for (int item = threadIdx.x; item < 16 * 9; item += blockDim.x) {
        const int p = item % 16, ij = item / 16, i = ij / 3, j = ij % 3;
        double h = 0.0;
        for (int b = 0; b < F && q0 + p < P; ++b)
          h += w[b * 3 + i] * grads[(b * 16 + p) * 3 + j];
        grad_w[p * 9 + ij] = h;
      }
      for (int c0 = 0; c0 < 9; c0 += plan.components) {
        __syncthreads(); /* grad w is formed; the last chunk's rows are used */
        /* item (a, point): rows 3a..3a+2 (a < F) or the row of w_h (a = F) */
        for (int item = threadIdx.x; item < (F + 1) * 16; item += blockDim.x) {
          const int p = item % 16, a = item / 16;
          const int64_t q = q0 + p;
          const double dV = q < P ? measures[q] : 0.0;
          if (a < F) {
            const double grad[3] = {grads[item * 3], grads[item * 3 + 1], grads[item * 3 + 2]};
#pragma unroll
            for (int i = 0; i < 3; ++i) {
              double eps[9];
              tc_physics_basis_strain(i, grad, eps);
              write_chunk(f, eps, dV, c0, plan.components, A + (3 * a + i) * pitch + p,
                          B + (3 * a + i) * pitch + p);
            }
          } else {
            double eps[9];
            tc_physics_symmetric_part(grad_w + p * 9, eps);
            write_chunk(f, eps, dV, c0, plan.components, A + 3 * F * pitch + p,
                        B + 3 * F * pitch + p);
          }
        }
        __syncthreads();
        for (int s = 0; s < plan.components; ++s) {
          const int k16 = 16 * s + 4 * member;
#pragma unroll
          for (int t = 0; t < T; ++t) {
            const int tile = warp + kMmaWarps * t;
            if (tile >= tiles)
              break;
            const int m = tile / plan.n_tiles, n = tile % plan.n_tiles;
            double2 a[2][2], b[2];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int u = 0; u < 2; ++u)
                a[h][u] = *reinterpret_cast<const double2 *>(
                    A + (m * 16 + 8 * h + group) * pitch + k16 + 2 * u);
#pragma unroll
            for (int u = 0; u < 2; ++u)
              b[u] = *reinterpret_cast<const double2 *>(B + (n * 8 + group) * pitch + k16 + 2 * u);
            tc_cuda::mma_16x8x16(acc[t], a, b);
          }
        }
      }
    }
#pragma unroll
    for (int t = 0; t < T; ++t) {
      const int tile = warp + kMmaWarps * t;
      if (tile >= tiles)
        break;
      const int m = tile / plan.n_tiles, n = tile % plan.n_tiles;
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        if (double *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                       16 * m + 8 * (v / 2) + group, 8 * n + 2 * member + v % 2))
          *at = acc[t][v];
      }
    }
  }
}

/// True when this binary holds sm_90 code of the tensor-core form (its DMMA
/// shape exists nowhere else).
inline bool mma_form_available() {
  static const bool available = [] {
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, fused_mma_kernel<1>) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return attributes.binaryVersion >= 90;
  }();
  return available;
}

/// Launches the tensor-core form with T tiles a warp.
template <int T>
tc_err launch_mma_tiles(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                        const mma_plan &plan, size_t shared, bool left,
                        const tc_physics_fused_outputs *out, cudaStream_t stream) {
  if (g.cells == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(fused_mma_kernel<T>, kMmaWarps * 32, shared, g.cells,
                                 "fused elasticity's tensor-core form", &blocks));
  fused_mma_kernel<T><<<blocks, kMmaWarps * 32, shared, stream>>>(
      g, f, plan, left, (double *)out->stiffness, (double *)out->internal_force,
      (double *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/// Launches the tensor-core form; *ran false when the element does not fit
/// it (too many tiles a warp, or too little shared memory), for the FMA form.
inline tc_err launch_mma(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                         int side, bool left, const tc_physics_fused_outputs *out,
                         cudaStream_t stream, bool *ran) {
  *ran = false;
  mma_plan plan = {};
  plan.side = side;
  plan.m_tiles = (side + 15) / 16;
  plan.n_tiles = (side + 7) / 8;
  const int per_warp = (plan.m_tiles * plan.n_tiles + kMmaWarps - 1) / kMmaWarps;
  if (per_warp > kMmaMostTiles || !mma_form_available())
    return TC_SUCCESS;
  /* the most components a chunk that fits in half the budget (two blocks an
   * SM), else in all of it */
  const int choices[3] = {9, 3, 1};
  size_t shared = 0;
  bool fits = false;
  for (size_t budget : {(size_t)kMmaSharedBytes / 2, (size_t)kMmaSharedBytes}) {
    for (int components : choices) {
      plan.components = components;
      plan.pitch = 16 * components + 2; /* rows 16 bytes apart in the banks */
      shared = mma_shared_bytes(plan, g.num_points, g.num_fields);
      if ((fits = shared <= budget))
        break;
    }
    if (fits)
      break;
  }
  if (!fits)
    return TC_SUCCESS;
  *ran = true;
  if (per_warp <= 1)
    return launch_mma_tiles<1>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 2)
    return launch_mma_tiles<2>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 4)
    return launch_mma_tiles<4>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 9)
    return launch_mma_tiles<9>(g, f, plan, shared, left, out, stream);
  return launch_mma_tiles<kMmaMostTiles>(g, f, plan, shared, left, out, stream);
}

} // namespace tc_fused

#endif
