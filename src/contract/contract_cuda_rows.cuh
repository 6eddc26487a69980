/* contract_cuda_rows: CELL_ROWS, DataField in layout right as rows of a
 * matrix: a cell's F field rows of K words lie one after another, and each
 * is summed against the cell's one data row. A warp takes a slab of one
 * cell's rows; G lanes per row read it as coalesced words; the data row is
 * held in registers (short sums) or re-read from L1 (long ones). Private to
 * src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_ROWS_CUH
#define TC_CONTRACT_CUDA_ROWS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

#include "contract_cuda_kernels.cuh"

namespace tc_cuda {

constexpr int kRowsThreads = 256;

/// CELL_ROWS with G lanes per row, W data words per lane held in registers
/// (0: the data row is re-read from L1, and K has no bound), U rows per group
/// of lanes at once: out(c,i) = sum_k A(c,i,k) B(c,kb(k)) for layout right (A's rows
/// K words apart, cells F*K apart; B's rows b_c apart). Unit n is rows
/// [s*slab_rows, (s+1)*slab_rows) of cell c = n / slabs, s = n % slabs; warps
/// take units in order, so at any moment the GPU reads one stretch of A.
/// With W > 0, K <= G*W. Rows past the slab's end read its first row again
/// and are not stored.
template <typename T, int G, int W, int U, bool BCAST>
__global__ void __launch_bounds__(kRowsThreads)
    rows_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                T *__restrict__ out, int slab_rows, int64_t slabs) {
  constexpr int per = 32 / G; // rows a warp reads with one load
  const int lane = threadIdx.x % 32, group = lane / G, member = lane % G;
  const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
  const int K = (int)p.K, F = (int)p.I;
  // Broadcast data (one value per cell): kb(k) = k mod b_mod, walked in steps of G.
  const int b_mod = (int)p.b_mod, b_step = BCAST ? G % b_mod : G;
  const int b_first = BCAST ? member % b_mod : member;
  // Unit n = c*slabs + s, walked in steps of `warps` without a division per unit.
  const int64_t step_c = warps / slabs, step_s = warps % slabs;
  int64_t c = warp / slabs, s = warp % slabs;
  for (; c < p.C; c += step_c, s += step_s) {
    if (s >= slabs) {
      s -= slabs;
      ++c;
      if (c >= p.C)
        break;
    }
    const int first = (int)s * slab_rows;
    const int end = min(F, first + slab_rows);
    const T *a = A + c * p.a_c, *b = B + c * p.b_c;
    T data[W > 0 ? W : 1];
#pragma unroll
    for (int j = 0; j < W; ++j) {
      const int k = member + G * j;
      data[j] = k < K ? b[BCAST ? k % b_mod : k] : T(0);
    }
    for (int i0 = first; i0 < end; i0 += per * U) {
      const T *row[U];
      T sum[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = i0 + group + per * u;
        row[u] = a + (int64_t)(i < end ? i : first) * K;
        sum[u] = 0;
      }
      if (W > 0) {
#pragma unroll
        for (int j = 0; j < W; ++j) {
          const int k = member + G * j;
          if (k < K)
#pragma unroll
            for (int u = 0; u < U; ++u)
              sum[u] += row[u][k] * data[j];
        }
      } else {
        int kb = b_first;
#pragma unroll 4
        for (int k = member; k < K; k += G) {
          const T d = b[kb];
#pragma unroll
          for (int u = 0; u < U; ++u)
            sum[u] += row[u][k] * d;
          kb += b_step;
          if (BCAST && kb >= b_mod)
            kb -= b_mod;
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const T total = warp_sum(sum[u], G);
        const int i = i0 + group + per * u;
        if (member == 0 && i < end) {
          T *o = out + c * p.o_c + i * p.o_i;
          *o = p.sum_into ? *o + total : total;
        }
      }
    }
  }
}

/// Launches CELL_ROWS with G lanes per row, W data words per lane in
/// registers, U rows per group at once, as one resident wave of blocks.
/// Cells are split into slabs only as far as it takes to give every warp
/// about four units; with W = 0 a slab is one pass, so warps walk A in order.
template <typename T, int G, int W, int U, bool BCAST>
tc_err rows_launch_as(const tc_cuda_problem &p, const T *A, const T *B, T *out,
                      cudaStream_t stream) {
  int64_t resident = 0;
  TC_CALL(resident_blocks(rows_kernel<T, G, W, U, BCAST>, kRowsThreads, 0, &resident));
  const int pass = 32 / G * U;
  const int64_t passes = (p.I + pass - 1) / pass;
  const int64_t warps_per_block = kRowsThreads / 32, warps = resident * warps_per_block;
  const int64_t pieces_wanted = (4 * warps + p.C - 1) / p.C;
  const int64_t pieces = W == 0 ? passes : std::min(passes, std::max<int64_t>(1, pieces_wanted));
  const int slab_rows = (int)((passes + pieces - 1) / pieces * pass);
  const int64_t slabs = (p.I + slab_rows - 1) / slab_rows;
  const int64_t units_blocks = (p.C * slabs + warps_per_block - 1) / warps_per_block;
  const int64_t blocks = std::max<int64_t>(1, std::min(resident, units_blocks));
  rows_kernel<T, G, W, U, BCAST>
      <<<(unsigned)blocks, kRowsThreads, 0, stream>>>(p, A, B, out, slab_rows, slabs);
  return TC_SUCCESS;
}

/// CELL_ROWS's rule: the configuration measured best on an H200 for sums up
/// to max_k words (docs/cuda.md): short sums 8 lanes per row, so a warp load
/// covers 4 rows; up to 384 words 32 lanes with the data row in registers;
/// longer ones re-read it from L1 (W = 0), U rows at once in double and one
/// in float (float, K = 648-1944: 9-15% faster one at a time; double 2%
/// slower to 4% faster).
struct rows_config {
  int64_t max_k;
  int G, W, U;
};

constexpr rows_config kRowsRule[] = {
    {8, 8, 1, 2},    {16, 8, 2, 2},    {24, 8, 3, 2},   {32, 8, 4, 2},
    {64, 32, 2, 2},  {96, 32, 3, 2},   {128, 32, 4, 2}, {192, 32, 6, 1},
    {256, 32, 8, 1}, {384, 32, 12, 2}, {INT64_MAX, 32, 0, 2},
};

/// Runs CELL_ROWS with the first configuration of kRowsRule (from N on)
/// whose max_k covers K.
template <typename T, bool BCAST, int N = 0>
tc_err rows_run(const tc_cuda_problem &p, const T *A, const T *B, T *out, cudaStream_t stream) {
  constexpr rows_config c = kRowsRule[N];
  constexpr int U = c.W == 0 && sizeof(T) < sizeof(double) ? 1 : c.U;
  if constexpr (N + 1 == sizeof(kRowsRule) / sizeof(kRowsRule[0]))
    return rows_launch_as<T, c.G, c.W, U, BCAST>(p, A, B, out, stream);
  else if (p.K <= c.max_k)
    return rows_launch_as<T, c.G, c.W, U, BCAST>(p, A, B, out, stream);
  else
    return rows_run<T, BCAST, N + 1>(p, A, B, out, stream);
}

} // namespace tc_cuda

#endif
