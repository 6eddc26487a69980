/* contract_cuda: the CUDA backend of the contraction library: maps each of the
 * nine kernels onto the batched product of contract_cuda_kernels.cuh, picks
 * launch shapes and the AUTO variant, checks every launch, and defines the
 * plain C table tc_contract_backend_cuda. */
#include <cuda_runtime.h>

#include <algorithm>

extern "C" {
#include "tc_contract_backend.h"
}

#include "contract_cuda_kernels.cuh"
#include "contract_cuda_vendor.h"
#include "contract_cuda_fma_ring.cuh"
#include "contract_cuda_mma.cuh"
#include "contract_cuda_lanes.cuh"
#include "contract_cuda_mma_left.cuh"
#include "contract_cuda_mma_slabs.cuh"
#include "contract_cuda_mma_strips.cuh"
#include "contract_cuda_mma_tma.cuh"
#include "contract_cuda_rows.cuh"

namespace {

constexpr int kBlockThreads = 256;
/// Shared memory the slicing kernels may take per block (bytes).
constexpr int64_t kSliceSharedBytes = 32 * 1024;
/// Largest R a slicing block can hold: one thread per right field.
constexpr int64_t kSliceMaxRightFields = 1024;
/// Longest contraction TEAM_PACKED packs (a group of at most 16 lanes).
constexpr int64_t kPackedMaxLength = 16;
/// Longest contraction STAGED takes (a tile holds 2048 words of A per block).
constexpr int64_t kStagedMaxLength = 2048;
/// Largest TEAM_DEPTH2 team (D1*D2 threads in one block).
constexpr int64_t kMaxTeam = 1024;
/// AUTO's thresholds (see cuda_choose).
constexpr int64_t kFlatFieldFieldMaxLength = 24;
/// Fields of the larger side from which double FieldField products with at
/// most 8 fields on the other side run cuBLAS (see cuda_choose).
constexpr int64_t kVendorMinFields = 16;
/// Fields on each side past which float FieldField products in layout right
/// run cuBLAS SGEMM rather than the FMA ring tile (see cuda_choose).
constexpr int64_t kFloatTileMaxFields = 16;
constexpr int64_t kFlatDataFieldMaxLength = 8;
constexpr int64_t kLongContraction = 1024;
constexpr int64_t kLongDataFieldLeft = 1536;

/// Strides (cell, row, k) of a logical (C, rows, P, D1, D2) array with K =
/// P*D1*D2 collapsed as described in tc_cuda_problem.
void array_strides(tc_layout layout, int64_t C, int64_t rows, int64_t K, int64_t &s_c,
                   int64_t &s_row, int64_t &s_k) {
  if (layout == TC_LAYOUT_RIGHT) {
    s_c = rows * K;
    s_row = K;
    s_k = 1;
  } else {
    s_c = 1;
    s_row = C;
    s_k = C * rows;
  }
}

/// The batched-product view of a validated shape; A and B say which of the
/// caller's arrays play the roles of A and B.
tc_cuda_problem make_problem(const tc_contraction *s, const void *left, const void *right,
                             const void *&A, const void *&B, bool &broadcast) {
  tc_cuda_problem p = {};
  const int64_t C = s->num_cells, K = tc_contraction_length(s);
  const int64_t T = s->dim1 * s->dim2;
  const bool is_left = s->layout == TC_LAYOUT_LEFT;
  p.C = C;
  p.K = K;
  p.output_left = is_left;
  p.sum_into = s->sum_into;
  p.b_div = 1;
  p.b_mod = K;
  broadcast = false;
  int64_t unused;
  if (tc_kernel_is_field_field(s->kernel)) {
    p.I = s->num_left_fields;
    p.J = s->num_right_fields;
    A = left;
    B = right;
    array_strides(s->layout, C, p.I, K, p.a_c, p.a_i, p.a_k);
    array_strides(s->layout, C, p.J, K, p.b_c, p.b_j, p.b_k);
  } else if (tc_kernel_is_data_field(s->kernel)) {
    p.I = s->num_left_fields;
    p.J = 1;
    A = right;
    B = left;
    array_strides(s->layout, C, p.I, K, p.a_c, p.a_i, p.a_k);
    if (s->num_data_points == s->num_points) {
      array_strides(s->layout, C, 1, K, p.b_c, unused, p.b_k);
    } else {
      // One data value per cell: data(C,1,D1,D2) has T = D1*D2 entries per
      // cell; k = p*T + t (right) or p + P*t (left) reads entry t.
      broadcast = true;
      array_strides(s->layout, C, 1, T, p.b_c, unused, p.b_k);
      p.b_div = is_left ? s->num_points : 1;
      p.b_mod = T;
    }
    p.b_j = 0;
  } else {
    p.I = 1;
    p.J = 1;
    A = left;
    B = right;
    array_strides(s->layout, C, 1, K, p.a_c, unused, p.a_k);
    array_strides(s->layout, C, 1, K, p.b_c, unused, p.b_k);
    p.a_i = 0;
    p.b_j = 0;
  }
  // Output (C, I, J) in the shape's layout; unused indices have extent 1.
  if (is_left) {
    p.o_c = 1;
    p.o_i = C;
    p.o_j = C * p.I;
  } else {
    p.o_c = p.I * p.J;
    p.o_i = p.J;
    p.o_j = 1;
  }
  return p;
}

/// Tiling configurations: threads per side x sums per thread per side, and
/// cells per block (_4C: 4 adjacent cells, for layout left, where only the
/// cell index is contiguous). In layout left the 4-cell tiles win up to
/// 32 x 32 outputs per cell; beyond, one cell's 64 x 64 tile reuses each
/// fetched word more and wins (docs/cuda.md).
enum tile_config {
  TILE_8x1,
  TILE_16x1,
  TILE_16x2,
  TILE_16x4,
  TILE_8x1_4C,
  TILE_16x1_4C,
  TILE_16x2_4C
};

/// Tensor-core tiles (double only, contract_cuda_mma*.cuh), for cells too big
/// for the whole-cell tile (run_mma tries that first): MMA_32, a 32 x 32 output tile per block of 4
/// warps, k walked 32 at a time, 3 stages; MMA_64, where A's and B's rows are
/// 16-byte aligned (K even) the TMA tile of least padding (least_padded):
/// 64 x 64 per block of 4 warps, 2 blocks per multiprocessor, k 32 at a time;
/// 96 x 64 per block of 12 warps (32 x 16 each), k 32 at a time; 96 x 96 per
/// block of 12 warps (32 x 24 each), k 32 at a time; and, when min(L, R) > 64
/// and K >= 512, 128 x 64 per block of 8 warps, k 64 at a time (64 x 96
/// tiles, where they pad least, were slower than 64 x 64 ones); else the slab
/// tile where a cell and a slab of the next fit in shared memory; else, for
/// cells of at most 64 x 64, the strip tile (k 64 at a time, one bulk copy per
/// row); else the k-tiled tile of least padding, 64 x 64 per block of 8 warps
/// or 96 x 96 per block of 12 (32 x 24 each), k 16 at a time, 4 stages. The
/// 96-row tiles are 12 warps, 3 a scheduler, rather than 9 of 32 x 32: the
/// register file is handed out in groups of 4 warps, so 9 warps get 168
/// registers each as 12 do, and 32 x 32 pieces spilled there (1.2-1.5x
/// faster at 96 x 96, 1.11-1.15x at 96 x 64, H200). Measured on an H200 as
/// each tile was added (the current figures:
/// docs/measurements/contract-cuda.md): at 27 x 27
/// MMA_32 is 1.2-1.8x faster than the FMA tile, at 64 x 64 and 125 x 125 the
/// k-tiled MMA_64 1.2-2.1x, at 125 x 125 the TMA tile another 1.25-1.37x, at
/// 64 x 64 x 125 the slab tile 1.37x and at 64 x 64 x 375 and 1125 the strip
/// tile 1.28-1.31x (at 125 x 125 x 216 it was 1.14x slower than the k-tiled
/// tile); at 8 x 8 the FMA tile is 2-6x faster than either.
enum mma_config { MMA_NONE, MMA_32, MMA_64 };

/// Whether the GPU runs this build's sm_90 code (the tensor-core tiles'
/// m16n8k16 f64 instruction, the bulk copy engine): a build for an older
/// target only, or a GPU older than Hopper, keeps the other kernels. Asked
/// once per process (a rank drives one GPU).
bool hopper_code() {
  static const bool available = [] {
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, tc_cuda::mma_kernel<2, 2, 1, 2, 32, 3, true, 1>) !=
        cudaSuccess) {
      (void)cudaGetLastError(); // no image for this GPU: clear, keep the other kernels
      return false;
    }
    return attributes.ptxVersion >= 90 && attributes.binaryVersion >= 90;
  }();
  return available;
}

