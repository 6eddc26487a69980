/* tc_assembly: node graph, CSR structures and the deterministic
 * gather-assemble of element matrices and vectors (see tc_assembly.h). The
 * gather of a planned batch walks the batch's nodes, each with the range of
 * its links to the batch's cells, found once by tc_assembly_plan_batches;
 * element entries are read through loops specialised per layout and
 * precision, so that the common case (layout right, double) is plain
 * unit-stride runs. */
#include "tc_assembly.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tc_omp.h"

/* A node a batch touches: its links [first, first + count) to the batch's
 * cells (a node's cells are ascending, so they are consecutive). */
typedef struct {
  int64_t node;
  int64_t first;
  int64_t count;
} touched_node;

struct tc_assembly {
  const tc_mesh_local *mesh;
  tc_csr scalar;  ///< one dof per node
  tc_csr vector;  ///< three dofs per node
  uint16_t *link_positions; ///< tc_assembly_link_positions
  uint16_t *diagonal_positions; ///< tc_assembly_diagonal_positions
  int64_t plan_cells;       ///< cells per planned batch (0: no plan)
  int64_t *plan_offsets;    ///< [batches + 1] a batch's range of plan_nodes
  touched_node *plan_nodes; ///< the nodes of each batch, ascending
};

/* Sorts count values ascending in place: Shell sort with Ciura's gaps,
 * inline, for the few hundred node numbers of a node's cells (qsort's call
 * per comparison took a sixth of the set-up). */
static void sort_int64(int64_t *values, int64_t count) {
  static const int64_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
  for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; ++g) {
    const int64_t gap = gaps[g];
    for (int64_t i = gap; i < count; ++i) {
      const int64_t value = values[i];
      int64_t j = i;
      for (; j >= gap && values[j - gap] > value; j -= gap)
        values[j] = values[j - gap];
      values[j] = value;
    }
  }
}

/* Collects the sorted, unique nodes that share a cell with `node` into
 * scratch and returns how many there are. */
static int64_t node_neighbours(const tc_mesh_local *mesh, int64_t node, int64_t *scratch) {
  int64_t count = 0;
  for (int64_t e = mesh->node_cell_offsets[node]; e < mesh->node_cell_offsets[node + 1]; ++e) {
    const int64_t *nodes = mesh->cell_nodes + mesh->node_cells[e] * mesh->nodes_per_cell;
    for (int b = 0; b < mesh->nodes_per_cell; ++b)
      scratch[count++] = nodes[b];
  }
  sort_int64(scratch, count);
  int64_t unique = 0;
  for (int64_t i = 0; i < count; ++i)
    if (unique == 0 || scratch[unique - 1] != scratch[i])
      scratch[unique++] = scratch[i];
  return unique;
}

static int64_t max_cells_per_node(const tc_mesh_local *mesh) {
  int64_t most = 0;
  for (int64_t n = 0; n < mesh->num_nodes; ++n) {
    int64_t cells = mesh->node_cell_offsets[n + 1] - mesh->node_cell_offsets[n];
    most = cells > most ? cells : most;
  }
  return most;
}

static tc_err build_scalar_graph(const tc_mesh_local *mesh, tc_csr *csr) {
  const int64_t num_nodes = mesh->num_nodes;
  const int64_t scratch_size = max_cells_per_node(mesh) * mesh->nodes_per_cell;
  csr->num_rows = num_nodes;
  TC_CALLOC(csr->row_offsets, num_nodes + 1);
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    int64_t *scratch = malloc((size_t)(scratch_size > 0 ? scratch_size : 1) * sizeof *scratch);
    failed = scratch == NULL;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < num_nodes; ++n)
      csr->row_offsets[n + 1] = failed ? 0 : node_neighbours(mesh, n, scratch);
    free(scratch);
  }
  TC_CHECK(!failed, TC_ERR_MEMORY, "out of memory building the node graph");
  for (int64_t n = 0; n < num_nodes; ++n)
    csr->row_offsets[n + 1] += csr->row_offsets[n];
  csr->num_entries = csr->row_offsets[num_nodes];
  TC_CALLOC(csr->columns, csr->num_entries);
