/* tc_physics_fused_cuda: the elasticity trio with its inputs built on chip,
 * on the GPU (see tc_physics_fused.h). Four forms:
 * - the pair form (double, sm_90, elements of at most 8 nodes: Q1 up to
 *   64 points): a block of two warps per cell forms the cell's basis
 *   gradients and w_h's rows in shared memory once, and each lane builds
 *   its DMMA fragments of A and B from them in registers, so that A and B
 *   are never stored at all (fused_pair_kernel);
 * - the tensor-core block form (double, sm_90, larger elements: Q2): a
 *   block per cell, chunks of 16 points by a few stress and strain
 *   components, the chunk's k ordered component-major so that each 16 of k
 *   is one component at 16 points, the rows of A and B built in shared
 *   memory and the warps' 16 x 8 DMMA tiles of the padded output summing
 *   them (tc_cuda_mma.cuh);
 * - the warp form (float, elements of at most 8 nodes): a block of four
 *   warps takes four cells, forms each cell's A and B entries of a chunk
 *   of points once, per basis function and point, in shared-memory tables,
 *   and each lane adds a 3 x 6 block of products from them in registers
 *   (fused_warp_kernel);
 * - the FMA form (float Q2, and double on GPUs older than sm_90): a block
 *   takes a group of cells at a time (ten for Q1, one for Q2), parks the
 *   group's geometry (inverse Jacobians, measures, node coordinates) in
 *   shared memory, then, chunk of quadrature points by chunk, builds the
 *   rows of A and B of those points in shared memory (computed in double as
 *   tc_physics_cuda's builders do, rounded once to Real; each basis
 *   gradient once, for its three rows) and adds their products into TM x TM
 *   register tiles of each cell's (3F+1) x (3F+1) output, a tile's rows and
 *   columns strided by the side of the cell's thread grid.
 * Only the outputs go to device memory. */
#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "tc_cuda_limits.cuh"
#include "tc_cuda_mma.cuh"

namespace {

constexpr int kMaxTile = 6;
/// Tiles up to this side keep two blocks an SM without spilling registers;
/// larger ones (only where a smaller grid does not fit a block: Q2) run one.
constexpr int kTwoBlockTile = 4;
constexpr int kMaxSide = 127; ///< 3F + 1 for F <= 42
constexpr int kMaxThreads = 256;
/// Shared memory a block takes at most: two blocks fit on an SM.
constexpr int kSharedBytes = 100 * 1024;

/// How a launch splits its work; the same on host and device.
struct fused_plan {
  int side;         ///< rows of A and of B: 3F + 1
  int grid;         ///< side of a cell's thread grid: ceil(side / TM)
  int cell_threads; ///< grid * grid
  int cells;        ///< cells a block takes at a time
  int points;       ///< quadrature points a chunk holds
  int pitch;        ///< Real words a row of A or B takes in shared memory (odd)
};

/// The shared memory of a block: the rows of A and B of a chunk, then the
/// group's geometry (double).
template <typename Real> struct fused_shared {
  Real *A, *B;
  double *inverses; ///< [cell][P][9]
  double *measures; ///< [cell][P]
  double *coords;   ///< [cell][F][3]
  __device__ fused_shared(unsigned char *bytes, const fused_plan &plan, int64_t P, int F) {
    const int64_t rows = (int64_t)plan.cells * plan.side * plan.pitch;
    A = reinterpret_cast<Real *>(bytes);
    B = A + rows;
    double *geometry = reinterpret_cast<double *>(
        bytes + ((2 * rows * (int64_t)sizeof(Real) + 15) / 16) * 16);
    inverses = geometry;
    measures = inverses + plan.cells * P * 9;
    coords = measures + plan.cells * P;
    (void)F;
  }
};

size_t shared_bytes(const fused_plan &plan, size_t real_size, int64_t P, int F) {
  const size_t rows = (size_t)plan.cells * plan.side * plan.pitch;
  return ((2 * rows * real_size + 15) / 16) * 16 +
         (size_t)plan.cells * (size_t)(P * 10 + F * 3) * sizeof(double);
}

/// J^{-T} grad_ref phi_a at point q (HGRADtransformGRAD), as tc_physics_cuda's
/// physical_gradient, from the cell's inverse Jacobians in shared memory.
__device__ void basis_gradient(const double *inverse, const double *ref, double out[3]) {
  for (int i = 0; i < 3; ++i)
    out[i] = inverse[0 * 3 + i] * ref[0] + inverse[1 * 3 + i] * ref[1] + inverse[2 * 3 + i] * ref[2];
}

/// Parks cell c's geometry in shared memory, the block's `threads` threads
/// striding over it: the inverse Jacobians [q][9], the measures [q] and the
/// node coordinates [a][3] (the batch holds them cell-fastest). The block
/// and pair forms take a cell a block.
__device__ void park_cell_geometry(const tc_geometry_cuda_batch &g, int64_t c, int threads,
                                   double *inverses, double *measures, double *coords) {
  const int P = (int)g.num_points, F = g.num_fields;
  for (int i = threadIdx.x; i < P * 10 + F * 3; i += threads) {
    if (i < P * 9)
      inverses[i] = g.inverses[(int64_t)i * g.stride + c];
    else if (i < P * 10)
      measures[i - P * 9] = g.measures[(int64_t)(i - P * 9) * g.stride + c];
    else
      coords[i - P * 10] = g.node_coords[(int64_t)(i - P * 10) * g.stride + c];
  }
}

/// Where entry (l, r) of cell c's stacked product (side N + 1, N = 3F)
/// goes among the trio's outputs: the block l, r < N is FieldFieldTensor,
/// the row l = N DataFieldTensor and the corner DataDataTensor
/// (tc_physics_fused.h); NULL for the column r = N above the corner, for
/// padding past N and for an output that is NULL. Layout left puts the cell
/// index fastest.
template <typename Real>
__device__ __forceinline__ Real *product_entry(Real *stiffness, Real *internal_force,
                                               Real *stress_strain, bool left, int64_t c,
                                               int64_t C, int N, int l, int r) {
  if (l < N && r < N)
    return stiffness ? stiffness + (left ? c + C * (l + (int64_t)N * r) : (c * N + l) * N + r)
                     : nullptr;
  if (l == N && r < N)
    return internal_force ? internal_force + (left ? c + C * r : c * N + r) : nullptr;
  if (l == N && r == N)
    return stress_strain ? stress_strain + c : nullptr;
  return nullptr;
}

/// Writes sigma-and-eps rows: A = dV sigma(eps), B = eps, 9 values each.
template <typename Real>
__device__ void write_rows(const tc_physics_fields &f, const double eps[9], double dV, Real *A,
                           Real *B) {
  double sigma[9];
  tc_physics_stress_of_strain(&f, eps, sigma);
  for (int k = 0; k < 9; ++k) {
    A[k] = (Real)(dV * sigma[k]);
    B[k] = (Real)eps[k];
  }
}

template <typename Real, int TM>
__global__ void __launch_bounds__(kMaxThreads, TM <= kTwoBlockTile ? 2 : 1)
    fused_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, fused_plan plan, bool left,
                 Real *__restrict__ stiffness, Real *__restrict__ internal_force,
                 Real *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells, P = g.num_points;
  const int F = g.num_fields, side = plan.side, N = side - 1, grid = plan.grid;
  const fused_shared<Real> s(shared_memory, plan, P, F);
  const int local_cell = threadIdx.x / plan.cell_threads;
  const int t = threadIdx.x % plan.cell_threads;
  const int ty = t / grid, tx = t % grid;
  const bool computes = local_cell < plan.cells;
  for (int64_t c0 = (int64_t)blockIdx.x * plan.cells; c0 < C;
       c0 += (int64_t)gridDim.x * plan.cells) {
    /* the group's geometry, cell index fastest in the batch */
    for (int i = threadIdx.x; i < plan.cells * P * 10 + plan.cells * F * 3; i += blockDim.x) {
      if (i < plan.cells * P * 9) {
        const int cell = i % plan.cells, k = (i / plan.cells) % 9, q = i / (plan.cells * 9);
        s.inverses[(cell * P + q) * 9 + k] =
            c0 + cell < C ? g.inverses[((int64_t)q * 9 + k) * g.stride + c0 + cell] : 1.0;
      } else if (i < plan.cells * P * 10) {
        const int j = i - plan.cells * (int)P * 9, cell = j % plan.cells, q = j / plan.cells;
        s.measures[cell * P + q] = c0 + cell < C ? g.measures[(int64_t)q * g.stride + c0 + cell] : 0.0;
      } else {
        const int j = i - plan.cells * (int)P * 10, cell = j % plan.cells, ai = j / plan.cells;
        s.coords[cell * F * 3 + ai] = c0 + cell < C ? g.node_coords[(int64_t)ai * g.stride + c0 + cell] : 0.0;
      }
    }
    Real acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j)
        acc[i][j] = (Real)0;
    for (int64_t q0 = 0; q0 < P; q0 += plan.points) {
      __syncthreads(); /* the geometry is parked; the last chunk's rows are used */
      /* the chunk's rows: item (cell, a, point) writes rows 3a..3a+2 of A and
       * B; item (cell, F, point) the row of w_h */
      const int points = (int)(P - q0 < plan.points ? P - q0 : plan.points);
      const int items = plan.cells * (F + 1) * points;
      for (int item = threadIdx.x; item < items; item += blockDim.x) {
        const int p = item % points, a = (item / points) % (F + 1);
        const int cell = item / (points * (F + 1));
        const int64_t q = q0 + p;
        Real *A = s.A + (cell * side + 3 * a) * plan.pitch + p * 9;
        Real *B = s.B + (cell * side + 3 * a) * plan.pitch + p * 9;
        const double *inverse = s.inverses + (cell * P + q) * 9;
        const double dV = s.measures[cell * P + q];
        double eps[9];
        if (a < F) {
          double grad[3];
          basis_gradient(inverse, g.ref_gradients + (a * P + q) * 3, grad);
          for (int i = 0; i < 3; ++i) {
            tc_physics_basis_strain(i, grad, eps);
            write_rows<Real>(f, eps, dV, A + i * plan.pitch, B + i * plan.pitch);
          }
        } else {
          double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
          for (int b = 0; b < F; ++b) {
            double w[3], grad[3];
            tc_physics_field_w(&f, s.coords + (cell * F + b) * 3, w);
            basis_gradient(inverse, g.ref_gradients + (b * P + q) * 3, grad);
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j)
                H[3 * i + j] += w[i] * grad[j];
          }
          tc_physics_symmetric_part(H, eps);
          write_rows<Real>(f, eps, dV, A, B);
        }
      }
      __syncthreads();
      if (computes) {
        const Real *a_cell = s.A + local_cell * side * plan.pitch;
        const Real *b_cell = s.B + local_cell * side * plan.pitch;
        const int length = points * 9;
        for (int k = 0; k < length; ++k) {
          Real a[TM], b[TM];
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const int row = ty + grid * i, column = tx + grid * i;
            a[i] = row < side ? a_cell[row * plan.pitch + k] : (Real)0;
            b[i] = column < side ? b_cell[column * plan.pitch + k] : (Real)0;
          }
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TM; ++j)
              acc[i][j] += a[i] * b[j];
        }
      }
    }
    __syncthreads(); /* the group's geometry and rows are no longer read */
    const int64_t c = c0 + local_cell;
    if (!computes || c >= C)
      continue;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j) {
        if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                     ty + grid * i, tx + grid * j))
          *at = acc[i][j];
      }
  }
}

