/* contract_cuda_mma_strips: the strip tile, the FieldField tensor-core tile
 * (DMMA, double, k contiguous) for cells too big for the slab tile whose rows
 * the TMA tensor maps cannot take (odd K: 64 x 64 x 375 and x 1125 at the
 * presets): every row's strip of a k chunk is one 1-D bulk copy, issued by its
 * own thread. Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_MMA_STRIPS_CUH
#define TC_CONTRACT_CUDA_MMA_STRIPS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

#include "contract_cuda_bulk.cuh"
#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"

namespace tc_cuda {

/// The strip tile's fixed shape: a 64 x 64 output tile per block of 8 warps
/// (2 x 4 warps of 32 x 16 pieces), k in chunks of 64 words, 3 ring stages.
constexpr int kStripRows = 64, kStripChunk = 64, kStripStages = 3;
/// Shared pitch of a strip (words): a chunk, a word of alignment shift, and
/// room for the row swizzle; 2 mod 4 (see strip_position).
constexpr int kStripPitch = kStripChunk + 6;
/// Words of a stage: A's 64 strips, then B's.
constexpr int kStripStageWords = 2 * kStripRows * kStripPitch + 2;

/// Where strip l of a stage starts (16-byte aligned: every term even). With
/// odd K a strip's first k lands one word in on every other row; rows 2 and
/// 3 of each 4 are moved 2 more words, so that the 4 rows a quarter-warp's
/// 8-byte fragment loads touch (word 4t + v of each) start in distinct banks
/// modulo 4 words and the loads do not conflict.
__device__ __forceinline__ int strip_position(int l) {
  return l * kStripPitch + 2 * ((l >> 1) & 1);
}

/// Strip tile (k-contiguous A and B, any strides and K): a block of 8 warps
/// takes tasks (cell, 64-row tile, 64-column tile) in a grid-stride loop and
/// walks each task's k in chunks of 64 words through a ring of 3 stages. In a
/// stage, threads 0..63 each stage one row of A's tile and threads 64..127 one
/// of B's: the row's strip of the chunk is one 1-D bulk copy (from the 16-byte
/// boundary at or below its first word), announced on the stage's full
/// mbarrier by the same thread; a word the engine cannot move (at an array's
/// ends) is stored by the thread before it arrives. Many threads issuing
/// keeps the copy engine busy (one thread issuing a row at a time was 2-4x too
/// slow). The ring runs across task boundaries; a stage is
/// refilled after the block has synchronized past it. Each warp's 32 x 16
/// piece is warp_product over the chunk (8-byte loads; zeros past K, masked
/// on the last chunk only; rows past the cell read the tile's last row).
__global__ void __launch_bounds__(256, 1)
    mma_strips_kernel(tc_cuda_problem p, const double *__restrict__ A,
                      const double *__restrict__ B, double *__restrict__ out) {
  extern __shared__ __align__(16) unsigned char strips_memory[];
  __shared__ uint64_t full[kStripStages];
  double *ring = reinterpret_cast<double *>(strips_memory);
  const int L = (int)p.I, R = (int)p.J, K = (int)p.K;
  const int64_t tiles_i = (L + kStripRows - 1) / kStripRows,
                tiles_j = (R + kStripRows - 1) / kStripRows;
  const int64_t tasks = p.C * tiles_i * tiles_j;
  const int chunks = (K + kStripChunk - 1) / kStripChunk;
  const int64_t a_total = (p.C - 1) * p.a_c + (L - 1) * p.a_i + K,
                b_total = (p.C - 1) * p.b_c + (R - 1) * p.b_j + K;
  auto locate = [&](int64_t task, int64_t &c, int &i0, int &j0) {
    c = task / (tiles_i * tiles_j);
    const int64_t rest = task - c * tiles_i * tiles_j;
    i0 = (int)(rest / tiles_j) * kStripRows;
    j0 = (int)(rest % tiles_j) * kStripRows;
  };

  // Copy side (threads 0..127): this thread's row of each task, chunk by chunk.
  const int strip = threadIdx.x;
  const bool issuer = strip < 2 * kStripRows, of_a = strip < kStripRows;
  const double *array = of_a ? A : B;
  const int64_t total = of_a ? a_total : b_total;
  int64_t issue_task = blockIdx.x, issue_row_start = -1;
  int issue_chunk = 0, issue_stage = 0;
  auto find_row = [&] { // start of this thread's row in issue_task (-1: none)
    int64_t c;
    int i0, j0;
    locate(issue_task, c, i0, j0);
    const int r = of_a ? i0 + strip : j0 + strip - kStripRows;
    issue_row_start = r < (of_a ? L : R) ? (of_a ? c * p.a_c + r * p.a_i : c * p.b_c + r * p.b_j)
                                         : -1;
  };
  auto issue = [&] { // one chunk, by every issuer
    if (issue_task >= tasks)
      return;
    uint64_t *barrier = &full[issue_stage];
    if (issue_row_start < 0) {
      bulk_expect(barrier, 0);
    } else {
      const int64_t start = issue_row_start + (int64_t)issue_chunk * kStripChunk;
      const int count = min(kStripChunk, K - issue_chunk * kStripChunk);
      const bulk_run<double> r = plan_run(array, start, start + count, total);
      double *buffer = ring + issue_stage * kStripStageWords + strip_position(strip);
      (void)finish_run(buffer, array, r, 0, 1); // before the arrival that publishes them
      bulk_expect(barrier, r.bytes);
      bulk_copy(buffer, array, r, barrier);
    }
    issue_stage = issue_stage + 1 == kStripStages ? 0 : issue_stage + 1;
    if (++issue_chunk == chunks) {
      issue_chunk = 0;
      issue_task += gridDim.x;
      if (issue_task < tasks)
        find_row();
    }
  };
  if (threadIdx.x == 0)
    bulk_init(full, kStripStages, 2 * kStripRows);
  __syncthreads();
  if (issuer && issue_task < tasks) {
    find_row();
    for (int s = 0; s < kStripStages; ++s)
      issue();
  }

  // Multiply side: warp (wm, wn) owns rows 32 wm.. and columns 16 wn.. of the tile.
  const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4;
  const int group = threadIdx.x % 32 / 4, member = threadIdx.x % 4;
  const int piece[2] = {4 * member, 4 * member + 2};
  int stage = 0;
  uint32_t phase = 0;
  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    int64_t c;
    int i0, j0;
    locate(task, c, i0, j0);
    const int rows = min(kStripRows, L - i0), cols = min(kStripRows, R - j0);
    // This lane's fragment rows in a stage: strip position and the row's
    // alignment shift (the same for every chunk: chunks are even).
    int a_row[2][2], b_row[2];
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int l = min(32 * wm + 16 * m + 8 * h + group, rows - 1);
        a_row[m][h] = strip_position(l) + run_shift(A, c * p.a_c + (i0 + l) * p.a_i);
      }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const int l = min(16 * wn + 8 * n + group, cols - 1);
      b_row[n] = strip_position(kStripRows + l) + run_shift(B, c * p.b_c + (j0 + l) * p.b_j);
    }
    double acc[2][2][4];
    clear_piece(acc);
    for (int chunk = 0; chunk < chunks; ++chunk) {
      bulk_wait(&full[stage], phase);
      const double *base = ring + stage * kStripStageWords;
      const int valid = K - chunk * kStripChunk;
      if (valid >= kStripChunk)
        warp_product<false, false>(acc, base, 16, a_row, base, 16, b_row, piece, 0,
                                   kStripChunk / 16, kStripChunk);
      else
        warp_product<true, false>(acc, base, 16, a_row, base, 16, b_row, piece, 0,
                                  (valid + 15) / 16, valid);
      __syncthreads(); // every warp is done with this stage: refill it
      if (issuer)
        issue();
      if (++stage == kStripStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    for_each_output(acc, 32 * wm, 16 * wn, rows, cols, [&](int i, int j, double value) {
      double *o = out + c * p.o_c + (i0 + i) * p.o_i + (j0 + j) * p.o_j;
      *o = p.sum_into ? *o + value : value;
    });
  }
}

/// Launches the strip tile (k-contiguous A and B): one block per
/// multiprocessor, never more than there are tasks.
inline tc_err mma_strips_launch(const tc_cuda_problem &p, const double *A, const double *B,
                                double *out, cudaStream_t stream) {
  constexpr size_t shared = sizeof(double) * kStripStages * kStripStageWords;
  const int64_t tasks =
      p.C * ((p.I + kStripRows - 1) / kStripRows) * ((p.J + kStripRows - 1) / kStripRows);
  unsigned blocks = 0;
  TC_CALL(resident_wave(mma_strips_kernel, 256, shared, tasks, "strip tile", &blocks));
  mma_strips_kernel<<<blocks, 256, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
