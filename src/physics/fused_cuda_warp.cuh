/* fused_cuda_warp: the warp form of the fused elasticity (float, elements
 * of at most 8 nodes: Q1), on the FMA units: a block of four warps takes
 * four cells, forms each cell's A and B entries of a chunk of points once,
 * per basis function and point, in shared-memory tables, and each lane adds
 * a 3 x 6 block of products from them in registers. Private to
 * tc_physics_fused_cuda.cu. */
#ifndef TC_FUSED_CUDA_WARP_CUH
#define TC_FUSED_CUDA_WARP_CUH

#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_limits.cuh"

#include "fused_cuda_common.cuh"

namespace tc_fused {

/// The most nodes an element of the warp form has (Q1).
constexpr int kWarpFields = 8;
/// Shared memory a block of the warp form takes at most (Q1 with 27 points:
/// 51 KB, four blocks an SM; with 64 points: 62 KB).
constexpr int kWarpSharedBytes = 100 * 1024;
/// Cells a block of the warp form takes at a time, a warp each: four
/// consecutive cells, so that each 32-byte sector of the batch's geometry
/// (stored cell-fastest) that the block parks is read whole.
constexpr int kWarpCells = 4;
/// Points a chunk of the warp form's tables holds at most; a rule's points
/// are split into chunks as even as that allows (27: 14 and 13).
constexpr int kWarpChunk = 16;
/// Words a table holds for one function at one point: a basis function's
/// A entries at the diagonal components (9: dV sigma_mm(phi e_i), 3 m + i)
/// and at the off-diagonal ones (3: dV 2 mu (grad_d / 2)), then its B
/// entries (3: grad_d, 3: grad_d / 2); or w_h's A and B at the 9
/// components (dV sigma(eps(w_h)), eps(w_h)).
constexpr int kWarpWords = 18;
/// Points of each chunk of the warp form's tables for a rule of P points.
__host__ __device__ constexpr int warp_chunk(int64_t P) {
  const int64_t chunks = (P + kWarpChunk - 1) / kWarpChunk;
  return (int)((P + chunks - 1) / chunks);
}
static_assert(warp_chunk(8) == 8 && warp_chunk(27) == 14 && warp_chunk(64) == 16,
              "the warp form's chunks: one of 8 points, 14 + 13, four of 16");
/// Words from one function's table to the next: a chunk's points, plus one
/// (odd) so that the lanes reading the tables of different functions fall
/// in distinct banks.
__host__ __device__ constexpr int warp_pitch(int64_t P) { return warp_chunk(P) * kWarpWords + 1; }
/// Tables a cell holds: its (at most) 8 basis functions, then w_h.
constexpr int kWarpTables = kWarpFields + 1;

/// Bytes of the tables of a block of the warp form.
template <typename Real> __host__ __device__ size_t warp_table_bytes(int64_t P) {
  return ((size_t)kWarpCells * kWarpTables * warp_pitch(P) * sizeof(Real) + 15) / 16 * 16;
}

/// Shared memory of a block of the warp form: the tables of its cells (Real),
/// then their geometry and the reference gradients [a][q][3] (double).
template <typename Real> size_t warp_shared_bytes(int64_t P, int F) {
  return warp_table_bytes<Real>(P) +
         ((size_t)kWarpCells * (size_t)(P * 10 + F * 3) + (size_t)(3 * F * P)) * sizeof(double);
}

/// A lane's entries at component S = 3 m + n, selected from a point's
/// table words held in registers (tc_physics_basis_strain and
/// tc_physics_stress_of_strain in the pair form's arithmetic, basis_rows,
/// rounded once to Real when the tables were built): warp_a, row e_i of a
/// basis function (its words 0..11: A_i = dV sigma_mn(phi e_i)); warp_b,
/// column e_j (its words 12..17: B_j = eps_mn(phi e_j)).
template <int S, typename Real>
__device__ __forceinline__ Real warp_a(const Real (&words)[12], int i) {
  constexpr int m = S / 3, n = S % 3;
  if constexpr (m == n)
    return words[3 * m + i];
  else
    return i == m ? words[9 + n] : i == n ? words[9 + m] : (Real)0;
}
template <int S, typename Real>
__device__ __forceinline__ Real warp_b(const Real (&words)[6], int j) {
  constexpr int m = S / 3, n = S % 3;
  if constexpr (m == n)
    return j == m ? words[m] : (Real)0;
  else
    return j == m ? words[3 + n] : j == n ? words[3 + m] : (Real)0;
}

/// Components S..8 of one point of a lane: the 3 x 6 products of its rows
/// (words `a`) with its two functions' columns (`b0`, `b1`) into acc, and
/// w_h's row entry column (`column`: B of the lane's column at each
/// component) into w_acc. Every index is a constant, so the selections cost
/// no instruction.
template <int S = 0, typename Real>
__device__ __forceinline__ void warp_components(const Real (&a)[12], const Real (&b0)[6],
                                                const Real (&b1)[6], const Real (&w)[9],
                                                const Real (&column)[9], Real (&acc)[3][6],
                                                Real &w_acc) {
  Real A[3], B[6];
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    A[i] = warp_a<S>(a, i);
    B[i] = warp_b<S>(b0, i);
    B[3 + i] = warp_b<S>(b1, i);
  }
#pragma unroll
  for (int i = 0; i < 3; ++i)
#pragma unroll
    for (int j = 0; j < 6; ++j)
      acc[i][j] += A[i] * B[j];
  w_acc += w[S] * column[S];
  if constexpr (S < 8)
    warp_components<S + 1>(a, b0, b1, w, column, acc, w_acc);
}

