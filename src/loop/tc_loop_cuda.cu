/* tc_loop_cuda: the assembly loop's GPU kernels (geometry, contraction
 * inputs, gather-assemble, row sums and diagonals) and their C entry points
 * (see tc_loop_cuda.h). Each kernel ports its host twin (tc_geometry.c,
 * tc_function_space.c, tc_physics.c, tc_assembly.c) with the same arithmetic
 * in the same order.
 * The geometry scratch is kept cell-fastest, [...][batch_cells], so that
 * neighbouring threads (neighbouring cells) read neighbouring words. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#define OMPI_SKIP_MPICXX 1 /* the C interface of MPI only */
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "tc_cuda_call.h"
#include "tc_loop_cuda.h"
}

#include "tc_cuda_grid.cuh"
#include "tc_cuda_memory.cuh"

namespace {

using tc_cuda_grid::first_item;
using tc_cuda_grid::item_stride;
using tc_cuda_memory::device_alloc;
using tc_cuda_memory::device_free;
using tc_cuda_memory::upload;

/// The device results. The first nine are indexed by the tc_kernel that forms
/// them; then the element matrices of the three FieldField kernels; then the
/// cell volumes from the geometry; then the row reductions of the three
/// assembled matrices (kRowReductions).
enum result {
  RESULT_ELEMENT_MATRICES = TC_KERNEL_COUNT,
  RESULT_CELL_VOLUME = RESULT_ELEMENT_MATRICES + 3,
  RESULT_LUMPED_MASS,
  RESULT_STIFFNESS_DIAGONAL,
  RESULT_ELASTICITY_DIAGONAL,
  RESULT_COUNT
};

/// The CSR values and element matrices (TC_LOOP_CUDA_MATRICES); the others
/// are vectors (TC_LOOP_CUDA_VECTORS).
bool is_matrix_result(int which) {
  return which < TC_KERNEL_COUNT ? tc_kernel_is_field_field((tc_kernel)which)
                                 : which < RESULT_CELL_VOLUME;
}

/// A per-row reduction of an assembled matrix (a FieldField kernel: 1 or 3
/// components per node): its row sums or its diagonal
/// (tc_assembly_row_sums_and_diagonal), into a node vector.
struct row_reduction {
  int matrix, target;
  bool row_sums;
};
constexpr row_reduction kRowReductions[] = {
    {TC_FIELD_FIELD_SCALAR, RESULT_LUMPED_MASS, true},
    {TC_FIELD_FIELD_VECTOR, RESULT_STIFFNESS_DIAGONAL, false},
    {TC_FIELD_FIELD_TENSOR, RESULT_ELASTICITY_DIAGONAL, false}};

/// Where each result lives in a tc_loop_results.
double **host_slot(tc_loop_results *r, int which) {
  double **slots[RESULT_COUNT] = {&r->mass,
                                  &r->stiffness,
                                  &r->elasticity,
                                  &r->load,
                                  &r->flux_load,
                                  &r->internal_force,
                                  &r->cell_u2,
                                  &r->cell_grad_u2,
                                  &r->cell_stress_strain,
                                  &r->element_matrices[0],
                                  &r->element_matrices[1],
                                  &r->element_matrices[2],
                                  &r->cell_volume,
                                  &r->lumped_mass,
                                  &r->stiffness_diagonal,
                                  &r->elasticity_diagonal};
  return slots[which];
}

struct device_csr {
  int64_t num_rows, num_entries;
  int64_t *row_offsets, *columns;
};

} // namespace

struct tc_loop_cuda {
  cudaStream_t stream;
  int64_t num_cells, num_nodes, batch_cells, num_points;
  int num_fields;
  tc_physics_fields fields;
  /* mesh */
  double *coords;
  int64_t *cell_nodes, *node_cell_offsets, *node_cells;
  const int64_t *host_cell_nodes; /* the mesh's own array, for the node range of a batch */
  int *node_cell_slots;
  /* reference basis and quadrature */
  double *ref_values, *ref_gradients, *weights;
  /* CSR structures: [0] one component per node, [1] three */
  device_csr graphs[2];
  /* geometry of the current batch, cell index fastest (stride batch_cells):
   * node_coords [F][3][.], inverses [P][9][.], measures [P][.] */
  double *node_coords, *inverses, *measures;
  int *inverted; ///< set by the geometry kernel when some det J <= 0
  int64_t geometry_cells; ///< cells of the batch formed last (-1: none, or it failed)
  /* results */
  double *results[RESULT_COUNT];
  int64_t result_counts[RESULT_COUNT];
};

