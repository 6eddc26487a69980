/* tc_physics_cuda: the contraction-input kernels of the assembly loop on
 * the GPU (see tc_physics_cuda.h): ports of tc_physics_build_input and the
 * HGRAD transforms of tc_function_space.c, with the same arithmetic in the
 * same order; the fields and the material law are tc_physics_fields.h's,
 * shared with the host. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_cuda.h"
}

#include "tc_cuda_grid.cuh"
#include "tc_cuda_limits.cuh"
#include "tc_cuda_task_launch.cuh"

namespace {

/// What the input kernels read: the batch's geometry and the basis.
using geometry_view = tc_geometry_cuda_batch;

/// An input's logical shape is (C, m1, m2, d1, d2): one thread per (cell,
/// i1, i2) writes the d1 x d2 tensor at that entry (extents of 1 are absent
/// from the host's logical array and change no offset). The tensor extents
/// are compile-time constants, so that the tensor stays in registers.
struct input_shape {
  int64_t m1, m2;
};

__host__ __device__ constexpr bool is_tensor_input(int input) {
  return input == TC_INPUT_STRAINS || input == TC_INPUT_WEIGHTED_STRESSES ||
         input == TC_INPUT_STRAIN_W || input == TC_INPUT_WEIGHTED_STRESS_W;
}

__host__ __device__ constexpr int tensor_d1(int input) {
  return input == TC_INPUT_VALUES || input == TC_INPUT_WEIGHTED_VALUES ||
                 input == TC_INPUT_FIELD_U || input == TC_INPUT_WEIGHTED_FIELD_U
             ? 1
             : 3;
}

__host__ __device__ constexpr int tensor_d2(int input) { return is_tensor_input(input) ? 3 : 1; }

input_shape shape_of(tc_physics_input input, int64_t F, int64_t P) {
  switch (input) {
  case TC_INPUT_VALUES:
  case TC_INPUT_WEIGHTED_VALUES:
  case TC_INPUT_GRADIENTS:
  case TC_INPUT_WEIGHTED_GRADIENTS:
    return {F, P};
  case TC_INPUT_STRAINS:
  case TC_INPUT_WEIGHTED_STRESSES:
    return {3 * F, P};
  case TC_INPUT_GRADIENT_U_CELL:
    return {1, 1};
  default: /* per point: u_h, grad u_h, eps(w_h) and their weighted forms */
    return {P, 1};
  }
}

__device__ double measure_at(const geometry_view &g, int64_t c, int64_t q) {
  return g.measures[q * g.stride + c];
}

__device__ void load_inverse(const geometry_view &g, int64_t c, int64_t q, double inv[9]) {
  for (int k = 0; k < 9; ++k)
    inv[k] = g.inverses[(q * 9 + k) * g.stride + c];
}

/// scale * J^{-T} grad_ref phi_a at point q (HGRADtransformGRAD).
__device__ void physical_gradient(const geometry_view &g, const double inv[9], int64_t a,
                                  int64_t q, double scale, double out[3]) {
  const double *ref = g.ref_gradients + (a * g.num_points + q) * 3;
  for (int i = 0; i < 3; ++i)
    out[i] = scale * (inv[0 * 3 + i] * ref[0] + inv[1 * 3 + i] * ref[1] + inv[2 * 3 + i] * ref[2]);
}

__device__ void node_position(const geometry_view &g, int64_t c, int64_t a, double x[3]) {
  for (int i = 0; i < 3; ++i)
    x[i] = g.node_coords[(a * 3 + i) * g.stride + c];
}

/// out = dV sigma(eps).
__device__ void weighted_stress(const tc_physics_fields &f, const double eps[9], double dV,
                                double out[9]) {
  double sigma[9];
  tc_physics_stress_of_strain(&f, eps, sigma);
  for (int k = 0; k < 9; ++k)
    out[k] = dV * sigma[k];
}

/// The weighted partner of input `input` (dV_q times it, or for a strain
/// dV_q times its stress), which a task may write next to it; -1: none.
__host__ __device__ constexpr int weighted_of(int input) {
  switch (input) {
  case TC_INPUT_VALUES:
    return TC_INPUT_WEIGHTED_VALUES;
  case TC_INPUT_GRADIENTS:
    return TC_INPUT_WEIGHTED_GRADIENTS;
  case TC_INPUT_STRAINS:
    return TC_INPUT_WEIGHTED_STRESSES;
  case TC_INPUT_FIELD_U:
    return TC_INPUT_WEIGHTED_FIELD_U;
  case TC_INPUT_GRADIENT_U:
    return TC_INPUT_WEIGHTED_GRADIENT_U;
  case TC_INPUT_STRAIN_W:
    return TC_INPUT_WEIGHTED_STRESS_W;
  default:
    return -1;
  }
}

