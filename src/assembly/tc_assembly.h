/* tc_assembly: the rank-local sparse structure of the global system (CSR over
 * local nodes, for scalar and 3-component fields) and the deterministic
 * gather-assemble of element matrices and vectors into it: each row has one
 * writer, and contributions are summed in ascending cell order. */
#ifndef TC_ASSEMBLY_H
#define TC_ASSEMBLY_H

#include <stdint.h>

#include "tc_contract.h"
#include "tc_host_device.h"
#include "tc_mesh.h"

/// The structure of a rank-local CSR matrix over local degrees of freedom
/// (dof = node for a scalar field, 3*node + component for a vector field).
/// Matrices of one structure keep their values in separate arrays of
/// num_entries doubles.
typedef struct {
  int64_t num_rows;
  int64_t num_entries;
  int64_t *row_offsets; ///< [num_rows+1]
  int64_t *columns;     ///< [num_entries], ascending within a row
} tc_csr;

typedef struct tc_assembly tc_assembly;

/// Builds the node graph of the local mesh (two nodes are coupled when they
/// share a cell) and the CSR structures for 1- and 3-component fields. Not
/// collective.
tc_err tc_assembly_create(const tc_mesh *mesh, tc_assembly **assembly);
void tc_assembly_destroy(tc_assembly **assembly);

/// The CSR structure for a field of `components` (1 or 3) per node. Only
/// the node graph (1 component) stores its columns: with 3, columns is NULL
/// and entry k * 3 + j of row (n, i) is node graph entry k of row n,
/// component j (column 3 * columns[row_offsets[n] + k] + j of the node
/// graph's arrays), which spares a 128^3 Q1 box 4.2 GB of columns.
const tc_csr *tc_assembly_graph(const tc_assembly *assembly, int components);

/// Row `row` of a matrix of `components` per node, read through the node
/// graph (tc_assembly_graph's block layout): entry k * components + j of the
/// row, at values[first + k * components + j], is column
/// nodes[k] * components + j, for k < length.
typedef struct {
  const int64_t *nodes; ///< the row's nodes, ascending (node-graph columns)
  int64_t length;       ///< how many
  int64_t first;        ///< the row's first entry in the matrix's values
} tc_assembly_row;

/// The view of `row` of `graph` (the graph of `components` per node) through
/// `node_graph` (tc_assembly_graph(assembly, 1)).
static inline tc_assembly_row tc_assembly_row_view(const tc_csr *node_graph, const tc_csr *graph,
                                                   int components, int64_t row) {
  const int64_t node = row / components, begin = node_graph->row_offsets[node];
  return (tc_assembly_row){.nodes = node_graph->columns + begin,
                           .length = node_graph->row_offsets[node + 1] - begin,
                           .first = graph->row_offsets[row]};
}

/// Where each cell's entries land in a node's rows, so that the gather needs
/// no search: for link e of the mesh's node->cell map (node n, cell
/// node_cells[e]) and node b of that cell, entry [e * nodes_per_cell + b] is
/// the position of cell_nodes[cell][b] in node n's row of the scalar graph.
/// Entry (n, i) x (node b, j) of a matrix of `components` per node is then
/// at row_offsets[n * components + i] + position * components + j.
const uint16_t *tc_assembly_link_positions(const tc_assembly *assembly);

/// Each node's position in its own scalar row: the diagonal entry of row
/// (n, i) of a matrix of `components` per node is at row_offsets[n *
/// components + i] + position * components + i (tc_assembly_diagonal_entry),
/// so that a diagonal is read without its row's columns.
const uint16_t *tc_assembly_diagonal_positions(const tc_assembly *assembly);

/// The entry of `csr` (the graph of `components` per node) on the diagonal
/// of a non-empty `row`, from tc_assembly_diagonal_positions; the host's and
/// the GPU's row reductions both call it.
static inline TC_HOST_DEVICE int64_t tc_assembly_diagonal_entry(const tc_csr *csr, const uint16_t *positions,
                                                 int components, int64_t row) {
  return csr->row_offsets[row] + (int64_t)positions[row / components] * components +
         row % components;
}

/// Prepares the gather of batches of batch_cells consecutive cells (batch b
/// holds cells [b * batch_cells, (b + 1) * batch_cells), the last one the
/// rest): the nodes each batch touches, each with the range of its links to
/// the batch's cells, found once here so that a batch's gather walks only
/// those. Gathers of other cell ranges find their nodes when called.
/// Not collective.
tc_err tc_assembly_plan_batches(tc_assembly *assembly, int64_t batch_cells);

/// Element outputs of cells [cell_begin, cell_begin + batch) as the
/// contractions left them: layout and precision of the contraction.
typedef struct {
  const void *data;
  tc_layout layout;
  tc_precision precision;
  int64_t batch_cells;  ///< C of the contraction that produced data
  int64_t cell_begin;   ///< local index of the batch's first cell
} tc_element_block;

/// Adds element matrices (C, F*components, F*components) of one batch into
/// values, a matrix of the CSR structure for that many components (field index
/// = slot*components + comp). Deterministic: rows are split among threads, and
/// each row sums its cells in ascending order. Not collective.
tc_err tc_assembly_add_matrices(const tc_assembly *assembly, int components,
                                const tc_element_block *block, double *values);

/// Adds element vectors (C, F*components) of one batch into a node vector
/// [num_nodes][components]. Deterministic as above. Not collective.
tc_err tc_assembly_add_vectors(const tc_assembly *assembly, int components,
                               const tc_element_block *block, double *node_values);

/// y = A x for the rank-local matrix `values` of `components` per node (x, y:
/// [num_nodes][components]). Rows of shared nodes hold this rank's part only:
/// sum y over ranks (tc_mesh_sum_shared) to get the global product.
void tc_assembly_multiply(const tc_assembly *assembly, int components, const double *values,
                          const double *x, double *y);

/// Row sums (lumped matrix) and diagonal of the rank-local matrix `values`,
/// into [num_nodes][components] vectors (either may be NULL). A row's sum
/// adds its entries in order; its diagonal is read at its position, not
/// searched for.
void tc_assembly_row_sums_and_diagonal(const tc_assembly *assembly, int components,
                                       const double *values, double *row_sums,
                                       double *diagonal);

/// Reads entry (cell, row, column) of an element block of shape (C, N, M) (or
/// (C, N) with column 0 and M = 1) in the block's layout and precision.
double tc_element_block_get(const tc_element_block *block, int64_t rows, int64_t columns,
                            int64_t cell, int64_t row, int64_t column);

#endif