namespace {

/* ---- geometry (tc_geometry.c) ---- */

/// node_coords(a,i,c) = coords of node a of cell begin + c.
__global__ void gather_coords_kernel(const double *__restrict__ coords,
                                     const int64_t *__restrict__ cell_nodes, int num_fields,
                                     int64_t begin, int64_t cells, int64_t stride,
                                     double *__restrict__ node_coords) {
  for (int64_t t = first_item(); t < cells * num_fields; t += item_stride()) {
    const int64_t c = t % cells, a = t / cells;
    const int64_t node = cell_nodes[(begin + c) * num_fields + a];
    for (int i = 0; i < 3; ++i)
      node_coords[(a * 3 + i) * stride + c] = coords[3 * node + i];
  }
}

/// Per (cell, point): J, det J, J^{-1}, measure = w_q det J; flags det J <= 0.
__global__ void geometry_kernel(const double *__restrict__ node_coords,
                                const double *__restrict__ ref_gradients,
                                const double *__restrict__ weights, int num_fields,
                                int64_t num_points, int64_t cells, int64_t stride,
                                double *__restrict__ inverses, double *__restrict__ measures,
                                int *inverted) {
  for (int64_t t = first_item(); t < cells * num_points; t += item_stride()) {
    const int64_t c = t % cells, q = t / cells;
    double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int a = 0; a < num_fields; ++a) {
      const double *g = ref_gradients + (a * num_points + q) * 3;
      for (int i = 0; i < 3; ++i) {
        const double x = node_coords[(a * 3 + i) * stride + c];
        for (int j = 0; j < 3; ++j)
          J[3 * i + j] += x * g[j];
      }
    }
    const double c00 = J[4] * J[8] - J[5] * J[7];
    const double c01 = J[5] * J[6] - J[3] * J[8];
    const double c02 = J[3] * J[7] - J[4] * J[6];
    const double det = J[0] * c00 + J[1] * c01 + J[2] * c02;
    if (!(det > 0.0))
      *inverted = 1;
    const double r = 1.0 / det;
    const double inv[9] = {
        c00 * r, (J[2] * J[7] - J[1] * J[8]) * r, (J[1] * J[5] - J[2] * J[4]) * r,
        c01 * r, (J[0] * J[8] - J[2] * J[6]) * r, (J[2] * J[3] - J[0] * J[5]) * r,
        c02 * r, (J[1] * J[6] - J[0] * J[7]) * r, (J[0] * J[4] - J[1] * J[3]) * r};
    for (int k = 0; k < 9; ++k)
      inverses[(q * 9 + k) * stride + c] = inv[k];
    measures[q * stride + c] = weights[q] * det;
  }
}

/// volume[begin + c] = sum of cell c's measures, ascending q (as the host).
__global__ void volume_kernel(const double *__restrict__ measures, int64_t num_points,
                              int64_t begin, int64_t cells, int64_t stride,
                              double *__restrict__ volume) {
  for (int64_t c = first_item(); c < cells; c += item_stride()) {
    double sum = 0.0;
    for (int64_t q = 0; q < num_points; ++q)
      sum += measures[q * stride + c];
    volume[begin + c] = sum;
  }
}

/* ---- contraction inputs (tc_function_space.c, tc_physics.c) ---- */

/// What the input kernels read: the batch's geometry and the basis.
struct geometry_view {
  const double *node_coords, *inverses, *measures, *ref_values, *ref_gradients;
  int64_t stride, num_points;
  int num_fields;
};

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

__device__ double field_u(const tc_physics_fields &f, const double x[3]) {
  return f.u0 + f.g[0] * x[0] + f.g[1] * x[1] + f.g[2] * x[2];
}

__device__ void field_w(const tc_physics_fields &f, const double x[3], double w[3]) {
  for (int i = 0; i < 3; ++i)
    w[i] = f.w0[i] + f.W[i][0] * x[0] + f.W[i][1] * x[1] + f.W[i][2] * x[2];
}

/// sigma = lambda tr(eps) I + 2 mu eps, both row-major 3x3.
__device__ void stress_of_strain(const tc_physics_fields &f, const double eps[9],
                                 double sigma[9]) {
  const double trace = eps[0] + eps[4] + eps[8];
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k)
      sigma[3 * j + k] = (j == k ? f.lambda * trace : 0.0) + 2.0 * f.mu * eps[3 * j + k];
}

/// out = eps, or dV sigma(eps) when weighted.
__device__ void strain_or_stress(const tc_physics_fields &f, const double eps[9], bool stress,
                                 double dV, double out[9]) {
  if (!stress) {
    for (int k = 0; k < 9; ++k)
      out[k] = eps[k];
    return;
  }
  double sigma[9];
  stress_of_strain(f, eps, sigma);
  for (int k = 0; k < 9; ++k)
    out[k] = dV * sigma[k];
}