/// dV_q at entry (c, i1, i2) of input Input: its point q is i1 for the
/// per-point inputs, else i2.
template <int Input>
__device__ double entry_measure(const geometry_view &g, int64_t c, int64_t i1, int64_t i2) {
  constexpr bool per_point =
      Input == TC_INPUT_FIELD_U || Input == TC_INPUT_GRADIENT_U || Input == TC_INPUT_STRAIN_W;
  return measure_at(g, c, per_point ? i1 : i2);
}

/// w = an entry of input Input's weighted partner, from v, the entry of
/// Input, and dV, its entry_measure: dV times it, or for a strain dV sigma
/// of it. A weighted input built alone is made this way too (input_entry),
/// so an input and its partner built together give the partner's values
/// bitwise.
template <int Input>
__device__ void weighted_entry(const tc_physics_fields &f, double dV, const double v[9],
                               double w[9]) {
  if constexpr (is_tensor_input(Input)) {
    weighted_stress(f, v, dV, w);
  } else {
#pragma unroll
    for (int k = 0; k < tensor_d1(Input) * tensor_d2(Input); ++k)
      w[k] = dV * v[k];
  }
}

/// The input whose weighted partner `input` is, or -1.
__host__ __device__ constexpr int unweighted_of(int input) {
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (weighted_of(i) == input)
      return i;
  return -1;
}

/// Components a node of input `input` interpolates: u(x_a) for u_h and
/// grad u_h (1), w(x_a) for eps(w_h) (3), none for the others (0); a
/// weighted input as its partner.
__host__ __device__ constexpr int nodal_components(int input) {
  const int base = unweighted_of(input) >= 0 ? unweighted_of(input) : input;
  return base == TC_INPUT_FIELD_U || base == TC_INPUT_GRADIENT_U ? 1
         : base == TC_INPUT_STRAIN_W                            ? 3
                                                                : 0;
}

/// Whether input_right can build input `input` in slabs (the values and
/// their weighted partner, shape (C, F, P); a slab: one basis function at
/// every point).
__host__ __device__ constexpr bool has_slabs(int input) {
  return input == TC_INPUT_VALUES || input == TC_INPUT_WEIGHTED_VALUES;
}

/// Where input_entry takes a cell's nodal values of u or w from, Staged:
/// component i of node a at values[(a * components + i) * stride], computed
/// once a tile by input_right; else computed at each entry from the node's
/// position (the same arithmetic, so the same values). A compile-time
/// choice, so that the unstaged entries test nothing at each node.
struct nodal_view {
  const double *values;
  int stride;
};

template <bool Staged>
__device__ double nodal_u(const geometry_view &g, const tc_physics_fields &f, nodal_view nodal,
                          int64_t c, int a) {
  if constexpr (Staged) {
    return nodal.values[a * nodal.stride];
  } else {
    double x[3];
    node_position(g, c, a, x);
    return tc_physics_field_u(&f, x);
  }
}

template <bool Staged>
__device__ void nodal_w(const geometry_view &g, const tc_physics_fields &f, nodal_view nodal,
                        int64_t c, int a, double w[3]) {
  if constexpr (Staged) {
    for (int i = 0; i < 3; ++i)
      w[i] = nodal.values[(a * 3 + i) * nodal.stride];
  } else {
    double x[3];
    node_position(g, c, a, x);
    tc_physics_field_w(&f, x, w);
  }
}

template <int Input, bool Paired, bool Staged>
__device__ void entry_pair(const geometry_view &g, const tc_physics_fields &f, int64_t c,
                           int64_t i1, int64_t i2, nodal_view nodal, double v[9], double w[9]);

