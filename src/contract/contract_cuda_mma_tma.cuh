/* contract_cuda_mma_tma: the FieldField tensor-core tile for cells too big
 * for the whole-cell tile (125 x 125 x 216 and up), double precision, layout
 * right with 16-byte aligned rows (K even): k chunks of the tile's A and B
 * rows are staged by the Hopper tensor memory accelerator (TMA, PTX
 * cp.async.bulk.tensor, one instruction per 16-word box) from tensor maps,
 * while the block's other warps multiply. Private to
 * src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_MMA_TMA_CUH
#define TC_CONTRACT_CUDA_MMA_TMA_CUH

#include <cuda.h> // CUtensorMap and its encoder's signature (no libcuda link: the
                  // encoder is looked up through the runtime)
#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

#include "contract_cuda_bulk.cuh"
#include "contract_cuda_kernels.cuh"
#include "contract_cuda_mma.cuh"

namespace tc_cuda {

/// Words of k per TMA box: 16 doubles = 128 bytes, the widest box the
/// 128-byte swizzle takes (and one DMMA k step).
constexpr int kTmaBoxWords = 16;

/// One thread: copies the box of `rows` x 16 words at (k0, row0, cell) of the
/// tensor map into shared memory at `to` (1024-byte aligned), 128-byte
/// swizzled (16-byte piece j of row r lands at piece j ^ (r % 8)); the bytes
/// complete on `barrier`. Entries outside the array arrive as zeros.
__device__ __forceinline__ void tma_box(double *to, const CUtensorMap *map, int k0, int row0,
                                        int cell, uint64_t *barrier) {
#if TC_BULK_COPY
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(shared_address(to)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(k0), "r"(row0), "r"(cell),
               "r"(shared_address(barrier))
               : "memory");
#else
  (void)to;
  (void)map;
  (void)k0;
  (void)row0;
  (void)cell;
  (void)barrier;
#endif
}

/// The tile. A block of WM x WN warps owns a (32 WM) x (8 FN WN) output tile
/// of one cell, each warp a 32 x 8FN piece (2 x FN DMMA m16n8k16
/// accumulators);
/// tasks (cell, row tile, column tile) come in a grid-stride loop, and each
/// task's k in chunks of KS boxes of 16 words of A's and B's tile rows, which
/// the TMA stages into a ring of `stages` shared buffers (one instruction per
/// box, issued by thread 0). A full barrier per stage (thread 0's arrival and
/// the boxes' bytes) says a chunk is in; an empty barrier (every thread's
/// arrival) says the block is done with it. Thread 0 refills a stage one
/// chunk after the block released it, so it seldom waits, and the ring keeps
/// stages - 1 chunks in flight, across task boundaries. The TMA fills rows
/// past the cell and k past K with zeros, so no size needs to divide another
/// and nothing is masked. (A separate producer warp was tried first: its
/// registers come out of the same per-quarter budget, and the 32 x 32 pieces
/// then spilled.) Dynamic shared memory:
/// mma_tma_shared_bytes<WM, WN, FN, KS>(stages).
template <int WM, int WN, int FN, int KS, int MINB>
__global__ void __launch_bounds__(WM *WN * 32, MINB)
    mma_tma_kernel(tc_cuda_problem p, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, double *__restrict__ out,
                   int stages) {
  constexpr int BM = 32 * WM, BN = 8 * FN * WN, BOX = kTmaBoxWords;
  constexpr int A_BOX = BM * BOX, B_BOX = BN * BOX, STAGE = KS * (A_BOX + B_BOX);
  constexpr uint32_t STAGE_BYTES = STAGE * sizeof(double);
  extern __shared__ __align__(16) unsigned char tma_memory[];
  __shared__ uint64_t full[kMaxBulkStages], empty[kMaxBulkStages];
  // The swizzle repeats every 1024 bytes: boxes start on such a boundary.
  double *ring = reinterpret_cast<double *>(((uintptr_t)tma_memory + 1023) & ~(uintptr_t)1023);

  const int K = (int)p.K;
  const int64_t tiles_i = (p.I + BM - 1) / BM, tiles_j = (p.J + BN - 1) / BN;
  const int64_t per_cell = tiles_i * tiles_j, tasks = p.C * per_cell;
  const int chunks = (K + KS * BOX - 1) / (KS * BOX);
  auto split = [&](int64_t task, int &c, int &i0, int &j0) {
    const int64_t cell = task / per_cell, rest = task - cell * per_cell, ti = rest / tiles_j;
    c = (int)cell;
    i0 = (int)(ti * BM);
    j0 = (int)((rest - ti * tiles_j) * BN);
  };

  // Thread 0's load cursor: the next chunk to stage, in the order the block
  // consumes them.
  int64_t load_task = blockIdx.x;
  int load_chunk = 0, load_stage = 0, load_c = 0, load_i0 = 0, load_j0 = 0;
  uint32_t load_phase = 0;
  auto load_next = [&] {
    if (load_task >= tasks)
      return;
    if (load_chunk == 0)
      split(load_task, load_c, load_i0, load_j0);
    bulk_wait(&empty[load_stage], load_phase ^ 1);
    bulk_expect(&full[load_stage], STAGE_BYTES);
    double *stage = ring + load_stage * STAGE;
#pragma unroll
    for (int q = 0; q < KS; ++q) {
      const int k0 = (load_chunk * KS + q) * BOX;
      tma_box(stage + q * A_BOX, &map_a, k0, load_i0, load_c, &full[load_stage]);
      tma_box(stage + KS * A_BOX + q * B_BOX, &map_b, k0, load_j0, load_c, &full[load_stage]);
    }
    if (++load_stage == stages) {
      load_stage = 0;
      load_phase ^= 1;
    }
    if (++load_chunk == chunks) {
      load_chunk = 0;
      load_task += gridDim.x;
    }
  };
  if (threadIdx.x == 0) {
    bulk_init(full, stages, 1);
    bulk_init(empty, stages, WM * WN * 32);
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int n = 0; n < stages; ++n)
      load_next();

  // Lane (g, t) reads words 4t..4t+3 of its rows: 16-byte pieces 2t and
  // 2t + 1, which the swizzle moved to (2t + u) ^ (row % 8); every row of
  // this lane has row % 8 = g. Box q of a stage is k step q.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, member = lane % 4;
  const int wm = warp / WN, wn = warp % WN;
  const int piece[2] = {2 * ((2 * member) ^ group), 2 * ((2 * member + 1) ^ group)};
  int a_row[2][2], b_row[FN]; // this lane's rows in a box, words
#pragma unroll
  for (int m = 0; m < 2; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      a_row[m][h] = (32 * wm + 16 * m + 8 * h + group) * BOX;
#pragma unroll
  for (int n = 0; n < FN; ++n)
    b_row[n] = (8 * FN * wn + 8 * n + group) * BOX;
  int s = 0;
  uint32_t phase = 0;
  bool refill = false; // whether thread 0 owes the ring a chunk
  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    double acc[2][FN][4];
    clear_piece(acc);
    for (int chunk = 0; chunk < chunks; ++chunk) {
      if (threadIdx.x == 0 && refill)
        load_next(); // into the stage the block released one chunk ago
      refill = true;
      const double *stage = ring + s * STAGE;
      bulk_wait(&full[s], phase);
      warp_product<false, true>(acc, stage, A_BOX, a_row, stage + KS * A_BOX, B_BOX, b_row,
                                piece, 0, KS, 0);
      bulk_arrive(&empty[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
    int c, i0, j0;
    split(task, c, i0, j0);
    const int rows = (int)min((int64_t)BM, p.I - i0), cols = (int)min((int64_t)BN, p.J - j0);
    for_each_output(acc, 32 * wm, 8 * FN * wn, rows, cols, [&](int i, int j, double value) {
      double *o = out + c * p.o_c + (i0 + i) * p.o_i + (j0 + j) * p.o_j;
      *o = p.sum_into ? *o + value : value;
    });
  }
}

/// Dynamic shared memory of mma_tma_kernel<WM, WN, FN, KS> with `stages`
/// stages: the ring and the 1024-byte alignment of its start.
template <int WM, int WN, int FN, int KS>
constexpr size_t mma_tma_shared_bytes(int stages) {
  return sizeof(double) * (size_t)stages * KS * kTmaBoxWords * (32 * WM + 8 * FN * WN) + 1024;
}

/// The shape's half of mma_tma_applies (arrays whose first words are
/// 16-byte aligned, as cudaMalloc's are, pass the other half).
inline bool mma_tma_takes_shape(const tc_cuda_problem &p) {
  const int64_t coordinate_max = 2147483647;
  return p.a_k == 1 && p.b_k == 1 && mma_rows_even(p) && p.C <= coordinate_max &&
         p.I <= coordinate_max && p.J <= coordinate_max && p.K <= coordinate_max;
}

/// Whether the TMA tile takes these arrays: k contiguous and every row and
/// cell start 16-byte aligned (a tensor map's strides must be multiples of 16
/// bytes, and a box's first k must be 16-byte aligned: a form that paired the
/// rows of odd K into aligned runs of 2K words and started the odd rows' boxes
/// at word K stopped on an illegal instruction), counts within the map's
/// 32-bit coordinates.
inline bool mma_tma_applies(const tc_cuda_problem &p, const double *A, const double *B) {
  return mma_tma_takes_shape(p) && mma_rows_aligned(p, A, B);
}

/// Writes the 3-dimensional tensor map (k, row, cell) of an array whose k is
/// contiguous, with boxes of 16 words x `box_rows` rows x 1 cell.
inline tc_err tma_map(CUtensorMap *map, const double *array, int64_t K, int64_t rows,
                      int64_t cells, int64_t row_stride, int64_t cell_stride, int box_rows) {
  using encoder = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static encoder encode = nullptr;
  if (!encode) {
    void *function = nullptr;
    cudaDriverEntryPointQueryResult found;
    const cudaError_t rc = cudaGetDriverEntryPointByVersion(
        "cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found);
    TC_CHECK(rc == cudaSuccess && found == cudaDriverEntryPointSuccess && function, TC_ERR_CUDA,
             "the CUDA driver has no cuTensorMapEncodeTiled (the TMA tile needs it)");
    encode = reinterpret_cast<encoder>(function);
  }
  const cuuint64_t dims[3] = {(cuuint64_t)K, (cuuint64_t)rows, (cuuint64_t)cells};
  const cuuint64_t strides[2] = {(cuuint64_t)row_stride * sizeof(double),
                                 (cuuint64_t)cell_stride * sizeof(double)};
  const cuuint32_t box[3] = {(cuuint32_t)kTmaBoxWords, (cuuint32_t)box_rows, 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  const CUresult rc = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3, const_cast<double *>(array),
                             dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TC_CHECK(rc == CUDA_SUCCESS, TC_ERR_CUDA, "cannot describe a %lld x %lld x %lld array to the "
           "TMA (CUresult %d)", (long long)cells, (long long)rows, (long long)K, (int)rc);
  return TC_SUCCESS;
}

/// Launches the TMA tile (mma_tma_applies must hold) with as many stages as
/// fit in 1/MINB of a multiprocessor's shared memory (at most
/// kMaxBulkStages), one resident wave of blocks.
template <int WM, int WN, int FN, int KS, int MINB>
tc_err mma_tma_launch(const tc_cuda_problem &p, const double *A, const double *B,
                      double *out, cudaStream_t stream) {
  constexpr int threads = WM * WN * 32, BM = 32 * WM, BN = 8 * FN * WN;
  constexpr size_t reserved = 1024;                                   // the system's, per block
  constexpr size_t barriers = 2 * kMaxBulkStages * sizeof(uint64_t); // the kernel's static ones
  device_limits limits = {};
  TC_CALL(current_device_limits(&limits));
  const size_t limit = std::min((size_t)limits.shared_per_block_optin,
                                (size_t)limits.shared_per_sm / MINB - reserved) - barriers;
  int stages = kMaxBulkStages;
  while (stages >= 2 && mma_tma_shared_bytes<WM, WN, FN, KS>(stages) > limit)
    --stages;
  TC_CHECK(stages >= 2, TC_ERR_CUDA, "the TMA tensor-core tile does not fit on this GPU");
  const size_t shared = mma_tma_shared_bytes<WM, WN, FN, KS>(stages);
  CUtensorMap map_a, map_b;
  TC_CALL(tma_map(&map_a, A, p.K, p.I, p.C, p.a_i, p.a_c, BM));
  TC_CALL(tma_map(&map_b, B, p.K, p.J, p.C, p.b_j, p.b_c, BN));
  auto kernel = mma_tma_kernel<WM, WN, FN, KS, MINB>;
  const int64_t tasks = p.C * ((p.I + BM - 1) / BM) * ((p.J + BN - 1) / BN);
  unsigned blocks = 0;
  TC_CALL(resident_wave(kernel, threads, shared, tasks, "TMA tensor-core tile", &blocks));
  kernel<<<blocks, threads, shared, stream>>>(p, map_a, map_b, out, stages);
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