/// The tensor-core tile for a FieldField product, or MMA_NONE where the FMA
/// tile or the layout-left tile (left_mma_applies) serves: float, arrays
/// whose k is not contiguous (layout left), min(L, R) <= 8, and builds or
/// GPUs without sm_90 code.
mma_config choose_mma(const tc_cuda_problem &p, bool is_double) {
  const int64_t m = std::min(p.I, p.J);
  if (!is_double || p.a_k != 1 || p.b_k != 1 || m <= 8 || !hopper_code())
    return MMA_NONE;
  return m <= 32 ? MMA_32 : MMA_64;
}

/// An output tile's rows (of L) and columns (of R).
struct tile_size {
  int64_t rows, cols;
};

/// Of `count` tiles, the one that computes the fewest outputs per cell, the
/// padding past the cell's L x R included; ties go to the earlier. Past 64,
/// 64-wide tiles can compute up to 3x the cell's outputs (66 x 87 pads to
/// 128 x 128), which 96-wide tiles avoid.
tile_size least_padded(const tc_cuda_problem &p, const tile_size *tiles, int count) {
  tile_size best = tiles[0];
  int64_t fewest = INT64_MAX;
  for (int t = 0; t < count; ++t) {
    const int64_t rows = (p.I + tiles[t].rows - 1) / tiles[t].rows * tiles[t].rows,
                  cols = (p.J + tiles[t].cols - 1) / tiles[t].cols * tiles[t].cols;
    if (rows * cols < fewest) {
      fewest = rows * cols;
      best = tiles[t];
    }
  }
  return best;
}