/* ---- the tensor-core form (double, sm_90) ---- */

constexpr int kMmaWarps = 8;
constexpr int kMmaMostTiles = 12; ///< 16 x 8 tiles a warp holds at most
/// Shared memory of a block of the tensor-core form: two blocks an SM when a
/// chunk of 3 components fits in half of it.
constexpr int kMmaSharedBytes = 200 * 1024;
/// Forms of up to this many tiles a warp are held to two blocks an SM (128
/// registers a thread; T = 9 then spills 232 bytes), so that one block's
/// rows are built while the other's products run. H100, Q2 32^3, 5 points:
/// fused_elasticity 0.063 -> 0.047 s (T = 9, 204 registers, one block).
constexpr int kMmaTwoBlockTiles = 9;

/// How the tensor-core form splits a cell: the padded output, the chunk.
struct mma_plan {
  int side;            ///< 3F + 1
  int m_tiles, n_tiles;///< 16-row and 8-column tiles over the padded output
  int components;      ///< stress and strain components a chunk holds: 1, 3 or 9
  int pitch;           ///< doubles a row of A or B takes: 16 components + 2
};

/// The rows of A and B, the cell's geometry, then per chunk of 16 points
/// the basis gradients and grad w, and w at the cell's nodes (doubles).
size_t mma_shared_bytes(const mma_plan &plan, int64_t P, int F) {
  return (size_t)(plan.m_tiles * 16 + plan.n_tiles * 8) * plan.pitch * sizeof(double) +
         (size_t)(P * 10 + F * 3) * sizeof(double) +
         (size_t)(F * 16 * 3 + 16 * 9 + F * 3) * sizeof(double);
}

/// Components c0 .. c0 + count - 1 of a point's rows, A = dV sigma(eps) and
/// B = eps, at stride 16 (k = 16 s + point); every index a constant, so the
/// tensors stay in registers.
__device__ void write_chunk(const tc_physics_fields &f, const double eps[9], double dV, int c0,
                            int count, double *A, double *B) {
  double sigma[9];
  tc_physics_stress_of_strain(&f, eps, sigma);
#pragma unroll
  for (int k = 0; k < 9; ++k)
    if (k >= c0 && k < c0 + count) {
      A[16 * (k - c0)] = dV * sigma[k];
      B[16 * (k - c0)] = eps[k];
    }
}