/// The d1 x d2 values of entry (c, i1, i2) of input Input, row-major; a
/// weighted input is its partner's entry made by weighted_entry. Staged:
/// the nodal values come from `nodal` (nodal_view).
template <int Input, bool Staged = false>
__device__ void input_entry(const geometry_view &g, const tc_physics_fields &f, int64_t c,
                            int64_t i1, int64_t i2, double v[9], nodal_view nodal = {}) {
  const int64_t P = g.num_points;
  const int F = g.num_fields;
  if constexpr (unweighted_of(Input) >= 0) {
    double unweighted[9];
    entry_pair<unweighted_of(Input), true, Staged>(g, f, c, i1, i2, nodal, unweighted, v);
  } else if constexpr (Input == TC_INPUT_VALUES) {
    v[0] = g.ref_values[i1 * P + i2];
  } else if constexpr (Input == TC_INPUT_GRADIENTS) {
    double inv[9];
    load_inverse(g, c, i2, inv);
    physical_gradient(g, inv, i1, i2, 1.0, v);
  } else if constexpr (Input == TC_INPUT_STRAINS) {
    const int64_t a = i1 / 3, q = i2;
    const int i = (int)(i1 % 3);
    double inv[9], grad[3];
    load_inverse(g, c, q, inv);
    physical_gradient(g, inv, a, q, 1.0, grad);
    tc_physics_basis_strain(i, grad, v);
  } else if constexpr (Input == TC_INPUT_FIELD_U) {
    const int64_t q = i1;
    double u = 0.0;
    for (int a = 0; a < F; ++a)
      u += nodal_u<Staged>(g, f, nodal, c, a) * g.ref_values[a * P + q];
    v[0] = u;
  } else if constexpr (Input == TC_INPUT_GRADIENT_U_CELL) {
    for (int d = 0; d < 3; ++d)
      v[d] = f.g[d];
  } else if constexpr (Input == TC_INPUT_GRADIENT_U) {
    const int64_t q = i1;
    double inv[9], sum[3] = {0.0, 0.0, 0.0};
    load_inverse(g, c, q, inv);
    for (int a = 0; a < F; ++a) {
      double grad[3];
      physical_gradient(g, inv, a, q, 1.0, grad);
      const double u = nodal_u<Staged>(g, f, nodal, c, a);
      for (int d = 0; d < 3; ++d)
        sum[d] += u * grad[d];
    }
    for (int d = 0; d < 3; ++d)
      v[d] = sum[d];
  } else { /* TC_INPUT_STRAIN_W: of the interpolant w_h */
    const int64_t q = i1;
    double inv[9], H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    load_inverse(g, c, q, inv);
    for (int a = 0; a < F; ++a) {
      double w[3], grad[3];
      nodal_w<Staged>(g, f, nodal, c, a, w);
      physical_gradient(g, inv, a, q, 1.0, grad);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          H[3 * i + j] += w[i] * grad[j];
    }
    tc_physics_symmetric_part(H, v);
  }
}

/// Entry (c, i1, i2) of input Input in v and, Paired, its weighted
/// partner's in w. The per-point inputs read the point's measure first:
/// their entries sum over the nodes in a loop, whose end the measure's load
/// would wait for (the straight-line entries of the others are scheduled
/// well as they are).
template <int Input, bool Paired, bool Staged>
__device__ void entry_pair(const geometry_view &g, const tc_physics_fields &f, int64_t c,
                           int64_t i1, int64_t i2, nodal_view nodal, double v[9], double w[9]) {
  if constexpr (Paired && nodal_components(Input) > 0) {
    const double dV = entry_measure<Input>(g, c, i1, i2);
    input_entry<Input, Staged>(g, f, c, i1, i2, v, nodal);
    weighted_entry<Input>(f, dV, v, w);
  } else {
    input_entry<Input, Staged>(g, f, c, i1, i2, v, nodal);
    if constexpr (Paired)
      weighted_entry<Input>(f, entry_measure<Input>(g, c, i1, i2), v, w);
  }
}

/// Layout left: each block item is a run of kThreads cells by kLeftEntries
/// consecutive entries (i1, i2); a thread takes one cell of the run through
/// the entries in turn, so that a warp's reads of the geometry (stored
/// cell-fastest) and its stores are contiguous, and the item's position is
/// divided out once for kLeftEntries entries (an index division a value
/// made the values' inputs issue-bound, at 19% of DRAM's bandwidth, H200).
/// Items run entries-fastest, so that the blocks running at once share
/// their cells' geometry in L2 (in cells-fastest order each entry read it
/// from memory again: about 2.8 times the compulsory traffic). Paired: the
/// entries of Input's weighted partner go to `weighted` too. This block is
/// `block` of the input's `blocks`.
constexpr int kLeftEntries = 8;