/// The tensor-core tiles, as pick_mma_tile names the one that runs.
enum mma_tile {
  MMA_TILE_CELLS,  ///< whole cells (contract_cuda_mma.cuh, mma_cells_run)
  MMA_TILE_32,     ///< 32 x 32, k-tiled (MMA_32)
  MMA_TILE_TMA,    ///< the TMA tiles (contract_cuda_mma_tma.cuh)
  MMA_TILE_SLABS,  ///< contract_cuda_mma_slabs.cuh
  MMA_TILE_STRIPS, ///< contract_cuda_mma_strips.cuh
  MMA_TILE_K64,    ///< 64 x 64, k-tiled
  MMA_TILE_K96,    ///< 96 x 96, k-tiled
};

/// Whether the whole-cell tile may run groups of fewer cells than its ~128 KB
/// target where two such stages do not fit (plan_cells' `regroup`): where the
/// alternative is the 32 x 32 tile (H200, one cell of 14 x 14 x 289 a stage:
/// 0.29 ms against 0.65; two of 20 x 20 x 125: 0.31 against 0.45), not the
/// TMA, slab or strip tiles (40 x 40 x 100: 0.54 against 0.47; 36 x 44 x 99:
/// 0.47 against 0.40; docs/measurements/contract-cuda.md).
bool regrouped_cells(mma_config config) { return config == MMA_32; }

/// The tile run_mma runs for a product choose_mma gave a tile: the
/// whole-cell tile where it applies, else the tile of `config` (see
/// mma_config); `tma` says whether the TMA tile takes the arrays
/// (mma_tma_applies).
tc_err pick_mma_tile(mma_config config, const tc_cuda_problem &p, bool tma, mma_tile *tile) {
  using namespace tc_cuda;
  cells_shape cells;
  slabs_shape slabs;
  bool small = false, fits = false;
  TC_CALL(mma_cells_plan(p, regrouped_cells(config), cells, &small, &fits));
  if (fits || config == MMA_32) {
    *tile = fits ? MMA_TILE_CELLS : MMA_TILE_32;
    return TC_SUCCESS;
  }
  if (tma) {
    *tile = MMA_TILE_TMA;
    return TC_SUCCESS;
  }
  TC_CALL(mma_slabs_plan(p, slabs, &fits));
  const tile_size k_tiles[] = {{64, 64}, {96, 96}};
  *tile = fits                                               ? MMA_TILE_SLABS
          : p.I <= kStripRows && p.J <= kStripRows           ? MMA_TILE_STRIPS
          : least_padded(p, k_tiles, 2).rows == k_tiles[0].rows ? MMA_TILE_K64
                                                             : MMA_TILE_K96;
  return TC_SUCCESS;
}

/// Runs the tensor-core tile pick_mma_tile names.
tc_err run_mma(mma_config config, const tc_cuda_problem &p, const double *A, const double *B,
               double *out, cudaStream_t stream) {
  using namespace tc_cuda;
  mma_tile tile = MMA_TILE_CELLS;
  TC_CALL(pick_mma_tile(config, p, mma_tma_applies(p, A, B), &tile));
  bool ran = false;
  switch (tile) {
  case MMA_TILE_CELLS:
    return mma_cells_run(p, A, B, out, stream, regrouped_cells(config), &ran);
  case MMA_TILE_32:
    return mma_launch<2, 2, 1, 2, 32, 3, 1>(p, A, B, out, stream);
  case MMA_TILE_SLABS:
    return mma_slabs_run(p, A, B, out, stream, &ran);
  case MMA_TILE_STRIPS:
    return mma_strips_launch(p, A, B, out, stream);
  case MMA_TILE_K64:
    return mma_launch<2, 4, 2, 2, 16, 4, 2>(p, A, B, out, stream);
  case MMA_TILE_K96:
    return mma_launch<3, 4, 2, 3, 16, 4, 1>(p, A, B, out, stream);
  case MMA_TILE_TMA:
    break;
  }
  const tile_size tma_tiles[] = {{128, 64}, {64, 64}, {96, 64}, {96, 96}};
  const bool wide = std::min(p.I, p.J) > 64 && p.K >= 512;
  const tile_size tma = least_padded(p, tma_tiles + (wide ? 0 : 1), wide ? 4 : 3);
  if (tma.rows == 128)
    return mma_tma_launch<4, 2, 4, 4, 1>(p, A, B, out, stream);
  if (tma.rows == 64)
    return mma_tma_launch<2, 2, 4, 2, 2>(p, A, B, out, stream);
  if (tma.cols == 64)
    return mma_tma_launch<3, 4, 2, 2, 1>(p, A, B, out, stream);
  return mma_tma_launch<3, 4, 3, 2, 1>(p, A, B, out, stream);
}