/// Column e_j of a basis function (its B words) at components S..8.
template <int S = 0, typename Real>
__device__ __forceinline__ void warp_column(const Real (&words)[6], int j, Real (&column)[9]) {
  column[S] = warp_b<S>(words, j);
  if constexpr (S < 8)
    warp_column<S + 1>(words, j, column);
}

/// One point of a lane of the warp form: its words of the tables at the
/// point loaded once (ta, tb0, tb1: its row and column functions'; tw: w_h's;
/// tc: its column of w_h's row, the table of function t / 3 for lanes
/// t < 24, e_j with j = jc, else w_h's own: the corner), then every component.
template <typename Real>
__device__ __forceinline__ void warp_point(const Real *ta, const Real *tb0, const Real *tb1,
                                           const Real *tw, const Real *tc, int jc, int lane,
                                           Real (&acc)[3][6], Real &w_acc) {
  Real a[12], b0[6], b1[6], w[9], column[9];
#pragma unroll
  for (int k = 0; k < 12; ++k)
    a[k] = ta[k];
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    b0[k] = tb0[12 + k];
    b1[k] = tb1[12 + k];
  }
#pragma unroll
  for (int k = 0; k < 9; ++k)
    w[k] = tw[k];
  if (lane < 24) {
    Real words[6];
#pragma unroll
    for (int k = 0; k < 6; ++k)
      words[k] = tc[12 + k];
    warp_column(words, jc, column);
  } else {
#pragma unroll
    for (int k = 0; k < 9; ++k)
      column[k] = tc[9 + k];
  }
  warp_components(a, b0, b1, w, column, acc, w_acc);
}

