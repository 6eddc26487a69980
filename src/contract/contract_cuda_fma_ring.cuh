/* contract_cuda_fma_ring: the float FieldField tile for layout right on the
 * FMA units (float has no tensor-core tile that keeps its precision): a
 * cp.async ring of k-contiguous rows feeding 4 x 4 sums a thread, batched
 * over cells. Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_FMA_RING_CUH
#define TC_CONTRACT_CUDA_FMA_RING_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"

namespace tc_cuda {

/// Threads of an FMA ring tile block, and the sums each keeps (TM x TN).
constexpr int kFmaRingThreads = 256, kFmaRingSums = 4;
/// Shared memory an FMA ring tile block may take (two blocks a
/// multiprocessor).
constexpr int kFmaRingSharedBytes = 113000;

/// Cells of a BM x BN FMA ring block: its threads over a cell's threads.
__host__ __device__ constexpr int fma_ring_cells(int BM, int BN) {
  return kFmaRingThreads * kFmaRingSums * kFmaRingSums / (BM * BN);
}

/// Words of k a stage holds: 16 for the smallest tiles, whose blocks hold
/// the most cells, else 32 (stages of 18 to 46 KB; more words would mostly
/// be zeros for the shortest sums).
__host__ __device__ constexpr int fma_ring_k(int BM, int BN) { return BM + BN <= 48 ? 16 : 32; }

/// Words of one stage: the group's BM rows of A of each cell, then its BN
/// rows of B, every row KT words of k at a pitch of KT + 4 words, so that
/// the 16-byte reads of the (at most 8) rows a quarter warp reads fall in
/// different bank groups.
__host__ __device__ constexpr int fma_ring_stage_words(int BM, int BN) {
  return fma_ring_cells(BM, BN) * (BM + BN) * (fma_ring_k(BM, BN) + 4);
}

/// Ring stages: as many as fit (at most 4).
__host__ __device__ constexpr int fma_ring_stages(int BM, int BN) {
  return kFmaRingSharedBytes / (4 * fma_ring_stage_words(BM, BN)) < 4
             ? kFmaRingSharedBytes / (4 * fma_ring_stage_words(BM, BN))
             : 4;
}

/// The FMA ring tile. A block of 256 threads takes G adjacent cells (a group,
/// fma_ring_cells) and a BM x BN output tile of each; a cell's TY x TX threads
/// keep 4 x 4 sums each (TY = BM / 4, TX = BN / 4, tx fastest), rows ty + TY r
/// and columns tx + TX q, so that the threads of a quarter warp read at most
/// two rows of A (broadcasts) and at most 8 different rows of B. The ring
/// (run_ring, STAGES deep, running across task boundaries) holds KT words of k
/// of every row, copied V words a thread (16 bytes where every row is 16-byte
/// aligned, K a multiple of 4; else 8, else 4); k past K is zeros; rows past I
/// or J hold what follows them in the array, and nothing past its end is read
/// (only outputs that are not written read those rows). Each 4 words of k a
/// thread reads its 4 rows of A and 4 of B as 16-byte words for 64 fused
/// multiply-adds; each sum runs over k in order. Tasks are (group, row tile,
/// column tile), group-major, so blocks that run at once share the group's rows
/// in L2.
template <int BM, int BN, int V>
__global__ void __launch_bounds__(kFmaRingThreads, 2)
    fma_ring_kernel(tc_cuda_problem p, const float *__restrict__ A, const float *__restrict__ B,
                    float *__restrict__ out) {
  constexpr int NT = kFmaRingThreads, TM = kFmaRingSums, TN = kFmaRingSums;
  constexpr int TY = BM / TM, TX = BN / TN, G = fma_ring_cells(BM, BN);
  constexpr int KT = fma_ring_k(BM, BN), LD = KT + 4, STAGES = fma_ring_stages(BM, BN);
  constexpr int A_ROWS = G * BM, B_ROWS = G * BN, STAGE = fma_ring_stage_words(BM, BN);
  // Copies: thread t copies the V words of chunk t % TPR of rows
  // t / TPR + RP n of a stage (A's rows, then B's).
  constexpr int TPR = KT / V, RP = NT / TPR, A_PASSES = A_ROWS / RP, B_PASSES = B_ROWS / RP;
  static_assert(G >= 1 && G * TY * TX == NT && (BM & (BM - 1)) == 0 && (BN & (BN - 1)) == 0,
                "tiles of 16 to 64 a side, whole cells a block");
  static_assert(STAGES >= 2 && STAGE == (A_ROWS + B_ROWS) * LD, "two stages fit");
  static_assert(A_ROWS % RP == 0 && B_ROWS % RP == 0, "whole passes of A and of B");
  extern __shared__ __align__(16) unsigned char fma_ring_memory[];
  float *ring = reinterpret_cast<float *>(fma_ring_memory);

  // Task numbers fit 32 bits (fma_ring_fits).
  const unsigned tiles_i = (unsigned)((p.I + BM - 1) / BM);
  const unsigned tiles_j = (unsigned)((p.J + BN - 1) / BN);
  const unsigned per_group = tiles_i * tiles_j;
  const int64_t tasks = (p.C + G - 1) / G * per_group;
  const int64_t k_steps = (p.K + KT - 1) / KT;
  auto split = [&](int64_t task, int64_t &c0, int64_t &i0, int64_t &j0) {
    const unsigned group = (unsigned)task / per_group, rest = (unsigned)task - group * per_group;
    const unsigned ti = rest / tiles_j;
    c0 = (int64_t)group * G;
    i0 = (int64_t)ti * BM;
    j0 = (int64_t)(rest - ti * tiles_j) * BN;
  };

  // Copy side. A row's place relative to its group's first row is the same
  // for every task, so each pass's offset is worked out once; rows past I or
  // J are copied too where they lie inside the array (the next cell's: only
  // outputs that are not written read them), and nothing past its end.
  const int chunk = threadIdx.x % TPR, first_row = threadIdx.x / TPR;
  int a_offset[A_PASSES], b_offset[B_PASSES];
#pragma unroll
  for (int n = 0; n < A_PASSES; ++n) {
    const int row = first_row + RP * n;
    a_offset[n] = (int)(row / BM * p.a_c + row % BM * p.a_i) + chunk * V;
  }
#pragma unroll
  for (int n = 0; n < B_PASSES; ++n) {
    const int row = first_row + RP * n;
    b_offset[n] = (int)(row / BN * p.b_c + row % BN * p.b_j) + chunk * V;
  }
  const float *const a_end = A + p.C * p.a_c, *const b_end = B + p.C * p.b_c;
  int64_t load_task = blockIdx.x, load_step = 0;
  const float *a_first = A, *b_first = B;
  auto locate = [&](int64_t task) {
    int64_t c0, i0, j0;
    split(task, c0, i0, j0);
    a_first = A + c0 * p.a_c + i0 * p.a_i;
    b_first = B + c0 * p.b_c + j0 * p.b_j;
  };
  const unsigned ring_address = (unsigned)__cvta_generic_to_shared(ring);
  auto load = [&](int stage) {
    const int64_t k0 = load_step * KT;
    const bool in_k = k0 + chunk * V < p.K;
    const unsigned dst = ring_address + 4 * (stage * STAGE + first_row * LD + chunk * V);
    const float *a_from = a_first + k0, *b_from = b_first + k0;
#pragma unroll
    for (int n = 0; n < A_PASSES; ++n) {
      const float *from = a_from + a_offset[n];
      const bool copy = in_k && from < a_end;
      copy_async_n<4 * V>(dst + 4 * RP * n * LD, copy ? from : A, copy ? 4 * V : 0);
    }
#pragma unroll
    for (int n = 0; n < B_PASSES; ++n) {
      const float *from = b_from + b_offset[n];
      const bool copy = in_k && from < b_end;
      copy_async_n<4 * V>(dst + 4 * (A_ROWS + RP * n) * LD, copy ? from : B, copy ? 4 * V : 0);
    }
    next_copy_step(load_step, k_steps, load_task, tasks, locate);
  };

  // Multiply side: this thread's cell of the group and its first rows.
  const int g = threadIdx.x / (TY * TX), ty = threadIdx.x % (TY * TX) / TX, tx = threadIdx.x % TX;
  const int a_at = (g * BM + ty) * LD, b_at = (A_ROWS + g * BN + tx) * LD;
  float sum[TM][TN];
  auto clear = [&] {
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
      for (int q = 0; q < TN; ++q)
        sum[r][q] = 0.0f;
  };
  clear();

  auto multiply = [&](int stage) {
    const float *tile = ring + stage * STAGE;
#pragma unroll
    for (int kk = 0; kk < KT; kk += 4) {
      float4 a[TM];
#pragma unroll
      for (int r = 0; r < TM; ++r)
        a[r] = *reinterpret_cast<const float4 *>(tile + a_at + TY * r * LD + kk);
#pragma unroll
      for (int q = 0; q < TN; ++q) {
        const float4 b = *reinterpret_cast<const float4 *>(tile + b_at + TX * q * LD + kk);
#pragma unroll
        for (int r = 0; r < TM; ++r) {
          sum[r][q] = fmaf(a[r].x, b.x, sum[r][q]);
          sum[r][q] = fmaf(a[r].y, b.y, sum[r][q]);
          sum[r][q] = fmaf(a[r].z, b.z, sum[r][q]);
          sum[r][q] = fmaf(a[r].w, b.w, sum[r][q]);
        }
      }
    }
  };
  auto finish = [&](int64_t task, int) {
    int64_t c0, i0, j0;
    split(task, c0, i0, j0);
    const int64_t rows = p.I - i0 - ty, cols = p.J - j0 - tx;
    if (c0 + g < p.C) {
      float *o = out + (c0 + g) * p.o_c + (i0 + ty) * p.o_i + (j0 + tx) * p.o_j;
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int q = 0; q < TN; ++q)
          if (TY * r < rows && TX * q < cols) {
            float *to = o + TY * r * p.o_i + TX * q * p.o_j;
            *to = p.sum_into ? *to + sum[r][q] : sum[r][q];
          }
    }
    clear();
  };
  run_ring<STAGES>(load_task, tasks, k_steps, locate, load, multiply, finish);
}

/// Dynamic shared memory of fma_ring_kernel<BM, BN, V> (bytes).
template <int BM, int BN>
constexpr size_t fma_ring_shared_bytes() {
  return sizeof(float) * (size_t)fma_ring_stages(BM, BN) * fma_ring_stage_words(BM, BN);
}

/// Whether the FMA ring tile's task numbers and row offsets fit 32 bits.
inline bool fma_ring_fits(const tc_cuda_problem &p) {
  const int64_t limit = (int64_t)1 << 30;
  return (p.C + 1) * ((p.I + 15) / 16) * ((p.J + 15) / 16) < limit && 16 * p.a_c < limit &&
         16 * p.b_c < limit;
}

/// Launches fma_ring_kernel<BM, BN, V> with one resident wave of blocks
/// striding over the tasks, V the widest copy (in words) every row's start
/// aligns to: 4 where K is a multiple of 4, 2 where it is even, else 1.
template <int BM, int BN>
tc_err fma_ring_launch(const tc_cuda_problem &p, const float *A, const float *B, float *out,
                       cudaStream_t stream) {
  constexpr int G = fma_ring_cells(BM, BN);
  constexpr size_t shared = fma_ring_shared_bytes<BM, BN>();
  auto aligned = [&](int64_t words) {
    return p.a_i % words == 0 && p.a_c % words == 0 && p.b_j % words == 0 && p.b_c % words == 0 &&
           reinterpret_cast<uintptr_t>(A) % (4 * words) == 0 &&
           reinterpret_cast<uintptr_t>(B) % (4 * words) == 0;
  };
  auto kernel = aligned(4)   ? fma_ring_kernel<BM, BN, 4>
                : aligned(2) ? fma_ring_kernel<BM, BN, 2>
                             : fma_ring_kernel<BM, BN, 1>;
  const int64_t tasks = (p.C + G - 1) / G * ((p.I + BM - 1) / BM) * ((p.J + BN - 1) / BN);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, kFmaRingThreads, shared, tasks, "FMA ring tile", &blocks));
  kernel<<<blocks, kFmaRingThreads, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

/// Side of the FMA ring tile for a dimension of n rows: 16 up to 16 rows;
/// beyond, 64 where its tiles cover n with at most 15% more rows than
/// tiles of 32 (fewer tiles re-read the other side less), else 32.
inline int fma_ring_side(int64_t n) {
  auto cover = [n](int64_t side) { return (n + side - 1) / side * side; };
  return n <= 16 ? 16 : cover(64) * 100 <= cover(32) * 115 ? 64 : 32;
}

/// Launches the FMA ring tile of side bm by the side of n columns.
template <int BM>
tc_err fma_ring_launch_rows(const tc_cuda_problem &p, const float *A, const float *B, float *out,
                            cudaStream_t stream) {
  switch (fma_ring_side(p.J)) {
  case 16:
    return fma_ring_launch<BM, 16>(p, A, B, out, stream);
  case 32:
    return fma_ring_launch<BM, 32>(p, A, B, out, stream);
  default:
    return fma_ring_launch<BM, 64>(p, A, B, out, stream);
  }
}

/// Runs the FMA ring tile with the sides fma_ring_side picks for L and R.
inline tc_err fma_ring_run(const tc_cuda_problem &p, const float *A, const float *B, float *out,
                           cudaStream_t stream) {
  switch (fma_ring_side(p.I)) {
  case 16:
    return fma_ring_launch_rows<16>(p, A, B, out, stream);
  case 32:
    return fma_ring_launch_rows<32>(p, A, B, out, stream);
  default:
    return fma_ring_launch_rows<64>(p, A, B, out, stream);
  }
}

} // namespace tc_cuda

#endif