__host__ __device__ int64_t left_items(int64_t cells, input_shape s) {
  return (cells + tc_cuda_grid::kThreads - 1) / tc_cuda_grid::kThreads *
         ((s.m1 * s.m2 + kLeftEntries - 1) / kLeftEntries);
}

template <typename Real, int Input, bool Paired>
__device__ void input_left(const geometry_view &g, const tc_physics_fields &f, int64_t cells,
                           input_shape s, Real *__restrict__ out, Real *__restrict__ weighted,
                           unsigned block, unsigned blocks) {
  constexpr int d1 = tensor_d1(Input), d2 = tensor_d2(Input);
  constexpr int threads = tc_cuda_grid::kThreads;
  const int64_t per_cell = s.m1 * s.m2, groups = (per_cell + kLeftEntries - 1) / kLeftEntries;
  const int64_t items = left_items(cells, s);
  for (int64_t item = block; item < items; item += blocks) {
    const int64_t c = item / groups * threads + threadIdx.x, first = item % groups * kLeftEntries;
    if (c >= cells)
      continue;
    const int count = (int)(per_cell - first < kLeftEntries ? per_cell - first : kLeftEntries);
    int i1 = (int)(first / s.m2), i2 = (int)(first % s.m2), m2 = (int)s.m2; /* < 2^31 a cell */
#pragma unroll 1
    for (int k = 0; k < count; ++k) {
      double v[9], w[9];
      entry_pair<Input, Paired, false>(g, f, c, i1, i2, {}, v, w);
#pragma unroll
      for (int t1 = 0; t1 < d1; ++t1)
#pragma unroll
        for (int t2 = 0; t2 < d2; ++t2) {
          const int64_t at = c + cells * (i1 + s.m1 * (i2 + s.m2 * (t1 + d1 * t2)));
          out[at] = (Real)v[t1 * d2 + t2];
          if constexpr (Paired)
            weighted[at] = (Real)w[t1 * d2 + t2];
        }
      if (++i2 == m2) {
        i2 = 0;
        ++i1;
      }
    }
  }
}

/// Entry (c, i1, i2) of Input, and Paired its weighted partner's, parked at
/// word `at` of `tile` (and of `weighted_tile`), in Real.
template <typename Real, int Input, bool Paired, bool Staged>
__device__ void tile_entry(const geometry_view &g, const tc_physics_fields &f, int64_t c, int i1,
                           int i2, nodal_view nodal, Real *tile, Real *weighted_tile, int at) {
  constexpr int words = tensor_d1(Input) * tensor_d2(Input);
  double v[9], w[9];
  entry_pair<Input, Paired, Staged>(g, f, c, i1, i2, nodal, v, w);
#pragma unroll
  for (int k = 0; k < words; ++k) {
    tile[at + k] = (Real)v[k];
    if constexpr (Paired)
      weighted_tile[at + k] = (Real)w[k];
  }
}

/// Layout right tiles hold kRightTileWords words: 32 cells of 144 words, or,
/// for elements whose strains take more than kRightLongCell words a cell,
/// 8 cells of 576 (each cell's run of the tile is then 4.6 KB long). H200,
/// the mini-app's inputs in layout right (docs/cuda.md): 24^3 Q2 cells
/// (strains of 91,125 words a cell) 0.063 s in 8-cell tiles against 0.082
/// in 32-cell ones; 64^3 Q1 cells (5,832) 0.092 s in 32-cell tiles against
/// 0.098 in 8-cell ones. Measured at those two elements only.
/// Small worksets take 8-cell tiles too where 32-cell ones would give the
/// GPU fewer than kRightWaves blocks an SM: 1,024 Q1 cells make 32 tiles
/// of 32 cells an input (times its runs), a third of an H100's SMs.
constexpr int kRightTileWords = 4608;
/// Nodal values of u or w a layout-right tile stages for its cells (the
/// per-point inputs interpolate them at every point; computed at each
/// point, their node positions took 24 loads an entry, Q1): 32 Q1 cells'
/// or 8 Q2 cells' w, or any tile's u. Larger tiles compute them at each
/// entry, and so do small worksets, whose batches run in flight and count
/// their latency (the staging adds a round trip to memory before the
/// entries' own).
constexpr int kRightNodalWords = 864;
constexpr int64_t kRightLongCell = 8192;
constexpr int64_t kRightWaves = 2;

/// Words a cell of a tile of `cells` cells holds: the tile's share, or,
/// paired (an input and its weighted partner, two tiles), half of it less
/// one, even, so that the cells' pitch stays odd and both tiles fit.
__host__ __device__ constexpr int right_cell_words(int cells, bool paired) {
  return paired ? (kRightTileWords / cells / 2 - 1) / 2 * 2 : kRightTileWords / cells;
}

