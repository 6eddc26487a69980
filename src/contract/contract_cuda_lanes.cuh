/* contract_cuda_lanes: the FieldField tile for layout left on the FMA units,
 * a lane a cell: in layout left the cells of one (row, k) are adjacent, so a
 * warp's 32 lanes take 32 adjacent cells and every read and write of a warp
 * is one run of 32 words, in device and in shared memory alike, with no
 * transpose anywhere. The float FieldField product of layout left (which has
 * no tensor-core tile) runs here. Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_LANES_CUH
#define TC_CONTRACT_CUDA_LANES_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"

namespace tc_cuda {

/// The lane tile. A block takes a group of 32 adjacent cells, lane l of
/// every warp cell l, and a BI x BJ output tile of each (BI = TI WI,
/// BJ = TJ WJ); warp (wi, wj) of its WI x WJ warps keeps the TI x TJ sums of
/// rows wi TI.. and columns wj TJ.. of its lane's cell in registers. The
/// ring (copy_ring, STAGES deep, running across task boundaries) holds KT
/// values of k of the tile's BI rows of A and BJ rows of B, each (k, row) a
/// run of the group's 32 cells as in device memory, copied 16 bytes a
/// thread where each run is 16-byte aligned (C a multiple of 16 / sizeof(T)
/// and aligned arrays), else 8 bytes where runs are 8-byte aligned, else a
/// word a copy; k past K, rows past I or J and cells past C are zeros. A warp's reads of a (k, row) are then the 32
/// words of one run (one wavefront for float, two for double), and its
/// writes of an output (row, column) are a run of 32 cells in the output.
/// Tasks are (group, row tile, column tile), group-major, so blocks that
/// run at once share the group's rows in L2.
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES>
__global__ void __launch_bounds__(WI *WJ * 32, 1)
    lane_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                T *__restrict__ out) {
  constexpr int NT = WI * WJ * 32, BI = TI * WI, BJ = TJ * WJ, ROWS = BI + BJ;
  constexpr int V = 16 / (int)sizeof(T), CHUNKS = 32 / V; // cells a 16-byte copy, copies a run
  constexpr int STAGE = KT * ROWS * 32;                    // words
  constexpr int RUNS = KT * ROWS, RUN_STEP = NT / CHUNKS;
  constexpr int PASSES = (RUNS + RUN_STEP - 1) / RUN_STEP;
  static_assert(NT % CHUNKS == 0, "whole runs per pass");
  extern __shared__ __align__(16) unsigned char lane_memory[];
  T *ring = reinterpret_cast<T *>(lane_memory);

  const int64_t tiles_i = (p.I + BI - 1) / BI, tiles_j = (p.J + BJ - 1) / BJ;
  const int64_t per_group = tiles_i * tiles_j, tasks = (p.C + 31) / 32 * per_group;
  const int64_t k_steps = (p.K + KT - 1) / KT;
  auto split = [&](int64_t task, int64_t &c0, int64_t &i0, int64_t &j0) {
    const int64_t group = task / per_group, rest = task - group * per_group;
    const int64_t ti = rest / tiles_j;
    c0 = group * 32;
    i0 = ti * BI;
    j0 = (rest - ti * tiles_j) * BJ;
  };

  // Copy side: this thread's chunk (V cells) of runs run0, run0 + RUN_STEP,
  // ... of a stage (run = k * ROWS + row; A's rows, then B's).
  const int chunk = threadIdx.x % CHUNKS, run0 = threadIdx.x / CHUNKS;
  // The widest copy (16, 8 or sizeof(T) bytes) every run's chunks align to.
  auto aligned = [&](size_t n) {
    return (p.a_i * sizeof(T)) % n == 0 && (p.a_k * sizeof(T)) % n == 0 &&
           (p.b_j * sizeof(T)) % n == 0 && (p.b_k * sizeof(T)) % n == 0 &&
           reinterpret_cast<uintptr_t>(A) % n == 0 && reinterpret_cast<uintptr_t>(B) % n == 0;
  };
  const int width = aligned(16) ? 16 : aligned(8) ? 8 : (int)sizeof(T);
  int64_t load_task = blockIdx.x, load_step = 0;
  int64_t copy_c0 = 0, copy_i0 = 0, copy_j0 = 0;
  auto locate = [&](int64_t task) { split(task, copy_c0, copy_i0, copy_j0); };
  const unsigned ring_address = (unsigned)__cvta_generic_to_shared(ring);
  auto load = [&](int stage) {
    const int64_t k0 = load_step * KT;
    const int64_t c = copy_c0 + chunk * V;
    const int cells = (int)max((int64_t)0, min((int64_t)V, p.C - c));
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
      const int run = run0 + pass * RUN_STEP;
      if (run >= RUNS)
        break;
      const int kk = run / ROWS, row = run % ROWS;
      const int64_t k = k0 + kk;
      const bool in_a = row < BI;
      const int64_t r = in_a ? copy_i0 + row : copy_j0 + row - BI;
      const bool valid = k < p.K && r < (in_a ? p.I : p.J);
      const T *from = in_a ? A + c * p.a_c + r * p.a_i + k * p.a_k
                           : B + c * p.b_c + r * p.b_j + k * p.b_k;
      const unsigned dst = ring_address + sizeof(T) * (stage * STAGE + run * 32 + chunk * V);
      if (width == 16 && cells == V) {
        copy_async_n<16>(dst, valid ? from : A, valid ? 16 : 0);
      } else if (sizeof(T) < 8 && width == 8 && cells == V) {
#pragma unroll
        for (int v = 0; v < V; v += 8 / (int)sizeof(T))
          copy_async_n<8>(dst + sizeof(T) * v, valid ? from + v : A, valid ? 8 : 0);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
          copy_async_n<sizeof(T)>(dst + sizeof(T) * v, valid && v < cells ? from + v : A,
                                  valid && v < cells ? (int)sizeof(T) : 0);
      }
    }
    next_copy_step(load_step, k_steps, load_task, tasks, locate);
  };

  // Multiply side.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wi = warp / WJ, wj = warp % WJ;
  T sum[TI][TJ];
  auto clear = [&] {
#pragma unroll
    for (int r = 0; r < TI; ++r)
#pragma unroll
      for (int q = 0; q < TJ; ++q)
        sum[r][q] = T(0);
  };
  clear();

  if (load_task < tasks)
    locate(load_task);
  copy_ring<STAGES> stages;
  auto more = [&] { return load_task < tasks; };
  stages.start(more, load);
  int64_t step = 0;
  for (int64_t task = blockIdx.x; task < tasks;) {
    const T *tile = ring + stages.next(more, load) * STAGE + lane;
#pragma unroll
    for (int kk = 0; kk < KT; ++kk) {
      T a[TI], b[TJ];
#pragma unroll
      for (int r = 0; r < TI; ++r)
        a[r] = tile[(kk * ROWS + wi * TI + r) * 32];
#pragma unroll
      for (int q = 0; q < TJ; ++q)
        b[q] = tile[(kk * ROWS + BI + wj * TJ + q) * 32];
#pragma unroll
      for (int r = 0; r < TI; ++r)
#pragma unroll
        for (int q = 0; q < TJ; ++q)
          sum[r][q] += a[r] * b[q];
    }
    if (++step == k_steps) {
      int64_t c0, i0, j0;
      split(task, c0, i0, j0);
      const int64_t c = c0 + lane;
      if (c < p.C) {
#pragma unroll
        for (int r = 0; r < TI; ++r)
#pragma unroll
          for (int q = 0; q < TJ; ++q) {
            const int64_t i = i0 + wi * TI + r, j = j0 + wj * TJ + q;
            if (i < p.I && j < p.J)
              store(p, out, c, i, j, sum[r][q]);
          }
      }
      clear();
      step = 0;
      task += gridDim.x;
    }
  }
  copy_async_wait<0>();
}

/// Dynamic shared memory of lane_kernel<T, TI, TJ, WI, WJ, KT, STAGES> (bytes).
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES>
constexpr size_t lane_shared_bytes() {
  return sizeof(T) * STAGES * KT * (TI * WI + TJ * WJ) * 32;
}

/// Launches lane_kernel with one resident wave of blocks striding over the
/// tasks.
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES>
tc_err lane_launch(const tc_cuda_problem &p, const T *A, const T *B, T *out,
                   cudaStream_t stream) {
  constexpr int BI = TI * WI, BJ = TJ * WJ, NT = WI * WJ * 32;
  constexpr size_t shared = lane_shared_bytes<T, TI, TJ, WI, WJ, KT, STAGES>();
  auto kernel = lane_kernel<T, TI, TJ, WI, WJ, KT, STAGES>;
  const int64_t tasks = (p.C + 31) / 32 * ((p.I + BI - 1) / BI) * ((p.J + BJ - 1) / BJ);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, NT, shared, tasks, "layout-left lane tile", &blocks));
  kernel<<<blocks, NT, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
