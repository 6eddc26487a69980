/* tc_assembly_cuda: the gather-assemble of the assembly loop on the GPU (see
 * tc_assembly_cuda.h), a port of tc_assembly.c's gather: each assembled
 * entry is owned by one thread at a time and takes its cells' contributions
 * in ascending cell order, so the sums are bitwise the host's.
 * Matrices are gathered by a group of lanes per node, the node's rows held
 * in shared memory: for each of the node's cells the group reads the node's
 * rows of the element matrix and adds each value at its CSR position (from
 * the link positions, no search), with a barrier between cells so that an
 * entry takes its cells in order. A batch's gathers visit the range of
 * nodes its cells touch, or, where that range is mostly nodes they do not
 * touch (a batch shorter than a layer of the box touches a few rows of two
 * layers: 1,024 cells of a 128^3 box one node in 7 of their range), a list
 * of the nodes they touch. All the gathers of a batch (its nine outputs
 * and the element-matrix copies) run in one launch, each on blocks
 * of its own: on small worksets each is a wave of blocks or less, and
 * launched one after another they took the sum of their latencies. */
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
#include "tc_cuda_limits.cuh"
#include "tc_cuda_memory.cuh"
#include "tc_cuda_task_launch.cuh"

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
  __device__ int64_t offset(int64_t c, int64_t row, int64_t column) const {
    return left ? c + cells * (row + rows * column) : (c * rows + row) * columns + column;
  }
  __device__ double get(int64_t c, int64_t row, int64_t column) const {
    return (double)data[offset(c, row, column)];
  }
};

/// One gather of a launch (gather_kernel): kind (a tc_gather_kind), the
/// element block, the batch's first cell and the target, over `blocks`
/// thread blocks from first_block. Matrices and vectors visit `count`
/// nodes: node first + nodes[i] (the nodes the batch's cells touch), or,
/// where nodes is null, first + i (the range they span); cells copy the
/// block's `count` values.
template <typename Real> struct gather_task {
  int kind, components;
  block_view<Real> block;
  int64_t begin, first, count;
  const uint32_t *nodes;
  const int64_t *row_offsets;
  int lanes, groups, capacity; ///< matrices
  double *target;
  unsigned first_block, blocks;
};

/// Gathers of one launch: at most the nine kernels and the element-matrix
/// copies of the three FieldField ones.
constexpr int kMaxGathers = 12;
template <typename Real> struct gather_launch {
  mesh_view mesh;
  int count;
  gather_task<Real> tasks[kMaxGathers];
};

/// The i-th node a gather visits.
template <typename Real>
__device__ int64_t node_at(const gather_task<Real> &t, const uint32_t *nodes, int64_t i) {
  return t.first + (nodes ? (int64_t)nodes[i] : i);
}