/// Whether the layout-left tensor-core tile serves a FieldField product:
/// double, cell index fastest in A, B and the output, min(L, R) > 8 (the FMA
/// tile's 4-cell blocks win below), and sm_90 code.
bool left_mma_applies(const tc_cuda_problem &p, bool is_double) {
  return is_double && p.a_c == 1 && p.b_c == 1 && p.o_c == 1 && std::min(p.I, p.J) > 8 &&
         hopper_code();
}

/// Runs the layout-left tensor-core tile (left_mma_applies): 16 x 16 tiles of
/// 8 cells where a side is at most 16 (larger tiles would be mostly past the
/// cell); 64 x 64 tiles of 4 cells (8 warps of 64 x 32) for sums of at least
/// 64 words where they pad the cell no more than 32 x 32 ones (least_padded);
/// else 32 x 32 tiles of 8 cells. All double-buffered at the narrower row
/// pitch; every copy asks L2 for the whole 128-byte line, which the
/// neighbouring group reads. The 64 x 64 tiles read each word of A and B
/// half as often from L2 as 32 x 32 ones: 1.05-1.34x faster where this rule
/// gives them (64/125, 125/216, 48 x 48 and 100 x 100 at P = 64), slower on
/// short sums (FieldFieldScalar 125 x 125 and 97 x 128 at P = 27 and 20) and
/// where they pad more (27 x 27, 81 x 81: H200,
/// docs/measurements/contract-cuda.md). Slower at every shape measured:
/// three-stage rings (the copies in flight take L1's room), 64 x 32 tiles of
/// 8 cells and 64 x 64 ones of 4 over 16 warps (both spill at 128
/// registers), and 16-byte copies of cell pairs, a warp computing both cells
/// of a pair from each 16-byte load.
tc_err run_mma_left(const tc_cuda_problem &p, const double *A, const double *B, double *out,
                    cudaStream_t stream) {
  using namespace tc_cuda;
  if (std::min(p.I, p.J) <= 16)
    return mma_left_launch<8, 1, 1, 1, 2, 16, 21, 3>(p, A, B, out, stream);
  const tile_size tiles[] = {{64, 64}, {32, 32}};
  if (p.K >= 64 && least_padded(p, tiles, 2).rows == 64)
    return mma_left_launch<4, 1, 2, 4, 4, 16, 17, 2>(p, A, B, out, stream);
  return mma_left_launch<8, 1, 1, 2, 4, 16, 17, 2>(p, A, B, out, stream);
}

/// Float has no tensor-core tile: choose_mma and left_mma_applies never pick
/// one for it.
tc_err run_mma(mma_config, const tc_cuda_problem &, const float *, const float *, float *,
               cudaStream_t) {
  TC_FAIL(TC_ERR_INTERNAL, "the tensor-core tile is double precision only");
}
tc_err run_mma_left(const tc_cuda_problem &, const float *, const float *, float *,
                    cudaStream_t) {
  TC_FAIL(TC_ERR_INTERNAL, "the tensor-core tile is double precision only");
}

/// Whether the lane tile (contract_cuda_lanes.cuh) serves a FieldField
/// product: float (double has the layout-left tensor-core tile), cell index
/// fastest in A, B and the output, min(L, R) > 8 (the FMA tile's 4-cell
/// blocks serve below), and sm_90 code.
bool lanes_apply(const tc_cuda_problem &p, bool is_double) {
  return !is_double && p.a_c == 1 && p.b_c == 1 && p.o_c == 1 && std::min(p.I, p.J) > 8 &&
         hopper_code();
}

/// Runs the lane tile (lanes_apply): 16 x 16 tiles of a warp's 32 cells,
/// 4 x 4 sums a thread, 8 values of k a stage, 3 stages, where a side is at
/// most 16; else 32 x 32 tiles, 8 x 8 sums a thread, 8 values of k a stage,
/// 2 stages; 16 warps a block. Read off the presets and off-preset shapes on
/// an H100 (docs/measurements/contract-cuda.md): 3 or 4 stages of 4 values
/// of k, 8 warps of 16 x 8 sums (254 registers) and 32 x 16 tiles of 8 warps
/// were slower at 64/125 and 125/216 and at most 3% faster at 27/27.
tc_err run_lanes(const tc_cuda_problem &p, const float *A, const float *B, float *out,
                 cudaStream_t stream) {
  using namespace tc_cuda;
  if (std::min(p.I, p.J) <= 16)
    return lane_launch<float, 4, 4, 4, 4, 8, 3>(p, A, B, out, stream);
  return lane_launch<float, 8, 8, 4, 4, 8, 2>(p, A, B, out, stream);
}
tc_err run_lanes(const tc_cuda_problem &, const double *, const double *, double *,
                 cudaStream_t) {
  TC_FAIL(TC_ERR_INTERNAL, "the lane tile is single precision only");
}

