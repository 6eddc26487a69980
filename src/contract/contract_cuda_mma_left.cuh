/* contract_cuda_mma_left: the FieldField tile on FP64 tensor cores (DMMA,
 * m16n8k16 f64, sm_90) for layout left, where the cell index is fastest and
 * no matrix of a cell has a unit-stride dimension, and its launcher. Private
 * to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_MMA_LEFT_CUH
#define TC_CONTRACT_CUDA_MMA_LEFT_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"
#include "tc_cuda_mma.cuh"

namespace tc_cuda {

/// Shared-memory layout of the layout-left tile: each cell's rows are kept
/// [row][k] at an odd row pitch LD of 1 or 5 mod 16 words, so the 8-byte
/// fragment loads of a warp (rows g, words 4t + v) fall in distinct bank
/// pairs (two wavefronts), and the cells of a stage follow each other at a
/// pitch of 4 (LD = 1 mod 16) or 2 (LD = 5 mod 16) mod 16 words, so the
/// copies of a warp (8 cells x 4 rows, or 4 x 8, at one k) take two
/// wavefronts too.
__host__ __device__ constexpr int left_cell_pitch(int rows, int LD) {
  return rows * LD + (((LD % 16 == 1 ? 4 : 2) - rows * LD) % 16 + 16) % 16;
}

/// Shared-memory layout of the layout-left tile's finished outputs, 16 rows
/// at a time: each cell's 16 x BN slice is kept [i][j] at a row pitch of
/// BN + 8 words (8 mod 16: the 16-byte stores of a quarter warp, rows g and
/// g+1 at 4 word pairs each, fall in distinct banks), and the cells follow
/// each other at a pitch of 16 / G mod 16 words, so that the block's reads
/// (G cells x 32 / G consecutive outputs a half warp) take one wavefront
/// each.
__host__ __device__ constexpr int left_out_row(int BN) { return BN + 8; }
__host__ __device__ constexpr int left_out_pitch(int BM, int BN, int G) {
  return BM * left_out_row(BN) + ((16 / G - BM * left_out_row(BN)) % 16 + 16) % 16;
}

/// The layout-left tensor-core tile. A block of G * WM * WN warps takes G
/// adjacent cells (a group) and a BM x BN output tile of each (BM = 16 WM FM,
/// BN = 8 WN FN); warp (cell, wm, wn) computes rows 16 FM wm.. and columns
/// 8 FN wn.. of its cell's tile with FM x FN DMMA accumulators. In layout
/// left the G cells' words of one (row, k) are adjacent in memory, so the
/// block reads A and B as runs of G words: thread t copies cell t % G of the
/// tile's rows t / G, t / G + NT / G, ... (A's BM rows, then B's BN), one
/// 8-byte cp.async per word (a warp: 4 rows x 8 cells, or 8 x 4, at one k),
/// KT words of k per ring stage at row pitch LD (left_cell_pitch), STAGES
/// stages deep, the ring (copy_ring) running across task boundaries as in
/// mma_kernel. Tasks are (group, row tile, column tile), group-major, so
/// blocks that run at once share the lines of neighbouring groups in L2
/// (copy_async_n has L2 fetch those lines whole). Words of k past K are zero
/// in shared memory; rows past I or J and cells past C are not copied, and
/// only their own outputs, which are not written, see what their slots hold.
/// A finished tile goes through shared memory (left_out_pitch), 16 rows at a
/// time, in the ring stage just multiplied (free until the next ring step
/// refills it; more shared memory would cost L1 the room its copies in
/// flight need), so that the block writes it with the G cells of each output
/// adjacent, runs of G words, instead of each warp writing its cell's
/// outputs a word a line (8-byte writes made L2's request rate the limit).
/// Every output is one warp's DMMA sums over k steps in order, whatever the
/// tile: all tiles give bitwise the same results.
template <int G, int WM, int WN, int FM, int FN, int KT, int LD, int STAGES>
__global__ void __launch_bounds__(G * WM * WN * 32, 1)
    mma_left_kernel(tc_cuda_problem p, const double *__restrict__ A,
                    const double *__restrict__ B, double *__restrict__ out) {
  constexpr int NT = G * WM * WN * 32, BM = WM * FM * 16, BN = WN * FN * 8, RP = NT / G;
  constexpr int A_PITCH = left_cell_pitch(BM, LD), B_PITCH = left_cell_pitch(BN, LD);
  constexpr int TILE = G * (A_PITCH + B_PITCH);
  constexpr int OUT_ROW = left_out_row(BN), OUT_PITCH = left_out_pitch(16, BN, G);
  static_assert(G * OUT_PITCH <= TILE, "a 16-row output slice fits in a ring stage");
  constexpr int PASSES = (BM + BN + RP - 1) / RP;
  static_assert(KT % 16 == 0, "k tile: a multiple of 16");
  static_assert(LD > KT && (LD % 16 == 1 || LD % 16 == 5), "row pitch: 1 or 5 mod 16");
  extern __shared__ __align__(16) unsigned char mma_memory[];
  double *ring = reinterpret_cast<double *>(mma_memory);

  const int64_t tiles_i = (p.I + BM - 1) / BM, tiles_j = (p.J + BN - 1) / BN;
  const int64_t per_group = tiles_i * tiles_j, tasks = (p.C + G - 1) / G * per_group;
  const int64_t k_steps = (p.K + KT - 1) / KT;

  auto split = [&](int64_t task, int64_t &c0, int64_t &i0, int64_t &j0) {
    const int64_t group = task / per_group, rest = task - group * per_group;
    const int64_t ti = rest / tiles_j;
    c0 = group * G;
    i0 = ti * BM;
    j0 = (rest - ti * tiles_j) * BN;
  };

  // Copy side: this thread's cell and rows, planned once per task.
  const int copy_cell = threadIdx.x % G, copy_row = threadIdx.x / G;
  int64_t load_task = blockIdx.x, load_step = 0;
  const double *a_from = A, *b_from = B; // (cell, the tile's first row, k = 0)
  int a_rows = 0, b_rows = 0;            // rows of this thread's cell to copy
  auto locate = [&](int64_t task) {
    int64_t c0, i0, j0;
    split(task, c0, i0, j0);
    const bool cell = c0 + copy_cell < p.C;
    a_from = A + (c0 + copy_cell) * p.a_c + i0 * p.a_i;
    b_from = B + (c0 + copy_cell) * p.b_c + j0 * p.b_j;
    a_rows = cell ? (int)min((int64_t)BM, p.I - i0) : 0;
    b_rows = cell ? (int)min((int64_t)BN, p.J - j0) : 0;
  };
  // KT words of k of one row, from `from` (word k0) on at `stride`, to the
  // shared address dst; words past K are written as zeros. Walking the source
  // pointer keeps a copy at three instructions.
  auto copy_row_words = [&](unsigned dst, const double *from, int64_t stride, int64_t k0) {
    if (k0 + KT <= p.K) {
#pragma unroll
      for (int k = 0; k < KT; ++k, from += stride)
        copy_async_n<8, true>(dst + 8 * k, from, 8);
    } else {
#pragma unroll
      for (int k = 0; k < KT; ++k, from += stride)
        copy_async_n<8, true>(dst + 8 * k, k0 + k < p.K ? from : A, k0 + k < p.K ? 8 : 0);
    }
  };
  const unsigned ring_address = (unsigned)__cvta_generic_to_shared(ring);
  auto load = [&](int stage) {
    const int64_t k0 = load_step * KT;
    const unsigned a_tile = ring_address + 8 * (stage * TILE + copy_cell * A_PITCH);
    const unsigned b_tile = ring_address + 8 * (stage * TILE + G * A_PITCH + copy_cell * B_PITCH);
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass) {
      const int row = copy_row + pass * RP;
      if (row < BM) {
        if (row < a_rows)
          copy_row_words(a_tile + 8 * row * LD, a_from + row * p.a_i + k0 * p.a_k, p.a_k, k0);
      } else if (row - BM < b_rows) {
        copy_row_words(b_tile + 8 * (row - BM) * LD, b_from + (row - BM) * p.b_j + k0 * p.b_k,
                       p.b_k, k0);
      }
    }
    next_copy_step(load_step, k_steps, load_task, tasks, locate);
  };

  // Multiply side: warp (cell, wm, wn), its rows at pitch LD in the cell's
  // tiles (warp_product).
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int cell = warp / (WM * WN), wm = warp % (WM * WN) / WN, wn = warp % WN;
  const int group = lane / 4, member = lane % 4;
  int a_row[FM][2], b_row[FN];
#pragma unroll
  for (int m = 0; m < FM; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      a_row[m][h] = cell * A_PITCH + (16 * (FM * wm + m) + 8 * h + group) * LD;
#pragma unroll
  for (int n = 0; n < FN; ++n)
    b_row[n] = G * A_PITCH + cell * B_PITCH + (8 * (FN * wn + n) + group) * LD;
  const int piece[2] = {4 * member, 4 * member + 2};
  double acc[FM][FN][4];
  clear_piece(acc);

  auto multiply = [&](int stage) {
    const double *tile = ring + stage * TILE;
    warp_product<false, false>(acc, tile, 16, a_row, tile, 16, b_row, piece, 0, KT / 16, 0);
  };
  auto finish = [&](int64_t task, int stage) {
    // The warps of row block w park their cells' 16-row slices (rows past I,
    // columns past J and cells past C too: never read) in the stage just
    // multiplied, then the block writes the G cells' outputs; the next ring
    // step syncs before it refills the stage.
    double *finished = ring + stage * TILE;
    int64_t c0, i0, j0;
    split(task, c0, i0, j0);
    const int rows = (int)min((int64_t)BM, p.I - i0), cols = (int)min((int64_t)BN, p.J - j0);
    const int out_cell = threadIdx.x % G;
#pragma unroll
    for (int w = 0; w < WM; ++w)
#pragma unroll
      for (int m = 0; m < FM; ++m) {
        __syncthreads(); // the stage is read (first slice), or the last slice written
        if (wm == w) {
          double *mine = finished + cell * OUT_PITCH + 8 * FN * wn;
#pragma unroll
          for (int n = 0; n < FN; ++n)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              *reinterpret_cast<double2 *>(mine + (8 * h + group) * OUT_ROW + 8 * n +
                                           2 * member) =
                  make_double2(acc[m][n][2 * h], acc[m][n][2 * h + 1]);
        }
        __syncthreads();
        const int first = 16 * (FM * w + m);
        if (c0 + out_cell < p.C && first < rows) {
          double *o = out + (c0 + out_cell) * p.o_c + (i0 + first) * p.o_i + j0 * p.o_j;
          const double *from = finished + out_cell * OUT_PITCH;
          for (int e = threadIdx.x / G; e < 16 * BN; e += NT / G) {
            const int i = e / BN, j = e % BN;
            if (first + i < rows && j < cols) {
              double *to = o + i * p.o_i + j * p.o_j;
              const double value = from[i * OUT_ROW + j];
              *to = p.sum_into ? *to + value : value;
            }
          }
        }
      }
    clear_piece(acc);
  };
  run_ring<STAGES>(load_task, tasks, k_steps, locate, load, multiply, finish);
}

/// Dynamic shared memory of mma_left_kernel<G, WM, WN, FM, FN, KT, LD,
/// STAGES> (bytes).
template <int G, int WM, int WN, int FM, int FN, int LD, int STAGES>
constexpr size_t mma_left_shared_bytes() {
  return sizeof(double) * STAGES * G *
         (size_t)(left_cell_pitch(16 * WM * FM, LD) + left_cell_pitch(8 * WN * FN, LD));
}

/// Launches mma_left_kernel with one resident wave of blocks striding over
/// the tasks.
template <int G, int WM, int WN, int FM, int FN, int KT, int LD, int STAGES>
tc_err mma_left_launch(const tc_cuda_problem &p, const double *A, const double *B, double *out,
                       cudaStream_t stream) {
  constexpr int BM = 16 * WM * FM, BN = 8 * WN * FN, NT = G * WM * WN * 32;
  constexpr size_t shared = mma_left_shared_bytes<G, WM, WN, FM, FN, LD, STAGES>();
  auto kernel = mma_left_kernel<G, WM, WN, FM, FN, KT, LD, STAGES>;
  const int64_t tasks = (p.C + G - 1) / G * ((p.I + BM - 1) / BM) * ((p.J + BN - 1) / BN);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, NT, shared, tasks, "layout-left tensor-core tile", &blocks));
  kernel<<<blocks, NT, shared, stream>>>(p, A, B, out);
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