/// Entries of a cell a layout-right tile holds: `entries` (what the cell's
/// share of the tile holds) or, in slabs, as many whole slabs (every point
/// i2 of consecutive i1) as fit.
__host__ __device__ int64_t right_span(int64_t entries, bool slabs, input_shape s) {
  return slabs ? entries / s.m2 * s.m2 : entries;
}

/// Tiles of `cells_per_tile` cells input_right takes for an input of
/// shape s.
int64_t right_tiles(int64_t cells, int cells_per_tile, int words, bool paired, bool slabs,
                    input_shape s) {
  const int64_t span = right_span(right_cell_words(cells_per_tile, paired) / words, slabs, s);
  return (cells + cells_per_tile - 1) / cells_per_tile * ((s.m1 * s.m2 + span - 1) / span);
}

/// Layout right: a block computes a tile of Cells cells by kRightTileWords /
/// (Cells d1 d2) entries with the cell index fastest across the threads (so
/// the geometry's reads are contiguous, as in layout left), parks it in
/// shared memory (`tile`, kRightTileWords + Cells words), and stores each
/// cell's share of the tile, one contiguous run in layout right, with
/// consecutive threads on consecutive words. The tiles of a group of cells
/// are consecutive blocks, so that they run at once and read the group's
/// geometry from L2 rather than each from memory. (One thread per entry in
/// layout-right order read the geometry 8 bytes a cache sector and stored
/// d1 d2 words apart: the mini-app's inputs took 2.7x (Q1) and 3.2x (Q2) as
/// long as in layout left on an H200, docs/cuda.md.) Paired: the entries of
/// Input's weighted partner go through a second tile to `weighted`.
/// In slabs (has_slabs), a tile holds whole slabs and a thread takes one
/// (cell, point) through the tile's basis functions: no division an entry,
/// the point's measure read once. (The gradients in slabs, each inverse
/// Jacobian read once a tile rather than once an entry, ran slower than
/// entry by entry on an H200, with fewer loads in flight: they are built
/// entry by entry. So did, on an H100, a thread a word of a point's
/// gradients through every basis function, with or without a tile: it read
/// each column of J^{-1} once a point, but a warp's reads then fall in 32
/// cache lines, and those requests kept L2 as busy as the re-reads they
/// saved.)
/// Staged (a per-point input, on tiles whose nodal values fit
/// kRightNodalWords): each tile first computes its cells' nodal values into
/// nodal_store, and the entries read them from there.
template <typename Real, int Input, int Cells, bool Paired, bool Staged>
__device__ void input_right(const geometry_view &g, const tc_physics_fields &f, int64_t cells,
                            input_shape s, bool slabs, Real *__restrict__ out,
                            Real *__restrict__ weighted, unsigned block, unsigned blocks,
                            Real *tile, double *nodal_store) {
  constexpr int words = tensor_d1(Input) * tensor_d2(Input);
  constexpr int cell_words = right_cell_words(Cells, Paired), entries = cell_words / words;
  constexpr int pitch = cell_words + 1; // odd, so that the cells fall in distinct banks
  Real *const weighted_tile = tile + Cells * pitch;
  const int64_t per_cell = s.m1 * s.m2;
  const int64_t cell_tiles = (cells + Cells - 1) / Cells;
  const int64_t span = right_span(entries, slabs, s);
  const int64_t entry_tiles = (per_cell + span - 1) / span;
  const int64_t tiles = cell_tiles * entry_tiles;
  const int lane = threadIdx.x % Cells, row = threadIdx.x / Cells, rows = blockDim.x / Cells;
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int m2 = (int)s.m2;
  constexpr int components = nodal_components(Input);
  const nodal_view nodal = {Staged ? nodal_store + lane : nullptr, Cells};
  for (int64_t t = block; t < tiles; t += blocks) {
    const int64_t c0 = (t / entry_tiles) * Cells, e0 = (t % entry_tiles) * span;
    const int tile_cells = (int)(cells - c0 < Cells ? cells - c0 : Cells);
    const int tile_entries = (int)(per_cell - e0 < span ? per_cell - e0 : span);
    if constexpr (Staged) {
      /* component i of node a of cell `cell` at
       * nodal_store[(a * components + i) * Cells + cell] */
      for (int k = threadIdx.x; k < Cells * g.num_fields; k += blockDim.x) {
        const int cell = k % Cells, a = k / Cells;
        if (cell >= tile_cells)
          continue;
        if constexpr (components == 1) {
          nodal_store[a * Cells + cell] = nodal_u<false>(g, f, nodal, c0 + cell, a);
        } else {
          double w[3];
          nodal_w<false>(g, f, nodal, c0 + cell, a, w);
          for (int i = 0; i < 3; ++i)
            nodal_store[(a * 3 + i) * Cells + cell] = w[i];
        }
      }
      __syncthreads();
    }
    if (has_slabs(Input) && slabs) {
      const int first = (int)(e0 / m2), count = tile_entries / m2;
      if (lane < tile_cells)
        for (int q = row; q < m2; q += rows) {
#pragma unroll 1
          for (int k = 0; k < count; ++k)
            tile_entry<Real, Input, Paired, false>(g, f, c0 + lane, first + k, q, nodal, tile,
                                                   weighted_tile,
                                                   lane * pitch + (k * m2 + q) * words);
        }
    } else if (lane < tile_cells)
      for (int e = row; e < tile_entries; e += rows) {
        /* 32-bit: a cell's entries are far fewer than 2^31 */
        const int entry = (int)e0 + e, i1 = entry / m2, i2 = entry - i1 * m2;
        tile_entry<Real, Input, Paired, Staged>(g, f, c0 + lane, i1, i2, nodal, tile,
                                                weighted_tile, lane * pitch + e * words);
      }
    __syncthreads();
    /* a warp a cell: its run of the tile, consecutive lanes on consecutive
     * words */
    const int run = tile_entries * words;
    for (int cell = warp; cell < tile_cells; cell += warps) {
      const int64_t at = ((c0 + cell) * per_cell + e0) * words;
      for (int word = threadIdx.x % 32; word < run; word += 32) {
        out[at + word] = tile[cell * pitch + word];
        if constexpr (Paired)
          weighted[at + word] = weighted_tile[cell * pitch + word];
      }
    }
    __syncthreads();
  }
}