/// Whether the FMA ring tile (contract_cuda_fma_ring.cuh) serves a
/// FieldField product: float (double has the tensor-core tiles), k
/// contiguous in A and B (layout right), more than 8 fields on a side (at
/// 8 x 8 the FMA tile's 8 x 8 blocks are faster: 0.517 against 0.548 ms,
/// FieldFieldTensor 8/8, H200), and sm_90 code.
bool fma_ring_applies(const tc_cuda_problem &p, bool is_double) {
  return !is_double && p.a_k == 1 && p.b_k == 1 && std::max(p.I, p.J) > 8 &&
         tc_cuda::fma_ring_fits(p) && hopper_code();
}

tc_err run_fma_ring(const tc_cuda_problem &p, const float *A, const float *B, float *out,
                    cudaStream_t stream) {
  return tc_cuda::fma_ring_run(p, A, B, out, stream);
}
tc_err run_fma_ring(const tc_cuda_problem &, const double *, const double *, double *,
                    cudaStream_t) {
  TC_FAIL(TC_ERR_INTERNAL, "the FMA ring tile is single precision only");
}

tile_config choose_tile(int64_t I, int64_t J, bool layout_left) {
  const int64_t m = std::min(I, J);
  if (m <= 8)
    return layout_left ? TILE_8x1_4C : TILE_8x1;
  if (m <= 16)
    return layout_left ? TILE_16x1_4C : TILE_16x1;
  if (m <= 40)
    return layout_left ? TILE_16x2_4C : TILE_16x2;
  return TILE_16x4;
}

/// Slices per block for ADAPTIVE_SLICING: enough rows that a block has about
/// kBlockThreads threads (one per (slice, right field)).
int adaptive_slices(int64_t I, int64_t J) {
  return (int)std::max<int64_t>(1, std::min(I, kBlockThreads / J));
}

/// Grid size for `tasks` units of work of `per_block` units per block: enough
/// blocks to fill every multiprocessor many times, never more than needed;
/// the kernels stride over the rest.
tc_err grid_size(int64_t tasks, int64_t per_block, unsigned *blocks) {
  tc_cuda::device_limits limits = {};
  TC_CALL(tc_cuda::current_device_limits(&limits));
  const int64_t needed = (tasks + per_block - 1) / per_block;
  *blocks = (unsigned)std::max<int64_t>(1, std::min<int64_t>(needed, (int64_t)limits.sms * 64));
  return TC_SUCCESS;
}

/// Threads the current GPU holds at once (multiprocessors x threads each).
tc_err resident_threads(int64_t *threads) {
  tc_cuda::device_limits limits = {};
  TC_CALL(tc_cuda::current_device_limits(&limits));
  *threads = (int64_t)limits.sms * limits.threads_per_sm;
  return TC_SUCCESS;
}

tc_err check_launch(tc_variant variant, const tc_contraction *s) {
  cudaError_t rc = cudaGetLastError();
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "CUDA %s launch of %s failed: %s",
           tc_variant_name(variant), tc_kernel_name(s->kernel), cudaGetErrorString(rc));
  return TC_SUCCESS;
}

/// STAGED (DataData): tiles of cells whose A words fill the block once, 64
/// bytes per thread; as many lanes per sum (a power of two up to the block)
/// as leave no thread idle.
template <typename T>
tc_err run_staged(const tc_cuda_problem &p, const T *A, const T *B, T *out, cudaStream_t stream) {
  using namespace tc_cuda;
  constexpr int R = 64 / (int)sizeof(T), words = kStagedThreads * R;
  staged_shape shape;
  shape.per_tile = (int)(words / p.K);
  shape.group = 1;
  while (shape.group < kStagedThreads &&
         (int64_t)shape.per_tile * shape.group * 2 <= kStagedThreads)
    shape.group *= 2;
  shape.k = make_fast_divisor((uint32_t)p.K);
  unsigned blocks;
  TC_CALL(grid_size(p.C, shape.per_tile, &blocks));
  staged_kernel<T, R><<<blocks, kStagedThreads, words * sizeof(T), stream>>>(p, A, B, out, shape);
  return TC_SUCCESS;
}