/// The d1 x d2 values of entry (c, i1, i2) of input Input, row-major.
template <int Input>
__device__ void input_entry(const geometry_view &g, const tc_physics_fields &f, int64_t c,
                            int64_t i1, int64_t i2, double v[9]) {
  const int64_t P = g.num_points;
  const int F = g.num_fields;
  if constexpr (Input == TC_INPUT_VALUES || Input == TC_INPUT_WEIGHTED_VALUES) {
    const double scale = Input == TC_INPUT_WEIGHTED_VALUES ? measure_at(g, c, i2) : 1.0;
    v[0] = scale * g.ref_values[i1 * P + i2];
  } else if constexpr (Input == TC_INPUT_GRADIENTS || Input == TC_INPUT_WEIGHTED_GRADIENTS) {
    double inv[9];
    load_inverse(g, c, i2, inv);
    const double scale = Input == TC_INPUT_WEIGHTED_GRADIENTS ? measure_at(g, c, i2) : 1.0;
    physical_gradient(g, inv, i1, i2, scale, v);
  } else if constexpr (Input == TC_INPUT_STRAINS || Input == TC_INPUT_WEIGHTED_STRESSES) {
    const int64_t a = i1 / 3, q = i2;
    const int i = (int)(i1 % 3);
    double inv[9], grad[3], eps[9];
    load_inverse(g, c, q, inv);
    physical_gradient(g, inv, a, q, 1.0, grad);
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        eps[3 * j + k] = 0.5 * ((i == j ? grad[k] : 0.0) + (i == k ? grad[j] : 0.0));
    const bool stress = Input == TC_INPUT_WEIGHTED_STRESSES;
    strain_or_stress(f, eps, stress, stress ? measure_at(g, c, q) : 1.0, v);
  } else if constexpr (Input == TC_INPUT_FIELD_U || Input == TC_INPUT_WEIGHTED_FIELD_U) {
    const int64_t q = i1;
    double u = 0.0;
    for (int a = 0; a < F; ++a) {
      double x[3];
      node_position(g, c, a, x);
      u += field_u(f, x) * g.ref_values[a * P + q];
    }
    v[0] = Input == TC_INPUT_FIELD_U ? u : measure_at(g, c, q) * u;
  } else if constexpr (Input == TC_INPUT_GRADIENT_U_CELL) {
    for (int d = 0; d < 3; ++d)
      v[d] = f.g[d];
  } else if constexpr (Input == TC_INPUT_GRADIENT_U || Input == TC_INPUT_WEIGHTED_GRADIENT_U) {
    const int64_t q = i1;
    double inv[9], sum[3] = {0.0, 0.0, 0.0};
    load_inverse(g, c, q, inv);
    for (int a = 0; a < F; ++a) {
      double x[3], grad[3];
      node_position(g, c, a, x);
      physical_gradient(g, inv, a, q, 1.0, grad);
      const double u = field_u(f, x);
      for (int d = 0; d < 3; ++d)
        sum[d] += u * grad[d];
    }
    const double scale = Input == TC_INPUT_GRADIENT_U ? 1.0 : measure_at(g, c, q);
    for (int d = 0; d < 3; ++d)
      v[d] = Input == TC_INPUT_GRADIENT_U ? sum[d] : scale * sum[d];
  } else { /* TC_INPUT_STRAIN_W, TC_INPUT_WEIGHTED_STRESS_W: of the interpolant w_h */
    const int64_t q = i1;
    double inv[9], H[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, eps[9];
    load_inverse(g, c, q, inv);
    for (int a = 0; a < F; ++a) {
      double x[3], w[3], grad[3];
      node_position(g, c, a, x);
      field_w(f, x, w);
      physical_gradient(g, inv, a, q, 1.0, grad);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          H[3 * i + j] += w[i] * grad[j];
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        eps[3 * i + j] = 0.5 * (H[3 * i + j] + H[3 * j + i]);
    const bool stress = Input == TC_INPUT_WEIGHTED_STRESS_W;
    strain_or_stress(f, eps, stress, stress ? measure_at(g, c, q) : 1.0, v);
  }
}

/// Layout left: one thread per (cell, i1, i2), cell index fastest, so that a
/// warp's reads of the geometry (stored cell-fastest) and its stores are
/// contiguous.
template <typename Real, int Input>
__global__ void input_left_kernel(geometry_view g, tc_physics_fields f, int64_t cells,
                                  input_shape s, Real *__restrict__ out) {
  constexpr int d1 = tensor_d1(Input), d2 = tensor_d2(Input);
  const int64_t per_cell = s.m1 * s.m2;
  for (int64_t t = first_item(); t < cells * per_cell; t += item_stride()) {
    const int64_t c = t % cells, entry = t / cells;
    const int64_t i1 = entry / s.m2, i2 = entry % s.m2;
    double v[9];
    input_entry<Input>(g, f, c, i1, i2, v);
#pragma unroll
    for (int t1 = 0; t1 < d1; ++t1)
#pragma unroll
      for (int t2 = 0; t2 < d2; ++t2)
        out[c + cells * (i1 + s.m1 * (i2 + s.m2 * (t1 + d1 * t2)))] = (Real)v[t1 * d2 + t2];
  }
}

/// Layout right tiles hold kRightTileWords words: 32 cells of 144 words, or,
/// for elements whose strains take more than kRightLongCell words a cell,
/// 8 cells of 576 (each cell's run of the tile is then 4.6 KB long). H200,
/// the mini-app's inputs in layout right (docs/cuda.md): 24^3 Q2 cells
/// (strains of 91,125 words a cell) 0.063 s in 8-cell tiles against 0.082
/// in 32-cell ones; 64^3 Q1 cells (5,832) 0.092 s in 32-cell tiles against
/// 0.098 in 8-cell ones. Measured at those two elements only.
constexpr int kRightTileWords = 4608;
constexpr int64_t kRightLongCell = 8192;

/// Layout right: a block computes a tile of Cells cells by kRightTileWords /
/// (Cells d1 d2) entries with the cell index fastest across the threads (so
/// the geometry's reads are contiguous, as in layout left), parks it in
/// shared memory, and stores each cell's share of the tile, one contiguous
/// run in layout right, with consecutive threads on consecutive words. (One
/// thread per entry in layout-right order read the geometry 8 bytes a cache
/// sector and stored d1 d2 words apart: the mini-app's inputs took 2.7x (Q1)
/// and 3.2x (Q2) as long as in layout left on an H200, docs/cuda.md.)
template <typename Real, int Input, int Cells>
__global__ void __launch_bounds__(tc_cuda_grid::kThreads)
    input_right_kernel(geometry_view g, tc_physics_fields f, int64_t cells, input_shape s,
                       Real *__restrict__ out) {
  constexpr int words = tensor_d1(Input) * tensor_d2(Input);
  constexpr int cell_words = kRightTileWords / Cells, entries = cell_words / words;
  constexpr int pitch = cell_words + 1; // odd, so that the cells fall in distinct banks
  __shared__ Real tile[Cells * pitch];
  const int64_t per_cell = s.m1 * s.m2;
  const int64_t cell_tiles = (cells + Cells - 1) / Cells;
  const int64_t tiles = cell_tiles * ((per_cell + entries - 1) / entries);
  const int lane = threadIdx.x % Cells, row = threadIdx.x / Cells, rows = blockDim.x / Cells;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c0 = (t % cell_tiles) * Cells, e0 = (t / cell_tiles) * entries;
    const int tile_cells = (int)(cells - c0 < Cells ? cells - c0 : Cells);
    const int tile_entries = (int)(per_cell - e0 < entries ? per_cell - e0 : entries);
    if (lane < tile_cells)
      for (int e = row; e < tile_entries; e += rows) {
        double v[9];
        input_entry<Input>(g, f, c0 + lane, (e0 + e) / s.m2, (e0 + e) % s.m2, v);
#pragma unroll
        for (int k = 0; k < words; ++k)
          tile[lane * pitch + e * words + k] = (Real)v[k];
      }
    __syncthreads();
    const int run = tile_entries * words; // words of each cell in this tile
    for (int i = threadIdx.x; i < tile_cells * run; i += blockDim.x) {
      const int cell = i / run, word = i % run;
      out[((c0 + cell) * per_cell + e0) * words + word] = tile[cell * pitch + word];
    }
    __syncthreads();
  }
}

/// Launches input_right_kernel in tiles of Cells cells.
template <typename Real, int Input, int Cells>
tc_err launch_input_right(const tc_loop_cuda *l, const geometry_view &g, int64_t cells,
                          input_shape s, void *output) {
  constexpr int entries = kRightTileWords / Cells / (tensor_d1(Input) * tensor_d2(Input));
  const int64_t tiles = (cells + Cells - 1) / Cells * ((s.m1 * s.m2 + entries - 1) / entries);
  auto kernel = input_right_kernel<Real, Input, Cells>;
  TC_LAUNCH(kernel, tiles * tc_cuda_grid::kThreads, l->stream, g, l->fields, cells, s,
            (Real *)output);
  return TC_SUCCESS;
}

/// Launches input_left_kernel or input_right_kernel for the run-time input
/// (templates instantiated for each of the TC_INPUT_COUNT inputs).
template <typename Real, int Input = 0>
tc_err launch_input(const tc_loop_cuda *l, int input, int64_t cells, bool left, void *output) {
  if constexpr (Input < TC_INPUT_COUNT) {
    if (input != Input)
      return launch_input<Real, Input + 1>(l, input, cells, left, output);
    const geometry_view g = {l->node_coords, l->inverses,   l->measures,  l->ref_values,
                             l->ref_gradients, l->batch_cells, l->num_points, l->num_fields};
    const input_shape s = shape_of((tc_physics_input)Input, l->num_fields, l->num_points);
    if (left) {
      auto kernel = input_left_kernel<Real, Input>;
      TC_LAUNCH(kernel, cells * s.m1 * s.m2, l->stream, g, l->fields, cells, s, (Real *)output);
      return TC_SUCCESS;
    }
    const input_shape strains = shape_of(TC_INPUT_STRAINS, l->num_fields, l->num_points);
    if (strains.m1 * strains.m2 * 9 > kRightLongCell)
      return launch_input_right<Real, Input, 8>(l, g, cells, s, output);
    return launch_input_right<Real, Input, 32>(l, g, cells, s, output);
  } else {
    TC_FAIL(TC_ERR_ARGUMENT, "unknown contraction input %d", input);
  }
}

/* ---- gather-assemble (tc_assembly.c) ---- */

/// What the gather kernels read of the mesh.
struct mesh_view {
  const int64_t *cell_nodes, *node_cell_offsets, *node_cells;
  const int *node_cell_slots;
  int num_fields;
};

/// An element block (C, rows, columns) as the contraction left it
/// (tc_element_block_get).
template <typename Real> struct block_view {
  const Real *data;
  int64_t cells, rows, columns;
  bool left;
  __device__ double get(int64_t c, int64_t row, int64_t column) const {
    const int64_t offset =
        left ? c + cells * (row + rows * column) : (c * rows + row) * columns + column;
    return (double)data[offset];
  }
};

/// Position of column in columns[begin, end) (it is there: the graph covers every cell).
__device__ int64_t find_column(const int64_t *columns, int64_t begin, int64_t end,
                               int64_t column) {
  while (end - begin > 1) {
    const int64_t middle = begin + (end - begin) / 2;
    if (columns[middle] <= column)
      begin = middle;
    else
      end = middle;
  }
  return begin;
}

/// One thread per CSR row (node, component i): adds entry (slot*comp+i,
/// b*comp+j) of each of the node's cells in [begin, begin + cells), ascending.
template <typename Real>
__global__ void matrix_kernel(mesh_view m, device_csr csr, int components, int64_t begin,
                              block_view<Real> block, int64_t first_row, int64_t end_row,
                              double *__restrict__ values) {
  const int64_t end = begin + block.cells;
  for (int64_t row = first_row + first_item(); row < end_row; row += item_stride()) {
    const int64_t node = row / components;
    const int i = (int)(row % components);
    const int64_t row_begin = csr.row_offsets[row], row_end = csr.row_offsets[row + 1];
    for (int64_t e = m.node_cell_offsets[node]; e < m.node_cell_offsets[node + 1]; ++e) {
      const int64_t cell = m.node_cells[e];
      if (cell < begin)
        continue;
      if (cell >= end)
        break; /* the node's cells are ascending */
      const int slot = m.node_cell_slots[e];
      const int64_t *cell_nodes = m.cell_nodes + cell * m.num_fields;
      for (int b = 0; b < m.num_fields; ++b)
        for (int j = 0; j < components; ++j) {
          const int64_t column = cell_nodes[b] * components + j;
          values[find_column(csr.columns, row_begin, row_end, column)] +=
              block.get(cell - begin, (int64_t)slot * components + i, (int64_t)b * components + j);
        }
    }
  }
}

/// One thread per node-vector entry (node, component i), cells ascending.
template <typename Real>
__global__ void vector_kernel(mesh_view m, int components, int64_t begin, block_view<Real> block,
                              int64_t first_row, int64_t end_row,
                              double *__restrict__ node_values) {
  const int64_t end = begin + block.cells;
  for (int64_t row = first_row + first_item(); row < end_row; row += item_stride()) {
    const int64_t node = row / components;
    const int i = (int)(row % components);
    double sum = node_values[row];
    for (int64_t e = m.node_cell_offsets[node]; e < m.node_cell_offsets[node + 1]; ++e) {
      const int64_t cell = m.node_cells[e];
      if (cell < begin)
        continue;
      if (cell >= end)
        break;
      sum += block.get(cell - begin, (int64_t)m.node_cell_slots[e] * components + i, 0);
    }
    node_values[row] = sum;
  }
}

/// kept[begin + c] = the (rows x columns) block of cell c, row-major.
template <typename Real>
__global__ void copy_cells_kernel(block_view<Real> block, int64_t begin,
                                  double *__restrict__ kept) {
  const int64_t per_cell = block.rows * block.columns;
  for (int64_t t = first_item(); t < block.cells * per_cell; t += item_stride()) {
    const int64_t c = t / per_cell, entry = t % per_cell;
    kept[begin * per_cell + t] = block.get(c, entry / block.columns, entry % block.columns);
  }
}

/// One thread per CSR row: the sum of the row's entries (into row_sums) and
/// its entry on the diagonal, 0 when absent (into diagonal), either output
/// may be null; entries in ascending order, as
/// tc_assembly_row_sums_and_diagonal.
__global__ void row_reduce_kernel(device_csr csr, const double *__restrict__ values,
                                  double *__restrict__ row_sums, double *__restrict__ diagonal) {
  for (int64_t row = first_item(); row < csr.num_rows; row += item_stride()) {
    double sum = 0.0, on_diagonal = 0.0;
    for (int64_t e = csr.row_offsets[row]; e < csr.row_offsets[row + 1]; ++e) {
      sum += values[e];
      if (csr.columns[e] == row)
        on_diagonal = values[e];
    }
    if (row_sums)
      row_sums[row] = sum;
    if (diagonal)
      diagonal[row] = on_diagonal;
  }
}

template <typename Real>
tc_err launch_assemble(const tc_loop_cuda *l, tc_kernel kernel, int64_t begin, int64_t cells,
                       bool left, const void *output) {
  const mesh_view m = {l->cell_nodes, l->node_cell_offsets, l->node_cells, l->node_cell_slots,
                       l->num_fields};
  const int components = tc_physics_kernel_components(kernel) == 3 ? 3 : 1;
  const int64_t size = (int64_t)l->num_fields * components;
  const Real *data = (const Real *)output;
  double *target = l->results[kernel];
  /* Only the rows of nodes the batch's cells touch can change: a range, as
   * nodes and cells are both numbered box by box (computed, not assumed). */
  int64_t first_node = INT64_MAX, last_node = -1;
  for (int64_t e = begin * l->num_fields; e < (begin + cells) * l->num_fields; ++e) {
    first_node = l->host_cell_nodes[e] < first_node ? l->host_cell_nodes[e] : first_node;
    last_node = l->host_cell_nodes[e] > last_node ? l->host_cell_nodes[e] : last_node;
  }
  if (last_node < 0)
    return TC_SUCCESS;
  const int64_t first_row = first_node * components, end_row = (last_node + 1) * components;
  if (tc_kernel_is_field_field(kernel)) {
    const block_view<Real> block = {data, cells, size, size, left};
    const device_csr csr = l->graphs[components == 3 ? 1 : 0];
    TC_LAUNCH(matrix_kernel<Real>, end_row - first_row, l->stream, m, csr, components, begin,
              block, first_row, end_row, target);
    double *kept = l->results[RESULT_ELEMENT_MATRICES + kernel];
    if (kept)
      TC_LAUNCH(copy_cells_kernel<Real>, cells * size * size, l->stream, block, begin, kept);
  } else if (tc_kernel_is_data_field(kernel)) {
    const block_view<Real> block = {data, cells, size, 1, left};
    TC_LAUNCH(vector_kernel<Real>, end_row - first_row, l->stream, m, components, begin, block,
              first_row, end_row, target);
  } else {
    const block_view<Real> block = {data, cells, 1, 1, left};
    TC_LAUNCH(copy_cells_kernel<Real>, cells, l->stream, block, begin, target);
  }
  return TC_SUCCESS;
}

/* ---- set-up ---- */

tc_err upload_graph(const tc_csr *host, device_csr *device, cudaStream_t stream) {
  device->num_rows = host->num_rows;
  device->num_entries = host->num_entries;
  TC_CALL(upload(&device->row_offsets, host->row_offsets, host->num_rows + 1, "CSR row offsets",
                 stream));
  TC_CALL(upload(&device->columns, host->columns, host->num_entries, "CSR columns", stream));
  return TC_SUCCESS;
}

int64_t result_count(const tc_loop_cuda *l, int which) {
  if (which == RESULT_CELL_VOLUME)
    return l->num_cells;
  for (const row_reduction &reduction : kRowReductions)
    if (which == reduction.target)
      return l->num_nodes * tc_physics_kernel_components((tc_kernel)reduction.matrix);
  if (which >= RESULT_ELEMENT_MATRICES) {
    const tc_kernel kernel = (tc_kernel)(which - RESULT_ELEMENT_MATRICES);
    const int components = tc_physics_kernel_components(kernel) == 3 ? 3 : 1;
    const int64_t size = (int64_t)l->num_fields * components;
    return l->num_cells * size * size;
  }
  const tc_kernel kernel = (tc_kernel)which;
  const int components = tc_physics_kernel_components(kernel);
  if (tc_kernel_is_field_field(kernel))
    return l->graphs[components == 3 ? 1 : 0].num_entries;
  if (tc_kernel_is_data_field(kernel))
    return l->num_nodes * components;
  return l->num_cells;
}

tc_err setup(tc_loop_cuda *l, const tc_mesh_local *mesh, const double *ref_values,
             const double *ref_gradients, const double *weights, const tc_csr *scalar_graph,
             const tc_csr *vector_graph, const tc_loop_results *selected) {
  const int64_t F = l->num_fields, P = l->num_points, C = l->batch_cells;
  const int64_t links = mesh->node_cell_offsets[mesh->num_nodes];
  cudaStream_t s = l->stream;
  TC_CALL(upload(&l->coords, mesh->coords, 3 * mesh->num_nodes, "node coordinates", s));
  TC_CALL(upload(&l->cell_nodes, mesh->cell_nodes, mesh->num_cells * F, "cell nodes", s));
  TC_CALL(upload(&l->node_cell_offsets, mesh->node_cell_offsets, mesh->num_nodes + 1,
                 "node->cell offsets", s));
  TC_CALL(upload(&l->node_cells, mesh->node_cells, links, "node->cell cells", s));
  TC_CALL(upload(&l->node_cell_slots, mesh->node_cell_slots, links, "node->cell slots", s));
  TC_CALL(upload(&l->ref_values, ref_values, F * P, "basis values", s));
  TC_CALL(upload(&l->ref_gradients, ref_gradients, F * P * 3, "basis gradients", s));
  TC_CALL(upload(&l->weights, weights, P, "quadrature weights", s));
  TC_CALL(upload_graph(scalar_graph, &l->graphs[0], s));
  TC_CALL(upload_graph(vector_graph, &l->graphs[1], s));
  TC_CALL(device_alloc(&l->node_coords, C * F * 3, "batch node coordinates"));
  TC_CALL(device_alloc(&l->inverses, C * P * 9, "batch inverse Jacobians"));
  TC_CALL(device_alloc(&l->measures, C * P, "batch measures"));
  TC_CALL(device_alloc(&l->inverted, 1, "inverted-cell flag"));
  tc_loop_results wanted = *selected;
  for (const row_reduction &reduction : kRowReductions)
    TC_CHECK(!*host_slot(&wanted, reduction.target) || *host_slot(&wanted, reduction.matrix),
             TC_ERR_ARGUMENT, "tc_loop_cuda_create: %s selected without its matrix",
             reduction.row_sums ? "row sums" : "a diagonal");
  for (int which = 0; which < RESULT_COUNT; ++which) {
    if (!*host_slot(&wanted, which))
      continue;
    l->result_counts[which] = result_count(l, which);
    TC_CALL(device_alloc(&l->results[which], l->result_counts[which], "assembled results"));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(s));
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_loop_cuda_create(const tc_mesh_local *mesh, int64_t batch_cells,
                                      int64_t num_points, const double *ref_values,
                                      const double *ref_gradients, const double *weights,
                                      const tc_physics_fields *fields,
                                      const tc_csr *scalar_graph, const tc_csr *vector_graph,
                                      const tc_loop_results *selected, void *stream,
                                      tc_loop_cuda **loop) {
  TC_CHECK(mesh && ref_values && ref_gradients && weights && fields && scalar_graph &&
               vector_graph && selected && loop,
           TC_ERR_ARGUMENT, "tc_loop_cuda_create: a required argument is NULL");
  TC_CHECK(batch_cells >= 1 && num_points >= 1, TC_ERR_ARGUMENT,
           "tc_loop_cuda_create: %lld cells per batch and %lld points (need >= 1 each)",
           (long long)batch_cells, (long long)num_points);
  tc_loop_cuda *created = (tc_loop_cuda *)calloc(1, sizeof *created);
  TC_CHECK(created, TC_ERR_MEMORY, "out of memory allocating the GPU loop");
  created->stream = (cudaStream_t)stream;
  created->num_cells = mesh->num_cells;
  created->num_nodes = mesh->num_nodes;
  created->host_cell_nodes = mesh->cell_nodes;
  created->batch_cells = batch_cells;
  created->num_points = num_points;
  created->num_fields = mesh->nodes_per_cell;
  created->fields = *fields;
  created->geometry_cells = -1;
  tc_err err = setup(created, mesh, ref_values, ref_gradients, weights, scalar_graph,
                     vector_graph, selected);
  if (err != TC_SUCCESS) {
    tc_loop_cuda_destroy(&created);
    return err;
  }
  *loop = created;
  return TC_SUCCESS;
}

extern "C" void tc_loop_cuda_destroy(tc_loop_cuda **loop) {
  tc_loop_cuda *l = *loop;
  if (!l)
    return;
  device_free(&l->coords);
  device_free(&l->cell_nodes);
  device_free(&l->node_cell_offsets);
  device_free(&l->node_cells);
  device_free(&l->node_cell_slots);
  device_free(&l->ref_values);
  device_free(&l->ref_gradients);
  device_free(&l->weights);
  for (device_csr &graph : l->graphs) {
    device_free(&graph.row_offsets);
    device_free(&graph.columns);
  }
  device_free(&l->node_coords);
  device_free(&l->inverses);
  device_free(&l->measures);
  device_free(&l->inverted);
  for (double *&result : l->results)
    device_free(&result);
  free(l);
  *loop = NULL;
}

extern "C" tc_err tc_loop_cuda_zero(tc_loop_cuda *loop) {
  for (int which = 0; which < RESULT_COUNT; ++which)
    if (loop->results[which] && (which < RESULT_ELEMENT_MATRICES || which == RESULT_CELL_VOLUME))
      TC_CUDA_CALL(cudaMemsetAsync(loop->results[which], 0,
                                   (size_t)loop->result_counts[which] * sizeof(double),
                                   loop->stream));
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_geometry(tc_loop_cuda *loop, int64_t begin, int64_t cells) {
  tc_loop_cuda *l = loop;
  TC_CHECK(begin >= 0 && cells >= 0 && cells <= l->batch_cells && begin + cells <= l->num_cells,
           TC_ERR_ARGUMENT,
           "GPU geometry of cells [%lld, %lld): outside the %lld local cells or more than %lld "
           "per batch",
           (long long)begin, (long long)(begin + cells), (long long)l->num_cells,
           (long long)l->batch_cells);
  l->geometry_cells = -1;
  const int64_t S = l->batch_cells;
  TC_CUDA_CALL(cudaMemsetAsync(l->inverted, 0, sizeof(int), l->stream));
  TC_LAUNCH(gather_coords_kernel, cells * l->num_fields, l->stream, l->coords, l->cell_nodes,
            l->num_fields, begin, cells, S, l->node_coords);
  TC_LAUNCH(geometry_kernel, cells * l->num_points, l->stream, l->node_coords, l->ref_gradients,
            l->weights, l->num_fields, l->num_points, cells, S, l->inverses, l->measures,
            l->inverted);
  if (l->results[RESULT_CELL_VOLUME])
    TC_LAUNCH(volume_kernel, cells, l->stream, l->measures, l->num_points, begin, cells, S,
              l->results[RESULT_CELL_VOLUME]);
  int inverted = 0;
  TC_CUDA_CALL(cudaMemcpyAsync(&inverted, l->inverted, sizeof inverted, cudaMemcpyDeviceToHost,
                               l->stream));
  TC_CUDA_CALL(cudaStreamSynchronize(l->stream));
  TC_CHECK(!inverted, TC_ERR_INPUT,
           "an inverted or degenerate cell in cells %lld..%lld of this rank: lower "
           "mesh.distortion",
           (long long)begin, (long long)(begin + cells - 1));
  l->geometry_cells = cells;
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_build_input(tc_loop_cuda *loop, tc_physics_input input,
                                           int64_t cells, tc_layout layout,
                                           tc_precision precision, void *output_device) {
  TC_CHECK(input >= 0 && input < TC_INPUT_COUNT, TC_ERR_ARGUMENT, "unknown contraction input %d",
           (int)input);
  TC_CHECK(layout == TC_LAYOUT_RIGHT || layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)layout);
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  TC_CHECK(cells == loop->geometry_cells, TC_ERR_ARGUMENT,
           "GPU input of %lld cells, but the geometry last formed is of %lld cells",
           (long long)cells, (long long)loop->geometry_cells);
  TC_CHECK(output_device || cells == 0, TC_ERR_ARGUMENT, "GPU input: output is NULL");
  const bool left = layout == TC_LAYOUT_LEFT;
  if (precision == TC_DOUBLE)
    return launch_input<double>(loop, input, cells, left, output_device);
  return launch_input<float>(loop, input, cells, left, output_device);
}

extern "C" tc_err tc_loop_cuda_assemble(tc_loop_cuda *loop, tc_kernel kernel, int64_t begin,
                                        int64_t cells, tc_layout layout, tc_precision precision,
                                        const void *output_device) {
  TC_CHECK(kernel >= 0 && kernel < TC_KERNEL_COUNT, TC_ERR_ARGUMENT, "unknown kernel %d",
           (int)kernel);
  TC_CHECK(loop->results[kernel], TC_ERR_ARGUMENT,
           "GPU assembly of %s: its result was not selected when the GPU loop was created",
           tc_kernel_name(kernel));
  TC_CHECK(begin >= 0 && cells >= 0 && begin + cells <= loop->num_cells, TC_ERR_ARGUMENT,
           "element batch [%lld, %lld) is outside the %lld local cells", (long long)begin,
           (long long)(begin + cells), (long long)loop->num_cells);
  TC_CHECK(layout == TC_LAYOUT_RIGHT || layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)layout);
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  TC_CHECK(output_device || cells == 0, TC_ERR_ARGUMENT, "GPU assembly: output is NULL");
  const bool left = layout == TC_LAYOUT_LEFT;
  if (precision == TC_DOUBLE)
    return launch_assemble<double>(loop, kernel, begin, cells, left, output_device);
  return launch_assemble<float>(loop, kernel, begin, cells, left, output_device);
}

extern "C" tc_err tc_loop_cuda_reduce_rows(tc_loop_cuda *loop) {
  for (const row_reduction &reduction : kRowReductions) {
    double *target = loop->results[reduction.target];
    if (!target)
      continue;
    const int components = tc_physics_kernel_components((tc_kernel)reduction.matrix);
    const device_csr csr = loop->graphs[components == 3 ? 1 : 0];
    TC_LAUNCH(row_reduce_kernel, csr.num_rows, loop->stream, csr, loop->results[reduction.matrix],
              reduction.row_sums ? target : nullptr, reduction.row_sums ? nullptr : target);
  }
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_copy_results(tc_loop_cuda *loop, int kinds,
                                            tc_loop_results *host) {
  TC_CHECK(kinds > 0 && (kinds & ~TC_LOOP_CUDA_ALL) == 0, TC_ERR_ARGUMENT,
           "GPU results: unknown kinds %#x to copy", (unsigned)kinds);
  for (int which = 0; which < RESULT_COUNT; ++which) {
    const int kind = is_matrix_result(which) ? TC_LOOP_CUDA_MATRICES : TC_LOOP_CUDA_VECTORS;
    if (!loop->results[which] || !(kinds & kind))
      continue;
    double *target = *host_slot(host, which);
    TC_CHECK(target, TC_ERR_ARGUMENT,
             "GPU results: host array %d is NULL but has a device twin", which);
    TC_CUDA_CALL(cudaMemcpyAsync(target, loop->results[which],
                                 (size_t)loop->result_counts[which] * sizeof(double),
                                 cudaMemcpyDeviceToHost, loop->stream));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(loop->stream));
  return TC_SUCCESS;
}

extern "C" int tc_loop_cuda_node_vectors(tc_loop_cuda *loop, double *vectors[], int components[]) {
  constexpr int kNodeVectors[TC_LOOP_CUDA_MAX_NODE_VECTORS] = {
      RESULT_LUMPED_MASS,   RESULT_STIFFNESS_DIAGONAL, RESULT_ELASTICITY_DIAGONAL,
      TC_DATA_FIELD_SCALAR, TC_DATA_FIELD_VECTOR,      TC_DATA_FIELD_TENSOR};
  int count = 0;
  for (int which : kNodeVectors)
    if (loop->results[which] && loop->num_nodes > 0) {
      vectors[count] = loop->results[which];
      components[count++] = (int)(loop->result_counts[which] / loop->num_nodes);
    }
  return count;
}
