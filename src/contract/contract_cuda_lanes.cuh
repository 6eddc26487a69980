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
/// run of the group's 32 cells as in device memory, copied W bytes a copy:
/// 16 where each run is 16-byte aligned (C a multiple of 16 / sizeof(T) and
/// aligned arrays), else 8 where runs are 8-byte aligned, else a word
/// (lane_launch picks W); k past K, rows past I or J and cells past C are
/// zeros. A warp's reads of a (k, row) are then the 32 words of one run
/// (one wavefront for float, two for double), and its writes of an
/// output (row, column) are a run of 32 cells in the output, adjacent
/// cells in adjacent words.
/// Tasks are (group, row tile, column tile), group-major, so blocks that
/// run at once share the group's rows in L2.
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES, int W>
__global__ void __launch_bounds__(WI *WJ * 32, 1)
    lane_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                T *__restrict__ out) {
  constexpr int NT = WI * WJ * 32, BI = TI * WI, BJ = TJ * WJ, ROWS = BI + BJ;
  constexpr int V = 16 / (int)sizeof(T), CHUNKS = 32 / V; // cells a 16-byte copy, copies a run
  constexpr int STAGE = KT * ROWS * 32;                    // words
  // Thread t copies V cells (chunk t % CHUNKS of the run's 16-byte chunks,
  // or its share of narrower pieces) of tile row (t / CHUNKS) % ROWS (A's
  // rows, then B's) at the k values t / CHUNKS / ROWS + K_STEP n.
  constexpr int K_STEP = NT / CHUNKS / ROWS, PASSES = KT / K_STEP;
  static_assert(NT % (CHUNKS * ROWS) == 0 && KT % K_STEP == 0, "whole tile rows per pass");
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

  // Copy side: this thread's chunk, row and first k, fixed; the row's source
  // (its first cell at k = 0, or null: nothing to copy) and cells planned
  // once per task, so a stage's copies only step the source along k.
  const int chunk = threadIdx.x % CHUNKS, row = threadIdx.x / CHUNKS % ROWS;
  const int k_first = threadIdx.x / CHUNKS / ROWS;
  const bool in_a = row < BI;
  const int64_t stride = in_a ? p.a_k : p.b_k;
  // Copies of W bytes (PIECE cells): piece u of this thread holds cells
  // PIECE (chunk + CHUNKS u) .. of the run, so that a run's CHUNKS threads
  // copy adjacent pieces in each instruction (with narrow pieces, 8 threads
  // read 8 adjacent words rather than words 4 apart).
  constexpr int PIECE = W / (int)sizeof(T), PIECES = V / PIECE;
  int64_t load_task = blockIdx.x, load_step = 0;
  const T *copy_from = nullptr;
  int copy_cells = 0; // cells of the run from this thread's first one on
  auto locate = [&](int64_t task) {
    int64_t c0, i0, j0;
    split(task, c0, i0, j0);
    const int64_t c = c0 + chunk * PIECE, r = in_a ? i0 + row : j0 + row - BI;
    copy_cells = (int)max((int64_t)0, min((int64_t)(PIECES == 1 ? V : 32), p.C - c));
    copy_from = copy_cells == 0 || r >= (in_a ? p.I : p.J) ? nullptr
                : in_a                                     ? A + c * p.a_c + r * p.a_i
                                                           : B + c * p.b_c + r * p.b_j;
  };
  const unsigned ring_address = (unsigned)__cvta_generic_to_shared(ring);
  auto load = [&](int stage) {
    const int64_t k0 = load_step * KT + k_first;
    const T *from = copy_from ? copy_from + k0 * stride : A;
    unsigned dst = ring_address + sizeof(T) * (stage * STAGE + (k_first * ROWS + row) * 32 +
                                               chunk * PIECE);
#pragma unroll
    for (int pass = 0; pass < PASSES;
         ++pass, from += K_STEP * stride, dst += sizeof(T) * K_STEP * ROWS * 32) {
      const bool valid = copy_from && k0 + pass * K_STEP < p.K;
#pragma unroll
      for (int u = 0; u < PIECES; ++u) {
        const int at = u * CHUNKS * PIECE, cells = copy_cells - at;
        if (PIECE > 1 && cells >= PIECE) {
          copy_async_n<W>(dst + sizeof(T) * at, valid ? from + at : A, valid ? W : 0);
        } else {
#pragma unroll
          for (int v = 0; v < PIECE; ++v)
            copy_async_n<sizeof(T)>(dst + sizeof(T) * (at + v),
                                    valid && v < cells ? from + at + v : A,
                                    valid && v < cells ? (int)sizeof(T) : 0);
        }
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

  auto multiply = [&](int stage) {
    const T *tile = ring + stage * STAGE + lane;
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
  };
  auto finish = [&](int64_t task, int) {
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
  };
  run_ring<STAGES>(load_task, tasks, k_steps, locate, load, multiply, finish);
}

/// Dynamic shared memory of lane_kernel<T, TI, TJ, WI, WJ, KT, STAGES> (bytes).
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES>
constexpr size_t lane_shared_bytes() {
  return sizeof(T) * STAGES * KT * (TI * WI + TJ * WJ) * 32;
}

/// The widest copy (16, 8 or sizeof(T) bytes) that every run of A and B
/// aligns to: runs start at multiples of the row and k strides from the
/// arrays' starts (and at multiples of 32 cells).
template <typename T>
int lane_copy_width(const tc_cuda_problem &p, const T *A, const T *B) {
  auto aligned = [&](size_t n) {
    return (p.a_i * sizeof(T)) % n == 0 && (p.a_k * sizeof(T)) % n == 0 &&
           (p.b_j * sizeof(T)) % n == 0 && (p.b_k * sizeof(T)) % n == 0 &&
           reinterpret_cast<uintptr_t>(A) % n == 0 && reinterpret_cast<uintptr_t>(B) % n == 0;
  };
  return aligned(16) ? 16 : aligned(8) ? 8 : (int)sizeof(T);
}

/// Launches lane_kernel with copies of W bytes and one resident wave of
/// blocks striding over the tasks.
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES, int W>
tc_err lane_launch_width(const tc_cuda_problem &p, const T *A, const T *B, T *out,
                         cudaStream_t stream) {
  constexpr int BI = TI * WI, BJ = TJ * WJ, NT = WI * WJ * 32;
  constexpr size_t shared = lane_shared_bytes<T, TI, TJ, WI, WJ, KT, STAGES>();
  auto kernel = lane_kernel<T, TI, TJ, WI, WJ, KT, STAGES, W>;
  const int64_t tasks = (p.C + 31) / 32 * ((p.I + BI - 1) / BI) * ((p.J + BJ - 1) / BJ);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, NT, shared, tasks, "layout-left lane tile", &blocks));
  kernel<<<blocks, NT, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

/// Launches lane_kernel with the widest copies the arrays allow.
template <typename T, int TI, int TJ, int WI, int WJ, int KT, int STAGES>
tc_err lane_launch(const tc_cuda_problem &p, const T *A, const T *B, T *out,
                   cudaStream_t stream) {
  const int width = lane_copy_width(p, A, B);
  if (width == 16)
    return lane_launch_width<T, TI, TJ, WI, WJ, KT, STAGES, 16>(p, A, B, out, stream);
  if constexpr (sizeof(T) < 8)
    if (width == 8)
      return lane_launch_width<T, TI, TJ, WI, WJ, KT, STAGES, 8>(p, A, B, out, stream);
  return lane_launch_width<T, TI, TJ, WI, WJ, KT, STAGES, (int)sizeof(T)>(p, A, B, out, stream);
}

} // namespace tc_cuda

#endif