/// The whole trio of a cell on the tensor cores: A and B of 16 points by
/// `components` components a chunk, row r holding component c0 + s of
/// point q0 + p at k = 16 s + p (rows and points past the element's are
/// zero), and each warp's tiles (tile w, w + warps, ...) adding the chunk's
/// 16 x 8 x 16 products. The basis gradients and grad w of the 16 points
/// are formed once for all their component chunks, grad w by 144 threads
/// (point, i, j) each summing over the nodes in order (one thread a point
/// summing all nine entries kept the other warps waiting at the barrier).
template <int T>
__global__ void __launch_bounds__(kMmaWarps * 32, T <= kMmaTwoBlockTiles ? 2 : 1)
    fused_mma_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, mma_plan plan, bool left,
                     double *__restrict__ stiffness, double *__restrict__ internal_force,
                     double *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells, P = g.num_points;
  const int F = g.num_fields, side = plan.side, N = side - 1, pitch = plan.pitch;
  const int a_rows = plan.m_tiles * 16, b_rows = plan.n_tiles * 8;
  double *A = reinterpret_cast<double *>(shared_memory);
  double *B = A + a_rows * pitch;
  double *inverses = B + b_rows * pitch, *measures = inverses + P * 9,
         *coords = measures + P;
  double *grads = coords + F * 3; ///< [a][p][3]: basis gradients at the chunk's points
  double *grad_w = grads + F * 16 * 3; ///< [p][9]: grad w at the chunk's points
  double *w = grad_w + 16 * 9;         ///< [b][3]: w at the cell's nodes
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = lane / 4, member = lane % 4;
  const int tiles = plan.m_tiles * plan.n_tiles;
  /* the padding rows stay zero */
  for (int i = threadIdx.x; i < (a_rows - side) * pitch; i += blockDim.x)
    A[side * pitch + i] = 0.0;
  for (int i = threadIdx.x; i < (b_rows - side) * pitch; i += blockDim.x)
    B[side * pitch + i] = 0.0;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    __syncthreads(); /* the last cell's geometry and rows are used */
    park_cell_geometry(g, c, blockDim.x, inverses, measures, coords);
    double acc[T][4];
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[t][v] = 0.0;
    for (int64_t q0 = 0; q0 < P; q0 += 16) {
      __syncthreads(); /* the geometry is parked; the last chunk's gradients are used */
      for (int item = threadIdx.x; item < F * 16; item += blockDim.x) {
        const int p = item % 16, a = item / 16;
        double grad[3] = {0.0, 0.0, 0.0};
        if (q0 + p < P)
          basis_gradient(inverses + (q0 + p) * 9, g.ref_gradients + (a * P + q0 + p) * 3, grad);
        for (int i = 0; i < 3; ++i)
          grads[item * 3 + i] = grad[i];
      }
      if (q0 == 0)
        for (int b = threadIdx.x; b < F; b += blockDim.x)
          tc_physics_field_w(&f, coords + b * 3, w + b * 3);
      __syncthreads();
      /* grad w = sum over the nodes b of w(b) grad phi_b^T, entry (i, j) */
      for (int item = threadIdx.x; item < 16 * 9; item += blockDim.x) {
        const int p = item % 16, ij = item / 16, i = ij / 3, j = ij % 3;
        double h = 0.0;
        for (int b = 0; b < F && q0 + p < P; ++b)
          h += w[b * 3 + i] * grads[(b * 16 + p) * 3 + j];
        grad_w[p * 9 + ij] = h;
      }
      for (int c0 = 0; c0 < 9; c0 += plan.components) {
        __syncthreads(); /* grad w is formed; the last chunk's rows are used */
        /* item (a, point): rows 3a..3a+2 (a < F) or the row of w_h (a = F) */
        for (int item = threadIdx.x; item < (F + 1) * 16; item += blockDim.x) {
          const int p = item % 16, a = item / 16;
          const int64_t q = q0 + p;
          const double dV = q < P ? measures[q] : 0.0;
          if (a < F) {
            const double grad[3] = {grads[item * 3], grads[item * 3 + 1], grads[item * 3 + 2]};
#pragma unroll
            for (int i = 0; i < 3; ++i) {
              double eps[9];
              tc_physics_basis_strain(i, grad, eps);
              write_chunk(f, eps, dV, c0, plan.components, A + (3 * a + i) * pitch + p,
                          B + (3 * a + i) * pitch + p);
            }
          } else {
            double eps[9];
            tc_physics_symmetric_part(grad_w + p * 9, eps);
            write_chunk(f, eps, dV, c0, plan.components, A + 3 * F * pitch + p,
                        B + 3 * F * pitch + p);
          }
        }
        __syncthreads();
        for (int s = 0; s < plan.components; ++s) {
          const int k16 = 16 * s + 4 * member;
#pragma unroll
          for (int t = 0; t < T; ++t) {
            const int tile = warp + kMmaWarps * t;
            if (tile >= tiles)
              break;
            const int m = tile / plan.n_tiles, n = tile % plan.n_tiles;
            double2 a[2][2], b[2];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int u = 0; u < 2; ++u)
                a[h][u] = *reinterpret_cast<const double2 *>(
                    A + (m * 16 + 8 * h + group) * pitch + k16 + 2 * u);
#pragma unroll
            for (int u = 0; u < 2; ++u)
              b[u] = *reinterpret_cast<const double2 *>(B + (n * 8 + group) * pitch + k16 + 2 * u);
            tc_cuda::mma_16x8x16(acc[t], a, b);
          }
        }
      }
    }
#pragma unroll
    for (int t = 0; t < T; ++t) {
      const int tile = warp + kMmaWarps * t;
      if (tile >= tiles)
        break;
      const int m = tile / plan.n_tiles, n = tile % plan.n_tiles;
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        if (double *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                       16 * m + 8 * (v / 2) + group, 8 * n + 2 * member + v % 2))
          *at = acc[t][v];
      }
    }
  }
}

/* ---- the pair form (double, sm_90, elements of at most 8 nodes) ---- */

/// The most nodes an element of the pair form has (Q1): its output rows,
/// ordered i-major (row 8 i + a for basis function a times e_i, w_h's row
/// 24), fill one 32 x 32 block of DMMA tiles.
constexpr int kPairFields = 8;
/// Shared memory a block (a cell) of the pair form takes at most (Q1 up to
/// 64 points: 41 KB); larger ones run the block form.
constexpr int kPairSharedBytes = 48 * 1024;
/// Blocks of the pair form an SM holds: its registers capped at 128 a
/// thread (16-20 B of spills), 16 warps an SM. H200, Q1 128^3, 27 points:
/// fused_elasticity 0.107 s over 3 steps against 0.127 s uncapped (194-210
/// registers, 12 warps) and 0.182 s at 96 registers (10 blocks, spilling
/// about 500 B).
constexpr int kPairBlocks = 8;

