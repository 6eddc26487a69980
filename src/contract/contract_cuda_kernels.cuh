/* contract_cuda_kernels: the CUDA kernels of the nine contractions, written
 * once for all nine as one batched product out(c,i,j) = sum_k A(c,i,k) B(c,j,k)
 * over strided arrays (see tc_cuda_problem), templated on the element type.
 * Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_KERNELS_CUH
#define TC_CONTRACT_CUDA_KERNELS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>

extern "C" {
#include "tc_error.h"
}

#include "contract_cuda_bulk.cuh"
#include "tc_cuda_limits.cuh"

/// One contraction seen as a batch of C small products:
///   out(c,i,j) = sum_{k<K} A(c,i,k) * B(c,j,kb(k)),  kb(k) = k, or (k / b_div) % b_mod
///   when B is broadcast over points (DataField data with one value per cell).
/// FieldField: A = left (C,L,K), B = right (C,R,K); DataField: A = fields
/// (C,F,K), B = data, J = 1; DataData: I = J = 1. K = P*D1*D2 collapsed in the
/// order that makes the k stride constant: (p,d1,d2) row-major for layout
/// right (stride 1), (d2,d1,p) for layout left (stride C*rows). The sum's
/// order does not matter, so either collapse gives the same contraction.
struct tc_cuda_problem {
  int64_t C, I, J, K;
  int64_t a_c, a_i, a_k;    ///< strides of A, in elements
  int64_t b_c, b_j, b_k;    ///< strides of B
  int64_t o_c, o_i, o_j;    ///< strides of the output
  int64_t b_div, b_mod;     ///< broadcast B only: kb(k) = (k / b_div) % b_mod
  bool output_left;         ///< output's cell index is fastest (layout left)
  bool sum_into;
};

namespace tc_cuda {

/// Index of B's k for the contracted index k.
template <bool BCAST>
__device__ __forceinline__ int64_t b_index(const tc_cuda_problem &p, int64_t k) {
  return BCAST ? (k / p.b_div) % p.b_mod : k;
}

/// Output entry number e (in the output's memory order, so consecutive
/// threads write consecutive words) to (c,i,j).
__device__ __forceinline__ void output_entry(const tc_cuda_problem &p, int64_t e, int64_t &c,
                                             int64_t &i, int64_t &j) {
  if (p.output_left) {
    c = e % p.C;
    const int64_t rest = e / p.C;
    i = rest % p.I;
    j = rest / p.I;
  } else {
    j = e % p.J;
    const int64_t rest = e / p.J;
    i = rest % p.I;
    c = rest / p.I;
  }
}

template <typename T>
__device__ __forceinline__ void store(const tc_cuda_problem &p, T *out, int64_t c, int64_t i,
                                      int64_t j, T value) {
  T *o = out + c * p.o_c + i * p.o_i + j * p.o_j;
  *o = p.sum_into ? *o + value : value;
}

/// Partial dot product of A(c,i,:) and B(c,j,:) over k = first, first+step, ... < end.
template <typename T, bool BCAST>
__device__ __forceinline__ T dot(const tc_cuda_problem &p, const T *__restrict__ a,
                                 const T *__restrict__ b, int64_t first, int64_t end,
                                 int64_t step) {
  T sum = 0;
#pragma unroll 4
  for (int64_t k = first; k < end; k += step)
    sum += a[k * p.a_k] * b[b_index<BCAST>(p, k) * p.b_k];
  return sum;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T value, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// Cells per group in FLAT's layout-left order.
constexpr int64_t kFlatCellGroup = 256;

/// FLAT: one thread per output entry, grid-stride over all entries, threads
/// in output order: in layout left adjacent threads take adjacent cells, so
/// every load coalesces. GROUPED (layout left only): kFlatCellGroup adjacent
/// cells of one (i,j) take consecutive threads and the next threads the next
/// (i,j) of the same cells, so all outputs of a group of cells run at about
/// the same time and re-read its rows (DataField's data row: once per field)
/// from cache rather than from DRAM; the launch uses it only when the outputs
/// outnumber the threads the GPU holds at once (when they all run together,
/// grouping only makes many multiprocessors read the same lines at once, and
/// measured slower).
template <typename T, bool BCAST, bool GROUPED>
__global__ void flat_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                            T *__restrict__ out) {
  constexpr int64_t G = kFlatCellGroup;
  const int64_t rows = p.I * p.J;
  const int64_t total = GROUPED ? (p.C + G - 1) / G * G * rows : p.C * rows;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t c, i, j;
    if (GROUPED) {
      const int64_t run = e / G, row = run % rows;
      c = run / rows * G + e % G;
      i = row % p.I;
      j = row / p.I;
      if (c >= p.C)
        continue;
    } else {
      output_entry(p, e, c, i, j);
    }
    const T sum =
        dot<T, BCAST>(p, A + c * p.a_c + i * p.a_i, B + c * p.b_c + j * p.b_j, 0, p.K, 1);
    store(p, out, c, i, j, sum);
  }
}

/// TEAMSTRIDE (G = 32) and TEAM_PACKED (G < 32): a group of G lanes per
/// contraction strides over the collapsed index by G, then a shuffle
/// reduction inside the group; a warp carries 32/G contractions. The warp
/// walks its contractions together, so every lane reaches every shuffle.
template <typename T, int G, bool BCAST>
__global__ void group_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                             T *__restrict__ out) {
  constexpr int per_warp = 32 / G;
  const int lane = threadIdx.x % 32;
  const int group = lane / G, member = lane % G;
  const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
  const int64_t total = p.C * p.I * p.J;
  for (int64_t first = warp * per_warp; first < total; first += warps * per_warp) {
    const int64_t e = first + group;
    int64_t c = 0, i = 0, j = 0;
    T sum = 0;
    if (e < total) {
      output_entry(p, e, c, i, j);
      sum = dot<T, BCAST>(p, A + c * p.a_c + i * p.a_i, B + c * p.b_c + j * p.b_j, member, p.K,
                          G);
    }
    sum = warp_sum(sum, G);
    if (e < total && member == 0)
      store(p, out, c, i, j, sum);
  }
}

/// TEAM_DEPTH1 (DEPTH2 false): one block per contraction, threads stride over
/// the collapsed index. TEAM_DEPTH2 (DEPTH2 true, section 3.3.2 of the 2015
/// clinic report on Intrepid contractions): one block per contraction whose
/// first `team` = D1*D2 threads each own one (d1,d2) and
/// sum over the points: k = p*team + t in layout right, t*P + p in layout left
/// (the block is rounded up to whole warps; the lanes past `team` add 0).
/// Both end in a block reduction (shuffles, then one word per warp in shared
/// memory).
template <typename T, bool BCAST, bool DEPTH2>
__global__ void block_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                             T *__restrict__ out, int team) {
  __shared__ T partial[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  const int64_t total = p.C * p.I * p.J;
  const int64_t points = p.K / team;
  for (int64_t e = blockIdx.x; e < total; e += gridDim.x) {
    int64_t c, i, j;
    output_entry(p, e, c, i, j);
    const T *a = A + c * p.a_c + i * p.a_i, *b = B + c * p.b_c + j * p.b_j;
    const int64_t t = threadIdx.x;
    T sum = 0;
    if (!DEPTH2)
      sum = dot<T, BCAST>(p, a, b, t, p.K, blockDim.x);
    else if (t < team)
      sum = p.output_left ? dot<T, BCAST>(p, a, b, t * points, (t + 1) * points, 1)
                          : dot<T, BCAST>(p, a, b, t, p.K, team);
    sum = warp_sum(sum, 32);
    if (lane == 0)
      partial[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = warp_sum(lane < warps ? partial[lane] : T(0), 32);
      if (lane == 0)
        store(p, out, c, i, j, sum);
    }
    __syncthreads();
  }
}

/// x / d for 0 <= x, x*d < 2^32, with one multiply: m = ceil(2^32 / d)
/// (d = 1 is kept as m = 0 and handled apart).
struct fast_divisor {
  uint32_t d, m;
};

inline fast_divisor make_fast_divisor(uint32_t d) {
  return {d, d == 1 ? 0u : (uint32_t)((((uint64_t)1 << 32) + d - 1) / d)};
}

__device__ __forceinline__ uint32_t divide(fast_divisor f, uint32_t x) {
  return f.m == 0 ? x : __umulhi(x, f.m);
}

/// STAGED's launch: entries per tile (= words per tile / K), lanes per sum
/// (a power of two <= kStagedThreads), and K as a divisor.
struct staged_shape {
  int per_tile, group;
  fast_divisor k;
};

constexpr int kStagedThreads = 256;

/// STAGED's sums of one tile, every thread of the block: `group` lanes add
/// each of the tile's n entries' K products (entry e at products[e*K], in
/// shared memory), starting, with K even, at a rotation of the entry so that
/// lanes do not hit one bank; a shuffle reduction, and across warps through
/// shared memory when a group is wider than a warp. Entry e is written to
/// out[o0 + e], so a tile's writes are contiguous.
template <typename T>
__device__ __forceinline__ void staged_sums(const tc_cuda_problem &p, const staged_shape &shape,
                                            const T *products, int n, T *out, int64_t o0) {
  constexpr int NT = kStagedThreads;
  __shared__ T warp_partial[NT / 32];
  const int K = (int)p.K, G = shape.group;
  const int member = threadIdx.x % G;
  for (int first = 0; first < n; first += NT / G) {
    const int entry = first + (int)threadIdx.x / G;
    T sum = 0;
    if (entry < n) {
      const T *row = products + entry * K;
      // Entries K words apart: with K odd the lanes of a warp already hit
      // distinct banks; with K even, start entry e at k = e mod K.
      int k = member + (K % 2 ? 0 : entry - (int)divide(shape.k, (uint32_t)entry) * K);
      k = k >= K ? k - K : k;
      for (int j = member; j < K; j += G) {
        sum += row[k];
        k += G;
        k = k >= K ? k - K : k;
      }
    }
    sum = warp_sum(sum, G < 32 ? G : 32);
    if (G > 32) {
      if (threadIdx.x % 32 == 0)
        warp_partial[threadIdx.x / 32] = sum;
      __syncthreads();
      if (member == 0)
        for (int w = 1; w < G / 32; ++w)
          sum += warp_partial[threadIdx.x / 32 + w];
      __syncthreads();
    }
    if (entry < n && member == 0) {
      T *o = out + o0 + entry;
      *o = p.sum_into ? *o + sum : sum;
    }
  }
}

/// STAGED (DataData in layout right): a block takes a run of per_tile
/// consecutive cells, whose A and B words c*K + k are two contiguous runs of
/// at most R*256 words: each thread loads R words of each with coalesced
/// loads, all issued before the first use (measured faster at one cell per
/// tile, K = 1125, than forming products as the words arrive), and puts the
/// products in shared memory; then staged_sums adds each cell's K products.
/// Needs K <= R*256 and R*256 elements of dynamic shared memory.
template <typename T, int R>
__global__ void __launch_bounds__(kStagedThreads)
    staged_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                  T *__restrict__ out, staged_shape shape) {
  constexpr int NT = kStagedThreads;
  extern __shared__ __align__(16) unsigned char staged_memory[];
  T *products = reinterpret_cast<T *>(staged_memory);
  const int64_t tiles = (p.C + shape.per_tile - 1) / shape.per_tile;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c0 = tile * shape.per_tile;
    const int n = (int)min((int64_t)shape.per_tile, p.C - c0);
    const int words = n * (int)p.K;
    const T *a = A + c0 * p.K, *b = B + c0 * p.K;
    T av[R], bv[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int w = threadIdx.x + r * NT;
      av[r] = w < words ? a[w] : T(0);
      bv[r] = w < words ? b[w] : T(0);
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
      products[threadIdx.x + r * NT] = av[r] * bv[r];
    __syncthreads();
    staged_sums<T>(p, shape, products, n, out, c0);
    __syncthreads();
  }
}

/// TEAMSTRIDE in layout left: the same teams of 32 threads striding over the
/// collapsed index, laid out so that every load coalesces: lane % 8 picks one
/// of 8 adjacent contractions (in layout left, adjacent cells), lane / 8 and
/// the warp number the team member (4 per warp, across the 8 warps of the
/// block), so a warp's load reads 8 adjacent cells at 4 values of k. Shuffles
/// reduce over the 4 members of a warp, shared memory over the 8 warps.
template <typename T, bool BCAST>
__global__ void __launch_bounds__(256)
    team_left_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                     T *__restrict__ out) {
  __shared__ T partial[8][8];
  const int slot = threadIdx.x % 8, warp = threadIdx.x / 32;
  const int member = threadIdx.x % 32 / 8 + 4 * warp;
  const int64_t total = p.C * p.I * p.J;
  for (int64_t first = (int64_t)blockIdx.x * 8; first < total; first += (int64_t)gridDim.x * 8) {
    const int64_t e = first + slot;
    int64_t c = 0, i = 0, j = 0;
    T sum = 0;
    if (e < total) {
      output_entry(p, e, c, i, j);
      sum = dot<T, BCAST>(p, A + c * p.a_c + i * p.a_i, B + c * p.b_c + j * p.b_j, member, p.K,
                          32);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 8);
    sum += __shfl_xor_sync(0xffffffffu, sum, 16);
    if (threadIdx.x % 32 < 8)
      partial[warp][slot] = sum;
    __syncthreads();
    if (threadIdx.x < 8 && e < total) {
      T total_sum = 0;
      for (int w = 0; w < 8; ++w)
        total_sum += partial[w][slot];
      store(p, out, c, i, j, total_sum);
    }
    __syncthreads();
  }
}

/// SLICING (slices = 1) and ADAPTIVE_SLICING (slices > 1): a block takes
/// `slices` rows A(c,i0..i0+slices-1,:) into shared memory, chunk_k entries at
/// a time (any K), and thread (s,j) contracts slice s with B(c,j,:). Needs
/// blockDim.x >= slices*J and slices*chunk_k elements of dynamic shared memory.
template <typename T>
__global__ void slice_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                             T *__restrict__ out, int slices, int chunk_k) {
  extern __shared__ __align__(16) unsigned char slice_memory[];
  T *slice = reinterpret_cast<T *>(slice_memory);
  const int J = (int)p.J;
  const int s = threadIdx.x / J, j = threadIdx.x % J;
  const int64_t row_groups = (p.I + slices - 1) / slices;
  for (int64_t task = blockIdx.x; task < p.C * row_groups; task += gridDim.x) {
    const int64_t c = task / row_groups;
    const int64_t i0 = task % row_groups * slices;
    const bool active = s < slices && i0 + s < p.I;
    const T *a = A + c * p.a_c;
    const T *b = B + c * p.b_c + j * p.b_j;
    T sum = 0;
    for (int64_t k0 = 0; k0 < p.K; k0 += chunk_k) {
      const int kc = (int)min((int64_t)chunk_k, p.K - k0);
      for (int idx = threadIdx.x; idx < slices * kc; idx += blockDim.x) {
        const int ss = idx / kc, kk = idx % kc;
        slice[ss * chunk_k + kk] =
            i0 + ss < p.I ? a[(i0 + ss) * p.a_i + (k0 + kk) * p.a_k] : T(0);
      }
      __syncthreads();
      if (active) {
        const T *row = slice + s * chunk_k;
#pragma unroll 4
        for (int kk = 0; kk < kc; ++kk)
          sum += row[kk] * b[(k0 + kk) * p.b_k];
      }
      __syncthreads();
    }
    if (active)
      store(p, out, c, i0 + s, (int64_t)j, sum);
  }
}

/// TILING: a block of TB x TB threads computes a (TB*RM) x (TB*RM) output tile
/// of each of CB adjacent cells, walking the collapsed index TB at a time
/// through shared memory; each thread keeps CB x RM x RM sums (rows ty+TB*r,
/// columns tx+TB*q). The next k tile is fetched into registers while the
/// current one is multiplied. CB > 1 serves layout left, where only the cell
/// index is contiguous: adjacent threads then fetch adjacent cells. Ragged
/// edges (cells, rows, k) are zero-filled, so no size needs to divide another.
template <typename T, int TB, int RM, int CB>
__global__ void __launch_bounds__(TB *TB)
    tile_kernel(tc_cuda_problem p, const T *__restrict__ A, const T *__restrict__ B,
                T *__restrict__ out) {
  constexpr int BM = TB * RM, KT = TB, NT = TB * TB;
  constexpr int PER_THREAD = CB * BM * KT / NT; // tile entries each thread fetches
  __shared__ T a_tile[CB][KT][BM + 1];
  __shared__ T b_tile[CB][KT][BM + 1];
  const int tx = threadIdx.x % TB, ty = threadIdx.x / TB;
  // Adjacent threads fetch adjacent words: along the cells when a block has
  // several, else along k when k is contiguous (layout right), else along rows.
  const bool k_fast = CB == 1 && p.a_k == 1;
  int fetch_cell[PER_THREAD], fetch_k[PER_THREAD], fetch_row[PER_THREAD];
#pragma unroll
  for (int n = 0; n < PER_THREAD; ++n) {
    const int e = threadIdx.x + n * NT;
    const int in_cell = e / CB;
    fetch_cell[n] = e % CB;
    fetch_k[n] = k_fast ? in_cell % KT : in_cell / BM;
    fetch_row[n] = k_fast ? in_cell / KT : in_cell % BM;
  }
  const int64_t tiles_i = (p.I + BM - 1) / BM, tiles_j = (p.J + BM - 1) / BM;
  const int64_t tiles = (p.C + CB - 1) / CB * tiles_i * tiles_j;
  for (int64_t task = blockIdx.x; task < tiles; task += gridDim.x) {
    const int64_t c0 = task / (tiles_i * tiles_j) * CB;
    const int64_t rest = task % (tiles_i * tiles_j);
    const int64_t i0 = rest / tiles_j * BM, j0 = rest % tiles_j * BM;
    // Where each fetched entry sits at k0 = 0 (-1: outside the arrays).
    int64_t a_first[PER_THREAD], b_first[PER_THREAD];
#pragma unroll
    for (int n = 0; n < PER_THREAD; ++n) {
      const int64_t c = c0 + fetch_cell[n], i = i0 + fetch_row[n], j = j0 + fetch_row[n];
      a_first[n] = c < p.C && i < p.I ? c * p.a_c + i * p.a_i + fetch_k[n] * p.a_k : -1;
      b_first[n] = c < p.C && j < p.J ? c * p.b_c + j * p.b_j + fetch_k[n] * p.b_k : -1;
    }
    T next_a[PER_THREAD], next_b[PER_THREAD];
    auto fetch = [&](int64_t k0) {
#pragma unroll
      for (int n = 0; n < PER_THREAD; ++n) {
        const bool in_k = k0 + fetch_k[n] < p.K;
        next_a[n] = in_k && a_first[n] >= 0 ? A[a_first[n] + k0 * p.a_k] : T(0);
        next_b[n] = in_k && b_first[n] >= 0 ? B[b_first[n] + k0 * p.b_k] : T(0);
      }
    };
    T sum[CB][RM][RM];
#pragma unroll
    for (int cb = 0; cb < CB; ++cb)
#pragma unroll
      for (int r = 0; r < RM; ++r)
#pragma unroll
        for (int q = 0; q < RM; ++q)
          sum[cb][r][q] = 0;
    fetch(0);
    for (int64_t k0 = 0; k0 < p.K; k0 += KT) {
#pragma unroll
      for (int n = 0; n < PER_THREAD; ++n) {
        a_tile[fetch_cell[n]][fetch_k[n]][fetch_row[n]] = next_a[n];
        b_tile[fetch_cell[n]][fetch_k[n]][fetch_row[n]] = next_b[n];
      }
      __syncthreads();
      if (k0 + KT < p.K)
        fetch(k0 + KT);
#pragma unroll
      for (int kk = 0; kk < KT; ++kk)
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) {
          T av[RM], bv[RM];
#pragma unroll
          for (int r = 0; r < RM; ++r) {
            av[r] = a_tile[cb][kk][ty + TB * r];
            bv[r] = b_tile[cb][kk][tx + TB * r];
          }
#pragma unroll
          for (int r = 0; r < RM; ++r)
#pragma unroll
            for (int q = 0; q < RM; ++q)
              sum[cb][r][q] += av[r] * bv[q];
        }
      __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < RM; ++r)
#pragma unroll
      for (int q = 0; q < RM; ++q)
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) {
          const int64_t c = c0 + cb, i = i0 + ty + TB * r, j = j0 + tx + TB * q;
          if (c < p.C && i < p.I && j < p.J)
            store(p, out, c, i, j, sum[cb][r][q]);
        }
  }
}

} // namespace tc_cuda

#endif