/// Matrices: a group of `lanes` lanes (a power of two, at most a warp) per
/// node the task visits that the batch's cells touch: the node's Comp rows
/// are taken into shared memory (zero where the node's first cell is in the
/// batch), each of its cells in [begin, begin + cells), ascending, adds
/// entry (slot*Comp+i, b*Comp+j) at (i, position(b)*Comp+j), the lanes
/// taking a row's columns (contiguous in layout right; in layout left the
/// groups of a block, consecutive nodes, read neighbouring cells of each
/// column); then the rows go back in one coalesced pass.
/// A node's rows are one contiguous run of the CSR values; `capacity`
/// doubles of shared memory a group hold the longest. The sums are the same
/// additions in the same order as adding into device memory cell by cell,
/// which kept each row in L2 but waited on it for every cell.
template <typename Real, int Comp, bool Left>
__device__ void gather_node_rows(const mesh_view m, const gather_task<Real> &task, unsigned block,
                                 double *node_rows) {
  /* the task's fields in registers: the stores below cannot alias them */
  const int lanes = task.lanes, groups = task.groups, lane = threadIdx.x % lanes,
            group = threadIdx.x / lanes;
  if (group >= groups)
    return;
  const block_view<Real> b = task.block;
  const int64_t *const row_offsets = task.row_offsets;
  double *__restrict__ const values = task.target;
  const int64_t begin = task.begin, end = begin + b.cells, count = task.count,
                blocks = task.blocks;
  const uint32_t *const nodes = task.nodes;
  const unsigned mask =
      lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1) << (threadIdx.x % 32 / lanes * lanes);
  double *rows = node_rows + group * task.capacity;
  const int F = m.num_fields, columns = F * Comp;
  /* an entry's strides, by row and by column, in the element block */
  const int64_t row_stride = Left ? b.cells : b.columns,
                column_stride = Left ? b.cells * b.rows : 1;
  for (int64_t i = (int64_t)block * groups + group; i < count; i += blocks * groups) {
    const int64_t node = node_at(task, nodes, i);
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
      const Real *element =
          b.data + b.offset(cell - begin, (int64_t)m.node_cell_slots[e] * Comp, 0);
      for (int column = lane; column < columns; column += lanes) {
        const int bc = column / Comp, j = column - bc * Comp;
        const int target = positions[bc] * Comp + j;
        const Real *entry = element + column * column_stride;
#pragma unroll
        for (int i = 0; i < Comp; ++i)
          rows[offsets[i] + target] += (double)entry[i * row_stride];
      }
      __syncwarp(mask);
    }
    for (int k = lane; k < length; k += lanes)
      global[k] = rows[k];
    __syncwarp(mask);
  }
}

/// Node vectors: one thread per entry (node, component i), cells ascending.
template <typename Real>
__device__ void gather_vector(const mesh_view m, const gather_task<Real> &task, unsigned block) {
  const block_view<Real> b = task.block;
  double *__restrict__ const node_values = task.target;
  const int components = task.components;
  const int64_t begin = task.begin, end = begin + b.cells, items = task.count * components,
                blocks = task.blocks;
  const uint32_t *const nodes = task.nodes;
  for (int64_t item = first_item(block); item < items; item += item_stride(blocks)) {
    const int64_t node = node_at(task, nodes, item / components);
    const int i = (int)(item % components);
    const int64_t row = node * components + i;
    double sum = node_values[row];
    for (int64_t e = m.node_cell_offsets[node]; e < m.node_cell_offsets[node + 1]; ++e) {
      const int64_t cell = m.node_cells[e];
      if (cell < begin)
        continue;
      if (cell >= end)
        break;
      sum += b.get(cell - begin, (int64_t)m.node_cell_slots[e] * components + i, 0);
    }
    node_values[row] = sum;
  }
}

/// Cell arrays: target[begin + c] = the (rows x columns) block of cell c,
/// row-major.
template <typename Real>
__device__ void gather_cells(const gather_task<Real> &task, unsigned block) {
  const block_view<Real> b = task.block;
  double *__restrict__ const kept = task.target;
  const int64_t per_cell = b.rows * b.columns, begin = task.begin, items = task.count,
                blocks = task.blocks;
  for (int64_t v = first_item(block); v < items; v += item_stride(blocks)) {
    const int64_t c = v / per_cell, entry = v % per_cell;
    kept[begin * per_cell + v] = b.get(c, entry / b.columns, entry % b.columns);
  }
}

/// The code a gather runs: node rows of matrices of 1 or 3 components in
/// layout right or left, node vectors or cell values.
enum gather_body {
  NODE_ROWS_1,
  NODE_ROWS_3,
  LEFT_NODE_ROWS_1,
  LEFT_NODE_ROWS_3,
  NODE_VECTOR,
  CELL_VALUES,
  GATHER_BODIES
};

__host__ __device__ constexpr bool is_node_rows(int body) { return body <= LEFT_NODE_ROWS_3; }