/// Points a chunk of k holds at one component: 16 (one DMMA step of k), or
/// 8 for rules of at most 8 points (a step then holds two components).
__host__ __device__ constexpr int pair_chunk(int64_t P) { return P <= 8 ? 8 : 16; }
/// Points a cell's tables hold: P rounded up to a whole chunk (zero past P).
__host__ __device__ constexpr int pair_points(int64_t P) {
  return (int)((P + pair_chunk(P) - 1) / pair_chunk(P) * pair_chunk(P));
}
/// Doubles from one basis gradient component's row to the next: at least
/// pair_points, 6 more than a multiple of 16, so that the lanes of a
/// quarter warp, which read the rows of two basis functions, fall in
/// distinct banks.
__host__ __device__ constexpr int pair_pitch(int64_t P) {
  return (pair_points(P) + 15) / 16 * 16 + 6;
}

/// Doubles of a cell's tables in shared memory: the measures, the basis
/// gradients [a][i][pitch], w_h's rows dV sigma(eps(w_h)) and eps(w_h)
/// [component][Q] (Q = pair_points(P), zero past P), then the reference
/// gradients [a][q][3] (the block's, read once), the inverse Jacobians
/// [q][9], the node coordinates and w at the nodes.
int64_t pair_words(int64_t P, int F) {
  const int64_t Q = pair_points(P), pitch = pair_pitch(P);
  return Q + 3 * kPairFields * pitch + 18 * Q + 3 * F * P + 9 * P + 6 * F;
}

/// The entries of a basis function's rows e_0, e_1, e_2 at component S =
/// 3 m + n of k (S = 9: past K, zeros) and four points, from its gradient x
/// there: B = eps_mn = grad_i (m = n = i), grad_n / 2 (i = m != n), grad_m / 2
/// (i = n != m), else 0, and A = dV sigma_mn = dV (lambda grad_i [m = n] +
/// 2 mu eps_mn), the arithmetic of tc_physics_basis_strain and
/// tc_physics_stress_of_strain, whose sums with zero terms are exact (a
/// basis strain's trace is grad_i).
template <int S>
__device__ __forceinline__ void basis_rows(const double2 (&x)[3][2], const double2 (&dV)[2],
                                           double lambda, double two_mu, double2 (&B)[3][2],
                                           double2 (&A)[3][2]) {
  constexpr int m = S / 3, n = S % 3;
#pragma unroll
  for (int u = 0; u < 2; ++u)
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      double2 e = make_double2(0.0, 0.0);
      if (S < 9 && m == n && i == m)
        e = x[i][u];
      else if (S < 9 && m != n && (i == m || i == n)) {
        const double2 g = x[i == m ? n : m][u];
        e = make_double2(0.5 * g.x, 0.5 * g.y);
      }
      B[i][u] = e;
      if (S < 9 && m == n)
        A[i][u] = make_double2(dV[u].x * (lambda * x[i][u].x + two_mu * e.x),
                               dV[u].y * (lambda * x[i][u].y + two_mu * e.y));
      else
        A[i][u] = make_double2(dV[u].x * (0.0 + two_mu * e.x), dV[u].y * (0.0 + two_mu * e.y));
    }
}