/// Layout right, grad u (per cell): the same three words for every cell, a
/// thread a word (through input_right's tiles, a cell's one entry left
/// seven of a tile's eight rows idle, and its 24 bytes a cell took as long
/// as a kernel of a wave of tiles). Layout left's input_left writes it
/// this way already.
template <typename Real>
__device__ void gradient_u_cell(const tc_physics_fields &f, int64_t cells,
                                Real *__restrict__ out, unsigned block, unsigned blocks) {
  for (int64_t n = tc_cuda_grid::first_item(block); n < 3 * cells;
       n += tc_cuda_grid::item_stride(blocks))
    out[n] = (Real)f.g[n % 3];
}

/// One input of a launch (inputs_kernel): which, its shape, the cells of a
/// layout-right tile and whether it is built in slabs and stages nodal
/// values (input_right), its blocks and output, and the output of its
/// weighted partner where that is built with it (else null).
struct input_task {
  int input, tile_cells, slabs, stage_nodal;
  input_shape shape;
  unsigned first_block, blocks;
  void *output, *weighted;
};
struct input_launch {
  int count;
  input_task tasks[TC_INPUT_COUNT];
};

/// The body of task t, input Input, with its weighted partner or not: this
/// block's share of it; Staged: in layout right, through tiles that stage
/// their nodal values in `nodal` (input_right).
template <typename Real, bool Left, int Input, bool Paired, bool Staged>
__device__ void input_body(const geometry_view &g, const tc_physics_fields &f,
                           const input_task &t, unsigned block, Real *tile,
                           double *nodal = nullptr) {
  Real *out = (Real *)t.output, *weighted = (Real *)t.weighted;
  if constexpr (Left)
    input_left<Real, Input, Paired>(g, f, g.cells, t.shape, out, weighted, block, t.blocks);
  else if constexpr (Input == TC_INPUT_GRADIENT_U_CELL)
    gradient_u_cell<Real>(f, g.cells, out, block, t.blocks);
  else if (t.tile_cells == 8)
    input_right<Real, Input, 8, Paired, Staged>(g, f, g.cells, t.shape, t.slabs, out, weighted,
                                                block, t.blocks, tile, nodal);
  else
    input_right<Real, Input, 32, Paired, Staged>(g, f, g.cells, t.shape, t.slabs, out, weighted,
                                                 block, t.blocks, tile, nodal);
}