template <typename T, bool BCAST>
tc_err run_generic(const tc_contraction *s, tc_variant variant, const tc_cuda_problem &p,
                   const T *A, const T *B, T *out, cudaStream_t stream) {
  using namespace tc_cuda;
  const int64_t outputs = p.C * p.I * p.J;
  unsigned blocks;
  switch (variant) {
  case TC_VARIANT_FLAT: {
    int64_t resident = 0;
    TC_CALL(grid_size(outputs, kBlockThreads, &blocks));
    TC_CALL(resident_threads(&resident));
    if (p.output_left && outputs > resident)
      flat_kernel<T, BCAST, true><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    else
      flat_kernel<T, BCAST, false><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    break;
  }
  case TC_VARIANT_TEAMSTRIDE:
    // 8 teams of 32 per block; in layout left each warp spans 8 teams.
    TC_CALL(grid_size(outputs, kBlockThreads / 32, &blocks));
    if (p.output_left)
      team_left_kernel<T, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    else
      group_kernel<T, 32, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    break;
  case TC_VARIANT_TEAM_PACKED: {
    const int group = p.K <= 2 ? 2 : p.K <= 4 ? 4 : p.K <= 8 ? 8 : 16;
    TC_CALL(grid_size(outputs, kBlockThreads / group, &blocks));
    if (group == 2)
      group_kernel<T, 2, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    else if (group == 4)
      group_kernel<T, 4, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    else if (group == 8)
      group_kernel<T, 8, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    else
      group_kernel<T, 16, BCAST><<<blocks, kBlockThreads, 0, stream>>>(p, A, B, out);
    break;
  }
  case TC_VARIANT_TEAM_DEPTH1: {
    // A block sized to the contraction: a warp per 32 entries, up to 8 warps.
    const int threads = (int)std::min<int64_t>(kBlockThreads, (p.K + 31) / 32 * 32);
    TC_CALL(grid_size(outputs, 1, &blocks));
    block_kernel<T, BCAST, false><<<blocks, threads, 0, stream>>>(p, A, B, out, 1);
    break;
  }
  case TC_VARIANT_TEAM_DEPTH2: {
    // The team: D1*D2 threads, in whole warps.
    const int team = (int)(s->dim1 * s->dim2);
    TC_CALL(grid_size(outputs, 1, &blocks));
    block_kernel<T, BCAST, true><<<blocks, (team + 31) / 32 * 32, 0, stream>>>(p, A, B, out, team);
    break;
  }
  case TC_VARIANT_STAGED:
    TC_CALL(run_staged<T>(p, A, B, out, stream));
    break;
  case TC_VARIANT_CELL_ROWS:
    TC_CALL((rows_run<T, BCAST>(p, A, B, out, stream)));
    break;
  default:
    TC_FAIL(TC_ERR_INTERNAL, "CUDA variant %s has no generic kernel", tc_variant_name(variant));
  }
  return check_launch(variant, s);
}

template <typename T>
tc_err run_field_field(const tc_contraction *s, tc_variant variant, const tc_cuda_problem &p,
                       const T *A, const T *B, T *out, cudaStream_t stream) {
  using namespace tc_cuda;
  unsigned blocks;
  if (variant == TC_VARIANT_SLICING || variant == TC_VARIANT_ADAPTIVE_SLICING) {
    const int slices = variant == TC_VARIANT_SLICING ? 1 : adaptive_slices(p.I, p.J);
    const int threads = (int)((slices * p.J + 31) / 32 * 32);
    const int chunk_k = (int)std::min<int64_t>(
        p.K, kSliceSharedBytes / ((int64_t)sizeof(T) * slices));
    const size_t shared = (size_t)slices * chunk_k * sizeof(T);
    TC_CALL(grid_size(p.C * ((p.I + slices - 1) / slices), 1, &blocks));
    slice_kernel<T><<<blocks, threads, shared, stream>>>(p, A, B, out, slices, chunk_k);
    return check_launch(variant, s);
  }
  if (variant == TC_VARIANT_TILING) {
    const mma_config mma = choose_mma(p, sizeof(T) == sizeof(double));
    if (mma != MMA_NONE) {
      TC_CALL(run_mma(mma, p, A, B, out, stream));
      return check_launch(variant, s);
    }
    if (left_mma_applies(p, sizeof(T) == sizeof(double))) {
      TC_CALL(run_mma_left(p, A, B, out, stream));
      return check_launch(variant, s);
    }
    if (lanes_apply(p, sizeof(T) == sizeof(double))) {
      TC_CALL(run_lanes(p, A, B, out, stream));
      return check_launch(variant, s);
    }
    if (fma_ring_applies(p, sizeof(T) == sizeof(double))) {
      TC_CALL(run_fma_ring(p, A, B, out, stream));
      return check_launch(variant, s);
    }
    const tile_config config = choose_tile(p.I, p.J, p.output_left);
    const int64_t side = config == TILE_8x1 || config == TILE_8x1_4C ? 8 : 16;
    const int64_t tile = side * (config == TILE_16x4                               ? 4
                                 : config == TILE_16x2 || config == TILE_16x2_4C ? 2
                                                                                 : 1);
    const int64_t cells = config >= TILE_8x1_4C ? 4 : 1;
    const int64_t tiles = (p.C + cells - 1) / cells * ((p.I + tile - 1) / tile) *
                          ((p.J + tile - 1) / tile);
    TC_CALL(grid_size(tiles, 1, &blocks));
    switch (config) {
    case TILE_8x1:
      tile_kernel<T, 8, 1, 1><<<blocks, 64, 0, stream>>>(p, A, B, out);
      break;
    case TILE_16x1:
      tile_kernel<T, 16, 1, 1><<<blocks, 256, 0, stream>>>(p, A, B, out);
      break;
    case TILE_16x2:
      tile_kernel<T, 16, 2, 1><<<blocks, 256, 0, stream>>>(p, A, B, out);
      break;
    case TILE_16x4:
      tile_kernel<T, 16, 4, 1><<<blocks, 256, 0, stream>>>(p, A, B, out);
      break;
    case TILE_8x1_4C:
      tile_kernel<T, 8, 1, 4><<<blocks, 64, 0, stream>>>(p, A, B, out);
      break;
    case TILE_16x1_4C:
      tile_kernel<T, 16, 1, 4><<<blocks, 256, 0, stream>>>(p, A, B, out);
      break;
    case TILE_16x2_4C:
      tile_kernel<T, 16, 2, 4><<<blocks, 256, 0, stream>>>(p, A, B, out);
      break;
    }
    return check_launch(variant, s);
  }
  return run_generic<T, false>(s, variant, p, A, B, out, stream);
}