/// One DMMA step of k of the pair form: lanes of member < 2 at component
/// S0, the others at S1 (S0 = S1 for chunks of 16 points), points q0 ..
/// q0 + 3 of their component; this warp's 4 products added into acc.
template <int S0, int S1>
__device__ __forceinline__ void pair_step(const double *gradient, int pitch,
                                          const double *measures, const double *stress_w,
                                          const double *strain_w, int Q, int q0, int member,
                                          int group, int half, double lambda, double two_mu,
                                          double (&acc)[4][4]) {
  double2 x[3][2], dV[2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    dV[u] = *reinterpret_cast<const double2 *>(measures + q0 + 2 * u);
#pragma unroll
    for (int i = 0; i < 3; ++i)
      x[i][u] = *reinterpret_cast<const double2 *>(gradient + i * pitch + q0 + 2 * u);
  }
  const bool upper = member >= 2;
  double2 B[3][2], A[3][2];
  basis_rows<S0>(x, dV, lambda, two_mu, B, A);
  if constexpr (S1 != S0) {
    double2 B1[3][2], A1[3][2];
    basis_rows<S1>(x, dV, lambda, two_mu, B1, A1);
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
      for (int i = 0; i < 3; ++i) {
        B[i][u] = upper ? B1[i][u] : B[i][u];
        A[i][u] = upper ? A1[i][u] : A[i][u];
      }
  }
  /* row 24: w_h's (lanes of group 0), rows 25.. padding */
  const int s = upper ? S1 : S0;
  const bool w_row = group == 0 && s < 9;
  double2 a[2][2], b[4][2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const double2 zero = make_double2(0.0, 0.0);
    b[3][u] = w_row ? *reinterpret_cast<const double2 *>(strain_w + s * Q + q0 + 2 * u) : zero;
    const double2 aw =
        w_row && half ? *reinterpret_cast<const double2 *>(stress_w + s * Q + q0 + 2 * u) : zero;
#pragma unroll
    for (int i = 0; i < 3; ++i)
      b[i][u] = B[i][u];
    a[0][u] = half ? A[2][u] : A[0][u];
    a[1][u] = half ? aw : A[1][u];
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
    tc_cuda::mma_16x8x16(acc[nt], a, b[nt]);
}

/// The trio of a cell by a block of two warps, for elements of at most 8
/// nodes: warp h takes the row tile h (16 rows) of the padded output, 4
/// DMMA tiles of 16 x 8. Rows are i-major, so lane (g, t) holds basis
/// function g's rows e_0, e_1, e_2 and, g = 0, w_h's row; k runs
/// component-major, k = s Q + q (s = 3 m + n, Q = pair_points(P)), so that
/// its four values of k are one component at four consecutive points. Each
/// lane forms its fragments of A and B in registers from its function's
/// three gradient components at those points (and w_h's rows), which the
/// block forms once a cell in shared memory, with the arithmetic of
/// tc_physics_basis_strain and tc_physics_stress_of_strain, whose sums with
/// zero terms are exact (a basis strain's trace is grad_i). Neither A nor B
/// is stored; small blocks, many an SM, so that one's loads overlap the
/// others' products. H200, Q1 128^3 with 27 points: fused_elasticity
/// 0.107 s over 3 steps against the block form's 0.202 s
/// (docs/measurements/mini-app-gpu.md).
template <int Chunk>
__global__ void __launch_bounds__(64, kPairBlocks)
    fused_pair_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, bool left,
                      double *__restrict__ stiffness, double *__restrict__ internal_force,
                      double *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells;
  const int P = (int)g.num_points, Q = pair_points(P), pitch = pair_pitch(P);
  const int F = g.num_fields, N = 3 * F;
  const int lane = threadIdx.x % 32, half = threadIdx.x / 32;
  const int group = lane / 4, member = lane % 4;
  double *measures = reinterpret_cast<double *>(shared_memory),
         *grads = measures + Q, *stress_w = grads + 3 * kPairFields * pitch,
         *strain_w = stress_w + 9 * Q, *ref = strain_w + 9 * Q,
         *inverses = ref + 3 * F * P, *coords = inverses + 9 * P, *w = coords + 3 * F;
  /* the tables' points past P (and functions past F) stay zero */
  for (int i = threadIdx.x; i < (int)(ref - measures); i += 64)
    measures[i] = 0.0;
  for (int i = threadIdx.x; i < 3 * F * P; i += 64)
    ref[i] = g.ref_gradients[i];
  const double two_mu = 2.0 * f.mu;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    __syncthreads(); /* the last cell's tables are used */
    /* park_cell_geometry's loop, and product_entry's stores below, written
     * out: through the helpers ptxas spilled more at the 128-register cap
     * (52 bytes against 16 with 8-point chunks) and the weak deck's fused
     * phase ran 9% slower on an H200 (bitwise the same results) */
    for (int i = threadIdx.x; i < P * 10 + F * 3; i += 64) {
      if (i < P * 9)
        inverses[i] = g.inverses[(int64_t)i * g.stride + c];
      else if (i < P * 10)
        measures[i - P * 9] = g.measures[(int64_t)(i - P * 9) * g.stride + c];
      else
        coords[i - P * 10] = g.node_coords[(int64_t)(i - P * 10) * g.stride + c];
    }
    __syncthreads();
    for (int item = threadIdx.x; item < P * F; item += 64) {
      const int a = item / P, q = item - a * P;
      double grad[3];
      basis_gradient(inverses + q * 9, ref + (a * P + q) * 3, grad);
      for (int i = 0; i < 3; ++i)
        grads[(a * 3 + i) * pitch + q] = grad[i];
    }
    for (int b = threadIdx.x; b < F; b += 64)
      tc_physics_field_w(&f, coords + b * 3, w + b * 3);
    __syncthreads();
    /* w_h's rows at each point: grad w summed over the nodes in order */
    for (int q = threadIdx.x; q < P; q += 64) {
      double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, eps[9], sigma[9];
      for (int b = 0; b < F; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            H[3 * i + j] += w[b * 3 + i] * grads[(b * 3 + j) * pitch + q];
      tc_physics_symmetric_part(H, eps);
      tc_physics_stress_of_strain(&f, eps, sigma);
      for (int k = 0; k < 9; ++k) {
        stress_w[k * Q + q] = measures[q] * sigma[k];
        strain_w[k * Q + q] = eps[k];
      }
    }
    __syncthreads();
    double acc[4][4];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[nt][v] = 0.0;
    /* this lane's k: slot member + 4 v holds point q0 + v (mma_16x8x16)
     * of its component, the components in turn (Chunk 16) or two a step
     * (Chunk 8: members 0, 1 the even ones, 2, 3 the odd ones) */
    const double *gradient = grads + group * 3 * pitch;
    const double lambda = f.lambda;
    if constexpr (Chunk == 16) {
      for (int c0 = 0; c0 < Q; c0 += 16) {
        const int q0 = c0 + 4 * member;
#define TC_PAIR_STEP(S0, S1)                                                                    \
  pair_step<S0, S1>(gradient, pitch, measures, stress_w, strain_w, Q, q0, member, group, half, \
                    lambda, two_mu, acc)
        TC_PAIR_STEP(0, 0);
        TC_PAIR_STEP(1, 1);
        TC_PAIR_STEP(2, 2);
        TC_PAIR_STEP(3, 3);
        TC_PAIR_STEP(4, 4);
        TC_PAIR_STEP(5, 5);
        TC_PAIR_STEP(6, 6);
        TC_PAIR_STEP(7, 7);
        TC_PAIR_STEP(8, 8);
      }
    } else {
      const int q0 = 4 * (member % 2);
      TC_PAIR_STEP(0, 1);
      TC_PAIR_STEP(2, 3);
      TC_PAIR_STEP(4, 5);
      TC_PAIR_STEP(6, 7);
      TC_PAIR_STEP(8, 9);
#undef TC_PAIR_STEP
    }
    /* output row or column R: 8 i + a -> 3 a + i (a < F), 24 -> w_h's (N) */
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int R = 16 * half + 8 * (v / 2) + group, S = 8 * nt + 2 * member + v % 2;
        const int l = R < 24 ? (R % 8 < F ? 3 * (R % 8) + R / 8 : -1) : R == 24 ? N : -1;
        const int r = S < 24 ? (S % 8 < F ? 3 * (S % 8) + S / 8 : -1) : S == 24 ? N : -1;
        if (l < 0 || r < 0)
          continue;
        if (l < N && r < N && stiffness)
          stiffness[left ? c + C * (l + (int64_t)N * r) : (c * N + l) * N + r] = acc[nt][v];
        else if (l == N && r < N && internal_force)
          internal_force[left ? c + C * r : c * N + r] = acc[nt][v];
        else if (l == N && r == N && stress_strain)
          stress_strain[c] = acc[nt][v];
      }
  }
}

/// True when this binary holds sm_90 code of the tensor-core form (its DMMA
/// shape exists nowhere else).
bool mma_form_available() {
  static const bool available = [] {
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, fused_mma_kernel<1>) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return attributes.binaryVersion >= 90;
  }();
  return available;
}