/// Runs task t's input (the body instantiated for each of the
/// TC_INPUT_COUNT inputs, and paired for those with a weighted partner).
template <typename Real, bool Left, int Input = 0>
__device__ void run_input(const geometry_view &g, const tc_physics_fields &f,
                          const input_task &t, unsigned block, Real *tile) {
  if constexpr (Input < TC_INPUT_COUNT) {
    if (t.input != Input)
      return run_input<Real, Left, Input + 1>(g, f, t, block, tile);
    if constexpr (weighted_of(Input) >= 0)
      if (t.weighted)
        return input_body<Real, Left, Input, true, false>(g, f, t, block, tile);
    input_body<Real, Left, Input, false, false>(g, f, t, block, tile);
  }
}

/// Every input of a batch in one launch, each on blocks of its own: on small
/// worksets each input is a wave of blocks or less, and launched one after
/// another they took the sum of their latencies. No tile stages nodal
/// values here (the kernel's shared memory stays that of its tiles).
template <typename Real, bool Left>
__global__ void __launch_bounds__(tc_cuda_grid::kThreads)
    inputs_kernel(geometry_view g, tc_physics_fields f, const __grid_constant__ input_launch launch) {
  __shared__ Real tile[Left ? 1 : kRightTileWords + 32];
  const input_task &t = launch.tasks[tc_cuda::task_of_block(launch)];
  run_input<Real, Left>(g, f, t, blockIdx.x - t.first_block, tile);
}

/// One input in a launch of its own: a kernel with that input's code alone,
/// for worksets whose inputs fill the GPU by themselves (inputs_kernel holds
/// every input's code, and its registers are those of the largest). The
/// values' kernels are held to 40 registers, six blocks an SM as their
/// tiles allow (left to itself, ptxas gave them 40 and spilled). Staged
/// and unstaged tiles are kernels of their own, so that neither carries
/// the other's code (or registers).
template <typename Real, bool Left, int Input, bool Paired, bool Staged>
__global__ void __launch_bounds__(tc_cuda_grid::kThreads, has_slabs(Input) ? 6 : 0)
    input_kernel(geometry_view g, tc_physics_fields f, const __grid_constant__ input_task t) {
  constexpr bool tiled = !Left && Input != TC_INPUT_GRADIENT_U_CELL;
  __shared__ Real tile[tiled ? kRightTileWords + 32 : 1];
  __shared__ double nodal[Staged ? kRightNodalWords : 1];
  input_body<Real, Left, Input, Paired, Staged>(g, f, t, blockIdx.x, tile, nodal);
}

