/* tc_assembly: node graph, CSR structures and the deterministic
 * gather-assemble of element matrices and vectors (see tc_assembly.h). */
#include "tc_assembly.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tc_assembly {
  const tc_mesh_local *mesh;
  tc_csr scalar;  ///< one dof per node
  tc_csr vector;  ///< three dofs per node
  uint16_t *link_positions; ///< tc_assembly_link_positions
};

static int compare_int64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
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
  qsort(scratch, (size_t)count, sizeof *scratch, compare_int64);
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

/* Expands the node graph to `components` dofs per node, each node block dense. */
static tc_err expand_graph(const tc_csr *nodes, int components, tc_csr *csr) {
  csr->num_rows = nodes->num_rows * components;
  csr->num_entries = nodes->num_entries * components * components;
  TC_CALLOC(csr->row_offsets, csr->num_rows + 1);
  TC_CALLOC(csr->columns, csr->num_entries);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < nodes->num_rows; ++n) {
    int64_t begin = nodes->row_offsets[n], length = nodes->row_offsets[n + 1] - begin;
    for (int i = 0; i < components; ++i) {
      int64_t row = n * components + i;
      int64_t offset = begin * components * components + i * length * components;
      csr->row_offsets[row] = offset;
      for (int64_t e = 0; e < length; ++e)
        for (int j = 0; j < components; ++j)
          csr->columns[offset + e * components + j] = nodes->columns[begin + e] * components + j;
    }
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
  free(*assembly);
  *assembly = NULL;
}

const tc_csr *tc_assembly_graph(const tc_assembly *assembly, int components) {
  return components == 1 ? &assembly->scalar : &assembly->vector;
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

/* The gather shared by matrices and vectors: every node's rows take the
 * contributions of the batch's cells around the node, in ascending cell
 * order, one thread per node. Batches take cells in order, so a node's
 * sum over all batches is in ascending cell order too. */
static tc_err gather(const tc_assembly *assembly, int components, const tc_element_block *block,
                     bool matrix, double *values) {
  const tc_mesh_local *mesh = assembly->mesh;
  const tc_csr *csr = tc_assembly_graph(assembly, components);
  const int nodes_per_cell = mesh->nodes_per_cell;
  const int64_t size = (int64_t)nodes_per_cell * components;
  const int64_t cell_end = block->cell_begin + block->batch_cells;
  TC_CHECK(block->cell_begin >= 0 && cell_end <= mesh->num_cells, TC_ERR_ARGUMENT,
           "element batch [%lld, %lld) is outside the %lld local cells",
           (long long)block->cell_begin, (long long)cell_end, (long long)mesh->num_cells);
  /* Only the nodes the batch's cells touch can change: a range, as nodes and
   * cells are both numbered box by box (computed here, not assumed). */
  int64_t first_node = mesh->num_nodes, last_node = -1;
  for (int64_t e = block->cell_begin * nodes_per_cell; e < cell_end * nodes_per_cell; ++e) {
    first_node = mesh->cell_nodes[e] < first_node ? mesh->cell_nodes[e] : first_node;
    last_node = mesh->cell_nodes[e] > last_node ? mesh->cell_nodes[e] : last_node;
  }
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t node = first_node; node <= last_node; ++node) {
    for (int64_t e = mesh->node_cell_offsets[node]; e < mesh->node_cell_offsets[node + 1]; ++e) {
      const int64_t cell = mesh->node_cells[e];
      if (cell < block->cell_begin || cell >= cell_end)
        continue;
      const int64_t in_batch = cell - block->cell_begin;
      const int slot = mesh->node_cell_slots[e];
      const uint16_t *positions = assembly->link_positions + e * nodes_per_cell;
      for (int i = 0; i < components; ++i) {
        const int64_t row = node * components + i, element_row = slot * components + i;
        if (!matrix) {
          values[row] += tc_element_block_get(block, size, 1, in_batch, element_row, 0);
          continue;
        }
        double *row_values = values + csr->row_offsets[row];
        for (int b = 0; b < nodes_per_cell; ++b)
          for (int j = 0; j < components; ++j)
            row_values[positions[b] * components + j] +=
                tc_element_block_get(block, size, size, in_batch, element_row,
                                     b * components + j);
      }
    }
  }
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
    double sum = 0.0;
    for (int64_t e = csr->row_offsets[row]; e < csr->row_offsets[row + 1]; ++e)
      sum += values[e] * x[csr->columns[e]];
    y[row] = sum;
  }
}

void tc_assembly_row_sums_and_diagonal(const tc_assembly *assembly, int components,
                                       const double *values, double *row_sums,
                                       double *diagonal) {
  const tc_csr *csr = tc_assembly_graph(assembly, components);
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < csr->num_rows; ++row) {
    double sum = 0.0, on_diagonal = 0.0;
    for (int64_t e = csr->row_offsets[row]; e < csr->row_offsets[row + 1]; ++e) {
      sum += values[e];
      if (csr->columns[e] == row)
        on_diagonal = values[e];
    }
    if (row_sums)
      row_sums[row] = sum;
    if (diagonal)
      diagonal[row] = on_diagonal;
  }
}