#pragma omp parallel reduction(| : failed)
  {
    int64_t *scratch = malloc((size_t)(scratch_size > 0 ? scratch_size : 1) * sizeof *scratch);
    failed = scratch == NULL;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < num_nodes; ++n) {
      if (failed)
        continue;
      int64_t count = node_neighbours(mesh, n, scratch);
      memcpy(csr->columns + csr->row_offsets[n], scratch, (size_t)count * sizeof *scratch);
    }
    free(scratch);
  }
  TC_CHECK(!failed, TC_ERR_MEMORY, "out of memory building the node graph");
  return TC_SUCCESS;
}

/* Expands the node graph to `components` dofs per node, each node block
 * dense: the row offsets only (the columns follow from the node graph's,
 * tc_assembly.h). */
static tc_err expand_graph(const tc_csr *nodes, int components, tc_csr *csr) {
  csr->num_rows = nodes->num_rows * components;
  csr->num_entries = nodes->num_entries * components * components;
  csr->columns = NULL;
  TC_CALLOC(csr->row_offsets, csr->num_rows + 1);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < nodes->num_rows; ++n) {
    int64_t begin = nodes->row_offsets[n], length = nodes->row_offsets[n + 1] - begin;
    for (int i = 0; i < components; ++i)
      csr->row_offsets[n * components + i] =
          begin * components * components + i * length * components;
  }
  csr->row_offsets[csr->num_rows] = csr->num_entries;
  return TC_SUCCESS;
}

/* Position of `column` in a CSR row (it is there: the graph covers every cell). */
static int64_t find_column(const int64_t *columns, int64_t begin, int64_t end, int64_t column) {
  while (end - begin > 1) {
    int64_t middle = begin + (end - begin) / 2;
    if (columns[middle] <= column)
      begin = middle;
    else
      end = middle;
  }
  return begin;
}

/* The positions of every link's cell nodes in the node's scalar row, found
 * once here so that no gather searches a row. */
static tc_err build_link_positions(const tc_mesh_local *mesh, const tc_csr *scalar,
                                   uint16_t **positions) {
  const int F = mesh->nodes_per_cell;
  const int64_t links = mesh->node_cell_offsets[mesh->num_nodes];
  int64_t longest = 0;
  for (int64_t n = 0; n < mesh->num_nodes; ++n) {
    const int64_t length = scalar->row_offsets[n + 1] - scalar->row_offsets[n];
    longest = length > longest ? length : longest;
  }
  TC_CHECK(longest <= UINT16_MAX, TC_ERR_ARGUMENT,
           "a node couples to %lld nodes, more than the assembly can index",
           (long long)longest);
  TC_CALLOC(*positions, links * F > 0 ? links * F : 1);
  uint16_t *out = *positions;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < mesh->num_nodes; ++n) {
    const int64_t begin = scalar->row_offsets[n], end = scalar->row_offsets[n + 1];
    for (int64_t e = mesh->node_cell_offsets[n]; e < mesh->node_cell_offsets[n + 1]; ++e) {
      const int64_t *nodes = mesh->cell_nodes + mesh->node_cells[e] * F;
      for (int b = 0; b < F; ++b)
        out[e * F + b] = (uint16_t)(find_column(scalar->columns, begin, end, nodes[b]) - begin);
    }
  }
  return TC_SUCCESS;
}

/* Each node's position in its own scalar row (0 for a node of no cell, whose
 * row is empty). */
static tc_err build_diagonal_positions(const tc_csr *scalar, uint16_t **positions) {
  TC_CALLOC(*positions, scalar->num_rows > 0 ? scalar->num_rows : 1);
  uint16_t *out = *positions;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < scalar->num_rows; ++n) {
    const int64_t begin = scalar->row_offsets[n], end = scalar->row_offsets[n + 1];
    out[n] = end > begin ? (uint16_t)(find_column(scalar->columns, begin, end, n) - begin) : 0;
  }
  return TC_SUCCESS;
}