/// Launches input_kernel for task t, input Input, with its weighted partner
/// or not: the staged kernel where the plan stages nodal values (only
/// per-point inputs in layout right can).
template <typename Real, bool Left, int Input, bool Paired>
tc_err launch_input_kernel(const geometry_view &g, const tc_physics_fields &f,
                           const input_task &t, cudaStream_t stream) {
  constexpr bool can_stage = !Left && nodal_components(Input) > 0;
  auto kernel = can_stage && t.stage_nodal ? input_kernel<Real, Left, Input, Paired, can_stage>
                                           : input_kernel<Real, Left, Input, Paired, false>;
  kernel<<<t.blocks, tc_cuda_grid::kThreads, 0, stream>>>(g, f, t);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

/// Launches input_kernel for task t's input.
template <typename Real, bool Left, int Input = 0>
tc_err launch_input(const geometry_view &g, const tc_physics_fields &f, const input_task &t,
                    cudaStream_t stream) {
  if constexpr (Input < TC_INPUT_COUNT) {
    if (t.input != Input)
      return launch_input<Real, Left, Input + 1>(g, f, t, stream);
    if constexpr (weighted_of(Input) >= 0)
      if (t.weighted)
        return launch_input_kernel<Real, Left, Input, true>(g, f, t, stream);
    return launch_input_kernel<Real, Left, Input, false>(g, f, t, stream);
  } else {
    TC_FAIL(TC_ERR_ARGUMENT, "unknown contraction input %d", t.input);
  }
}

/// The task of input `input`, paired with its weighted partner or not: its
/// shape, tile width and blocks.
tc_err plan_input(int input, bool paired, const geometry_view &g, bool left, input_task *t) {
  const int64_t cells = g.cells;
  const input_shape s = shape_of((tc_physics_input)input, g.num_fields, g.num_points);
  *t = {};
  t->input = input;
  t->shape = s;
  if (left) {
    t->blocks = (unsigned)std::min<int64_t>(left_items(cells, s), tc_cuda_grid::kMaxBlocks);
    return TC_SUCCESS;
  }
  if (input == TC_INPUT_GRADIENT_U_CELL) {
    t->blocks = tc_cuda_grid::grid_blocks(3 * cells);
    return TC_SUCCESS;
  }
  /* 32-cell tiles, or 8-cell ones for long cells and for worksets too small
   * to give every multiprocessor kRightWaves tiles of 32; on worksets that
   * large, the per-point inputs' nodal values staged, and the values in
   * slabs of 8-cell tiles where two slabs fit and the points keep three
   * quarters of the tile's rows busy (a thread a point: 8 points, Q1 with
   * the 2-point rule, leave three quarters idle) */
  const int words = tensor_d1(input) * tensor_d2(input);
  const input_shape strains = shape_of(TC_INPUT_STRAINS, g.num_fields, g.num_points);
  tc_cuda::device_limits limits = {};
  TC_CALL(tc_cuda::current_device_limits(&limits));
  const int64_t wide = right_tiles(cells, 32, words, paired, false, s);
  const bool large = wide >= kRightWaves * limits.sms;
  t->tile_cells = strains.m1 * strains.m2 * 9 > kRightLongCell || !large ? 8 : 32;
  t->stage_nodal = large && nodal_components(input) > 0 &&
                   t->tile_cells * g.num_fields * nodal_components(input) <= kRightNodalWords;
  const int64_t rows = tc_cuda_grid::kThreads / 8, passes = (s.m2 + rows - 1) / rows;
  if (has_slabs(input) && large && right_cell_words(8, paired) / words >= 2 * s.m2 &&
      4 * s.m2 >= 3 * passes * rows) {
    t->slabs = 1;
    t->tile_cells = 8;
  }
  t->blocks = (unsigned)std::min<int64_t>(
      right_tiles(cells, t->tile_cells, words, paired, t->slabs, s), tc_cuda_grid::kMaxBlocks);
  return TC_SUCCESS;
}

/// The inputs with an output, in one launch, or one each where they fill
/// the GPU by themselves (tc_cuda::takes_one_launch). An input and its
/// weighted partner, both wanted, are one task: their entries share the
/// geometry read and the sums formed.
template <typename Real>
tc_err launch_inputs(const geometry_view &g, const tc_physics_fields &f, bool left,
                     void *const outputs[TC_INPUT_COUNT], cudaStream_t stream) {
  input_launch launch = {};
  unsigned blocks = 0;
  bool taken[TC_INPUT_COUNT] = {false};
  for (int input = 0; input < TC_INPUT_COUNT; ++input) {
    if (!outputs[input] || taken[input])
      continue;
    const int partner = weighted_of(input);
    const bool paired = partner >= 0 && outputs[partner];
    input_task task;
    TC_CALL(plan_input(input, paired, g, left, &task));
    if (paired)
      taken[partner] = true;
    if (task.blocks == 0)
      continue;
    task.output = outputs[input];
    task.weighted = paired ? outputs[partner] : nullptr;
    tc_cuda::add_task(launch, task, &blocks);
  }
  return tc_cuda::launch_tasks(
      launch, blocks,
      [&](const input_task &t) {
        return left ? launch_input<Real, true>(g, f, t, stream)
                    : launch_input<Real, false>(g, f, t, stream);
      },
      [&] {
        if (left)
          inputs_kernel<Real, true><<<blocks, tc_cuda_grid::kThreads, 0, stream>>>(g, f, launch);
        else
          inputs_kernel<Real, false><<<blocks, tc_cuda_grid::kThreads, 0, stream>>>(g, f, launch);
      });
}

} // namespace

extern "C" tc_err tc_physics_cuda_build_inputs(const tc_geometry_cuda_batch *batch,
                                               const tc_physics_fields *fields,
                                               tc_layout layout, tc_precision precision,
                                               void *const outputs[TC_INPUT_COUNT],
                                               void *stream) {
  TC_CHECK(layout == TC_LAYOUT_RIGHT || layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)layout);
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  const bool left = layout == TC_LAYOUT_LEFT;
  cudaStream_t s = (cudaStream_t)stream;
  if (precision == TC_DOUBLE)
    return launch_inputs<double>(*batch, *fields, left, outputs, s);
  return launch_inputs<float>(*batch, *fields, left, outputs, s);
}