/// The trio of four cells by a block of four warps, for elements of at most
/// 8 nodes, on the FMA units: the block forms, a chunk of points at a time,
/// each cell's tables in shared memory (every A and B entry of a basis
/// function or of w_h at a point, computed in double and rounded once to
/// Real); lane t of a cell's warp adds the 3 x 6 products of basis function
/// t / 4's rows with functions 2 (t % 4) and 2 (t % 4) + 1's columns, and
/// lanes 0..24 the entry of w_h's row with column t (t = 24: the corner),
/// over every point and all nine components, in Real. A lane's rows and
/// columns at a component come from its functions' tables by selection,
/// zeros included, so that each product is the materialised path's.
template <typename Real>
__global__ void __launch_bounds__(kWarpCells * 32)
    fused_warp_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, bool left,
                      Real *__restrict__ stiffness, Real *__restrict__ internal_force,
                      Real *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells;
  const int P = (int)g.num_points, F = g.num_fields, N = 3 * F;
  const int chunk = warp_chunk(P), pitch = warp_pitch(P);
  Real *tables = reinterpret_cast<Real *>(shared_memory);
  double *inverses = reinterpret_cast<double *>(shared_memory + warp_table_bytes<Real>(P));
  double *measures = inverses + kWarpCells * P * 9, *coords = measures + kWarpCells * P;
  double *ref = coords + kWarpCells * F * 3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a = lane / 4, b0 = 2 * (lane % 4), b1 = b0 + 1;
  const Real *own = tables + warp * kWarpTables * pitch;
  const Real *ta = own + a * pitch, *tb0 = own + b0 * pitch, *tb1 = own + b1 * pitch,
             *tw = own + kWarpFields * pitch;
  /* lanes 0..23: w_h's row with column t = 3 b + j; lane 24: the corner */
  const Real *tc = lane < 24 ? own + (lane / 3) * pitch : tw;
  const int jc = lane % 3;
  /* tables of functions past F stay zero; the reference gradients, once */
  for (int i = threadIdx.x; i < kWarpCells * kWarpTables * pitch; i += blockDim.x)
    tables[i] = (Real)0;
  for (int i = threadIdx.x; i < 3 * F * P; i += blockDim.x)
    ref[i] = g.ref_gradients[i];
  const double two_mu = 2.0 * f.mu;
  for (int64_t c0 = (int64_t)blockIdx.x * kWarpCells; c0 < C;
       c0 += (int64_t)gridDim.x * kWarpCells) {
    __syncthreads(); /* the last group's geometry and tables are used */
    for (int i = threadIdx.x; i < kWarpCells * (P * 10 + F * 3); i += blockDim.x) {
      const int cell = i % kWarpCells, e = i / kWarpCells;
      const int64_t c = c0 + cell < C ? c0 + cell : C - 1; /* cells past C: any cell's */
      if (e < P * 9)
        inverses[cell * P * 9 + e] = g.inverses[(int64_t)e * g.stride + c];
      else if (e < P * 10)
        measures[cell * P + e - P * 9] = g.measures[(int64_t)(e - P * 9) * g.stride + c];
      else
        coords[cell * F * 3 + e - P * 10] = g.node_coords[(int64_t)(e - P * 10) * g.stride + c];
    }
    Real acc[3][6], w_acc = (Real)0;
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
      for (int j = 0; j < 6; ++j)
        acc[i][j] = (Real)0;
    for (int q0 = 0; q0 < P; q0 += chunk) {
      const int count = P - q0 < chunk ? P - q0 : chunk;
      __syncthreads(); /* the geometry is parked; the last chunk's tables are used */
      for (int item = threadIdx.x; item < kWarpCells * (F + 1) * count; item += blockDim.x) {
        const int p = item % count, fn = (item / count) % (F + 1), cell = item / (count * (F + 1));
        const int q = q0 + p;
        const double *inverse = inverses + (cell * P + q) * 9;
        const double dV = measures[cell * P + q];
        Real *t = tables + (cell * kWarpTables + (fn < F ? fn : kWarpFields)) * pitch +
                  p * kWarpWords;
        if (fn < F) {
          double x[3];
          basis_gradient(inverse, ref + (fn * P + q) * 3, x);
#pragma unroll
          for (int m = 0; m < 3; ++m)
#pragma unroll
            for (int i = 0; i < 3; ++i)
              t[3 * m + i] = (Real)(dV * (f.lambda * x[i] + two_mu * (i == m ? x[i] : 0.0)));
#pragma unroll
          for (int d = 0; d < 3; ++d) {
            t[9 + d] = (Real)(dV * (0.0 + two_mu * (0.5 * x[d])));
            t[12 + d] = (Real)x[d];
            t[15 + d] = (Real)(0.5 * x[d]);
          }
        } else {
          /* w_h's rows: grad w summed over the nodes in order */
          double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, eps[9], sigma[9];
          for (int b = 0; b < F; ++b) {
            double w[3], x[3];
            tc_physics_field_w(&f, coords + (cell * F + b) * 3, w);
            basis_gradient(inverse, ref + (b * P + q) * 3, x);
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j)
                H[3 * i + j] += w[i] * x[j];
          }
          tc_physics_symmetric_part(H, eps);
          tc_physics_stress_of_strain(&f, eps, sigma);
          for (int k = 0; k < 9; ++k) {
            t[k] = (Real)(dV * sigma[k]);
            t[9 + k] = (Real)eps[k];
          }
        }
      }
      __syncthreads();
#pragma unroll 1
      for (int p = 0; p < count; ++p) {
        const int at = p * kWarpWords;
        warp_point(ta + at, tb0 + at, tb1 + at, tw + at, tc + at, jc, lane, acc, w_acc);
      }
    }
    const int64_t c = c0 + warp;
    if (c >= C)
      continue;
    if (a < F)
#pragma unroll
      for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int j = 0; j < 6; ++j) {
          const int b = j < 3 ? b0 : b1;
          if (b < F)
            if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                         3 * a + i, 3 * b + j % 3))
              *at = acc[i][j];
        }
    if (lane < 3 * F || lane == 24)
      if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N, N,
                                   lane < 24 ? lane : N))
        *at = w_acc;
  }
}

/// Launches the warp form; *ran false when the element does not fit it
/// (more than kWarpFields nodes), for the FMA form.
template <typename Real>
tc_err launch_warp(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, bool left,
                   const tc_physics_fused_outputs *out, cudaStream_t stream, bool *ran) {
  *ran = false;
  const size_t shared = warp_shared_bytes<Real>(g.num_points, g.num_fields);
  if (g.num_fields > kWarpFields || shared > (size_t)kWarpSharedBytes)
    return TC_SUCCESS;
  *ran = true;
  const int64_t groups = (g.cells + kWarpCells - 1) / kWarpCells;
  if (groups == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(fused_warp_kernel<Real>, kWarpCells * 32, shared, groups,
                                 "fused elasticity's warp form", &blocks));
  fused_warp_kernel<Real><<<blocks, kWarpCells * 32, shared, stream>>>(
      g, f, left, (Real *)out->stiffness, (Real *)out->internal_force,
      (Real *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

} // namespace tc_fused

#endif