static void csr_free(tc_csr *csr) {
  free(csr->row_offsets);
  free(csr->columns);
  memset(csr, 0, sizeof *csr);
}

tc_err tc_assembly_create(const tc_mesh *mesh, tc_assembly **assembly) {
  tc_assembly *created;
  TC_CALLOC(created, 1);
  created->mesh = tc_mesh_local_part(mesh);
  tc_err err = build_scalar_graph(created->mesh, &created->scalar);
  if (err == TC_SUCCESS)
    err = expand_graph(&created->scalar, 3, &created->vector);
  if (err == TC_SUCCESS)
    err = build_link_positions(created->mesh, &created->scalar, &created->link_positions);
  if (err == TC_SUCCESS)
    err = build_diagonal_positions(&created->scalar, &created->diagonal_positions);
  if (err != TC_SUCCESS) {
    tc_assembly_destroy(&created);
    return err;
  }
  *assembly = created;
  return TC_SUCCESS;
}

void tc_assembly_destroy(tc_assembly **assembly) {
  if (!*assembly)
    return;
  csr_free(&(*assembly)->scalar);
  csr_free(&(*assembly)->vector);
  free((*assembly)->link_positions);
  free((*assembly)->diagonal_positions);
  free((*assembly)->plan_offsets);
  free((*assembly)->plan_nodes);
  free(*assembly);
  *assembly = NULL;
}

const tc_csr *tc_assembly_graph(const tc_assembly *assembly, int components) {
  return components == 1 ? &assembly->scalar : &assembly->vector;
}

const uint16_t *tc_assembly_diagonal_positions(const tc_assembly *assembly) {
  return assembly->diagonal_positions;
}

const uint16_t *tc_assembly_link_positions(const tc_assembly *assembly) {
  return assembly->link_positions;
}

double tc_element_block_get(const tc_element_block *block, int64_t rows, int64_t columns,
                            int64_t cell, int64_t row, int64_t column) {
  int64_t offset = block->layout == TC_LAYOUT_RIGHT
                       ? (cell * rows + row) * columns + column
                       : cell + block->batch_cells * (row + rows * column);
  return block->precision == TC_DOUBLE ? ((const double *)block->data)[offset]
                                       : (double)((const float *)block->data)[offset];
}

/* The nodes the cells [begin, end) touch, each with its links to them,
 * ascending, into nodes (room for (end - begin) * nodes_per_cell entries);
 * seen[node] holds the last call's tag that met the node. Returns the count. */
static int64_t batch_nodes(const tc_mesh_local *mesh, int64_t begin, int64_t end, int64_t tag,
                           int64_t *seen, touched_node *nodes) {
  const int F = mesh->nodes_per_cell;
  int64_t count = 0;
  for (int64_t e = begin * F; e < end * F; ++e) {
    const int64_t node = mesh->cell_nodes[e];
    if (seen[node] != tag) {
      seen[node] = tag;
      nodes[count++].node = node;
    }
  }
  /* Ascending node order (insertion sort: the nodes of consecutive cells
   * come nearly sorted). */
  for (int64_t i = 1; i < count; ++i) {
    const int64_t node = nodes[i].node;
    int64_t j = i;
    for (; j > 0 && nodes[j - 1].node > node; --j)
      nodes[j].node = nodes[j - 1].node;
    nodes[j].node = node;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t e = mesh->node_cell_offsets[nodes[i].node];
    const int64_t stop = mesh->node_cell_offsets[nodes[i].node + 1];
    while (e < stop && mesh->node_cells[e] < begin)
      ++e;
    nodes[i].first = e;
    while (e < stop && mesh->node_cells[e] < end)
      ++e;
    nodes[i].count = e - nodes[i].first;
  }
  return count;
}