/// Launches the tensor-core form with T tiles a warp.
template <int T>
tc_err launch_mma_tiles(const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                        const mma_plan &plan, size_t shared, bool left,
                        const tc_physics_fused_outputs *out, cudaStream_t stream) {
  if (g.cells == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(fused_mma_kernel<T>, kMmaWarps * 32, shared, g.cells,
                                 "fused elasticity's tensor-core form", &blocks));
  fused_mma_kernel<T><<<blocks, kMmaWarps * 32, shared, stream>>>(
      g, f, plan, left, (double *)out->stiffness, (double *)out->internal_force,
      (double *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/// Launches the tensor-core form; *ran false when the element does not fit
/// it (too many tiles a warp, or too little shared memory), for the FMA form.
tc_err launch_mma(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, int side,
                  bool left, const tc_physics_fused_outputs *out, cudaStream_t stream,
                  bool *ran) {
  *ran = false;
  mma_plan plan = {};
  plan.side = side;
  plan.m_tiles = (side + 15) / 16;
  plan.n_tiles = (side + 7) / 8;
  const int per_warp = (plan.m_tiles * plan.n_tiles + kMmaWarps - 1) / kMmaWarps;
  if (per_warp > kMmaMostTiles || !mma_form_available())
    return TC_SUCCESS;
  /* the most components a chunk that fits in half the budget (two blocks an
   * SM), else in all of it */
  const int choices[3] = {9, 3, 1};
  size_t shared = 0;
  bool fits = false;
  for (size_t budget : {(size_t)kMmaSharedBytes / 2, (size_t)kMmaSharedBytes}) {
    for (int components : choices) {
      plan.components = components;
      plan.pitch = 16 * components + 2; /* rows 16 bytes apart in the banks */
      shared = mma_shared_bytes(plan, g.num_points, g.num_fields);
      if ((fits = shared <= budget))
        break;
    }
    if (fits)
      break;
  }
  if (!fits)
    return TC_SUCCESS;
  *ran = true;
  if (per_warp <= 1)
    return launch_mma_tiles<1>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 2)
    return launch_mma_tiles<2>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 4)
    return launch_mma_tiles<4>(g, f, plan, shared, left, out, stream);
  if (per_warp <= 9)
    return launch_mma_tiles<9>(g, f, plan, shared, left, out, stream);
  return launch_mma_tiles<kMmaMostTiles>(g, f, plan, shared, left, out, stream);
}

/// Launches the pair form; *ran false when the element does not fit it
/// (more than kPairFields nodes, or more shared memory than
/// kPairSharedBytes: Q1 with more than 64 points), for the block form.
tc_err launch_pair(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, bool left,
                   const tc_physics_fused_outputs *out, cudaStream_t stream, bool *ran) {
  *ran = false;
  const size_t shared = (size_t)pair_words(g.num_points, g.num_fields) * sizeof(double);
  if (g.num_fields > kPairFields || shared > (size_t)kPairSharedBytes || !mma_form_available())
    return TC_SUCCESS;
  *ran = true;
  const bool wide = pair_chunk(g.num_points) == 16;
  auto kernel = wide ? fused_pair_kernel<16> : fused_pair_kernel<8>;
  static bool preferred[2] = {false, false}; /* the kernels' carveouts: set once each */
  if (!preferred[wide]) {
    TC_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
    preferred[wide] = true;
  }
  if (g.cells == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(kernel, 64, shared, g.cells, "fused elasticity's pair form",
                                 &blocks));
  kernel<<<blocks, 64, shared, stream>>>(g, f, left, (double *)out->stiffness,
                                         (double *)out->internal_force,
                                         (double *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/* ---- the warp form (float, elements of at most 8 nodes) ---- */

/// Cells a block of the warp form takes at a time, a warp each: four
/// consecutive cells, so that each 32-byte sector of the batch's geometry
/// (stored cell-fastest) that the block parks is read whole.
constexpr int kWarpCells = 4;
/// Points a chunk of the warp form's tables holds at most; a rule's points
/// are split into chunks as even as that allows (27: 14 and 13).
constexpr int kWarpChunk = 16;
/// Words a table holds for one function at one point: a basis function's
/// A entries at the diagonal components (9: dV sigma_mm(phi e_i), 3 m + i)
/// and at the off-diagonal ones (3: dV 2 mu (grad_d / 2)), then its B
/// entries (3: grad_d, 3: grad_d / 2); or w_h's A and B at the 9
/// components (dV sigma(eps(w_h)), eps(w_h)).
constexpr int kWarpWords = 18;
/// Points of each chunk of the warp form's tables for a rule of P points.
__host__ __device__ constexpr int warp_chunk(int64_t P) {
  const int64_t chunks = (P + kWarpChunk - 1) / kWarpChunk;
  return (int)((P + chunks - 1) / chunks);
}
static_assert(warp_chunk(8) == 8 && warp_chunk(27) == 14 && warp_chunk(64) == 16,
              "the warp form's chunks: one of 8 points, 14 + 13, four of 16");
/// Words from one function's table to the next: a chunk's points, plus one
/// (odd) so that the lanes reading the tables of different functions fall
/// in distinct banks.
__host__ __device__ constexpr int warp_pitch(int64_t P) { return warp_chunk(P) * kWarpWords + 1; }
/// Tables a cell holds: its (at most) 8 basis functions, then w_h.
constexpr int kWarpTables = kPairFields + 1;

/// Bytes of the tables of a block of the warp form.
template <typename Real> __host__ __device__ size_t warp_table_bytes(int64_t P) {
  return ((size_t)kWarpCells * kWarpTables * warp_pitch(P) * sizeof(Real) + 15) / 16 * 16;
}

/// Shared memory of a block of the warp form: the tables of its cells (Real),
/// then their geometry and the reference gradients [a][q][3] (double).
template <typename Real> size_t warp_shared_bytes(int64_t P, int F) {
  return warp_table_bytes<Real>(P) +
         ((size_t)kWarpCells * (size_t)(P * 10 + F * 3) + (size_t)(3 * F * P)) * sizeof(double);
}

/// A lane's entries at component S = 3 m + n, selected from a point's
/// table words held in registers (tc_physics_basis_strain and
/// tc_physics_stress_of_strain in the arithmetic of basis_rows, rounded once
/// to Real when the tables were built): warp_a, row e_i of a basis function
/// (its words 0..11: A_i = dV sigma_mn(phi e_i)); warp_b, column e_j (its
/// words 12..17: B_j = eps_mn(phi e_j)).
template <int S, typename Real>
__device__ __forceinline__ Real warp_a(const Real (&words)[12], int i) {
  constexpr int m = S / 3, n = S % 3;
  if constexpr (m == n)
    return words[3 * m + i];
  else
    return i == m ? words[9 + n] : i == n ? words[9 + m] : (Real)0;
}
template <int S, typename Real>
__device__ __forceinline__ Real warp_b(const Real (&words)[6], int j) {
  constexpr int m = S / 3, n = S % 3;
  if constexpr (m == n)
    return j == m ? words[m] : (Real)0;
  else
    return j == m ? words[3 + n] : j == n ? words[3 + m] : (Real)0;
}

/// Components S..8 of one point of a lane: the 3 x 6 products of its rows
/// (words `a`) with its two functions' columns (`b0`, `b1`) into acc, and
/// w_h's row entry column (`column`: B of the lane's column at each
/// component) into w_acc. Every index is a constant, so the selections cost
/// no instruction.
template <int S = 0, typename Real>
__device__ __forceinline__ void warp_components(const Real (&a)[12], const Real (&b0)[6],
                                                const Real (&b1)[6], const Real (&w)[9],
                                                const Real (&column)[9], Real (&acc)[3][6],
                                                Real &w_acc) {
  Real A[3], B[6];
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    A[i] = warp_a<S>(a, i);
    B[i] = warp_b<S>(b0, i);
    B[3 + i] = warp_b<S>(b1, i);
  }
#pragma unroll
  for (int i = 0; i < 3; ++i)
#pragma unroll
    for (int j = 0; j < 6; ++j)
      acc[i][j] += A[i] * B[j];
  w_acc += w[S] * column[S];
  if constexpr (S < 8)
    warp_components<S + 1>(a, b0, b1, w, column, acc, w_acc);
}

/// Column e_j of a basis function (its B words) at components S..8.
template <int S = 0, typename Real>
__device__ __forceinline__ void warp_column(const Real (&words)[6], int j, Real (&column)[9]) {
  column[S] = warp_b<S>(words, j);
  if constexpr (S < 8)
    warp_column<S + 1>(words, j, column);
}

/// One point of a lane of the warp form: its words of the tables at the
/// point loaded once (ta, tb0, tb1: its row and column functions'; tw: w_h's;
/// tc: its column of w_h's row, the table of function t / 3 for lanes
/// t < 24, e_j with j = jc, else w_h's own: the corner), then every component.
template <typename Real>
__device__ __forceinline__ void warp_point(const Real *ta, const Real *tb0, const Real *tb1,
                                           const Real *tw, const Real *tc, int jc, int lane,
                                           Real (&acc)[3][6], Real &w_acc) {
  Real a[12], b0[6], b1[6], w[9], column[9];
#pragma unroll
  for (int k = 0; k < 12; ++k)
    a[k] = ta[k];
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    b0[k] = tb0[12 + k];
    b1[k] = tb1[12 + k];
  }
#pragma unroll
  for (int k = 0; k < 9; ++k)
    w[k] = tw[k];
  if (lane < 24) {
    Real words[6];
#pragma unroll
    for (int k = 0; k < 6; ++k)
      words[k] = tc[12 + k];
    warp_column(words, jc, column);
  } else {
#pragma unroll
    for (int k = 0; k < 9; ++k)
      column[k] = tc[9 + k];
  }
  warp_components(a, b0, b1, w, column, acc, w_acc);
}

/// The trio of four cells by a block of four warps, for elements of at most
/// 8 nodes, on the FMA units: the block forms, a chunk of points at a time,
/// each cell's tables in shared memory (every A and B entry of a basis
/// function or of w_h at a point, computed in double and rounded once to
/// Real); lane t of a cell's warp adds the 3 x 6 products of basis function
/// t / 4's rows with functions 2 (t % 4) and 2 (t % 4) + 1's columns, and
/// lanes 0..24 the entry of w_h's row with column t (t = 24: the corner),
/// over every point and all nine components, in Real. A lane's rows and
/// columns at a component come from its functions' tables by selection,
/// zeros included, so that each product is the materialised path's.
template <typename Real>
__global__ void __launch_bounds__(kWarpCells * 32)
    fused_warp_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, bool left,
                      Real *__restrict__ stiffness, Real *__restrict__ internal_force,
                      Real *__restrict__ stress_strain) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int64_t C = g.cells;
  const int P = (int)g.num_points, F = g.num_fields, N = 3 * F;
  const int chunk = warp_chunk(P), pitch = warp_pitch(P);
  Real *tables = reinterpret_cast<Real *>(shared_memory);
  double *inverses = reinterpret_cast<double *>(shared_memory + warp_table_bytes<Real>(P));
  double *measures = inverses + kWarpCells * P * 9, *coords = measures + kWarpCells * P;
  double *ref = coords + kWarpCells * F * 3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a = lane / 4, b0 = 2 * (lane % 4), b1 = b0 + 1;
  const Real *own = tables + warp * kWarpTables * pitch;
  const Real *ta = own + a * pitch, *tb0 = own + b0 * pitch, *tb1 = own + b1 * pitch,
             *tw = own + kPairFields * pitch;
  /* lanes 0..23: w_h's row with column t = 3 b + j; lane 24: the corner */
  const Real *tc = lane < 24 ? own + (lane / 3) * pitch : tw;
  const int jc = lane % 3;
  /* tables of functions past F stay zero; the reference gradients, once */
  for (int i = threadIdx.x; i < kWarpCells * kWarpTables * pitch; i += blockDim.x)
    tables[i] = (Real)0;
  for (int i = threadIdx.x; i < 3 * F * P; i += blockDim.x)
    ref[i] = g.ref_gradients[i];
  const double two_mu = 2.0 * f.mu;
  for (int64_t c0 = (int64_t)blockIdx.x * kWarpCells; c0 < C;
       c0 += (int64_t)gridDim.x * kWarpCells) {
    __syncthreads(); /* the last group's geometry and tables are used */
    for (int i = threadIdx.x; i < kWarpCells * (P * 10 + F * 3); i += blockDim.x) {
      const int cell = i % kWarpCells, e = i / kWarpCells;
      const int64_t c = c0 + cell < C ? c0 + cell : C - 1; /* cells past C: any cell's */
      if (e < P * 9)
        inverses[cell * P * 9 + e] = g.inverses[(int64_t)e * g.stride + c];
      else if (e < P * 10)
        measures[cell * P + e - P * 9] = g.measures[(int64_t)(e - P * 9) * g.stride + c];
      else
        coords[cell * F * 3 + e - P * 10] = g.node_coords[(int64_t)(e - P * 10) * g.stride + c];
    }
    Real acc[3][6], w_acc = (Real)0;
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
      for (int j = 0; j < 6; ++j)
        acc[i][j] = (Real)0;
    for (int q0 = 0; q0 < P; q0 += chunk) {
      const int count = P - q0 < chunk ? P - q0 : chunk;
      __syncthreads(); /* the geometry is parked; the last chunk's tables are used */
      for (int item = threadIdx.x; item < kWarpCells * (F + 1) * count; item += blockDim.x) {
        const int p = item % count, fn = (item / count) % (F + 1), cell = item / (count * (F + 1));
        const int q = q0 + p;
        const double *inverse = inverses + (cell * P + q) * 9;
        const double dV = measures[cell * P + q];
        Real *t = tables + (cell * kWarpTables + (fn < F ? fn : kPairFields)) * pitch +
                  p * kWarpWords;
        if (fn < F) {
          double x[3];
          basis_gradient(inverse, ref + (fn * P + q) * 3, x);
#pragma unroll
          for (int m = 0; m < 3; ++m)
#pragma unroll
            for (int i = 0; i < 3; ++i)
              t[3 * m + i] = (Real)(dV * (f.lambda * x[i] + two_mu * (i == m ? x[i] : 0.0)));
#pragma unroll
          for (int d = 0; d < 3; ++d) {
            t[9 + d] = (Real)(dV * (0.0 + two_mu * (0.5 * x[d])));
            t[12 + d] = (Real)x[d];
            t[15 + d] = (Real)(0.5 * x[d]);
          }
        } else {
          /* w_h's rows: grad w summed over the nodes in order */
          double H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, eps[9], sigma[9];
          for (int b = 0; b < F; ++b) {
            double w[3], x[3];
            tc_physics_field_w(&f, coords + (cell * F + b) * 3, w);
            basis_gradient(inverse, ref + (b * P + q) * 3, x);
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j)
                H[3 * i + j] += w[i] * x[j];
          }
          tc_physics_symmetric_part(H, eps);
          tc_physics_stress_of_strain(&f, eps, sigma);
          for (int k = 0; k < 9; ++k) {
            t[k] = (Real)(dV * sigma[k]);
            t[9 + k] = (Real)eps[k];
          }
        }
      }
      __syncthreads();
#pragma unroll 1
      for (int p = 0; p < count; ++p) {
        const int at = p * kWarpWords;
        warp_point(ta + at, tb0 + at, tb1 + at, tw + at, tc + at, jc, lane, acc, w_acc);
      }
    }
    const int64_t c = c0 + warp;
    if (c >= C)
      continue;
    if (a < F)
#pragma unroll
      for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int j = 0; j < 6; ++j) {
          const int b = j < 3 ? b0 : b1;
          if (b < F)
            if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N,
                                         3 * a + i, 3 * b + j % 3))
              *at = acc[i][j];
        }
    if (lane < 3 * F || lane == 24)
      if (Real *at = product_entry(stiffness, internal_force, stress_strain, left, c, C, N, N,
                                   lane < 24 ? lane : N))
        *at = w_acc;
  }
}

