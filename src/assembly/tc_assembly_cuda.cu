/* tc_assembly_cuda: the gather-assemble of the assembly loop on the GPU (see
 * tc_assembly_cuda.h), a port of tc_assembly.c's gather: each assembled
 * entry is owned by one thread at a time and takes its cells' contributions
 * in ascending cell order, so the sums are bitwise the host's.
 * Matrices in layout right are gathered by a group of lanes per node, the
 * node's rows held in shared memory: for each of the node's cells the group
 * reads the node's rows of the element matrix, one contiguous run, and adds
 * each value at its CSR position (from the link positions, no search), with
 * a barrier between cells so that an entry takes its cells in order. Layout
 * left reads an element matrix's row with stride C, so there one thread per
 * CSR row walks its cells instead. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#define OMPI_SKIP_MPICXX 1 /* the C interface of MPI only */
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "tc_assembly_cuda.h"
#include "tc_cuda_call.h"
}

#include "tc_cuda_grid.cuh"
#include "tc_cuda_memory.cuh"

namespace {

using tc_cuda_grid::first_item;
using tc_cuda_grid::item_stride;
using tc_cuda_memory::device_alloc;
using tc_cuda_memory::device_free;
using tc_cuda_memory::upload;

/// What the gather kernels read of the mesh and the graph.
struct mesh_view {
  const int64_t *node_cell_offsets, *node_cells;
  const int *node_cell_slots;
  const uint16_t *link_positions; ///< [links][F]
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

/// A group of `lanes` lanes (a power of two, at most a warp) per node of
/// [first_node, end_node) that the batch's cells touch: the node's Comp rows
/// are taken into shared memory (zero where the node's first cell is in the
/// batch), each of its cells in [begin, begin + cells), ascending, adds
/// entry (slot*Comp+i, b*Comp+j) at (i, position(b)*Comp+j), the lanes
/// taking a row's columns, which are contiguous in layout right; then the
/// rows go back in one coalesced pass. A node's rows are one contiguous run
/// of the CSR values; `capacity` doubles of shared memory a group hold the
/// longest. The sums are the same additions in the same order as adding
/// into device memory cell by cell, which kept each row in L2 but waited on
/// it for every cell.
template <typename Real, int Comp>
__global__ void matrix_group_kernel(mesh_view m, const int64_t *__restrict__ row_offsets,
                                    int64_t begin, block_view<Real> block, int64_t first_node,
                                    int64_t end_node, int lanes, int capacity,
                                    double *__restrict__ values) {
  extern __shared__ double node_rows[];
  const int lane = threadIdx.x % lanes, group = threadIdx.x / lanes;
  const int groups = blockDim.x / lanes;
  const unsigned mask =
      lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1) << (threadIdx.x % 32 / lanes * lanes);
  double *rows = node_rows + group * capacity;
  const int64_t end = begin + block.cells;
  const int F = m.num_fields, columns = F * Comp;
  for (int64_t node = first_node + (int64_t)blockIdx.x * groups + group; node < end_node;
       node += (int64_t)gridDim.x * groups) {
    int64_t e = m.node_cell_offsets[node];
    const int64_t link_end = m.node_cell_offsets[node + 1];
    const bool first = e < link_end && m.node_cells[e] >= begin;
    while (e < link_end && m.node_cells[e] < begin)
      ++e;
    if (e == link_end || m.node_cells[e] >= end)
      continue; /* no cell of the batch (the same for the whole group) */
    double *global = values + row_offsets[node * Comp];
    const int length = (int)(row_offsets[(node + 1) * Comp] - row_offsets[node * Comp]);
    int offsets[Comp];
#pragma unroll
    for (int i = 0; i < Comp; ++i)
      offsets[i] = (int)(row_offsets[node * Comp + i] - row_offsets[node * Comp]);
    for (int k = lane; k < length; k += lanes)
      rows[k] = first ? 0.0 : global[k];
    __syncwarp(mask);
    for (; e < link_end; ++e) {
      const int64_t cell = m.node_cells[e];
      if (cell >= end)
        break; /* the node's cells are ascending */
      const uint16_t *positions = m.link_positions + e * F;
      const Real *element = block.data + ((cell - begin) * block.rows +
                                          (int64_t)m.node_cell_slots[e] * Comp) * block.columns;
      for (int column = lane; column < columns; column += lanes) {
        const int b = column / Comp, j = column - b * Comp;
        const int target = positions[b] * Comp + j;
#pragma unroll
        for (int i = 0; i < Comp; ++i)
          rows[offsets[i] + target] += (double)element[i * block.columns + column];
      }
      __syncwarp(mask);
    }
    for (int k = lane; k < length; k += lanes)
      global[k] = rows[k];
    __syncwarp(mask);
  }
}

/// A thread per CSR row (node, component i) of [first_row, end_row): as
/// matrix_warp_kernel, for blocks whose rows are strided (layout left).
template <typename Real>
__global__ void matrix_row_kernel(mesh_view m, const int64_t *__restrict__ row_offsets,
                                  int components, int64_t begin, block_view<Real> block,
                                  int64_t first_row, int64_t end_row,
                                  double *__restrict__ values) {
  const int64_t end = begin + block.cells;
  const int F = m.num_fields;
  for (int64_t row = first_row + first_item(); row < end_row; row += item_stride()) {
    const int64_t node = row / components;
    const int i = (int)(row % components);
    double *row_values = values + row_offsets[row];
    const int64_t link_begin = m.node_cell_offsets[node], link_end = m.node_cell_offsets[node + 1];
    if (link_begin < link_end && m.node_cells[link_begin] >= begin &&
        m.node_cells[link_begin] < end)
      for (int64_t e = 0; e < row_offsets[row + 1] - row_offsets[row]; ++e)
        row_values[e] = 0.0;
    for (int64_t e = link_begin; e < link_end; ++e) {
      const int64_t cell = m.node_cells[e];
      if (cell < begin)
        continue;
      if (cell >= end)
        break;
      const int slot = m.node_cell_slots[e];
      const uint16_t *positions = m.link_positions + e * F;
      for (int b = 0; b < F; ++b)
        for (int j = 0; j < components; ++j)
          row_values[positions[b] * components + j] += block.get(
              cell - begin, (int64_t)slot * components + i, (int64_t)b * components + j);
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

/// One thread per CSR row: the row's sum, in ascending order as the host
/// adds it, and its diagonal entry.
__global__ void row_reduce_kernel(const int64_t *__restrict__ row_offsets,
                                  const int64_t *__restrict__ columns, int64_t num_rows,
                                  const double *__restrict__ values, double *__restrict__ row_sums,
                                  double *__restrict__ diagonal) {
  for (int64_t row = first_item(); row < num_rows; row += item_stride()) {
    double sum = 0.0, on_diagonal = 0.0;
    for (int64_t e = row_offsets[row]; e < row_offsets[row + 1]; ++e) {
      sum += values[e];
      if (columns[e] == row)
        on_diagonal = values[e];
    }
    if (row_sums)
      row_sums[row] = sum;
    if (diagonal)
      diagonal[row] = on_diagonal;
  }
}

template <typename Real>
block_view<Real> view_of(const tc_element_block *block, int64_t rows, int64_t columns) {
  return {(const Real *)block->data, block->batch_cells, rows, columns,
          block->layout == TC_LAYOUT_LEFT};
}

} // namespace

struct tc_assembly_cuda {
  cudaStream_t stream;
  int num_fields;
  int64_t num_cells, num_nodes, batch_cells;
  int64_t *cell_nodes, *node_cell_offsets, *node_cells;
  int *node_cell_slots;
  uint16_t *link_positions;
  tc_csr graphs[2]; ///< device copies: [0] one component per node, [1] three
  /// CSR entries of the node with the most, over its 1 or 3 rows, per graph.
  int64_t most_node_entries[2];
  /// The nodes [first, last] each batch's cells touch, host (nodes and cells
  /// are both numbered box by box, so a batch's nodes form a narrow range;
  /// computed here, not assumed).
  std::vector<int64_t> batch_first_node, batch_last_node;
  const int64_t *host_cell_nodes;
};

namespace {

tc_err upload_graph(const tc_csr *host, tc_csr *device, cudaStream_t stream) {
  device->num_rows = host->num_rows;
  device->num_entries = host->num_entries;
  TC_CALL(upload(&device->row_offsets, host->row_offsets, host->num_rows + 1, "CSR row offsets",
                 stream));
  TC_CALL(upload(&device->columns, host->columns, host->num_entries, "CSR columns", stream));
  return TC_SUCCESS;
}

/// The nodes [first, last] cells [begin, begin + cells) touch (last < first: none).
void node_range(const tc_assembly_cuda *a, int64_t begin, int64_t cells, int64_t *first,
                int64_t *last) {
  *first = INT64_MAX;
  *last = -1;
  for (int64_t e = begin * a->num_fields; e < (begin + cells) * a->num_fields; ++e) {
    *first = a->host_cell_nodes[e] < *first ? a->host_cell_nodes[e] : *first;
    *last = a->host_cell_nodes[e] > *last ? a->host_cell_nodes[e] : *last;
  }
}

/// The node range of a batch: from the table for the loop's own batches.
void batch_nodes(const tc_assembly_cuda *a, const tc_element_block *block, int64_t *first,
                 int64_t *last) {
  const int64_t b = a->batch_cells > 0 ? block->cell_begin / a->batch_cells : 0;
  const int64_t full = std::min(a->batch_cells, a->num_cells - block->cell_begin);
  if (a->batch_cells > 0 && block->cell_begin % a->batch_cells == 0 &&
      block->batch_cells == full && b < (int64_t)a->batch_first_node.size()) {
    *first = a->batch_first_node[b];
    *last = a->batch_last_node[b];
    return;
  }
  node_range(a, block->cell_begin, block->batch_cells, first, last);
}

tc_err check_block(const tc_assembly_cuda *a, const tc_element_block *block) {
  TC_CHECK(block->cell_begin >= 0 && block->batch_cells >= 0 &&
               block->cell_begin + block->batch_cells <= a->num_cells,
           TC_ERR_ARGUMENT, "element batch [%lld, %lld) is outside the %lld local cells",
           (long long)block->cell_begin, (long long)(block->cell_begin + block->batch_cells),
           (long long)a->num_cells);
  TC_CHECK(block->layout == TC_LAYOUT_RIGHT || block->layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)block->layout);
  TC_CHECK(block->precision == TC_DOUBLE || block->precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)block->precision);
  TC_CHECK(block->data || block->batch_cells == 0, TC_ERR_ARGUMENT,
           "GPU assembly: the element block is NULL");
  return TC_SUCCESS;
}

/// The stream a call queues on: its own, or the assembly's.
cudaStream_t stream_or_own(const tc_assembly_cuda *a, void *stream) {
  return stream ? (cudaStream_t)stream : a->stream;
}

/// Shared memory a block of matrix_group_kernel takes at most (no opt-in).
constexpr int kGroupSharedBytes = 48 * 1024;

mesh_view view_of_mesh(const tc_assembly_cuda *a) {
  return {a->node_cell_offsets, a->node_cells, a->node_cell_slots, a->link_positions,
          a->num_fields};
}

template <typename Real>
tc_err launch_matrices(const tc_assembly_cuda *a, int components, const tc_element_block *block,
                       double *values, cudaStream_t stream) {
  int64_t first, last;
  batch_nodes(a, block, &first, &last);
  if (last < first)
    return TC_SUCCESS;
  const int64_t size = (int64_t)a->num_fields * components;
  const block_view<Real> view = view_of<Real>(block, size, size);
  const tc_csr &csr = a->graphs[components == 3 ? 1 : 0];
  if (!view.left) {
    /* lanes: the element's columns rounded up to a power of two, at most a
     * warp; groups: as many as 256 threads and 48 KB of shared memory hold */
    int lanes = 1;
    while (lanes < size && lanes < 32)
      lanes *= 2;
    const int capacity = (int)std::max<int64_t>(a->most_node_entries[components == 3 ? 1 : 0], 1);
    const int groups = std::min<int64_t>(256 / lanes, kGroupSharedBytes / (capacity * 8));
    TC_CHECK(groups >= 1, TC_ERR_UNSUPPORTED,
             "the GPU gather holds a node's rows in %d KB of shared memory; a node here has "
             "%d entries", kGroupSharedBytes / 1024, capacity);
    const int64_t nodes = last + 1 - first;
    const unsigned blocks =
        (unsigned)std::min<int64_t>((nodes + groups - 1) / groups, tc_cuda_grid::kMaxBlocks);
    const size_t shared = (size_t)groups * capacity * sizeof(double);
    if (components == 3)
      matrix_group_kernel<Real, 3><<<blocks, groups * lanes, shared, stream>>>(
          view_of_mesh(a), csr.row_offsets, block->cell_begin, view, first, last + 1, lanes,
          capacity, values);
    else
      matrix_group_kernel<Real, 1><<<blocks, groups * lanes, shared, stream>>>(
          view_of_mesh(a), csr.row_offsets, block->cell_begin, view, first, last + 1, lanes,
          capacity, values);
    TC_CUDA_CALL(cudaGetLastError());
  } else {
    TC_LAUNCH(matrix_row_kernel<Real>, (last + 1 - first) * components, stream,
              view_of_mesh(a), csr.row_offsets, components, block->cell_begin, view,
              first * components, (last + 1) * components, values);
  }
  return TC_SUCCESS;
}

template <typename Real>
tc_err launch_vectors(const tc_assembly_cuda *a, int components, const tc_element_block *block,
                      double *node_values, cudaStream_t stream) {
  int64_t first, last;
  batch_nodes(a, block, &first, &last);
  if (last < first)
    return TC_SUCCESS;
  const block_view<Real> view = view_of<Real>(block, (int64_t)a->num_fields * components, 1);
  TC_LAUNCH(vector_kernel<Real>, (last + 1 - first) * components, stream, view_of_mesh(a),
            components, block->cell_begin, view, first * components, (last + 1) * components,
            node_values);
  return TC_SUCCESS;
}

tc_err setup(tc_assembly_cuda *a, const tc_assembly *assembly, const tc_mesh_local *mesh) {
  const int64_t links = mesh->node_cell_offsets[mesh->num_nodes];
  cudaStream_t s = a->stream;
  TC_CALL(upload(&a->cell_nodes, mesh->cell_nodes, mesh->num_cells * a->num_fields, "cell nodes",
                 s));
  TC_CALL(upload(&a->node_cell_offsets, mesh->node_cell_offsets, mesh->num_nodes + 1,
                 "node->cell offsets", s));
  TC_CALL(upload(&a->node_cells, mesh->node_cells, links, "node->cell cells", s));
  TC_CALL(upload(&a->node_cell_slots, mesh->node_cell_slots, links, "node->cell slots", s));
  TC_CALL(upload(&a->link_positions, tc_assembly_link_positions(assembly), links * a->num_fields,
                 "link positions", s));
  TC_CALL(upload_graph(tc_assembly_graph(assembly, 1), &a->graphs[0], s));
  TC_CALL(upload_graph(tc_assembly_graph(assembly, 3), &a->graphs[1], s));
  for (int g = 0; g < 2; ++g) {
    const int components = g == 0 ? 1 : 3;
    const int64_t *offsets = tc_assembly_graph(assembly, components)->row_offsets;
    a->most_node_entries[g] = 0;
    for (int64_t node = 0; node < a->num_nodes; ++node)
      a->most_node_entries[g] =
          std::max(a->most_node_entries[g],
                   offsets[(node + 1) * components] - offsets[node * components]);
  }
  const int64_t batches =
      a->batch_cells > 0 ? (a->num_cells + a->batch_cells - 1) / a->batch_cells : 0;
  a->batch_first_node.resize((size_t)batches);
  a->batch_last_node.resize((size_t)batches);
  for (int64_t b = 0; b < batches; ++b)
    node_range(a, b * a->batch_cells, std::min(a->batch_cells, a->num_cells - b * a->batch_cells),
               &a->batch_first_node[b], &a->batch_last_node[b]);
  TC_CUDA_CALL(cudaStreamSynchronize(s));
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_assembly_cuda_create(const tc_assembly *assembly, const tc_mesh_local *mesh,
                                          int64_t batch_cells, void *stream,
                                          tc_assembly_cuda **created) {
  TC_CHECK(assembly && mesh && created, TC_ERR_ARGUMENT,
           "tc_assembly_cuda_create: a required argument is NULL");
  tc_assembly_cuda *a = new (std::nothrow) tc_assembly_cuda();
  TC_CHECK(a, TC_ERR_MEMORY, "out of memory allocating the GPU assembly");
  a->stream = (cudaStream_t)stream;
  a->num_fields = mesh->nodes_per_cell;
  a->num_cells = mesh->num_cells;
  a->num_nodes = mesh->num_nodes;
  a->batch_cells = batch_cells;
  a->host_cell_nodes = mesh->cell_nodes;
  tc_err err = setup(a, assembly, mesh);
  if (err != TC_SUCCESS) {
    tc_assembly_cuda_destroy(&a);
    return err;
  }
  *created = a;
  return TC_SUCCESS;
}

extern "C" void tc_assembly_cuda_destroy(tc_assembly_cuda **assembly) {
  tc_assembly_cuda *a = *assembly;
  if (!a)
    return;
  device_free(&a->cell_nodes);
  device_free(&a->node_cell_offsets);
  device_free(&a->node_cells);
  device_free(&a->node_cell_slots);
  device_free(&a->link_positions);
  for (tc_csr &graph : a->graphs) {
    device_free(&graph.row_offsets);
    device_free(&graph.columns);
  }
  delete a;
  *assembly = NULL;
}

extern "C" const int64_t *tc_assembly_cuda_cell_nodes(const tc_assembly_cuda *assembly) {
  return assembly->cell_nodes;
}

extern "C" const tc_csr *tc_assembly_cuda_graph(const tc_assembly_cuda *assembly,
                                                int components) {
  return &assembly->graphs[components == 3 ? 1 : 0];
}

extern "C" tc_err tc_assembly_cuda_add_matrices(const tc_assembly_cuda *assembly, int components,
                                                const tc_element_block *block, double *values,
                                                void *stream) {
  TC_CALL(check_block(assembly, block));
  const cudaStream_t queue = stream_or_own(assembly, stream);
  if (block->precision == TC_DOUBLE)
    return launch_matrices<double>(assembly, components, block, values, queue);
  return launch_matrices<float>(assembly, components, block, values, queue);
}

extern "C" tc_err tc_assembly_cuda_add_vectors(const tc_assembly_cuda *assembly, int components,
                                               const tc_element_block *block,
                                               double *node_values, void *stream) {
  TC_CALL(check_block(assembly, block));
  const cudaStream_t queue = stream_or_own(assembly, stream);
  if (block->precision == TC_DOUBLE)
    return launch_vectors<double>(assembly, components, block, node_values, queue);
  return launch_vectors<float>(assembly, components, block, node_values, queue);
}

extern "C" tc_err tc_assembly_cuda_copy_cells(const tc_assembly_cuda *assembly,
                                              const tc_element_block *block, int64_t rows,
                                              int64_t columns, double *kept, void *stream) {
  TC_CALL(check_block(assembly, block));
  const int64_t items = block->batch_cells * rows * columns;
  const cudaStream_t queue = stream_or_own(assembly, stream);
  if (block->precision == TC_DOUBLE)
    TC_LAUNCH(copy_cells_kernel<double>, items, queue,
              view_of<double>(block, rows, columns), block->cell_begin, kept);
  else
    TC_LAUNCH(copy_cells_kernel<float>, items, queue,
              view_of<float>(block, rows, columns), block->cell_begin, kept);
  return TC_SUCCESS;
}

extern "C" tc_err tc_assembly_cuda_row_sums_and_diagonal(const tc_assembly_cuda *assembly,
                                                         int components, const double *values,
                                                         double *row_sums, double *diagonal) {
  const tc_csr &csr = assembly->graphs[components == 3 ? 1 : 0];
  TC_LAUNCH(row_reduce_kernel, csr.num_rows, assembly->stream, csr.row_offsets, csr.columns,
            csr.num_rows, values, row_sums, diagonal);
  return TC_SUCCESS;
}
