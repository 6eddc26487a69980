/* contract_cuda_mma: the FieldField tile on FP64 tensor cores (DMMA, PTX
 * mma.sync m16n8k16 f64, sm_90) for the batched product
 * out(c,i,j) = sum_k A(c,i,k) B(c,j,k) of contract_cuda_kernels.cuh, double
 * precision, and its launcher. Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_MMA_CUH
#define TC_CONTRACT_CUDA_MMA_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

#include "contract_cuda_kernels.cuh"
#include "contract_cuda_tasks.cuh"
#include "tc_cuda_mma.cuh"

namespace tc_cuda {

/// Asynchronous 16-byte copy global -> shared that skips L1 (cp.async.cg);
/// both addresses 16-byte aligned. Only the first `bytes` (0, 8 or 16) are
/// read; the rest of the 16 are written as zeros. A single word (the last
/// of a row) goes as an 8-byte copy, so that no address past it is named
/// (a 16-byte copy of 8 source bytes reads only those, but compute-sanitizer
/// counts all 16 against the allocation at the end of an array).
__device__ __forceinline__ void copy_async16(double *dst, const double *src, int bytes) {
#if __CUDA_ARCH__ >= 800
  const unsigned address = (unsigned)__cvta_generic_to_shared(dst);
  if (bytes == 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(address), "l"(src) : "memory");
    dst[1] = 0.0;
  } else {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src),
                 "r"(bytes)
                 : "memory");
  }
#else
  dst[0] = bytes >= 8 ? src[0] : 0.0;
  dst[1] = bytes == 16 ? src[1] : 0.0;
#endif
}

/// Asynchronous copy of `bytes` (0 or N: nothing is read and zeros are
/// written, or N bytes) from global memory to the shared-memory address dst;
/// N = 4 or 8 goes through L1 (cp.async.ca), 16 skips it (cp.async.cg). Both
/// addresses N-byte aligned. LINE asks L2 to fetch the word's whole 128-byte
/// line from device memory (for a neighbouring block that reads the rest).
template <int N, bool LINE = false>
__device__ __forceinline__ void copy_async_n(unsigned dst, const void *src, int bytes) {
#if __CUDA_ARCH__ >= 800
  if constexpr (N == 16 && LINE)
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)
                 : "memory");
  else if constexpr (N == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)
                 : "memory");
  else if constexpr (LINE)
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                 "n"(N), "r"(bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(N),
                 "r"(bytes)
                 : "memory");
#else
  // Built for sm_90 (CMAKE_CUDA_ARCHITECTURES); the kernels that copy this
  // way run only where the binary has that code (contract_cuda.cu).
  (void)dst;
  (void)src;
  (void)bytes;
#endif
}

__device__ __forceinline__ void copy_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most N committed copy groups of this thread are pending.
template <int N>
__device__ __forceinline__ void copy_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/// A ring of STAGES shared-memory stages filled by cp.async copy groups that
/// run ahead of the product (mma_kernel, mma_left_kernel). start() issues
/// the copies of the first STAGES - 1 stages; each next() waits for the
/// oldest stage, lets every warp finish with the stage it then refills, and
/// returns the stage to multiply. `more()` says whether copies are left;
/// `load(s)` issues one stage's copies (one group is committed either way,
/// so the waits count the same).
template <int STAGES>
struct copy_ring {
  static_assert(STAGES >= 2, "at least double buffering");
  int stage = 0, load_stage = STAGES - 1;

  template <typename More, typename Load>
  __device__ __forceinline__ void start(More more, Load load) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (more())
        load(s);
      copy_async_commit();
    }
  }

  template <typename More, typename Load>
  __device__ __forceinline__ int next(More more, Load load) {
    copy_async_wait<STAGES - 2>();
    __syncthreads(); // `stage` is in; every warp is done with `load_stage`
    if (more())
      load(load_stage);
    copy_async_commit();
    load_stage = load_stage + 1 == STAGES ? 0 : load_stage + 1;
    const int ready = stage;
    stage = stage + 1 == STAGES ? 0 : stage + 1;
    return ready;
  }
};

/// Moves the copy side of a ring kernel on after a stage's copies: to the
/// next k step of the task it copies, or after the last to step 0 of the
/// block's next task (this block's tasks are gridDim.x apart), whose copies
/// `locate(task)` plans.
template <typename Locate>
__device__ __forceinline__ void next_copy_step(int64_t &step, int64_t steps, int64_t &task,
                                               int64_t tasks, Locate locate) {
  if (++step == steps) {
    step = 0;
    task += gridDim.x;
    if (task < tasks)
      locate(task);
  }
}

/// Drives a ring kernel (mma_kernel, mma_left_kernel, lane_kernel,
/// fma_ring_kernel) over its block's tasks, gridDim.x apart: plans the first
/// task's copies (`first(task)`), starts the ring, calls `multiply(stage)`
/// for each of a task's k_steps ring stages and, after its last,
/// `finish(task, stage)`; then waits for the copies still in flight.
/// `load(stage)` moves load_task on (next_copy_step).
template <int STAGES, typename First, typename Load, typename Multiply, typename Finish>
__device__ __forceinline__ void run_ring(int64_t &load_task, int64_t tasks, int64_t k_steps,
                                         First first, Load load, Multiply multiply,
                                         Finish finish) {
  if (load_task < tasks)
    first(load_task);
  copy_ring<STAGES> stages;
  auto more = [&] { return load_task < tasks; };
  stages.start(more, load);
  int64_t step = 0;
  for (int64_t task = blockIdx.x; task < tasks;) {
    const int stage = stages.next(more, load);
    multiply(stage);
    if (++step == k_steps) {
      finish(task, stage);
      step = 0;
      task += gridDim.x;
    }
  }
  copy_async_wait<0>();
}

/// Zeros a warp's 16MB x 8NB accumulators (mma_kernel's, warp_product's).
template <int NB, int MB>
__device__ __forceinline__ void clear_piece(double (&acc)[MB][NB][4]) {
#pragma unroll
  for (int m = 0; m < MB; ++m)
#pragma unroll
    for (int n = 0; n < NB; ++n)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[m][n][v] = 0;
}

/// Tensor-core tile: a block of WM x WN warps computes a BM x BN output tile
/// (BM = 16 WM FM, BN = 8 WN FN) of one cell; each warp holds FM x FN 16 x 8
/// accumulators (register blocking). The collapsed index k must be contiguous
/// (a_k = b_k = 1: layout right); it is walked KT at a time through a
/// STAGES-deep ring of shared-memory tiles, A and B each stored [row][k], filled
/// by 16-byte cp.async copies that skip L1. Tiles are the block's tasks (cell,
/// row tile, column tile) in a grid-stride loop, and the copy ring runs across
/// task boundaries, so the next task's first k tiles arrive while the current
/// one finishes. Rows, columns and k beyond the arrays are zero-filled, so no
/// size needs to divide another. Lane (g, t) of a warp uses k = 4t..4t+3 of
/// each 16 (see mma_16x8x16).
///
/// SHIFT = false needs every row start 16-byte aligned (K, the row and cell
/// strides even, A and B 16-byte aligned): rows are padded to KT + 2 words and
/// fragments are read as 16-byte words, conflict-free. SHIFT = true takes any
/// k-contiguous arrays (odd K included): each row's copy starts at the 16-byte
/// boundary at or below k0 and lands one word later in shared memory when k0
/// is odd-aligned, rows are padded to KT + 5 words (KT + 5 = 1 mod 4, so with
/// odd K the 8-byte fragment loads are conflict-free), and fragments are read
/// as 8-byte words. Dynamic shared memory: mma_shared_bytes<...>().
template <int WM, int WN, int FM, int FN, int KT, int STAGES, bool SHIFT, int MINB>
__global__ void __launch_bounds__(WM *WN * 32, MINB)
    mma_kernel(tc_cuda_problem p, const double *__restrict__ A, const double *__restrict__ B,
               double *__restrict__ out) {
  constexpr int NT = WM * WN * 32, BM = WM * FM * 16, BN = WN * FN * 8;
  constexpr int LD = SHIFT ? KT + 5 : KT + 2; // shared row pitch, words
  constexpr int CH = SHIFT ? KT / 2 + 1 : KT / 2; // 16-byte copies per tile row
  constexpr int A_COPIES = BM * CH, B_COPIES = BN * CH;
  static_assert(KT % 16 == 0, "k tile: a multiple of 16");
  static_assert(STAGES >= 2, "at least double buffering");
  extern __shared__ __align__(16) unsigned char mma_memory[];
  // Ring of STAGES tiles, each A (BM rows) then B (BN rows).
  double *ring = reinterpret_cast<double *>(mma_memory);
  constexpr int TILE = (BM + BN) * LD;

  const int64_t tiles_i = (p.I + BM - 1) / BM, tiles_j = (p.J + BN - 1) / BN;
  const int64_t per_cell = tiles_i * tiles_j, tasks = p.C * per_cell;
  const int64_t k_steps = (p.K + KT - 1) / KT;

  // Where row r's k0 sits in its shared tile: the word after the row's first,
  // moved by one so that it has the parity of its global address (16-byte
  // copies then line up); with SHIFT = false every row is aligned and k0 sits
  // at the row's first word.
  auto slot = [](const double *row, int r) -> int {
    if (!SHIFT)
      return r * LD;
    const int first = r * LD + 1;
    return first + (int)((((uintptr_t)row >> 3) ^ (uintptr_t)first) & 1);
  };

  // Task -> (cell, first row, first column); no division when a tile holds
  // a whole cell.
  auto split = [&](int64_t task, int64_t &c, int64_t &i0, int64_t &j0) {
    if (per_cell == 1) {
      c = task;
      i0 = j0 = 0;
      return;
    }
    c = task / per_cell;
    const int64_t rest = task - c * per_cell, ti = rest / tiles_j;
    i0 = ti * BM;
    j0 = (rest - ti * tiles_j) * BN;
  };

  // Copy side: this thread's copies of each tile (copy e: row e / CH, 16-byte
  // piece e % CH), planned once per task; a k step then only moves them by k0.
  constexpr int A_PER = (A_COPIES + NT - 1) / NT, B_PER = (B_COPIES + NT - 1) / NT;
  // Copies of nothing (bytes = 0) still need an aligned address.
  const double *aligned_dummy = reinterpret_cast<const double *>((uintptr_t)A & ~(uintptr_t)15);
  int64_t load_task = blockIdx.x, load_step = 0;
  const double *a_from[A_PER], *b_from[B_PER]; // source at k0 = 0
  int a_to[A_PER], b_to[B_PER];                 // destination in a tile
  int64_t a_left[A_PER], b_left[B_PER];         // words of the row from the source on
  auto plan = [&](int e, const double *first, int64_t pitch, int64_t rows, const double *&from,
                  int &to, int64_t &left) {
    const int r = e / CH, j = e % CH;
    const double *row = first + r * pitch;
    const int misaligned = SHIFT ? (int)(((uintptr_t)row >> 3) & 1) : 0;
    from = row - misaligned + 2 * j;
    to = slot(row, r) - misaligned + 2 * j;
    left = r < rows ? p.K + misaligned - 2 * j : 0;
  };
  auto locate = [&](int64_t task) {
    int64_t c, i0, j0;
    split(task, c, i0, j0);
    const double *a_first = A + c * p.a_c + i0 * p.a_i, *b_first = B + c * p.b_c + j0 * p.b_j;
#pragma unroll
    for (int n = 0; n < A_PER; ++n)
      plan(min((int)threadIdx.x + n * NT, A_COPIES - 1), a_first, p.a_i, p.I - i0, a_from[n],
           a_to[n], a_left[n]);
#pragma unroll
    for (int n = 0; n < B_PER; ++n)
      plan(min((int)threadIdx.x + n * NT, B_COPIES - 1), b_first, p.b_j, p.J - j0, b_from[n],
           b_to[n], b_left[n]);
  };
  auto copy_piece = [&](double *tile, const double *from, int to, int64_t left, int64_t k0) {
    const int64_t rest = left - k0;
    const int bytes = rest >= 2 ? 16 : rest == 1 ? 8 : 0;
    copy_async16(tile + to, bytes ? from + k0 : aligned_dummy, bytes);
  };
  auto load = [&](int stage) {
    const int64_t k0 = load_step * KT;
    double *a_tile = ring + stage * TILE, *b_tile = a_tile + BM * LD;
#pragma unroll
    for (int n = 0; n < A_PER; ++n)
      if (A_COPIES % NT == 0 || (int)threadIdx.x + n * NT < A_COPIES)
        copy_piece(a_tile, a_from[n], a_to[n], a_left[n], k0);
#pragma unroll
    for (int n = 0; n < B_PER; ++n)
      if (B_COPIES % NT == 0 || (int)threadIdx.x + n * NT < B_COPIES)
        copy_piece(b_tile, b_from[n], b_to[n], b_left[n], k0);
    next_copy_step(load_step, k_steps, load_task, tasks, locate);
  };

  // Multiply side: warp (wm, wn) owns rows wm*FM*16.. and columns wn*FN*8...
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = lane / 4, member = lane % 4;
  const int wm = warp / WN, wn = warp % WN;
  double acc[FM][FN][4];
  clear_piece(acc);
  int a_slot[FM][2], b_slot[FN]; // where this lane's fragment rows start
  auto find_slots = [&](int64_t task) {
    int64_t c, i0, j0;
    split(task, c, i0, j0);
    const double *a_first = A + c * p.a_c + i0 * p.a_i, *b_first = B + c * p.b_c + j0 * p.b_j;
#pragma unroll
    for (int m = 0; m < FM; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = wm * FM * 16 + m * 16 + 8 * h + group;
        a_slot[m][h] = slot(a_first + r * p.a_i, r) + 4 * member;
      }
#pragma unroll
    for (int n = 0; n < FN; ++n) {
      const int r = wn * FN * 8 + n * 8 + group;
      b_slot[n] = slot(b_first + r * p.b_j, r) + 4 * member;
    }
  };

  auto first = [&](int64_t task) {
    locate(task);
    find_slots(task);
  };
  auto multiply = [&](int stage) {
    const double *a_tile = ring + stage * TILE, *b_tile = a_tile + BM * LD;
#pragma unroll
    for (int k16 = 0; k16 < KT; k16 += 16) {
      double2 b[FN][2];
#pragma unroll
      for (int n = 0; n < FN; ++n)
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const double *q = b_tile + b_slot[n] + k16 + 2 * u;
          b[n][u] = SHIFT ? make_double2(q[0], q[1]) : *reinterpret_cast<const double2 *>(q);
        }
#pragma unroll
      for (int m = 0; m < FM; ++m) {
        double2 a[2][2];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int u = 0; u < 2; ++u) {
            const double *q = a_tile + a_slot[m][h] + k16 + 2 * u;
            a[h][u] = SHIFT ? make_double2(q[0], q[1]) : *reinterpret_cast<const double2 *>(q);
          }
#pragma unroll
        for (int n = 0; n < FN; ++n)
          mma_16x8x16(acc[m][n], a, b[n]);
      }
    }
  };
  auto finish = [&](int64_t task, int) {
    int64_t c, i0, j0;
    split(task, c, i0, j0);
    const int rows = (int)min((int64_t)BM, p.I - i0), cols = (int)min((int64_t)BN, p.J - j0);
    double *o = out + c * p.o_c + i0 * p.o_i + j0 * p.o_j;
#pragma unroll
    for (int m = 0; m < FM; ++m)
#pragma unroll
      for (int n = 0; n < FN; ++n)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int i = wm * FM * 16 + m * 16 + 8 * (v / 2) + group;
          const int j = wn * FN * 8 + n * 8 + 2 * member + v % 2;
          if (i < rows && j < cols) {
            double *to = o + i * p.o_i + j * p.o_j;
            *to = p.sum_into ? *to + acc[m][n][v] : acc[m][n][v];
          }
          acc[m][n][v] = 0;
        }
    if (task + gridDim.x < tasks)
      find_slots(task + gridDim.x);
  };
  run_ring<STAGES>(load_task, tasks, k_steps, first, load, multiply, finish);
}

/// Dynamic shared memory of mma_kernel<WM, WN, FM, FN, KT, STAGES, SHIFT> (bytes).
template <int WM, int WN, int FM, int FN, int KT, int STAGES, bool SHIFT>
constexpr size_t mma_shared_bytes() {
  return sizeof(double) * STAGES * (size_t)(16 * WM * FM + 8 * WN * FN) *
         (SHIFT ? KT + 5 : KT + 2);
}

/// Launches mma_kernel<..., SHIFT> with one resident wave of blocks (as many
/// as fit on every multiprocessor, never more than there are tiles): the
/// blocks stride over the tiles, so any C works.
template <int WM, int WN, int FM, int FN, int KT, int STAGES, bool SHIFT, int MINB>
tc_err mma_launch_as(const tc_cuda_problem &p, const double *A, const double *B, double *out,
                     cudaStream_t stream) {
  constexpr int threads = WM * WN * 32, BM = WM * FM * 16, BN = WN * FN * 8;
  constexpr size_t shared = mma_shared_bytes<WM, WN, FM, FN, KT, STAGES, SHIFT>();
  auto kernel = mma_kernel<WM, WN, FM, FN, KT, STAGES, SHIFT, MINB>;
  const int64_t tasks = p.C * ((p.I + BM - 1) / BM) * ((p.J + BN - 1) / BN);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, threads, shared, tasks, "tensor-core tile", &blocks));
  kernel<<<blocks, threads, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

/// The whole-cell tile's plan: `cells` whole cells per ring stage, `stages`
/// stages of stage_words words (B from word a_words), output tiles of
/// 16mb x 8nb (tiles_i x tiles_j per cell), and `split` warps sharing one
/// tile's k steps.
struct cells_shape {
  int cells, stages, stage_words, a_words, tiles_i, tiles_j, split, mb, nb;
};

/// The 16MB x 8NB per-warp DMMA product (MB x NB accumulators of 16 x 8;
/// MB = 2, NB = 4: a 32 x 32 piece) over k steps [s0, s1) of 16, for the
/// tensor-core tiles that read their operands from shared memory. Step s of A
/// starts at a + s * a_step (of B at b + s * b_step); in it, this lane's A row
/// 16m + 8h + g starts at word a_row[m][h] and its B row (output column)
/// 8n + g at b_row[n], and the
/// lane's words 4t + 2u and 4t + 2u + 1 of a row are at piece[u] from the
/// row's start (4t + 2u for rows stored as they are, elsewhere when a
/// swizzle moved them). MASKED reads zeros at k >= k_valid (the loads there
/// are not made); WIDE reads the pairs as 16-byte words (every address
/// 16-byte aligned), else as 8-byte words.
template <bool MASKED, bool WIDE, int NB, int MB>
__device__ __forceinline__ void warp_product(double (&acc)[MB][NB][4], const double *a, int a_step,
                                             const int (&a_row)[MB][2], const double *b,
                                             int b_step, const int (&b_row)[NB],
                                             const int (&piece)[2], int s0, int s1,
                                             int k_valid) {
  const int member = threadIdx.x % 4;
  for (int step = s0; step < s1; ++step) {
    // Words 2u and 2u + 1 of this lane's four of the row at `row` in `base`.
    auto pair = [&](const double *base, int row, int u) -> double2 {
      const double *q = base + row + piece[u];
      if (MASKED) {
        const int k = 16 * step + 4 * member + 2 * u;
        return make_double2(k < k_valid ? q[0] : 0.0, k + 1 < k_valid ? q[1] : 0.0);
      }
      return WIDE ? *reinterpret_cast<const double2 *>(q) : make_double2(q[0], q[1]);
    };
    const double *a_here = a + step * a_step, *b_here = b + step * b_step;
    // All of A's fragments, then B's one column block at a time: fewer
    // registers live than holding all of B's.
    double2 af[MB][2][2];
#pragma unroll
    for (int m = 0; m < MB; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int u = 0; u < 2; ++u)
          af[m][h][u] = pair(a_here, a_row[m][h], u);
#pragma unroll
    for (int n = 0; n < NB; ++n) {
      double2 bf[2];
#pragma unroll
      for (int u = 0; u < 2; ++u)
        bf[u] = pair(b_here, b_row[n], u);
#pragma unroll
      for (int m = 0; m < MB; ++m)
        mma_16x8x16(acc[m][n], af[m], bf);
    }
  }
}

/// The 16MB x 8NB per-warp product of the whole-cell tile over k steps
/// [s0, s1) of 16: rows i0.. of a cell's A (a: [L][K] in shared memory),
/// columns j0.. of its B. Rows past the cell read its last row (their outputs
/// are never stored) and k past K reads zeros, so nothing has to divide
/// anything. With K odd the lanes' 8-byte loads (row g, word 4t + v) fall in
/// distinct banks.
template <int MB, int NB>
__device__ __forceinline__ void cell_product(double (&acc)[MB][NB][4], const double *a,
                                             const double *b, int L, int R, int K, int i0,
                                             int j0, int s0, int s1) {
  const int lane = threadIdx.x % 32, group = lane / 4, member = lane % 4;
  int a_row[MB][2], b_row[NB];
#pragma unroll
  for (int m = 0; m < MB; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      a_row[m][h] = min(i0 + 16 * m + 8 * h + group, L - 1) * K;
#pragma unroll
  for (int n = 0; n < NB; ++n)
    b_row[n] = min(j0 + 8 * n + group, R - 1) * K;
  const int piece[2] = {4 * member, 4 * member + 2};
  warp_product<true, false>(acc, a, 16, a_row, b, 16, b_row, piece, s0, s1, K);
}

/// Calls f(i, j, value) for each entry of this lane's share of a 16MB x 8NB
/// piece from (i0, j0) (warp_product's accumulators) that lies inside L x R.
template <int NB, int MB, typename F>
__device__ __forceinline__ void for_each_output(const double (&acc)[MB][NB][4], int i0, int j0,
                                                int L, int R, F f) {
  const int lane = threadIdx.x % 32, group = lane / 4, member = lane % 4;
#pragma unroll
  for (int m = 0; m < MB; ++m)
#pragma unroll
    for (int t = 0; t < NB; ++t)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int i = i0 + 16 * m + 8 * (v / 2) + group, j = j0 + 8 * t + 2 * member + v % 2;
        if (i < L && j < R)
          f(i, j, acc[m][t][v]);
      }
}

/// Whole-cell tensor-core tile (layout right, dense arrays): a cell's A
/// (L x K) and B (R x K) are each one contiguous run, and so are those of
/// consecutive cells. Blocks of W warps take groups of `cells` cells from a
/// task counter (contract_cuda_tasks.cuh) as their ring has room; the bulk
/// copy engine stages a group's two runs into a ring of `stages` shared
/// buffers (one instruction per run, so the copies cost no issue slots and
/// hold no registers). Each warp computes output tiles of 16MB x 8NB (MB x NB
/// DMMA m16n8k16 accumulators) from shared memory; its last tile of a group is
/// stored after the stage is handed back to the copy engine, so the next copy
/// starts as soon as the stage has been read. When a group has few tiles and
/// many k steps, `split` warps share a tile's k steps and their partial tiles
/// are summed, in a fixed order, through the stage's buffer once every warp is
/// done reading it; those outputs are then written as one contiguous,
/// coalesced run.
template <int W, int MINB, int MB, int NB>
__global__ void __launch_bounds__(W * 32, MINB)
    mma_cells_kernel(tc_cuda_problem p, const double *__restrict__ A,
                     const double *__restrict__ B, double *__restrict__ out, cells_shape shape,
                     unsigned long long *tasks) {
  extern __shared__ __align__(16) unsigned char cells_ring[];
  __shared__ uint64_t barriers[kMaxBulkStages];
  __shared__ int64_t stage_group[kMaxBulkStages]; // the group in each stage
  double *ring = reinterpret_cast<double *>(cells_ring);
  const int L = (int)p.I, R = (int)p.J, K = (int)p.K, n = shape.cells;
  const int steps = (K + 15) / 16, split = shape.split;
  const int64_t groups = (p.C + n - 1) / n, a_total = p.C * L * K, b_total = p.C * R * K;
  const int64_t a_cell = (int64_t)L * K, b_cell = (int64_t)R * K, o_cell = (int64_t)L * R;
  auto runs = [&](int64_t g, bulk_run<double> &a, bulk_run<double> &b) {
    const int64_t c0 = g * n, c1 = min(p.C, c0 + n);
    a = plan_run(A, c0 * a_cell, c1 * a_cell, a_total);
    b = plan_run(B, c0 * b_cell, c1 * b_cell, b_total);
  };
  // Thread 0 takes each group one issue ahead, so that it need not wait for
  // the task counter's answer when a stage comes free.
  int64_t upcoming = 0;
  auto issue = [&](int s) { // thread 0 only: the next group into stage s
    const int64_t g = upcoming;
    upcoming = take_task(tasks);
    stage_group[s] = g;
    if (g >= groups)
      return;
    bulk_run<double> a, b;
    runs(g, a, b);
    double *buffer = ring + (int64_t)s * shape.stage_words;
    bulk_expect(&barriers[s], a.bytes + b.bytes);
    bulk_copy(buffer, A, a, &barriers[s]);
    bulk_copy(buffer + shape.a_words, B, b, &barriers[s]);
  };
  if (threadIdx.x == 0) {
    bulk_init(barriers, shape.stages);
    upcoming = take_task(tasks);
    for (int s = 0; s < shape.stages; ++s)
      issue(s);
  }
  __syncthreads();
  const int warp = threadIdx.x / 32;
  int s = 0;
  uint32_t phase = 0;
  for (;;) {
    const int64_t g = stage_group[s];
    if (g >= groups)
      break; // and so are the groups of the stages after it
    const int64_t c0 = g * n;
    const int count = (int)min((int64_t)n, p.C - c0);
    bulk_run<double> ra, rb;
    runs(g, ra, rb);
    double *buffer = ring + (int64_t)s * shape.stage_words;
    bulk_wait(&barriers[s], phase);
    const bool a_tail = finish_run(buffer, A, ra);
    const bool b_tail = finish_run(buffer + shape.a_words, B, rb);
    if (a_tail || b_tail)
      __syncthreads();
    const double *a_cells = buffer + ra.shift, *b_cells = buffer + shape.a_words + rb.shift;
    const int items = count * shape.tiles_i * shape.tiles_j * split;
    double acc[MB][NB][4];
    int part = 0, q = 0, i0 = 0, j0 = 0;
    auto store = [&] {
      for_each_output(acc, i0, j0, L, R, [&](int i, int j, double value) {
        double *o = out + (c0 + q) * o_cell + i * R + j;
        *o = p.sum_into ? *o + value : value;
      });
    };
    bool held = false; // acc holds a piece not yet stored
    for (int item = warp; item < items; item += W) {
      if (held)
        store();
      part = item % split;
      int rest = item / split;
      j0 = 8 * NB * (rest % shape.tiles_j);
      rest /= shape.tiles_j;
      i0 = 16 * MB * (rest % shape.tiles_i);
      q = rest / shape.tiles_i;
      clear_piece(acc);
      cell_product(acc, a_cells + q * a_cell, b_cells + q * b_cell, L, R, K, i0, j0,
                   part * steps / split, (part + 1) * steps / split);
      held = true;
      if (split > 1)
        break; // one item per warp (the launch sees to it); summed below
    }
    if (split > 1) {
      __syncthreads(); // every warp is done reading the stage: it takes the partial tiles
      double *partial = buffer;
      if (held)
        for_each_output(acc, i0, j0, L, R, [&](int i, int j, double value) {
          partial[(part * count + q) * o_cell + i * R + j] = value;
        });
      __syncthreads();
      const int64_t entries = count * o_cell;
      for (int64_t e = threadIdx.x; e < entries; e += blockDim.x) {
        double sum = partial[e];
        for (int k = 1; k < split; ++k)
          sum += partial[k * entries + e];
        double *o = out + c0 * o_cell + e;
        *o = p.sum_into ? *o + sum : sum;
      }
      held = false;
    }
    __syncthreads(); // every thread is done with stage s
    if (threadIdx.x == 0)
      issue(s);
    if (held)
      store();
    if (++s == shape.stages) {
      s = 0;
      phase ^= 1;
    }
  }
  if (threadIdx.x == 0)
    finish_tasks(tasks);
}

/// Plans the whole-cell tile for a layout-right FieldField product with
/// blocks of `warps` warps: at least two stages of whole cells must fit in
/// `shared_limit` bytes (else false: the cells are too big, another tile
/// serves). Groups hold enough cells for about `target` bytes of copies, and
/// as many stages as fit (at most kMaxBulkStages). When a group has fewer
/// tiles than the block has warps, `split` warps share each tile's k steps (a
/// power of two, so the schedulers get even shares; at least 2 steps each),
/// as long as the partial tiles fit in a stage. The stage is held while its
/// tiles are computed, so the work is spread over the warps. Measured on an
/// H200: 27 x 27 x 81 2.9% faster over 2 warps than on one
/// (over 3: 0.8% slower than 2), 27 x 27 x 27 (2 k steps) 7.8% slower split
/// in two than not; 27 x 27 x 243 runs 16 x 16 tiles split two ways (below).
/// With `regroup`, where two stages of `target` bytes do not fit, groups of
/// fewer cells (down to one) are tried.
inline bool plan_cells(const tc_cuda_problem &p, size_t shared_limit, size_t target, int warps,
                       bool regroup, cells_shape &shape) {
  constexpr int64_t pad = bulk_slack<double>; // for the 16-byte alignment of a run's copy
  const int64_t cell_bytes = (p.I + p.J) * p.K * (int64_t)sizeof(double);
  shape.cells = (int)std::max<int64_t>(1, std::min<int64_t>(p.C, (int64_t)target / cell_bytes));
  int64_t stage_bytes = 0;
  for (;; --shape.cells) {
    shape.a_words = (int)((shape.cells * p.I * p.K + pad + 1) / 2 * 2);
    shape.stage_words = (int)(shape.a_words + (shape.cells * p.J * p.K + pad + 1) / 2 * 2);
    stage_bytes = (int64_t)shape.stage_words * (int64_t)sizeof(double);
    if (!regroup || shape.cells == 1 || 2 * stage_bytes <= (int64_t)shared_limit)
      break;
  }
  shape.stages = (int)std::min<int64_t>(kMaxBulkStages, (int64_t)shared_limit / stage_bytes);
  if (shape.stages < 2)
    return false;
  // 32 x 32 tiles, or smaller ones where they waste less on rows and
  // columns past the cell and a group still has no more tiles than warps:
  // smaller tiles load more fragments a product, and a warp with several
  // of them works through them one after another (H200, tcmini-bench
  // explicit shapes: 16 x 16 x 64 22% faster in 16 x 16 tiles; 40 x 40 x 120
  // 23% and 48 x 48 x 48 24% slower in 16 x 8 and 16 x 16 tiles, 15 and 9
  // of them a cell). Among forms that waste as little, the one whose tiles
  // split two ways: the partial tiles are written and summed through the
  // stage while it is held, more of them the wider the split, and smaller
  // tiles load more fragments (H200, 27 x 27 x 243 over 8 warps: 32 x 32
  // split 8, 32 x 16 split 4, 16 x 16 split 2, 16 x 8 unsplit 0.2506,
  // 0.2491, 0.2484 and 0.2504 ms).
  const int64_t steps = (p.K + 15) / 16;
  auto split_for = [&](int64_t tiles) { // a power of two, at least 2 steps each
    const int64_t most = std::min<int64_t>(warps / tiles, steps / 2);
    int64_t split = 1;
    while (2 * split <= most)
      split *= 2;
    while (split > 1 && split * shape.cells * p.I * p.J > shape.stage_words)
      split /= 2;
    return (int)split;
  };
  constexpr int forms[3][2] = {{2, 4}, {1, 2}, {1, 1}};
  int64_t least = INT64_MAX;
  for (const auto &f : forms) {
    const int64_t tiles_i = (p.I + 16 * f[0] - 1) / (16 * f[0]);
    const int64_t tiles_j = (p.J + 8 * f[1] - 1) / (8 * f[1]);
    const int64_t area = tiles_i * 16 * f[0] * tiles_j * 8 * f[1];
    const int64_t tiles = shape.cells * tiles_i * tiles_j;
    if (least != INT64_MAX && tiles > warps)
      continue;
    const int split = split_for(tiles);
    if (area < least || (area == least && split == 2 && shape.split != 2)) {
      least = area;
      shape.mb = f[0];
      shape.nb = f[1];
      shape.tiles_i = (int)tiles_i;
      shape.tiles_j = (int)tiles_j;
      shape.split = split;
    }
  }
  return true;
}

/// Whether A, B and the output are dense layout-right arrays (each cell's
/// rows one contiguous run, cells back to back).
inline bool cells_contiguous(const tc_cuda_problem &p) {
  return p.a_k == 1 && p.a_i == p.K && p.a_c == p.I * p.K && p.b_k == 1 && p.b_j == p.K &&
         p.b_c == p.J * p.K && p.o_j == 1 && p.o_i == p.J && p.o_c == p.I * p.J;
}

/// Launches the whole-cell tile with a planned shape: one resident wave.
template <int W, int MINB, int MB, int NB>
tc_err mma_cells_launch_as(const tc_cuda_problem &p, const cells_shape &shape, const double *A,
                           const double *B, double *out, cudaStream_t stream) {
  const size_t shared = (size_t)shape.stages * shape.stage_words * sizeof(double);
  auto kernel = mma_cells_kernel<W, MINB, MB, NB>;
  const int64_t groups = (p.C + shape.cells - 1) / shape.cells;
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, W * 32, shared, groups, "whole-cell tile", &blocks));
  unsigned long long *tasks = nullptr;
  TC_CALL(next_task_counter(&tasks));
  kernel<<<blocks, W * 32, shared, stream>>>(p, A, B, out, shape, tasks);
  return TC_SUCCESS;
}

template <int W, int MINB>
tc_err mma_cells_launch(const tc_cuda_problem &p, const cells_shape &shape, const double *A,
                        const double *B, double *out, cudaStream_t stream) {
  if (shape.mb == 2)
    return mma_cells_launch_as<W, MINB, 2, 4>(p, shape, A, B, out, stream);
  if (shape.nb == 2)
    return mma_cells_launch_as<W, MINB, 1, 2>(p, shape, A, B, out, stream);
  return mma_cells_launch_as<W, MINB, 1, 1>(p, shape, A, B, out, stream);
}

/// The whole-cell tile's plan for p (see mma_cells_run): *fits says whether
/// it applies, *small whether it runs 4-warp blocks, three per
/// multiprocessor (else one 8-warp block). `regroup`: see plan_cells.
inline tc_err mma_cells_plan(const tc_cuda_problem &p, bool regroup, cells_shape &shape,
                             bool *small, bool *fits) {
  *small = *fits = false;
  if (!cells_contiguous(p))
    return TC_SUCCESS;
  device_limits limits = {};
  TC_CALL(current_device_limits(&limits));
  const size_t block_limit = (size_t)limits.shared_per_block_optin,
               sm_limit = (size_t)limits.shared_per_sm;
  // The system's share of a block, and the kernel's barriers and stage_group.
  constexpr size_t reserved = 1024 + 2 * sizeof(int64_t) * kMaxBulkStages;
  *small = plan_cells(p, sm_limit / 3 - reserved, 24 * 1024, 4, regroup, shape);
  *fits = *small || plan_cells(p, block_limit - reserved, 128 * 1024, 8, regroup, shape);
  return TC_SUCCESS;
}

/// Runs the whole-cell tile where its stages fit (dense layout right, cells
/// small enough for two stages); *ran says whether it did. Cells of which two
/// stages fit in a third of a multiprocessor's shared memory (27 x 27 x 27
/// and 81: 11.7 and 35 KB) run 4-warp blocks, three per multiprocessor, with
/// ~24 KB stages (or one cell); larger ones (27 x 27 x 243: 105 KB) one
/// 8-warp block per multiprocessor with stages of ~128 KB (or one cell).
/// Measured on an H200 against the other settings tried. `regroup`: see
/// plan_cells.
inline tc_err mma_cells_run(const tc_cuda_problem &p, const double *A, const double *B,
                            double *out, cudaStream_t stream, bool regroup, bool *ran) {
  cells_shape shape;
  bool small = false;
  TC_CALL(mma_cells_plan(p, regroup, shape, &small, ran));
  if (*ran && small)
    TC_CALL((mma_cells_launch<4, 3>(p, shape, A, B, out, stream)));
  else if (*ran)
    TC_CALL((mma_cells_launch<8, 1>(p, shape, A, B, out, stream)));
  return TC_SUCCESS;
}

/// Whether every row of A and B starts an even number of words past the
/// array's start (k contiguous): the shape's half of mma_rows_aligned.
inline bool mma_rows_even(const tc_cuda_problem &p) {
  return p.K % 2 == 0 && p.a_i % 2 == 0 && p.a_c % 2 == 0 && p.b_j % 2 == 0 && p.b_c % 2 == 0;
}

/// Whether every row of A and B starts on a 16-byte boundary (k contiguous).
inline bool mma_rows_aligned(const tc_cuda_problem &p, const double *A, const double *B) {
  return mma_rows_even(p) && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0;
}

/// Launches the tensor-core tile; needs k-contiguous A and B (a_k = b_k = 1).
template <int WM, int WN, int FM, int FN, int KT, int STAGES, int MINB>
tc_err mma_launch(const tc_cuda_problem &p, const double *A, const double *B, double *out,
                  cudaStream_t stream) {
  if (mma_rows_aligned(p, A, B))
    return mma_launch_as<WM, WN, FM, FN, KT, STAGES, false, MINB>(p, A, B, out, stream);
  return mma_launch_as<WM, WN, FM, FN, KT, STAGES, true, MINB>(p, A, B, out, stream);
}

} // namespace tc_cuda

#endif