tc_err tc_assembly_plan_batches(tc_assembly *assembly, int64_t batch_cells) {
  const tc_mesh_local *mesh = assembly->mesh;
  TC_CHECK(batch_cells >= 1, TC_ERR_ARGUMENT, "batches of %lld cells", (long long)batch_cells);
  free(assembly->plan_offsets);
  free(assembly->plan_nodes);
  assembly->plan_offsets = NULL;
  assembly->plan_nodes = NULL;
  assembly->plan_cells = 0;
  const int64_t cells = mesh->num_cells, F = mesh->nodes_per_cell;
  const int64_t batches = (cells + batch_cells - 1) / batch_cells;
  int64_t *seen = NULL;
  touched_node *scratch = NULL;
  tc_err err = TC_SUCCESS;
  seen = malloc((size_t)(mesh->num_nodes > 0 ? mesh->num_nodes : 1) * sizeof *seen);
  scratch = malloc((size_t)(batch_cells * F) * sizeof *scratch);
  assembly->plan_offsets = calloc((size_t)batches + 1, sizeof *assembly->plan_offsets);
  if (!seen || !scratch || !assembly->plan_offsets)
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                         "out of memory planning the gather of %lld batches",
                         (long long)batches);
  /* Twice over the batches: the counts, then the nodes. */
  for (int pass = 0; pass < 2 && err == TC_SUCCESS; ++pass) {
    for (int64_t n = 0; n < mesh->num_nodes; ++n)
      seen[n] = -1;
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t begin = b * batch_cells;
      const int64_t end = begin + batch_cells < cells ? begin + batch_cells : cells;
      touched_node *into = pass == 0 ? scratch : assembly->plan_nodes + assembly->plan_offsets[b];
      const int64_t count = batch_nodes(mesh, begin, end, b, seen, into);
      if (pass == 0)
        assembly->plan_offsets[b + 1] = assembly->plan_offsets[b] + count;
    }
    if (pass == 0) {
      const int64_t total = assembly->plan_offsets[batches];
      assembly->plan_nodes = malloc((size_t)(total > 0 ? total : 1) * sizeof(touched_node));
      if (!assembly->plan_nodes)
        err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                             "out of memory planning the gather of %lld batches",
                             (long long)batches);
    }
  }
  free(seen);
  free(scratch);
  if (err != TC_SUCCESS) {
    free(assembly->plan_offsets);
    free(assembly->plan_nodes);
    assembly->plan_offsets = NULL;
    assembly->plan_nodes = NULL;
    return err;
  }
  assembly->plan_cells = batch_cells;
  return TC_SUCCESS;
}

/* Adds the batch's contributions to one node's rows: element (c, row, col)
 * of the block at data[(c * size + row) * size + col] (layout right) or
 * data[c + C * (row + size * col)] (layout left). Inlined per layout,
 * precision and kind, so each case is its own straight loop. */
static inline __attribute__((always_inline)) void
gather_node(const tc_assembly *assembly, const tc_csr *csr, int components, const void *data,
            int64_t batch_cells, int64_t cell_begin, tc_layout layout, tc_precision precision,
            bool matrix, const touched_node *touched, double *restrict values) {
  const tc_mesh_local *mesh = assembly->mesh;
  const int F = mesh->nodes_per_cell;
  const int64_t size = (int64_t)F * components, columns = matrix ? size : 1;
  const bool right = layout == TC_LAYOUT_RIGHT;
  for (int64_t e = touched->first; e < touched->first + touched->count; ++e) {
    const int64_t in_batch = mesh->node_cells[e] - cell_begin;
    const int slot = mesh->node_cell_slots[e];
    const uint16_t *positions = assembly->link_positions + e * F;
    for (int i = 0; i < components; ++i) {
      const int64_t row = touched->node * components + i, element_row = slot * components + i;
      /* Element (in_batch, element_row, col) at first + col * step. */
      const int64_t first = right ? (in_batch * size + element_row) * columns
                                  : in_batch + batch_cells * element_row;
      const int64_t step = right ? 1 : batch_cells * size;
#define TC_ELEMENT(col)                                                                           \
  (precision == TC_DOUBLE ? ((const double *)data)[first + (col) * step]                          \
                          : (double)((const float *)data)[first + (col) * step])
      if (!matrix) {
        values[row] += TC_ELEMENT(0);
        continue;
      }
      double *restrict row_values = values + csr->row_offsets[row];
      for (int b = 0; b < F; ++b)
        for (int j = 0; j < components; ++j)
          row_values[positions[b] * components + j] += TC_ELEMENT(b * components + j);
#undef TC_ELEMENT
    }
  }
}