template <typename T>
tc_err run_typed(const tc_contraction *s, tc_variant variant, const void *left,
                 const void *right, void *output, cudaStream_t stream) {
  const void *A = nullptr, *B = nullptr;
  bool broadcast = false;
  const tc_cuda_problem p = make_problem(s, left, right, A, B, broadcast);
  const T *a = static_cast<const T *>(A);
  const T *b = static_cast<const T *>(B);
  T *out = static_cast<T *>(output);
  if (tc_kernel_is_field_field(s->kernel))
    return run_field_field<T>(s, variant, p, a, b, out, stream);
  if (broadcast)
    return run_generic<T, true>(s, variant, p, a, b, out, stream);
  return run_generic<T, false>(s, variant, p, a, b, out, stream);
}

bool cuda_supports(const tc_contraction *s, tc_variant variant) {
  switch (variant) {
  case TC_VARIANT_FLAT:
  case TC_VARIANT_TEAM_DEPTH1:
  case TC_VARIANT_TEAMSTRIDE:
    return true;
  case TC_VARIANT_TEAM_PACKED:
    return tc_contraction_length(s) <= kPackedMaxLength;
  case TC_VARIANT_SLICING:
  case TC_VARIANT_ADAPTIVE_SLICING:
    return tc_kernel_is_field_field(s->kernel) && s->num_right_fields <= kSliceMaxRightFields;
  case TC_VARIANT_TILING:
    return tc_kernel_is_field_field(s->kernel);
  case TC_VARIANT_TEAM_DEPTH2:
    return s->dim1 * s->dim2 >= 2 && s->dim1 * s->dim2 <= kMaxTeam;
  case TC_VARIANT_STAGED:
    return tc_kernel_is_data_data(s->kernel) && s->layout == TC_LAYOUT_RIGHT &&
           tc_contraction_length(s) <= kStagedMaxLength;
  case TC_VARIANT_CELL_ROWS:
    return tc_kernel_is_data_field(s->kernel) && s->layout == TC_LAYOUT_RIGHT &&
           tc_contraction_length(s) <= INT32_MAX && s->num_left_fields <= INT32_MAX;
  case TC_VARIANT_VENDOR:
    return tc_cuda_vendor_supports(s);
  default:
    return false;
  }
}

/// Whether TILING runs a tile that trails cuBLAS on this double FieldField
/// shape in layout right: the 32 x 32 tensor-core tile or the 64 x 64
/// k-tiled one (pick_mma_tile, for arrays that start 16-byte aligned, as
/// cudaMalloc's do).
bool tiling_trails_vendor(const tc_contraction *s) {
  const void *A = nullptr, *B = nullptr;
  bool broadcast = false;
  const tc_cuda_problem p = make_problem(s, nullptr, nullptr, A, B, broadcast);
  const mma_config config = choose_mma(p, true);
  mma_tile tile = MMA_TILE_CELLS;
  if (config == MMA_NONE)
    return false;
  if (pick_mma_tile(config, p, tc_cuda::mma_tma_takes_shape(p), &tile) != TC_SUCCESS) {
    tc_error_clear(); // the run that follows reports it
    return false;
  }
  return tile == MMA_TILE_32 || tile == MMA_TILE_K64;
}

