/* tc_mesh: a synthetic box of hexahedra, generated in parallel and treated as
 * unstructured (coordinates, cell->node connectivity, node->cell CSR), split
 * across ranks by a 3-D block decomposition. Each rank generates only its own
 * cells and the nodes they touch; no rank ever holds the global mesh. */
#ifndef TC_MESH_H
#define TC_MESH_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"

/// What to generate.
typedef struct {
  int64_t cells[3];   ///< nx, ny, nz cells in the global box
  double length[3];   ///< box extents; the box is [0,lx]x[0,ly]x[0,lz]
  double distortion;  ///< amplitude of the smooth interior distortion, as a fraction of a cell
                      ///< (0: affine brick cells; in [0, 0.25). Cells stay valid while
                      ///< distortion*pi*(1/n_a + 2/n_b + 2/n_c) < 1 for every axis a, i.e. on
                      ///< boxes of 8 or more cells per direction; coarser boxes may invert cells,
                      ///< which the geometry then reports)
  int order;          ///< 1: hex8 (Q1), 2: hex27 (Q2) nodes per cell
} tc_mesh_options;

/// The rank-local part of the mesh, read-only for users. Local nodes are all
/// nodes touched by local cells, numbered lexicographically (x fastest) over
/// the rank's node box; cells likewise over its cell box.
typedef struct {
  int order;                 ///< 1 or 2
  int nodes_per_cell;        ///< (order+1)^3: 8 or 27
  int64_t global_cells[3];   ///< nx, ny, nz of the whole box
  int64_t global_nodes[3];   ///< order*n+1 per direction
  int64_t num_global_cells;  ///< nx*ny*nz
  int64_t num_global_nodes;  ///< product of global_nodes
  int64_t cell_begin[3];     ///< first global cell index per direction of this rank's block
  int64_t cell_end[3];       ///< one past the last
  int64_t num_cells;         ///< local cells
  int64_t num_nodes;         ///< local nodes (owned and shared)
  int64_t num_owned_nodes;   ///< nodes this rank owns (each global node has exactly one owner)
  const double *coords;      ///< [num_nodes][3] physical coordinates
  const int64_t *node_global_id;  ///< [num_nodes] global node id: i + gx*(j + gy*k) on the global node grid
  const int *node_owner;          ///< [num_nodes] rank that owns the node
  const int64_t *cell_global_id;  ///< [num_cells] global cell id: i + nx*(j + ny*k)
  const int64_t *cell_nodes;      ///< [num_cells][nodes_per_cell] local node ids; within a cell the
                                  ///< nodes are in tensor-product order a + (order+1)*(b + (order+1)*c),
                                  ///< (a,b,c) the node's position along the reference axes x,y,z
  const int64_t *node_cell_offsets; ///< [num_nodes+1] CSR offsets of the node->cell map
  const int64_t *node_cells;        ///< [..] cells touching each node, ascending
  const int *node_cell_slots;       ///< [..] the node's position (0..nodes_per_cell-1) within each of those cells
} tc_mesh_local;

typedef struct tc_mesh tc_mesh;

/// Generates this rank's part of the mesh. Checks the options (every count
/// >= 1, lengths > 0, order 1 or 2, distortion in [0, 0.25), no more ranks
/// than cells in the box, counts that fit in int64) and agrees on failure, so
/// every rank returns the same error. Collective on comm.
tc_err tc_mesh_create(MPI_Comm comm, const tc_mesh_options *options, tc_mesh **mesh);

/// Releases the mesh and sets *mesh to NULL. NULL is fine.
void tc_mesh_destroy(tc_mesh **mesh);

/// The mesh's communicator (a duplicate of the one it was created on).
MPI_Comm tc_mesh_comm(const tc_mesh *mesh);

/// The rank-local arrays.
const tc_mesh_local *tc_mesh_local_part(const tc_mesh *mesh);

/// The rank grid of the block decomposition (px*py*pz == ranks) and this
/// rank's position in it.
void tc_mesh_rank_grid(const tc_mesh *mesh, int grid[3], int position[3]);

