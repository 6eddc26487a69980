/* fused_cuda_pair: the pair form of the fused elasticity (double, sm_90,
 * elements of at most 8 nodes: Q1 up to 64 points): a block of two warps
 * per cell forms the cell's basis gradients and w_h's rows in shared memory
 * once, and each lane builds its DMMA fragments of A and B from them in
 * registers, so that A and B are never stored at all. Private to
 * tc_physics_fused_cuda.cu. */
#ifndef TC_FUSED_CUDA_PAIR_CUH
#define TC_FUSED_CUDA_PAIR_CUH

#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_limits.cuh"
#include "tc_cuda_mma.cuh"

#include "fused_cuda_block.cuh"
#include "fused_cuda_common.cuh"

namespace tc_fused {

/// The most nodes an element of the pair form has (Q1): its output rows,
/// ordered i-major (row 8 i + a for basis function a times e_i, w_h's row
/// 24), fill one 32 x 32 block of DMMA tiles.
constexpr int kPairFields = 8;
/// Shared memory a block (a cell) of the pair form takes at most (Q1 up to
/// 64 points: 41 KB); larger ones run the block form.
constexpr int kPairSharedBytes = 48 * 1024;
/// Blocks of the pair form an SM holds: its registers capped at 128 a
/// thread (16-20 B of spills), 16 warps an SM. H200, Q1 128^3, 27 points:
/// fused_elasticity 0.107 s over 3 steps against 0.127 s uncapped (194-210
/// registers, 12 warps) and 0.182 s at 96 registers (10 blocks, spilling
/// about 500 B).
constexpr int kPairBlocks = 8;

/// Points a chunk of k holds at one component: 16 (one DMMA step of k), or
/// 8 for rules of at most 8 points (a step then holds two components).
__host__ __device__ constexpr int pair_chunk(int64_t P) { return P <= 8 ? 8 : 16; }
/// Points a cell's tables hold: P rounded up to a whole chunk (zero past P).
__host__ __device__ constexpr int pair_points(int64_t P) {
  return (int)((P + pair_chunk(P) - 1) / pair_chunk(P) * pair_chunk(P));
}
/// Doubles from one basis gradient component's row to the next: at least
/// pair_points, 6 more than a multiple of 16, so that the lanes of a
/// quarter warp, which read the rows of two basis functions, fall in
/// distinct banks.
__host__ __device__ constexpr int pair_pitch(int64_t P) {
  return (pair_points(P) + 15) / 16 * 16 + 6;
}

/// Doubles of a cell's tables in shared memory: the measures, the basis
/// gradients [a][i][pitch], w_h's rows dV sigma(eps(w_h)) and eps(w_h)
/// [component][Q] (Q = pair_points(P), zero past P), then the reference
/// gradients [a][q][3] (the block's, read once), the inverse Jacobians
/// [q][9], the node coordinates and w at the nodes.
inline int64_t pair_words(int64_t P, int F) {
  const int64_t Q = pair_points(P), pitch = pair_pitch(P);
  return Q + 3 * kPairFields * pitch + 18 * Q + 3 * F * P + 9 * P + 6 * F;
}

/// The entries of a basis function's rows e_0, e_1, e_2 at component S =
/// 3 m + n of k (S = 9: past K, zeros) and four points, from its gradient x
/// there: B = eps_mn = grad_i (m = n = i), grad_n / 2 (i = m != n), grad_m / 2
/// (i = n != m), else 0, and A = dV sigma_mn = dV (lambda grad_i [m = n] +
/// 2 mu eps_mn), the arithmetic of tc_physics_basis_strain and
/// tc_physics_stress_of_strain, whose sums with zero terms are exact (a
/// basis strain's trace is grad_i).
template <int S>
__device__ __forceinline__ void basis_rows(const double2 (&x)[3][2], const double2 (&dV)[2],
                                           double lambda, double two_mu, double2 (&B)[3][2],
                                           double2 (&A)[3][2]) {
  constexpr int m = S / 3, n = S % 3;
#pragma unroll
  for (int u = 0; u < 2; ++u)
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      double2 e = make_double2(0.0, 0.0);
      if (S < 9 && m == n && i == m)
        e = x[i][u];
      else if (S < 9 && m != n && (i == m || i == n)) {
        const double2 g = x[i == m ? n : m][u];
        e = make_double2(0.5 * g.x, 0.5 * g.y);
      }
      B[i][u] = e;
      if (S < 9 && m == n)
        A[i][u] = make_double2(dV[u].x * (lambda * x[i][u].x + two_mu * e.x),
                               dV[u].y * (lambda * x[i][u].y + two_mu * e.y));
      else
        A[i][u] = make_double2(dV[u].x * (0.0 + two_mu * e.x), dV[u].y * (0.0 + two_mu * e.y));
    }
}