/* Asks the caches for a node's rows (contiguous in values: rows n *
 * components .. n * components + components - 1), to be written, a few nodes
 * before the gather reaches them: a row is revisited a plane of cells later,
 * from L3 or memory, and the row starts are too scattered for the hardware
 * prefetchers. */
static inline void prefetch_rows(const tc_csr *csr, int components, int64_t node,
                                 const double *values) {
  const double *from = values + csr->row_offsets[node * components],
               *to = values + csr->row_offsets[(node + 1) * components];
  for (const double *at = from; at < to; at += 8) /* a 64-byte line */
    __builtin_prefetch(at, 1, 3);
}

/* How many nodes ahead of the gather prefetch_rows runs. */
enum { TC_GATHER_PREFETCH_AHEAD = 4 };

/* What the threads of gather_nodes share. */
typedef struct {
  const tc_assembly *assembly;
  int components;
  const tc_element_block *block;
  bool matrix;
  const touched_node *touched;
  int64_t count;
  double *values;
} gather_team;

/* One thread's nodes of gather_nodes. */
static void gather_share(void *context, int thread, int threads) {
  const gather_team *g = context;
  const tc_assembly *assembly = g->assembly;
  const tc_csr *csr = tc_assembly_graph(assembly, g->components);
  const tc_element_block *block = g->block;
  const void *data = block->data;
  const int64_t C = block->batch_cells, begin = block->cell_begin;
  const bool right = block->layout == TC_LAYOUT_RIGHT, dbl = block->precision == TC_DOUBLE;
  int64_t first, end;
  tc_omp_share(g->count, thread, threads, &first, &end);
  for (int64_t t = first; t < end; ++t) {
    if (g->matrix && t + TC_GATHER_PREFETCH_AHEAD < end)
      prefetch_rows(csr, g->components, g->touched[t + TC_GATHER_PREFETCH_AHEAD].node, g->values);
    /* matrices (1 or 3 components a node) in layout right and double, the
     * common case, with the components a constant (about a tenth faster on
     * the 2-core machine) */
    if (right && dbl && g->matrix && g->components == 3)
      gather_node(assembly, csr, 3, data, C, begin, TC_LAYOUT_RIGHT, TC_DOUBLE, true,
                  &g->touched[t], g->values);
    else if (right && dbl && g->matrix && g->components == 1)
      gather_node(assembly, csr, 1, data, C, begin, TC_LAYOUT_RIGHT, TC_DOUBLE, true,
                  &g->touched[t], g->values);
    else if (right && dbl && !g->matrix)
      gather_node(assembly, csr, g->components, data, C, begin, TC_LAYOUT_RIGHT, TC_DOUBLE, false,
                  &g->touched[t], g->values);
    else
      gather_node(assembly, csr, g->components, data, C, begin, block->layout, block->precision,
                  g->matrix, &g->touched[t], g->values);
  }
}

/* gather_node over the nodes [0, count) of touched, one thread per node
 * (one thread in all below 32 nodes). */
static void gather_nodes(const tc_assembly *assembly, int components,
                         const tc_element_block *block, bool matrix,
                         const touched_node *touched, int64_t count, double *values) {
  gather_team team = {.assembly = assembly, .components = components, .block = block,
                      .matrix = matrix, .touched = touched, .count = count, .values = values};
  tc_omp_team(count >= 32 ? tc_omp_threads() : 1, gather_share, &team);
}