/// Launches the warp form; *ran false when the element does not fit it
/// (more than kPairFields nodes), for the FMA form.
template <typename Real>
tc_err launch_warp(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, bool left,
                   const tc_physics_fused_outputs *out, cudaStream_t stream, bool *ran) {
  *ran = false;
  const size_t shared = warp_shared_bytes<Real>(g.num_points, g.num_fields);
  if (g.num_fields > kPairFields || shared > (size_t)kSharedBytes)
    return TC_SUCCESS;
  *ran = true;
  const int64_t groups = (g.cells + kWarpCells - 1) / kWarpCells;
  if (groups == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(fused_warp_kernel<Real>, kWarpCells * 32, shared, groups,
                                 "fused elasticity's warp form", &blocks));
  fused_warp_kernel<Real><<<blocks, kWarpCells * 32, shared, stream>>>(
      g, f, left, (Real *)out->stiffness, (Real *)out->internal_force,
      (Real *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/// The tile side TM for an output side: among the tiles whose cell grid
/// fits in a block, the one that pads the output least, the larger on a tie
/// (more products per value read), up to kTwoBlockTile where one fits
/// there. Q1 (side 25): 4; Q2 (side 82): 6.
int tile_for(int side) {
  int best = 0, best_padded = 0;
  for (int tm = 1; tm <= kMaxTile; ++tm) {
    if (tm > kTwoBlockTile && best > 0)
      break;
    const int grid = (side + tm - 1) / tm;
    if (grid * grid > kMaxThreads)
      continue;
    const int padded = grid * tm;
    if (best == 0 || padded <= best_padded) {
      best = tm;
      best_padded = padded;
    }
  }
  return best;
}

template <typename Real, int TM>
tc_err launch(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, fused_plan plan,
              bool left, const tc_physics_fused_outputs *out, cudaStream_t stream) {
  const int64_t P = g.num_points;
  const int F = g.num_fields;
  plan.grid = (plan.side + TM - 1) / TM;
  plan.cell_threads = plan.grid * plan.grid;
  plan.cells = kMaxThreads / plan.cell_threads;
  /* the most points a chunk can hold beside the geometry (a row's pitch
   * odd, so that the rows a warp reads fall in different banks); fewer
   * cells a block when not even one point fits */
  for (;;) {
    plan.points = 1;
    plan.pitch = 9;
    while (plan.points < P) {
      fused_plan more = plan;
      ++more.points;
      more.pitch = 9 * more.points + ((9 * more.points) % 2 == 0 ? 1 : 0);
      if (shared_bytes(more, sizeof(Real), P, F) > (size_t)kSharedBytes)
        break;
      plan = more;
    }
    if (shared_bytes(plan, sizeof(Real), P, F) <= (size_t)kSharedBytes || plan.cells == 1)
      break;
    --plan.cells;
  }
  const size_t shared = shared_bytes(plan, sizeof(Real), P, F);
  TC_CHECK(shared <= (size_t)kSharedBytes, TC_ERR_UNSUPPORTED,
           "the fused elasticity needs %zu bytes of shared memory for elements of %d nodes and "
           "%lld points",
           shared, F, (long long)P);
  const int threads = ((plan.cells * plan.cell_threads + 31) / 32) * 32;
  auto kernel = fused_kernel<Real, TM>;
  const int64_t groups = (g.cells + plan.cells - 1) / plan.cells;
  if (groups == 0)
    return TC_SUCCESS;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(kernel, threads, shared, groups, "fused elasticity", &blocks));
  kernel<<<blocks, threads, shared, stream>>>(g, f, plan, left, (Real *)out->stiffness,
                                              (Real *)out->internal_force,
                                              (Real *)out->stress_strain);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

template <typename Real>
tc_err launch_tile(int tm, const tc_geometry_cuda_batch &g, const tc_physics_fields &f,
                   fused_plan plan, bool left, const tc_physics_fused_outputs *out,
                   cudaStream_t stream) {
  switch (tm) {
  case 1:
    return launch<Real, 1>(g, f, plan, left, out, stream);
  case 2:
    return launch<Real, 2>(g, f, plan, left, out, stream);
  case 3:
    return launch<Real, 3>(g, f, plan, left, out, stream);
  case 4:
    return launch<Real, 4>(g, f, plan, left, out, stream);
  case 5:
    return launch<Real, 5>(g, f, plan, left, out, stream);
  default:
    return launch<Real, 6>(g, f, plan, left, out, stream);
  }
}

} // namespace

extern "C" tc_err tc_physics_cuda_fused_elasticity(const tc_geometry_cuda_batch *batch,
                                                   const tc_physics_fields *fields,
                                                   tc_layout layout, tc_precision precision,
                                                   const tc_physics_fused_outputs *outputs,
                                                   void *stream) {
  fused_plan plan = {};
  plan.side = 3 * batch->num_fields + 1;
  const int tm = plan.side <= kMaxSide ? tile_for(plan.side) : 0;
  TC_CHECK(tm > 0, TC_ERR_UNSUPPORTED,
           "the fused elasticity takes elements of at most 42 nodes (got %d)",
           batch->num_fields);
  TC_CHECK(batch->cells >= 0 && batch->cells <= batch->stride, TC_ERR_ARGUMENT,
           "fused elasticity of %lld cells in a batch of %lld", (long long)batch->cells,
           (long long)batch->stride);
  const bool left = layout == TC_LAYOUT_LEFT;
  cudaStream_t s = (cudaStream_t)stream;
  if (precision == TC_DOUBLE) {
    bool ran = false;
    TC_CALL(launch_pair(*batch, *fields, left, outputs, s, &ran));
    if (ran)
      return TC_SUCCESS;
    TC_CALL(launch_mma(*batch, *fields, plan.side, left, outputs, s, &ran));
    if (ran)
      return TC_SUCCESS;
    return launch_tile<double>(tm, *batch, *fields, plan, left, outputs, s);
  }
  bool ran = false;
  TC_CALL(launch_warp<float>(*batch, *fields, left, outputs, s, &ran));
  if (ran)
    return TC_SUCCESS;
  return launch_tile<float>(tm, *batch, *fields, plan, left, outputs, s);
}