/// The cells per direction of the largest rank block when a box of cells is
/// split over ranks as tc_mesh_create splits it (for estimates made before
/// the mesh exists). False when the box cannot be split over that many
/// ranks (tc_mesh_create then fails with the reason). Not collective.
bool tc_mesh_largest_block(const int64_t cells[3], int ranks, int64_t block[3]);

/// Whether another rank shares nodes with this one. Not collective.
bool tc_mesh_shares_nodes(const tc_mesh *mesh);

/// Sums values at shared nodes over every rank that touches them, in place.
/// values is [num_nodes][components] (node-major). Each shared node's sum is
/// formed in ascending rank order, so every rank holds bitwise the same sum and
/// the result does not depend on message arrival order. Collective on the
/// mesh's communicator.
tc_err tc_mesh_sum_shared(const tc_mesh *mesh, double *values, int components);

/// tc_mesh_sum_shared for `count` fields at once (values[f] is
/// [num_nodes][components[f]]), in one message per neighbour: the same sums,
/// bitwise, as one call per field, for one round of messages and one
/// agreement instead of `count`. Collective on the mesh's communicator.
tc_err tc_mesh_sum_shared_fields(const tc_mesh *mesh, int count, double *const values[],
                                 const int components[]);

/// The plan tc_mesh_sum_shared runs, for callers that pack and sum shared
/// values themselves (the GPU assembly loop): a read-only view into the
/// mesh, valid while it lives. Packed buffers hold, for neighbour n in
/// ascending rank order, the values of its shared nodes at entries
/// [neighbor_offsets[n], neighbor_offsets[n + 1]), [entries][components].
typedef struct {
  int num_neighbors;                  ///< ranks sharing nodes with this one
  const int *neighbor_rank;           ///< [num_neighbors], ascending
  const int64_t *neighbor_offsets;    ///< [num_neighbors + 1]
  const int64_t *neighbor_nodes;      ///< [neighbor_offsets[num_neighbors]]: local node of each entry
  int64_t num_shared;                 ///< local nodes that some neighbour shares
  const int64_t *shared_nodes;        ///< [num_shared]: their local ids
  const int64_t *shared_term_offsets; ///< [num_shared + 1]
  /// Shared node s sums terms [shared_term_offsets[s], shared_term_offsets[s + 1]) in this
  /// order (ascending contributing rank): -1 is this rank's own value, t >= 0 entry t of the
  /// received buffer.
  const int64_t *shared_terms;
} tc_mesh_exchange_plan;

/// Fills *plan with the mesh's exchange plan. Not collective.
void tc_mesh_get_exchange_plan(const tc_mesh *mesh, tc_mesh_exchange_plan *plan);

/// TC_ERR_UNSUPPORTED, naming the sizes, when a neighbour's message of
/// `components` values per shared node would not fit MPI's int count.
/// Not collective: callers agree on it before any rank exchanges.
tc_err tc_mesh_exchange_fits(const tc_mesh *mesh, int components);

/// Sends the packed buffer send to the neighbours and receives theirs into
/// receive (both [neighbor_offsets[num_neighbors]][components] doubles):
/// host memory, or device memory when the MPI library is CUDA-aware
/// (tc_parallel_cuda_aware). Each message must fit (tc_mesh_exchange_fits).
/// Collective with the neighbours.
tc_err tc_mesh_exchange_packed(const tc_mesh *mesh, int components, const double *send,
                               double *receive);

/// tc_mesh_exchange_packed with the neighbours n (in the plan's order) whose
/// included[n] is true (NULL: all); the others' entries of receive are left
/// as they are. Collective with the included neighbours.
tc_err tc_mesh_exchange_packed_among(const tc_mesh *mesh, int components, const double *send,
                                     double *receive, const bool *included);

/// Physical position of a global node of the generated box (with distortion),
/// the function the generator uses; for tests and exact-solution checks.
void tc_mesh_node_position(const tc_mesh_options *options, int64_t i, int64_t j,
                           int64_t k, double xyz[3]);

#endif