/* The gather shared by matrices and vectors: every node's rows take the
 * contributions of the batch's cells around the node, in ascending cell
 * order, one thread per node. Batches take cells in order, so a node's
 * sum over all batches is in ascending cell order too. */
static tc_err gather(const tc_assembly *assembly, int components, const tc_element_block *block,
                     bool matrix, double *values) {
  const tc_mesh_local *mesh = assembly->mesh;
  const int64_t cell_end = block->cell_begin + block->batch_cells;
  TC_CHECK(block->cell_begin >= 0 && block->batch_cells >= 0 && cell_end <= mesh->num_cells,
           TC_ERR_ARGUMENT, "element batch [%lld, %lld) is outside the %lld local cells",
           (long long)block->cell_begin, (long long)cell_end, (long long)mesh->num_cells);
  const int64_t planned = assembly->plan_cells, left = mesh->num_cells - block->cell_begin;
  if (planned > 0 && block->cell_begin % planned == 0 &&
      block->batch_cells == (planned < left ? planned : left)) {
    const int64_t b = block->cell_begin / planned;
    const int64_t first = assembly->plan_offsets[b];
    gather_nodes(assembly, components, block, matrix, assembly->plan_nodes + first,
                 assembly->plan_offsets[b + 1] - first, values);
    return TC_SUCCESS;
  }
  /* Not a planned batch: its nodes found here. */
  const int64_t F = mesh->nodes_per_cell;
  int64_t *seen = malloc((size_t)(mesh->num_nodes > 0 ? mesh->num_nodes : 1) * sizeof *seen);
  touched_node *touched = malloc((size_t)(block->batch_cells * F + 1) * sizeof *touched);
  if (!seen || !touched) {
    free(seen);
    free(touched);
    TC_FAIL(TC_ERR_MEMORY, "out of memory gathering %lld cells", (long long)block->batch_cells);
  }
  for (int64_t n = 0; n < mesh->num_nodes; ++n)
    seen[n] = -1;
  const int64_t count = batch_nodes(mesh, block->cell_begin, cell_end, 0, seen, touched);
  gather_nodes(assembly, components, block, matrix, touched, count, values);
  free(seen);
  free(touched);
  return TC_SUCCESS;
}

tc_err tc_assembly_add_matrices(const tc_assembly *assembly, int components,
                                const tc_element_block *block, double *values) {
  return gather(assembly, components, block, true, values);
}

tc_err tc_assembly_add_vectors(const tc_assembly *assembly, int components,
                               const tc_element_block *block, double *node_values) {
  return gather(assembly, components, block, false, node_values);
}

void tc_assembly_multiply(const tc_assembly *assembly, int components, const double *values,
                          const double *x, double *y) {
  const tc_csr *csr = tc_assembly_graph(assembly, components);
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < csr->num_rows; ++row) {
    const tc_assembly_row view = tc_assembly_row_view(&assembly->scalar, csr, components, row);
    const double *entries = values + view.first;
    double sum = 0.0;
    for (int64_t k = 0; k < view.length; ++k)
      for (int j = 0; j < components; ++j)
        sum += entries[k * components + j] * x[view.nodes[k] * components + j];
    y[row] = sum;
  }
}

void tc_assembly_row_sums_and_diagonal(const tc_assembly *assembly, int components,
                                       const double *values, double *row_sums,
                                       double *diagonal) {
  const tc_csr *csr = tc_assembly_graph(assembly, components);
  const uint16_t *positions = assembly->diagonal_positions;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < csr->num_rows; ++row) {
    const int64_t begin = csr->row_offsets[row], end = csr->row_offsets[row + 1];
    if (row_sums) {
      double sum = 0.0;
      for (int64_t e = begin; e < end; ++e)
        sum += values[e];
      row_sums[row] = sum;
    }
    if (diagonal)
      diagonal[row] = end > begin ? values[tc_assembly_diagonal_entry(csr, positions, components,
                                                                      row)]
                                  : 0.0;
  }
}