template <typename Real> __host__ __device__ int body_of(const gather_task<Real> &t) {
  if (t.kind == TC_GATHER_MATRICES)
    return (t.block.left ? LEFT_NODE_ROWS_1 : NODE_ROWS_1) + (t.components == 3 ? 1 : 0);
  return t.kind == TC_GATHER_VECTORS ? NODE_VECTOR : CELL_VALUES;
}

template <typename Real, int Body>
__device__ void run_gather(const mesh_view m, const gather_task<Real> &t, unsigned block,
                           double *node_rows) {
  if constexpr (is_node_rows(Body))
    gather_node_rows<Real, Body == NODE_ROWS_3 || Body == LEFT_NODE_ROWS_3 ? 3 : 1,
                     Body >= LEFT_NODE_ROWS_1>(m, t, block, node_rows);
  else if constexpr (Body == NODE_VECTOR)
    gather_vector(m, t, block);
  else
    gather_cells(t, block);
}

/// run_gather for task t's body.
template <typename Real, int Body = 0>
__device__ void run_body(const mesh_view m, const gather_task<Real> &t, unsigned block,
                         double *node_rows) {
  if constexpr (Body < GATHER_BODIES) {
    if (body_of(t) != Body)
      return run_body<Real, Body + 1>(m, t, block, node_rows);
    run_gather<Real, Body>(m, t, block, node_rows);
  }
}

/// Every gather of a launch, each on its own range of blocks, so that a
/// batch's gathers (each a wave of blocks or less on small worksets) take
/// one launch; the dynamic shared memory holds the node rows of the
/// matrices.
template <typename Real>
__global__ void __launch_bounds__(tc_cuda_grid::kThreads)
    gather_kernel(const __grid_constant__ gather_launch<Real> launch) {
  extern __shared__ double node_rows[];
  const gather_task<Real> &t = launch.tasks[tc_cuda::task_of_block(launch)];
  run_body(launch.mesh, t, blockIdx.x - t.first_block, node_rows);
}

/// One gather in a launch of its own, with its code alone: for batches whose
/// gathers fill the GPU by themselves (gather_kernel holds every body, and
/// its registers are those of the largest).
template <typename Real, int Body>
__global__ void gather_one_kernel(const mesh_view m, const __grid_constant__ gather_task<Real> t) {
  extern __shared__ double node_rows[];
  run_gather<Real, Body>(m, t, blockIdx.x, node_rows);
}