/// One DMMA step of k of the pair form: lanes of member < 2 at component
/// S0, the others at S1 (S0 = S1 for chunks of 16 points), points q0 ..
/// q0 + 3 of their component; this warp's 4 products added into acc.
template <int S0, int S1>
__device__ __forceinline__ void pair_step(const double *gradient, int pitch,
                                          const double *measures, const double *stress_w,
                                          const double *strain_w, int Q, int q0, int member,
                                          int group, int half, double lambda, double two_mu,
                                          double (&acc)[4][4]) {
  double2 x[3][2], dV[2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    dV[u] = *reinterpret_cast<const double2 *>(measures + q0 + 2 * u);
#pragma unroll
    for (int i = 0; i < 3; ++i)
      x[i][u] = *reinterpret_cast<const double2 *>(gradient + i * pitch + q0 + 2 * u);
  }
  const bool upper = member >= 2;
  double2 B[3][2], A[3][2];
  basis_rows<S0>(x, dV, lambda, two_mu, B, A);
  if constexpr (S1 != S0) {
    double2 B1[3][2], A1[3][2];
    basis_rows<S1>(x, dV, lambda, two_mu, B1, A1);
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
      for (int i = 0; i < 3; ++i) {
        B[i][u] = upper ? B1[i][u] : B[i][u];
        A[i][u] = upper ? A1[i][u] : A[i][u];
      }
  }
  /* row 24: w_h's (lanes of group 0), rows 25.. padding */
  const int s = upper ? S1 : S0;
  const bool w_row = group == 0 && s < 9;
  double2 a[2][2], b[4][2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const double2 zero = make_double2(0.0, 0.0);
    b[3][u] = w_row ? *reinterpret_cast<const double2 *>(strain_w + s * Q + q0 + 2 * u) : zero;
    const double2 aw =
        w_row && half ? *reinterpret_cast<const double2 *>(stress_w + s * Q + q0 + 2 * u) : zero;
#pragma unroll
    for (int i = 0; i < 3; ++i)
      b[i][u] = B[i][u];
    a[0][u] = half ? A[2][u] : A[0][u];
    a[1][u] = half ? aw : A[1][u];
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
    tc_cuda::mma_16x8x16(acc[nt], a, b[nt]);
}

/// The trio of a cell by a block of two warps, for elements of at most 8
/// nodes: warp h takes the row tile h (16 rows) of the padded output, 4
/// DMMA tiles of 16 x 8. Rows are i-major, so lane (g, t) holds basis
/// function g's rows e_0, e_1, e_2 and, g = 0, w_h's row; k runs
/// component-major, k = s Q + q (s = 3 m + n, Q = pair_points(P)), so that
/// its four values of k are one component at four consecutive points. Each
/// lane forms its fragments of A and B in registers from its function's
/// three gradient components at those points (and w_h's rows), which the
/// block forms once a cell in shared memory, with the arithmetic of
/// tc_physics_basis_strain and tc_physics_stress_of_strain, whose sums with
/// zero terms are exact (a basis strain's trace is grad_i). Neither A nor B
/// is stored; small blocks, many an SM, so that one's loads overlap the
/// others' products. H200, Q1 128^3 with 27 points: fused_elasticity
/// 0.107 s over 3 steps against the block form's 0.202 s
/// (docs/measurements/mini-app-gpu.md).
template <int Chunk>
__global__ void __launch_bounds__(64, kPairBlocks)
    fused_pair_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, bool left,
                      double *__restrict__ stiffness, double *__restrict__ internal_force,
                      double *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells;
  const int P = (int)g.num_points, Q = pair_points(P), pitch = pair_pitch(P);
  const int F = g.num_fields, N = 3 * F;
  const int lane = threadIdx.x % 32, half = threadIdx.x / 32;
  const int group = lane / 4, member = lane % 4;
  double *measures = reinterpret_cast<double *>(shared_memory),
         *grads = measures + Q, *stress_w = grads + 3 * kPairFields * pitch,
         *strain_w = stress_w + 9 * Q, *ref = strain_w + 9 * Q,
         *inverses = ref + 3 * F * P, *coords = inverses + 9 * P, *w = coords + 3 * F;
  /* the tables' points past P (and functions past F) stay zero */
  for (int i = threadIdx.x; i < (int)(ref - measures); i += 64)
    measures[i] = 0.0;
  for (int i = threadIdx.x; i < 3 * F * P; i += 64)
    ref[i] = g.ref_gradients[i];
  const double two_mu = 2.0 * f.mu;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    __syncthreads(); /* the last cell's tables are used */
    /* park_cell_geometry's loop, and product_entry's stores below, written
     * out: through the helpers ptxas spilled more at the 128-register cap
     * (52 bytes against 16 with 8-point chunks) and the weak deck's fused
     * phase ran 9% slower on an H200 (bitwise the same results) */
    for (int i = threadIdx.x; i < P * 10 + F * 3; i += 64) {
      if (i < P * 9)
        inverses[i] = g.inverses[(int64_t)i * g.stride + c];
      else if (i < P * 10)
        measures[i - P * 9] = g.measures[(int64_t)(i - P * 9) * g.stride + c];
      else
        coords[i - P * 10] = g.node_coords[(int64_t)(i - P * 10) * g.stride + c];
    }
    __syncthreads();
    for (int item = threadIdx.x; item < P * F; item += 64) {
      const int a = item / P, q = item - a * P;
      double grad[3];
      basis_gradient(inverses + q * 9, ref + (a * P + q) * 3, grad);
      for (int i = 0; i < 3; ++i)
        grads[(a * 3 + i) * pitch + q] = grad[i];
    }
    for (int b = threadIdx.x; b < F; b += 64)
      tc_physics_field_w(&f, coords + b * 3, w + b * 3);
    __syncthreads();
    /* w_h's rows at each point: grad w summed over the nodes in order */
    for (int q = threadIdx.x; q < P; q += 64) {
      double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, eps[9], sigma[9];
      for (int b = 0; b < F; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            H[3 * i + j] += w[b * 3 + i] * grads[(b * 3 + j) * pitch + q];
      tc_physics_symmetric_part(H, eps);
      tc_physics_stress_of_strain(&f, eps, sigma);
      for (int k = 0; k < 9; ++k) {
        stress_w[k * Q + q] = measures[q] * sigma[k];
        strain_w[k * Q + q] = eps[k];
      }
    }
    __syncthreads();
    double acc[4][4];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[nt][v] = 0.0;
    /* this lane's k: slot member + 4 v holds point q0 + v (mma_16x8x16)
     * of its component, the components in turn (Chunk 16) or two a step
     * (Chunk 8: members 0, 1 the even ones, 2, 3 the odd ones) */
    const double *gradient = grads + group * 3 * pitch;
    const double lambda = f.lambda;
    if constexpr (Chunk == 16) {
      for (int c0 = 0; c0 < Q; c0 += 16) {
        const int q0 = c0 + 4 * member;
#define TC_PAIR_STEP(S0, S1)                                                                    \
  pair_step<S0, S1>(gradient, pitch, measures, stress_w, strain_w, Q, q0, member, group, half, \
                    lambda, two_mu, acc)
        TC_PAIR_STEP(0, 0);
        TC_PAIR_STEP(1, 1);
        TC_PAIR_STEP(2, 2);
        TC_PAIR_STEP(3, 3);
        TC_PAIR_STEP(4, 4);
        TC_PAIR_STEP(5, 5);
        TC_PAIR_STEP(6, 6);
        TC_PAIR_STEP(7, 7);
        TC_PAIR_STEP(8, 8);
      }
    } else {
      const int q0 = 4 * (member % 2);
      TC_PAIR_STEP(0, 1);
      TC_PAIR_STEP(2, 3);
      TC_PAIR_STEP(4, 5);
      TC_PAIR_STEP(6, 7);
      TC_PAIR_STEP(8, 9);
#undef TC_PAIR_STEP
    }
    /* output row or column R: 8 i + a -> 3 a + i (a < F), 24 -> w_h's (N) */
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int R = 16 * half + 8 * (v / 2) + group, S = 8 * nt + 2 * member + v % 2;
        const int l = R < 24 ? (R % 8 < F ? 3 * (R % 8) + R / 8 : -1) : R == 24 ? N : -1;
        const int r = S < 24 ? (S % 8 < F ? 3 * (S % 8) + S / 8 : -1) : S == 24 ? N : -1;
        if (l < 0 || r < 0)
          continue;
        if (l < N && r < N && stiffness)
          stiffness[left ? c + C * (l + (int64_t)N * r) : (c * N + l) * N + r] = acc[nt][v];
        else if (l == N && r < N && internal_force)
          internal_force[left ? c + C * r : c * N + r] = acc[nt][v];
        else if (l == N && r == N && stress_strain)
          stress_strain[c] = acc[nt][v];
      }
  }
}

/// Launches the pair form; *ran false when the element does not fit it
/// (more than kPairFields nodes, or more shared memory than
/// kPairSharedBytes: Q1 with more than 64 points), for the block form.
inline tc_err launch_pair(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                          bool left, const tc_physics_fused_outputs *out, cudaStream_t stream,
                          bool *ran) {
  *ran = false;
  const size_t shared = (size_t)pair_words(g.num_points, g.num_fields) * sizeof(double);
  if (g.num_fields > kPairFields || shared > (size_t)kPairSharedBytes || !mma_form_available())
    return TC_SUCCESS;
  *ran = true;
  const bool wide = pair_chunk(g.num_points) == 16;
  auto kernel = wide ? fused_pair_kernel<16> : fused_pair_kernel<8>;
  static bool preferred[2] = {false, false}; /* the kernels' carveouts: set once each */
  if (!preferred[wide]) {
    TC_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
    preferred[wide] = true;
  }
  if (g.cells == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(kernel, 64, shared, g.cells, "fused elasticity's pair form",
                                 &blocks));
  kernel<<<blocks, 64, shared, stream>>>(g, f, left, (double *)out->stiffness,
                                         (double *)out->internal_force,
                                         (double *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

} // namespace tc_fused

#endif