/// AUTO's rule table, read off the timings of every variant at the preset
/// shapes with ~1 GB working sets on an H200, double and float in both layouts
/// (docs/measurements/contract-cuda.md).
tc_variant cuda_choose(const tc_contraction *s) {
  const int64_t K = tc_contraction_length(s);
  const bool single = s->precision == TC_FLOAT, right = s->layout == TC_LAYOUT_RIGHT;
  // FieldField: shared-memory tiles win but for short sums (K <= 24) on
  // 8 x 8 matrices in layout left (FLAT's cell-grouped order) and in float,
  // and for double products of at most 8 rows by at least 16 with longer
  // sums in layout right, where the tensor-core tiles do not apply and the
  // FMA tile took 1.2-2.4 times cuBLAS's time on every kernel of 7 random
  // shapes of that class (H200, docs/measurements/contract-cuda.md): there
  // TC_VARIANT_VENDOR runs, as a tuning file's entry would make it run. So
  // it does for float products of more than 16 fields on each side in
  // layout right: the FMA ring tile took a median 1.23 of cuBLAS SGEMM's
  // time on the 170 such shapes of two random sweeps and was 10% faster on
  // 6; with at most 16 fields on a side it took a median 0.80 (H200).
  if (tc_kernel_is_field_field(s->kernel)) {
    const int64_t fewer = std::min(s->num_left_fields, s->num_right_fields);
    const int64_t more = std::max(s->num_left_fields, s->num_right_fields);
    if (fewer <= 8 && K <= kFlatFieldFieldMaxLength && (single || !right))
      return TC_VARIANT_FLAT;
    if (!single && right && fewer <= 8 && more >= kVendorMinFields &&
        K > kFlatFieldFieldMaxLength && cuda_supports(s, TC_VARIANT_VENDOR))
      return TC_VARIANT_VENDOR;
    if (single && right && fewer > kFloatTileMaxFields && cuda_supports(s, TC_VARIANT_VENDOR))
      return TC_VARIANT_VENDOR;
    // Double, layout right: where TILING would run the 32 x 32 tensor-core
    // tile or the 64 x 64 k-tiled one (cells too big for the whole-cell
    // tile; the k-tiled one for odd K), cuBLAS runs. On the 45 such shapes
    // of two random sweeps (seeds 1 and 2, 1 GB cases, H200) those tiles
    // took a median 1.24 of cuBLAS's time, 38 of them more than 5% behind;
    // the other tiles took a median 0.79-1.10 by tile
    // (docs/measurements/contract-cuda.md).
    if (!single && right && tiling_trails_vendor(s) && cuda_supports(s, TC_VARIANT_VENDOR))
      return TC_VARIANT_VENDOR;
    return TC_VARIANT_TILING;
  }
  const bool data_field = tc_kernel_is_data_field(s->kernel);
  // Cell index fastest: one thread per entry reads coalesced words; for long
  // double sums a team per contraction (its warps still reading adjacent
  // cells) keeps more loads in flight (DataField: only for the longest, as
  // its FLAT threads carry a field each). In float FLAT wins throughout.
  if (!right)
    return !single && K >= (data_field ? kLongDataFieldLeft : kLongContraction)
               ? TC_VARIANT_TEAMSTRIDE
               : TC_VARIANT_FLAT;
  // Layout right: a cell's inputs are contiguous. DataField: FLAT for the
  // shortest sums, else CELL_ROWS (rows read as coalesced words, the data row
  // kept on chip); DataData: STAGED reads runs of cells as coalesced words.
  if (data_field)
    return K <= kFlatDataFieldMaxLength ? TC_VARIANT_FLAT : TC_VARIANT_CELL_ROWS;
  if (K <= kStagedMaxLength && cuda_supports(s, TC_VARIANT_STAGED))
    return TC_VARIANT_STAGED;
  return !single && K >= kLongContraction ? TC_VARIANT_TEAM_DEPTH1 : TC_VARIANT_TEAMSTRIDE;
}

tc_err cuda_run(const tc_contraction *s, tc_variant variant, const void *left, const void *right,
                void *output, void *stream) {
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  if (variant == TC_VARIANT_VENDOR)
    return tc_cuda_vendor_run(s, left, right, output, cuda_stream);
  if (s->precision == TC_DOUBLE)
    return run_typed<double>(s, variant, left, right, output, cuda_stream);
  return run_typed<float>(s, variant, left, right, output, cuda_stream);
}

} // namespace

/// One run of a variant timed by events on the caller's stream.
static tc_err cuda_time_run(const tc_contraction *s, tc_variant variant, const void *left,
                     const void *right, void *output, void *stream, double *seconds) {
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  cudaEvent_t events[2] = {nullptr, nullptr};
  cudaError_t rc = cudaEventCreate(&events[0]);
  if (rc == cudaSuccess)
    rc = cudaEventCreate(&events[1]);
  tc_err err = rc == cudaSuccess ? TC_SUCCESS
                                 : tc_error_raise(TC_ERR_CUDA, __FILE__, __LINE__, __func__,
                                                  "cudaEventCreate failed: %s",
                                                  cudaGetErrorString(rc));
  if (err == TC_SUCCESS && (rc = cudaEventRecord(events[0], cuda_stream)) != cudaSuccess)
    err = tc_error_raise(TC_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaEventRecord failed: %s",
                         cudaGetErrorString(rc));
  if (err == TC_SUCCESS)
    err = cuda_run(s, variant, left, right, output, stream);
  float milliseconds = 0.0f;
  if (err == TC_SUCCESS) {
    rc = cudaEventRecord(events[1], cuda_stream);
    if (rc == cudaSuccess)
      rc = cudaEventSynchronize(events[1]);
    if (rc == cudaSuccess)
      rc = cudaEventElapsedTime(&milliseconds, events[0], events[1]);
    if (rc != cudaSuccess)
      err = tc_error_raise(TC_ERR_CUDA, __FILE__, __LINE__, __func__,
                           "timing a %s run failed: %s", tc_variant_name(variant),
                           cudaGetErrorString(rc));
  }
  for (cudaEvent_t event : events)
    if (event)
      (void)cudaEventDestroy(event);
  *seconds = 1e-3 * (double)milliseconds;
  return err;
}

extern "C" const tc_contract_backend tc_contract_backend_cuda = {
    TC_BACKEND_CUDA, cuda_supports,          cuda_choose, cuda_run,
    tc_cuda_vendor_library, cuda_time_run, tc_cuda_vendor_release};