/// One thread per CSR row: the row's sum, in ascending order as the host
/// adds it, and its diagonal entry, read where tc_assembly_diagonal_entry
/// puts it, as the host reads it.
__global__ void row_reduce_kernel(tc_csr csr, const uint16_t *__restrict__ positions,
                                  int components, const double *__restrict__ values,
                                  double *__restrict__ row_sums, double *__restrict__ diagonal) {
  for (int64_t row = first_item(); row < csr.num_rows; row += item_stride()) {
    const int64_t begin = csr.row_offsets[row], end = csr.row_offsets[row + 1];
    if (row_sums) {
      double sum = 0.0;
      for (int64_t e = begin; e < end; ++e)
        sum += values[e];
      row_sums[row] = sum;
    }
    if (diagonal)
      diagonal[row] =
          end > begin ? values[tc_assembly_diagonal_entry(&csr, positions, components, row)] : 0.0;
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
  uint16_t *link_positions, *diagonal_positions;
  /// Device copies of the row offsets: [0] one component per node, [1]
  /// three; the columns stay on the host (columns NULL).
  tc_csr graphs[2];
  /// CSR entries of the node with the most, over its 1 or 3 rows, per graph.
  int64_t most_node_entries[2];
  /// The nodes [first, last] each batch's cells touch, host (nodes and cells
  /// are both numbered box by box, so a batch's nodes form a narrow range;
  /// computed here, not assumed).
  std::vector<int64_t> batch_first_node, batch_last_node;
  /// Where a batch's cells touch few of the nodes of that range (a batch
  /// smaller than a layer of the box touches a few rows of two layers), the
  /// nodes they touch, ascending, as offsets from the batch's first node:
  /// the batch's run of `touched_nodes` (device) starts at
  /// batch_touched_begin[b] (-1: the gathers visit the whole range) and
  /// holds batch_touched_count[b] nodes.
  uint32_t *touched_nodes;
  std::vector<int64_t> batch_touched_begin, batch_touched_count;
  const int64_t *host_cell_nodes;
};

namespace {

/// The row offsets of a graph: the gathers place entries by link position
/// and the row reductions read diagonals by position, so no kernel reads the
/// columns (on a 128^3 Q1 box, 4.6 GB).
tc_err upload_graph(const tc_csr *host, tc_csr *device, cudaStream_t stream) {
  device->num_rows = host->num_rows;
  device->num_entries = host->num_entries;
  device->columns = nullptr;
  TC_CALL(upload(&device->row_offsets, host->row_offsets, host->num_rows + 1, "CSR row offsets",
                 stream));
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

/// The nodes a gather of a batch visits: node first + nodes[i] for i <
/// count, or first + i where nodes is null. From the tables for the loop's
/// own batches, else the range the block's cells span.
void batch_nodes(const tc_assembly_cuda *a, const tc_element_block *block, int64_t *first,
                 int64_t *count, const uint32_t **nodes) {
  const int64_t b = a->batch_cells > 0 ? block->cell_begin / a->batch_cells : 0;
  const int64_t full = std::min(a->batch_cells, a->num_cells - block->cell_begin);
  *nodes = nullptr;
  if (a->batch_cells > 0 && block->cell_begin % a->batch_cells == 0 &&
      block->batch_cells == full && b < (int64_t)a->batch_first_node.size()) {
    *first = a->batch_first_node[b];
    *count = a->batch_last_node[b] + 1 - *first;
    if (a->batch_touched_begin[b] >= 0) {
      *nodes = a->touched_nodes + a->batch_touched_begin[b];
      *count = a->batch_touched_count[b];
    }
    return;
  }
  int64_t last;
  node_range(a, block->cell_begin, block->batch_cells, first, &last);
  *count = last + 1 - *first;
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

/// The task of one gather: its rows or nodes, the blocks it takes, and the
/// doubles of shared memory a block needs (node rows of
/// matrices; 0 for the others). blocks = 0: nothing to do.
template <typename Real>
tc_err plan_gather(const tc_assembly_cuda *a, const tc_gather &g, gather_task<Real> *t,
                   int *shared_doubles) {
  *t = {};
  t->kind = g.kind;
  t->components = g.components;
  t->begin = g.block.cell_begin;
  t->target = g.target;
  *shared_doubles = 0;
  if (g.kind == TC_GATHER_CELLS) {
    t->block = view_of<Real>(&g.block, g.rows, g.columns);
    t->count = g.block.batch_cells * g.rows * g.columns;
    t->blocks = t->count > 0 ? tc_cuda_grid::grid_blocks(t->count) : 0;
    return TC_SUCCESS;
  }
  int64_t first, count;
  const uint32_t *nodes;
  batch_nodes(a, &g.block, &first, &count, &nodes);
  if (count <= 0)
    return TC_SUCCESS;
  t->first = first;
  t->count = count;
  t->nodes = nodes;
  const int64_t size = (int64_t)a->num_fields * g.components;
  const bool matrices = g.kind == TC_GATHER_MATRICES;
  t->block = view_of<Real>(&g.block, size, matrices ? size : 1);
  if (matrices) {
    /* lanes: the element's columns rounded up to a power of two, at most a
     * warp; groups: as many as a block and 48 KB of shared memory hold */
    int lanes = 1;
    while (lanes < size && lanes < 32)
      lanes *= 2;
    const int capacity =
        (int)std::max<int64_t>(a->most_node_entries[g.components == 3 ? 1 : 0], 1);
    const int groups = (int)std::min<int64_t>(tc_cuda_grid::kThreads / lanes,
                                              kGroupSharedBytes / (capacity * 8));
    TC_CHECK(groups >= 1, TC_ERR_UNSUPPORTED,
             "the GPU gather holds a node's rows in %d KB of shared memory; a node here has "
             "%d entries", kGroupSharedBytes / 1024, capacity);
    t->row_offsets = a->graphs[g.components == 3 ? 1 : 0].row_offsets;
    t->lanes = lanes;
    t->groups = groups;
    t->capacity = capacity;
    t->blocks =
        (unsigned)std::min<int64_t>((count + groups - 1) / groups, tc_cuda_grid::kMaxBlocks);
    *shared_doubles = groups * capacity;
    return TC_SUCCESS;
  }
  t->blocks = tc_cuda_grid::grid_blocks(count * g.components);
  return TC_SUCCESS;
}

/// Launches gather_one_kernel for task t's body: node rows with a block of
/// its groups' lanes and their shared memory, the others with kThreads.
template <typename Real, int Body = 0>
tc_err launch_one(const mesh_view &m, const gather_task<Real> &t, cudaStream_t stream) {
  if constexpr (Body < GATHER_BODIES) {
    if (body_of(t) != Body)
      return launch_one<Real, Body + 1>(m, t, stream);
    const bool rows = is_node_rows(Body);
    const int threads = rows ? t.groups * t.lanes : tc_cuda_grid::kThreads;
    const size_t shared = rows ? (size_t)t.groups * t.capacity * sizeof(double) : 0;
    gather_one_kernel<Real, Body><<<t.blocks, threads, shared, stream>>>(m, t);
    TC_CUDA_CALL(cudaGetLastError());
    return TC_SUCCESS;
  } else {
    TC_FAIL(TC_ERR_ARGUMENT, "unknown gather kind %d", t.kind);
  }
}

/// The gathers in one launch of gather_kernel, each on blocks of its own, or
/// one launch each where they fill the GPU by themselves
/// (tc_cuda::takes_one_launch).
template <typename Real>
tc_err launch_gathers(const tc_assembly_cuda *a, int count, const tc_gather *gathers,
                      cudaStream_t stream) {
  gather_launch<Real> launch = {};
  launch.mesh = view_of_mesh(a);
  unsigned blocks = 0;
  int shared = 0;
  for (int i = 0; i < count; ++i) {
    gather_task<Real> task;
    int task_shared = 0;
    TC_CALL(plan_gather(a, gathers[i], &task, &task_shared));
    if (task.blocks == 0)
      continue;
    shared = std::max(shared, task_shared);
    tc_cuda::add_task(launch, task, &blocks);
  }
  return tc_cuda::launch_tasks(
      launch, blocks,
      [&](const gather_task<Real> &t) { return launch_one(launch.mesh, t, stream); },
      [&] {
        gather_kernel<Real><<<blocks, tc_cuda_grid::kThreads, (size_t)shared * sizeof(double),
                              stream>>>(launch);
      });
}

/// A batch's gathers visit the nodes its cells touch rather than their
/// range where those are fewer than kTouchedShare of it.
constexpr double kTouchedShare = 0.75;

/// For each batch of batch_cells cells, in one pass over its cells' nodes
/// (stamped with the batch): the range [first, last] they touch and how
/// many they touch; where those are fewer than kTouchedShare of the range,
/// the batch's run of `lists` (tc_assembly_cuda::touched_nodes, before
/// upload).
void plan_batch_nodes(tc_assembly_cuda *a, std::vector<uint32_t> *lists) {
  const int64_t batches =
      a->batch_cells > 0 ? (a->num_cells + a->batch_cells - 1) / a->batch_cells : 0;
  const int64_t F = a->num_fields;
  a->batch_first_node.assign((size_t)batches, INT64_MAX);
  a->batch_last_node.assign((size_t)batches, -1);
  a->batch_touched_begin.assign((size_t)batches, -1);
  a->batch_touched_count.assign((size_t)batches, 0);
  std::vector<int64_t> stamp((size_t)a->num_nodes, -1);
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t begin = b * a->batch_cells,
                  end = std::min(begin + a->batch_cells, a->num_cells);
    int64_t &first = a->batch_first_node[b], &last = a->batch_last_node[b], touched = 0;
    for (int64_t e = begin * F; e < end * F; ++e) {
      const int64_t node = a->host_cell_nodes[e];
      first = std::min(first, node);
      last = std::max(last, node);
      touched += stamp[node] != b;
      stamp[node] = b;
    }
    const int64_t span = last + 1 - first;
    if (span <= 0 || span > (int64_t)UINT32_MAX || touched >= kTouchedShare * (double)span)
      continue;
    a->batch_touched_begin[b] = (int64_t)lists->size();
    a->batch_touched_count[b] = touched;
    for (int64_t node = first; node <= last; ++node)
      if (stamp[node] == b)
        lists->push_back((uint32_t)(node - first));
  }
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
  TC_CALL(upload(&a->diagonal_positions, tc_assembly_diagonal_positions(assembly), a->num_nodes,
                 "diagonal positions", s));
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
  std::vector<uint32_t> lists;
  plan_batch_nodes(a, &lists);
  TC_CALL(upload(&a->touched_nodes, lists.data(), (int64_t)lists.size(), "touched nodes", s));
  TC_CUDA_CALL(cudaStreamSynchronize(s)); /* the uploads, before `lists` goes */
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
  device_free(&a->diagonal_positions);
  device_free(&a->touched_nodes);
  for (tc_csr &graph : a->graphs) {
    device_free(&graph.row_offsets);
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

extern "C" tc_err tc_assembly_cuda_gather(const tc_assembly_cuda *assembly, int count,
                                          const tc_gather *gathers, void *stream) {
  TC_CHECK(count >= 0 && count <= kMaxGathers && (count == 0 || gathers), TC_ERR_ARGUMENT,
           "GPU gather of %d outputs (0 to %d in one launch)", count, kMaxGathers);
  for (int i = 0; i < count; ++i) {
    const tc_gather &g = gathers[i];
    TC_CALL(check_block(assembly, &g.block));
    TC_CHECK(g.kind == TC_GATHER_MATRICES || g.kind == TC_GATHER_VECTORS ||
                 g.kind == TC_GATHER_CELLS,
             TC_ERR_ARGUMENT, "GPU gather: unknown kind %d", (int)g.kind);
    TC_CHECK(g.kind == TC_GATHER_CELLS ? g.rows >= 1 && g.columns >= 1
                                       : g.components == 1 || g.components == 3,
             TC_ERR_ARGUMENT, "GPU gather: %d components, %lld x %lld a cell", g.components,
             (long long)g.rows, (long long)g.columns);
    TC_CHECK(g.target, TC_ERR_ARGUMENT, "GPU gather: the target is NULL");
    TC_CHECK(g.block.precision == gathers[0].block.precision, TC_ERR_ARGUMENT,
             "GPU gather: the outputs of one launch differ in precision");
  }
  if (count == 0)
    return TC_SUCCESS;
  const cudaStream_t queue = stream_or_own(assembly, stream);
  if (gathers[0].block.precision == TC_DOUBLE)
    return launch_gathers<double>(assembly, count, gathers, queue);
  return launch_gathers<float>(assembly, count, gathers, queue);
}

extern "C" tc_err tc_assembly_cuda_row_sums_and_diagonal(const tc_assembly_cuda *assembly,
                                                         int components, const double *values,
                                                         double *row_sums, double *diagonal) {
  const tc_csr &csr = assembly->graphs[components == 3 ? 1 : 0];
  TC_LAUNCH(row_reduce_kernel, csr.num_rows, assembly->stream, csr, assembly->diagonal_positions,
            components == 3 ? 3 : 1, values, row_sums, diagonal);
  return TC_SUCCESS;
}
