/* contract_cuda_mma_slabs: the slab tile, the FieldField tensor-core tile
 * (DMMA, double, dense layout right) for cells too big for two stages of the
 * whole-cell tile but small enough for one cell and a few slabs of the next
 * in shared memory (64 x 64 x 125 at the presets: 128 KB a cell), whatever
 * the parity of K, and its launcher. Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_MMA_SLABS_CUH
#define TC_CONTRACT_CUDA_MMA_SLABS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

#include "contract_cuda_bulk.cuh"
#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"

namespace tc_cuda {

/// Most slots in a slab tile's ring (an mbarrier each).
constexpr int kMaxSlabSlots = 32;

/// The slab tile's plan: a cell's A (L rows) and B (R rows) cut into slabs of
/// `rows` rows (a_slabs + b_slabs of them, each one contiguous run); a ring of
/// `slots` slots of slot_words words; pieces_i x pieces_j warp pieces of
/// 32 x 8NB outputs per cell.
struct slabs_shape {
  int rows, a_slabs, b_slabs, slots, slot_words, pieces_i, pieces_j;
};

/// Slab tile: a block of W warps takes whole cells in turn (cell
/// blockIdx.x + n gridDim.x for n = 0, 1, ...). Each cell's A and B are cut
/// into slabs of shape.rows rows; a slab is one contiguous run, which the bulk
/// copy engine stages into a slot of the ring with one instruction (a slot's
/// mbarrier says when it has landed; the <= 1 word at either end of an array
/// is copied by threads, as in the whole-cell tile). The block's slabs fill
/// the slots in turn, so thread 0 keeps the ring full: while the block
/// multiplies a cell, the next cell's first slabs are in flight, and when it
/// is done its slots take the slabs that follow. Rows are found slab by slab,
/// so a cell's slabs need not be adjacent in the ring. Each warp computes
/// 32 x 8NB pieces of the cell with warp_product, reading rows as the
/// whole-cell tile does (8-byte loads, conflict-free when K is odd; rows past
/// the cell read its last row; zeros past K, masked on the last k step only)
/// and stores them directly.
template <int W, int NB>
__global__ void __launch_bounds__(W * 32, 1)
    mma_slabs_kernel(tc_cuda_problem p, const double *__restrict__ A,
                     const double *__restrict__ B, double *__restrict__ out, slabs_shape shape) {
  extern __shared__ __align__(16) unsigned char slabs_memory[];
  __shared__ uint64_t barriers[kMaxSlabSlots];
  __shared__ int slab_word[kMaxSlabSlots]; // the current cell's slab v starts at ring word
  double *ring = reinterpret_cast<double *>(slabs_memory);
  const int L = (int)p.I, R = (int)p.J, K = (int)p.K, rows = shape.rows, slots = shape.slots;
  const int per_cell = shape.a_slabs + shape.b_slabs;
  const int64_t a_cell = (int64_t)L * K, b_cell = (int64_t)R * K, o_cell = (int64_t)L * R;
  // Slab v of cell c: rows [first, first + count) of A (v < a_slabs) or of B.
  auto slab_start = [&](int64_t c, int v) -> int64_t {
    return v < shape.a_slabs ? c * a_cell + (int64_t)v * rows * K
                             : c * b_cell + (int64_t)(v - shape.a_slabs) * rows * K;
  };
  auto slab_run = [&](int64_t c, int v) {
    const bool is_a = v < shape.a_slabs;
    const int first = (is_a ? v : v - shape.a_slabs) * rows;
    const int64_t start = slab_start(c, v);
    return plan_run(is_a ? A : B, start, start + (int64_t)min(rows, (is_a ? L : R) - first) * K,
                    p.C * (is_a ? a_cell : b_cell));
  };
  // Thread 0 issues the block's slabs in the order they are used (cell by
  // cell, v = 0 .. per_cell - 1), each into the next slot of the ring.
  int64_t issue_cell = blockIdx.x;
  int issue_v = 0, issue_slot = 0;
  auto issue = [&](int count) { // thread 0 only
    for (; count > 0 && issue_cell < p.C; --count) {
      const bulk_run<double> r = slab_run(issue_cell, issue_v);
      bulk_expect(&barriers[issue_slot], r.bytes);
      bulk_copy(ring + issue_slot * shape.slot_words, issue_v < shape.a_slabs ? A : B, r,
                &barriers[issue_slot]);
      issue_slot = issue_slot + 1 == slots ? 0 : issue_slot + 1;
      if (++issue_v == per_cell) {
        issue_v = 0;
        issue_cell += gridDim.x;
      }
    }
  };
  if (threadIdx.x == 0) {
    bulk_init(barriers, slots);
    issue(slots);
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, group = threadIdx.x % 32 / 4, member = threadIdx.x % 4;
  const int steps = (K + 15) / 16, full = K / 16, pieces = shape.pieces_i * shape.pieces_j;
  const int piece[2] = {4 * member, 4 * member + 2};
  int first_slot = 0;  // the current cell's slab 0
  uint32_t phases = 0; // bit s: the parity of slot s's next phase
  for (int64_t c = blockIdx.x; c < p.C; c += gridDim.x) {
    for (int v = 0, s = first_slot; v < per_cell; ++v, s = s + 1 == slots ? 0 : s + 1) {
      bulk_wait(&barriers[s], (phases >> s) & 1);
      phases ^= 1u << s;
      if (threadIdx.x == v)
        slab_word[v] = s * shape.slot_words +
                       run_shift(v < shape.a_slabs ? A : B, slab_start(c, v));
    }
    // Only an array's first and last words can be left to the threads.
    if (c == 0 || c == p.C - 1)
      for (int v = 0, s = first_slot; v < per_cell; ++v, s = s + 1 == slots ? 0 : s + 1)
        finish_run(ring + s * shape.slot_words, v < shape.a_slabs ? A : B, slab_run(c, v));
    __syncthreads(); // slab_word and the threads' words are in
    // Where row r of the cell's A (v0 = 0) or B (v0 = a_slabs) starts in the ring.
    auto row_word = [&](int r, int v0) { return slab_word[v0 + r / rows] + r % rows * K; };
    for (int item = warp; item < pieces; item += W) {
      const int i0 = 32 * (item / shape.pieces_j), j0 = 8 * NB * (item % shape.pieces_j);
      int a_row[2][2], b_row[NB];
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          a_row[m][h] = row_word(min(i0 + 16 * m + 8 * h + group, L - 1), 0);
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        b_row[nb] = row_word(min(j0 + 8 * nb + group, R - 1), shape.a_slabs);
      double acc[2][NB][4];
      clear_piece(acc);
      warp_product<false, false>(acc, ring, 16, a_row, ring, 16, b_row, piece, 0, full, K);
      warp_product<true, false>(acc, ring, 16, a_row, ring, 16, b_row, piece, full, steps, K);
      for_each_output(acc, i0, j0, L, R, [&](int i, int j, double value) {
        double *o = out + c * o_cell + i * R + j;
        *o = p.sum_into ? *o + value : value;
      });
    }
    __syncthreads(); // every warp is done with this cell's slots and slab_word
    if (threadIdx.x == 0)
      issue(per_cell);
    first_slot = (first_slot + per_cell) % slots;
  }
}

/// Plans the slab tile for a dense layout-right FieldField product with
/// slabs of `rows` rows (a multiple of 8, so that the 8 rows of a fragment
/// share a slab) and pieces of 32 x 8NB: false unless a cell and at least
/// one slab of the next fit in `shared_limit` bytes (at most kMaxSlabSlots
/// slots).
inline bool plan_slabs(const tc_cuda_problem &p, size_t shared_limit, int rows, int nb,
                       slabs_shape &shape) {
  shape.rows = rows;
  shape.a_slabs = (int)((p.I + rows - 1) / rows);
  shape.b_slabs = (int)((p.J + rows - 1) / rows);
  // A run's copy may start up to a word before the run and end a word past it.
  const int64_t words = ((int64_t)rows * p.K + bulk_slack<double> + 1) / 2 * 2;
  const int64_t slot_bytes = words * (int64_t)sizeof(double);
  const int64_t slots = std::min<int64_t>(kMaxSlabSlots, (int64_t)shared_limit / slot_bytes);
  if (slots < shape.a_slabs + shape.b_slabs + 1)
    return false;
  shape.slots = (int)slots;
  shape.slot_words = (int)words;
  shape.pieces_i = (int)((p.I + 31) / 32);
  shape.pieces_j = (int)((p.J + 8 * nb - 1) / (8 * nb));
  return true;
}

/// Launches the slab tile with a planned shape: one block per multiprocessor
/// (never more than there are cells).
template <int W, int NB>
tc_err mma_slabs_launch(const tc_cuda_problem &p, const slabs_shape &shape, const double *A,
                        const double *B, double *out, cudaStream_t stream) {
  const size_t shared = (size_t)shape.slots * shape.slot_words * sizeof(double);
  auto kernel = mma_slabs_kernel<W, NB>;
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, W * 32, shared, p.C, "slab tile", &blocks));
  kernel<<<blocks, W * 32, shared, stream>>>(p, A, B, out, shape);
  return TC_SUCCESS;
}

/// Blocks of the slab tile: 8 warps of 32 x 16 pieces.
constexpr int kSlabWarps = 8, kSlabColumnBlocks = 2;

/// The slab tile's plan for p (see mma_slabs_run); *fits says whether it
/// applies.
inline tc_err mma_slabs_plan(const tc_cuda_problem &p, slabs_shape &shape, bool *fits) {
  *fits = false;
  if (!cells_contiguous(p))
    return TC_SUCCESS;
  device_limits limits = {};
  TC_CALL(current_device_limits(&limits));
  // The system's share of a block, and the kernel's barriers and slab_word.
  constexpr size_t reserved = 1024 + (sizeof(uint64_t) + sizeof(int)) * kMaxSlabSlots;
  const size_t limit = (size_t)limits.shared_per_block_optin - reserved;
  for (int rows = 32; rows >= 8 && !*fits; rows /= 2)
    *fits = plan_slabs(p, limit, rows, kSlabColumnBlocks, shape);
  return TC_SUCCESS;
}

/// Runs the slab tile where it applies (dense layout right; a cell and one
/// slab of the next fit in a block's shared memory); *ran says whether it
/// did. Shipped form: 8 warps of 32 x 16 pieces, slabs of 32 rows, or of 16
/// or 8 where 32 leave no room for a slab of the next cell. Measured on an
/// H200 at 64 x 64 x 125: slabs of 32 rows 0.280 ms, 64 rows
/// 0.288, 16 rows 0.292, 8 rows 0.371; 4 warps of 32 x 32 pieces 0.323.
inline tc_err mma_slabs_run(const tc_cuda_problem &p, const double *A, const double *B,
                            double *out, cudaStream_t stream, bool *ran) {
  slabs_shape shape;
  TC_CALL(mma_slabs_plan(p, shape, ran));
  if (*ran)
    TC_CALL((mma_slabs_launch<kSlabWarps, kSlabColumnBlocks>(p, shape, A, B, out, stream)));
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
