/* tc_mesh: generates the rank-local part of the synthetic hex box (3-D block
 * decomposition, lexicographic numbering, distorted geometry, node->cell CSR),
 * builds the shared-node exchange plan, and sums shared-node values across
 * ranks in a fixed (ascending rank) order. */
#include "tc_mesh.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tc_parallel.h"

enum { EXCHANGE_TAG = 7411, MAX_NEIGHBORS = 26 };

static const double pi = 3.14159265358979323846;

struct tc_mesh {
  MPI_Comm comm; // dup of the creator's communicator
  int rank;
  int grid[3];         // px, py, pz; rank = x + px*(y + py*z)
  int position[3];     // this rank's block in the grid
  int64_t node_box[3]; // local nodes per direction: order*local_cells + 1
  tc_mesh_local local; // the public view; its pointers alias the arrays below

  double *coords;
  int64_t *node_global_id;
  int *node_owner;
  int64_t *cell_global_id;
  int64_t *cell_nodes;
  int64_t *node_cell_offsets;
  int64_t *node_cells;
  int *node_cell_slots;

  /* Exchange plan. Neighbours are in ascending rank order; neighbour n shares
   * the local nodes neighbor_nodes[neighbor_offsets[n] .. neighbor_offsets[n+1])
   * with this rank, listed by ascending global id (both sides list the same
   * box of the global node grid in the same order). */
  int num_neighbors;
  int neighbor_rank[MAX_NEIGHBORS];
  int64_t neighbor_offsets[MAX_NEIGHBORS + 1];
  int64_t *neighbor_nodes;

  /* Summation plan. Shared node s (local id shared_nodes[s]) is the sum of the
   * terms shared_terms[shared_term_offsets[s] .. shared_term_offsets[s+1]), in
   * ascending order of the rank that contributes them: -1 is this rank's own
   * value, t >= 0 is entry t of the receive buffer (laid out like
   * neighbor_nodes). */
  int64_t num_shared;
  int64_t *shared_nodes;
  int64_t *shared_term_offsets;
  int64_t *shared_terms;
};

/* --- block decomposition --------------------------------------------------- */

/* First cell of block b when n cells are split into p blocks as evenly as
 * possible, the first n % p blocks one cell longer (b == p gives n). */
static int64_t block_begin(int64_t n, int p, int b) {
  int64_t base = n / p, extra = n % p;
  return b * base + (b < extra ? b : extra);
}

/* The block holding cell c under the same split. */
static int block_of_cell(int64_t n, int p, int64_t c) {
  int64_t base = n / p, extra = n % p;
  if (c < extra * (base + 1))
    return (int)(c / (base + 1));
  return (int)(extra + (c - extra * (base + 1)) / base);
}

/* The block owning global node index i along one direction: the block whose
 * cells [b, e) have order*b <= i < order*e; the last block also owns order*n. */
static int block_owning_node(int64_t n, int p, int order, int64_t i) {
  return i == order * n ? p - 1 : block_of_cell(n, p, i / order);
}

/* Chooses px*py*pz == ranks, every p_d <= n_d (each block keeps at least one
 * cell), minimising the number of interior cell faces cut,
 * (px-1)*ny*nz + (py-1)*nx*nz + (pz-1)*nx*ny. Ties go to the first grid in
 * ascending (px, py) order, so the box is split along z first. Returns false
 * when no grid fits in the box. */
static bool choose_rank_grid(const int64_t cells[3], int ranks, int grid[3]) {
  const double nx = (double)cells[0], ny = (double)cells[1], nz = (double)cells[2];
  bool found = false;
  double best_cut = 0.0;
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px != 0 || px > cells[0])
      continue;
    for (int py = 1; py <= ranks / px; ++py) {
      if ((ranks / px) % py != 0 || py > cells[1])
        continue;
      int pz = ranks / px / py;
      if (pz > cells[2])
        continue;
      double cut = (px - 1) * ny * nz + (py - 1) * nx * nz + (pz - 1) * nx * ny;
      if (!found || cut < best_cut) {
        found = true;
        best_cut = cut;
        grid[0] = px;
        grid[1] = py;
        grid[2] = pz;
      }
    }
  }
  return found;
}

/* --- option checks ---------------------------------------------------------- */

/* *product = a*b for a, b >= 0; false if it does not fit in int64. */
static bool multiply_fits(int64_t a, int64_t b, int64_t *product) {
  if (a != 0 && b > INT64_MAX / a)
    return false;
  *product = a * b;
  return true;
}

/* The global counts of a box, false if any of them (or the connectivity and
 * coordinate array lengths built from them) overflows int64. */
static bool global_counts(const tc_mesh_options *options, int64_t nodes[3], int64_t *num_cells,
                          int64_t *num_nodes) {
  const int64_t *n = options->cells;
  int64_t cells_xy = 0, nodes_xy = 0, entries = 0;
  for (int d = 0; d < 3; ++d) {
    if (n[d] > (INT64_MAX - 1) / options->order)
      return false;
    nodes[d] = options->order * n[d] + 1;
  }
  int64_t nodes_per_cell = (options->order + 1) * (options->order + 1) * (options->order + 1);
  return multiply_fits(n[0], n[1], &cells_xy) && multiply_fits(cells_xy, n[2], num_cells) &&
         multiply_fits(nodes[0], nodes[1], &nodes_xy) &&
         multiply_fits(nodes_xy, nodes[2], num_nodes) &&
         multiply_fits(*num_cells, nodes_per_cell, &entries) &&
         multiply_fits(*num_nodes, 3, &entries);
}

/* This rank's verdict on the options (no communication). */
static tc_err check_options(const tc_mesh_options *options, int ranks, int grid[3]) {
  TC_CHECK(options != NULL, TC_ERR_ARGUMENT, "tc_mesh_create: options is NULL");
  const int64_t *n = options->cells;
  const double *length = options->length;
  TC_CHECK(n[0] >= 1 && n[1] >= 1 && n[2] >= 1, TC_ERR_INPUT,
           "mesh cells must be >= 1 in every direction, got %lld x %lld x %lld", (long long)n[0],
           (long long)n[1], (long long)n[2]);
  for (int d = 0; d < 3; ++d)
    TC_CHECK(isfinite(length[d]) && length[d] > 0.0, TC_ERR_INPUT,
             "mesh lengths must be finite and > 0, got %g x %g x %g", length[0], length[1],
             length[2]);
  TC_CHECK(options->order == 1 || options->order == 2, TC_ERR_INPUT,
           "mesh order must be 1 (hex8) or 2 (hex27), got %d", options->order);
  TC_CHECK(options->distortion >= 0.0 && options->distortion < 0.25, TC_ERR_INPUT,
           "mesh distortion must be in [0, 0.25) so cells stay valid, got %g", options->distortion);
  int64_t nodes[3], num_cells = 0, num_nodes = 0;
  TC_CHECK(global_counts(options, nodes, &num_cells, &num_nodes), TC_ERR_INPUT,
           "a %lldx%lldx%lld-cell box of order %d has more cells or nodes than int64 can count",
           (long long)n[0], (long long)n[1], (long long)n[2], options->order);
  TC_CHECK(ranks <= num_cells, TC_ERR_INPUT,
           "%d ranks cannot share a %lldx%lldx%lld-cell box: it has only %lld cells and each "
           "rank needs at least one",
           ranks, (long long)n[0], (long long)n[1], (long long)n[2], (long long)num_cells);
  TC_CHECK(choose_rank_grid(n, ranks, grid), TC_ERR_INPUT,
           "%d ranks cannot share a %lldx%lldx%lld-cell box: no px*py*pz = %d rank grid has "
           "px <= %lld, py <= %lld and pz <= %lld (each rank needs at least one cell per "
           "direction)",
           ranks, (long long)n[0], (long long)n[1], (long long)n[2], ranks, (long long)n[0],
           (long long)n[1], (long long)n[2]);
  return TC_SUCCESS;
}

/* Rank 0's options against this rank's: a mesh needs the same box everywhere.
 * Collective (a broadcast); local_status is this rank's verdict so far. */
static tc_err check_same_as_root(MPI_Comm comm, const tc_mesh_options *options, tc_err local_status,
                                 tc_err *status) {
  tc_mesh_options root;
  memset(&root, 0, sizeof root);
  if (options != NULL)
    root = *options;
  TC_CALL(tc_broadcast(comm, &root, (int64_t)sizeof root, 0));
  *status = local_status;
  if (local_status != TC_SUCCESS)
    return TC_SUCCESS;
  bool same = root.order == options->order && root.distortion == options->distortion;
  for (int d = 0; d < 3; ++d)
    same = same && root.cells[d] == options->cells[d] && root.length[d] == options->length[d];
  if (!same)
    *status = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                             "mesh options differ from rank 0's (every rank must pass the same "
                             "box)");
  return TC_SUCCESS;
}

/* --- geometry ----------------------------------------------------------------- */

/* sin(freq*pi*i/q) for freq 1 or 2 and 0 <= i <= q, exactly 0 where the true
 * value is 0 (the box faces and, for freq 2, its middle), so the distortion
 * leaves boundary nodes exactly on the faces. */
static double sin_pi_ratio(int freq, int64_t i, int64_t q) {
  int64_t r = i % q;
  if (r == 0 || (freq == 2 && r == q - r))
    return 0.0;
  return sin(freq * pi * ((double)r / (double)q));
}

/* Uniform grid plus, along each axis a, a displacement of
 * distortion * h_a * sin(pi t_a) * prod_{b != a} sin(2 pi t_b), t the
 * position in the box scaled to [0,1] and h_a the cell size. It vanishes on
 * every face, so the domain stays the box. Cells stay valid (positive
 * Jacobian) while distortion * pi * (1/n_a + 2/n_b + 2/n_c) < 1 for every
 * axis a, e.g. n >= 8 per direction at any distortion < 0.25. */
void tc_mesh_node_position(const tc_mesh_options *options, int64_t i, int64_t j, int64_t k,
                           double xyz[3]) {
  const int64_t index[3] = {i, j, k};
  double uniform[3], once[3], twice[3];
  for (int d = 0; d < 3; ++d) {
    int64_t intervals = options->order * options->cells[d];
    uniform[d] = options->length[d] * ((double)index[d] / (double)intervals);
    once[d] = sin_pi_ratio(1, index[d], intervals);
    twice[d] = sin_pi_ratio(2, index[d], intervals);
  }
  for (int d = 0; d < 3; ++d) {
    double cell_size = options->length[d] / (double)options->cells[d];
    double shape = once[d] * twice[(d + 1) % 3] * twice[(d + 2) % 3];
    xyz[d] = uniform[d] + options->distortion * cell_size * shape;
  }
}

/* --- generation ----------------------------------------------------------------- */

static int rank_of_block(const tc_mesh *mesh, const int block[3]) {
  return block[0] + mesh->grid[0] * (block[1] + mesh->grid[1] * block[2]);
}

static tc_err allocate_arrays(tc_mesh *mesh) {
  tc_mesh_local *local = &mesh->local;
  int64_t entries = local->num_cells * local->nodes_per_cell;
  TC_CALLOC(mesh->coords, 3 * local->num_nodes);
  TC_CALLOC(mesh->node_global_id, local->num_nodes);
  TC_CALLOC(mesh->node_owner, local->num_nodes);
  TC_CALLOC(mesh->cell_global_id, local->num_cells);
  TC_CALLOC(mesh->cell_nodes, entries);
  TC_CALLOC(mesh->node_cell_offsets, local->num_nodes + 1);
  TC_CALLOC(mesh->node_cells, entries);
  TC_CALLOC(mesh->node_cell_slots, entries);
  local->coords = mesh->coords;
  local->node_global_id = mesh->node_global_id;
  local->node_owner = mesh->node_owner;
  local->cell_global_id = mesh->cell_global_id;
  local->cell_nodes = mesh->cell_nodes;
  local->node_cell_offsets = mesh->node_cell_offsets;
  local->node_cells = mesh->node_cells;
  local->node_cell_slots = mesh->node_cell_slots;
  return TC_SUCCESS;
}

/* Global ids, owners and coordinates of the local nodes. */
static void generate_nodes(tc_mesh *mesh, const tc_mesh_options *options) {
  tc_mesh_local *local = &mesh->local;
  const int64_t *box = mesh->node_box;
  int64_t first[3];
  for (int d = 0; d < 3; ++d)
    first[d] = local->order * local->cell_begin[d];
  int64_t node = 0, owned = 0;
  for (int64_t c = 0; c < box[2]; ++c)
    for (int64_t b = 0; b < box[1]; ++b)
      for (int64_t a = 0; a < box[0]; ++a, ++node) {
        const int64_t global[3] = {first[0] + a, first[1] + b, first[2] + c};
        int owner_block[3];
        for (int d = 0; d < 3; ++d)
          owner_block[d] =
              block_owning_node(local->global_cells[d], mesh->grid[d], local->order, global[d]);
        mesh->node_global_id[node] =
            global[0] + local->global_nodes[0] * (global[1] + local->global_nodes[1] * global[2]);
        mesh->node_owner[node] = rank_of_block(mesh, owner_block);
        owned += mesh->node_owner[node] == mesh->rank;
        tc_mesh_node_position(options, global[0], global[1], global[2], &mesh->coords[3 * node]);
      }
  local->num_owned_nodes = owned;
}

/* Global ids and connectivity of the local cells, then the node->cell CSR
 * (cells visited in ascending order, so each node's cells come out ascending). */
static void generate_cells(tc_mesh *mesh) {
  tc_mesh_local *local = &mesh->local;
  const int order = local->order, per_cell = local->nodes_per_cell;
  const int64_t *box = mesh->node_box;
  int64_t cells[3];
  for (int d = 0; d < 3; ++d)
    cells[d] = local->cell_end[d] - local->cell_begin[d];
  int64_t cell = 0;
  for (int64_t k = 0; k < cells[2]; ++k)
    for (int64_t j = 0; j < cells[1]; ++j)
      for (int64_t i = 0; i < cells[0]; ++i, ++cell) {
        mesh->cell_global_id[cell] =
            (local->cell_begin[0] + i) +
            local->global_cells[0] *
                ((local->cell_begin[1] + j) + local->global_cells[1] * (local->cell_begin[2] + k));
        int slot = 0;
        for (int c = 0; c <= order; ++c)
          for (int b = 0; b <= order; ++b)
            for (int a = 0; a <= order; ++a, ++slot)
              mesh->cell_nodes[cell * per_cell + slot] =
                  (order * i + a) + box[0] * ((order * j + b) + box[1] * (order * k + c));
      }

  int64_t *offsets = mesh->node_cell_offsets;
  for (int64_t e = 0; e < local->num_cells * per_cell; ++e)
    ++offsets[mesh->cell_nodes[e] + 1];
  for (int64_t node = 0; node < local->num_nodes; ++node)
    offsets[node + 1] += offsets[node];
  for (cell = 0; cell < local->num_cells; ++cell)
    for (int slot = 0; slot < per_cell; ++slot) {
      int64_t node = mesh->cell_nodes[cell * per_cell + slot];
      int64_t at = offsets[node]++;
      mesh->node_cells[at] = cell;
      mesh->node_cell_slots[at] = slot;
    }
  for (int64_t node = local->num_nodes; node > 0; --node)
    offsets[node] = offsets[node - 1];
  offsets[0] = 0;
}

/* --- exchange plan -------------------------------------------------------------- */

/* The 27 block offsets (-1, 0, 1 per direction) are indexed x fastest. */
static int offset_index(const int offset[3]) {
  return (offset[0] + 1) + 3 * ((offset[1] + 1) + 3 * (offset[2] + 1));
}

/* The local node box shared with the block at offset o (per direction: the
 * first node layer for -1, all nodes for 0, the last layer for +1). */
static void shared_box(const tc_mesh *mesh, const int offset[3], int64_t first[3],
                       int64_t width[3]) {
  for (int d = 0; d < 3; ++d) {
    first[d] = offset[d] > 0 ? mesh->node_box[d] - 1 : 0;
    width[d] = offset[d] == 0 ? mesh->node_box[d] : 1;
  }
}

/* Neighbours (blocks at offsets in {-1,0,1}^3 other than 0, visited z, y, x
 * ascending, hence in ascending rank order) and the nodes shared with each.
 * neighbor_of_offset maps an offset index to its neighbour (-1: none). */
static tc_err plan_neighbors(tc_mesh *mesh, int neighbor_of_offset[27]) {
  int offsets[26][3];
  mesh->num_neighbors = 0;
  mesh->neighbor_offsets[0] = 0;
  int o[3];
  for (o[2] = -1; o[2] <= 1; ++o[2])
    for (o[1] = -1; o[1] <= 1; ++o[1])
      for (o[0] = -1; o[0] <= 1; ++o[0]) {
        neighbor_of_offset[offset_index(o)] = -1;
        int block[3];
        bool exists = o[0] != 0 || o[1] != 0 || o[2] != 0;
        for (int d = 0; d < 3; ++d) {
          block[d] = mesh->position[d] + o[d];
          exists = exists && block[d] >= 0 && block[d] < mesh->grid[d];
        }
        if (!exists)
          continue;
        int n = mesh->num_neighbors++;
        neighbor_of_offset[offset_index(o)] = n;
        mesh->neighbor_rank[n] = rank_of_block(mesh, block);
        memcpy(offsets[n], o, sizeof o);
        int64_t first[3], width[3];
        shared_box(mesh, o, first, width);
        mesh->neighbor_offsets[n + 1] = mesh->neighbor_offsets[n] + width[0] * width[1] * width[2];
      }

  TC_CALLOC(mesh->neighbor_nodes, mesh->neighbor_offsets[mesh->num_neighbors]);
  const int64_t *box = mesh->node_box;
  for (int n = 0; n < mesh->num_neighbors; ++n) {
    int64_t first[3], width[3], at = mesh->neighbor_offsets[n];
    shared_box(mesh, offsets[n], first, width);
    for (int64_t c = first[2]; c < first[2] + width[2]; ++c)
      for (int64_t b = first[1]; b < first[1] + width[1]; ++b)
        for (int64_t a = first[0]; a < first[0] + width[0]; ++a)
          mesh->neighbor_nodes[at++] = a + box[0] * (b + box[1] * c);
  }
  return TC_SUCCESS;
}

/* The blocks touching local node index a along direction d, as offsets from
 * this rank's block, ascending: {-1,0} on a first layer with a block below,
 * {0,1} on a last layer with a block above, else {0}. Returns the count. */
static int touching_offsets(const tc_mesh *mesh, int d, int64_t a, int offsets[2]) {
  int count = 0;
  if (a == 0 && mesh->position[d] > 0)
    offsets[count++] = -1;
  offsets[count++] = 0;
  if (a == mesh->node_box[d] - 1 && mesh->position[d] < mesh->grid[d] - 1)
    offsets[count++] = 1;
  return count;
}

/* Walks the local nodes touched by other ranks and their sum terms in
 * ascending rank order (blocks z, y, x ascending). With fill false it only
 * counts nodes and terms; with fill true it writes the summation plan. */
static void walk_shared(tc_mesh *mesh, const int neighbor_of_offset[27], bool fill,
                        int64_t *num_shared, int64_t *num_terms) {
  const int64_t *box = mesh->node_box;
  int64_t shared = 0, terms = 0, node = 0;
  for (int64_t c = 0; c < box[2]; ++c)
    for (int64_t b = 0; b < box[1]; ++b)
      for (int64_t a = 0; a < box[0]; ++a, ++node) {
        const int64_t index[3] = {a, b, c};
        int touching[3][2], count[3];
        for (int d = 0; d < 3; ++d)
          count[d] = touching_offsets(mesh, d, index[d], touching[d]);
        if (count[0] * count[1] * count[2] == 1)
          continue;
        if (fill) {
          mesh->shared_nodes[shared] = node;
          mesh->shared_term_offsets[shared] = terms;
        }
        ++shared;
        for (int z = 0; z < count[2]; ++z)
          for (int y = 0; y < count[1]; ++y)
            for (int x = 0; x < count[0]; ++x, ++terms) {
              const int o[3] = {touching[0][x], touching[1][y], touching[2][z]};
              if (!fill)
                continue;
              if (o[0] == 0 && o[1] == 0 && o[2] == 0) {
                mesh->shared_terms[terms] = -1;
                continue;
              }
              int n = neighbor_of_offset[offset_index(o)];
              int64_t first[3], width[3];
              shared_box(mesh, o, first, width);
              int64_t position =
                  (a - first[0]) + width[0] * ((b - first[1]) + width[1] * (c - first[2]));
              mesh->shared_terms[terms] = mesh->neighbor_offsets[n] + position;
            }
      }
  if (fill)
    mesh->shared_term_offsets[shared] = terms;
  *num_shared = shared;
  *num_terms = terms;
}

static tc_err plan_exchange(tc_mesh *mesh) {
  int neighbor_of_offset[27];
  TC_CALL(plan_neighbors(mesh, neighbor_of_offset));
  int64_t num_shared = 0, num_terms = 0;
  walk_shared(mesh, neighbor_of_offset, false, &num_shared, &num_terms);
  TC_CALLOC(mesh->shared_nodes, num_shared);
  TC_CALLOC(mesh->shared_term_offsets, num_shared + 1);
  TC_CALLOC(mesh->shared_terms, num_terms);
  walk_shared(mesh, neighbor_of_offset, true, &mesh->num_shared, &num_terms);
  return TC_SUCCESS;
}

/* Fills everything but the communicator (already set). Local: no communication. */
static tc_err build(tc_mesh *mesh, const tc_mesh_options *options, const int grid[3]) {
  tc_mesh_local *local = &mesh->local;
  mesh->rank = tc_rank(mesh->comm);
  memcpy(mesh->grid, grid, sizeof mesh->grid);
  mesh->position[0] = mesh->rank % grid[0];
  mesh->position[1] = mesh->rank / grid[0] % grid[1];
  mesh->position[2] = mesh->rank / grid[0] / grid[1];

  local->order = options->order;
  local->nodes_per_cell = (options->order + 1) * (options->order + 1) * (options->order + 1);
  TC_CHECK(global_counts(options, local->global_nodes, &local->num_global_cells,
                         &local->num_global_nodes),
           TC_ERR_INTERNAL, "mesh counts overflow after the options were checked");
  local->num_cells = 1;
  local->num_nodes = 1;
  for (int d = 0; d < 3; ++d) {
    local->global_cells[d] = options->cells[d];
    local->cell_begin[d] = block_begin(options->cells[d], grid[d], mesh->position[d]);
    local->cell_end[d] = block_begin(options->cells[d], grid[d], mesh->position[d] + 1);
    mesh->node_box[d] = options->order * (local->cell_end[d] - local->cell_begin[d]) + 1;
    local->num_cells *= local->cell_end[d] - local->cell_begin[d];
    local->num_nodes *= mesh->node_box[d];
  }
  TC_CALL(allocate_arrays(mesh));
  generate_nodes(mesh, options);
  generate_cells(mesh);
  TC_CALL(plan_exchange(mesh));
  return TC_SUCCESS;
}

tc_err tc_mesh_create(MPI_Comm comm, const tc_mesh_options *options, tc_mesh **mesh) {
  int grid[3] = {1, 1, 1};
  tc_err status = mesh == NULL ? tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                                "tc_mesh_create: mesh is NULL")
                               : check_options(options, tc_size(comm), grid);
  if (mesh != NULL)
    *mesh = NULL;
  TC_CALL(check_same_as_root(comm, options, status, &status));
  TC_CALL(tc_parallel_agree(comm, status));

  MPI_Comm dup;
  TC_CALL(tc_comm_dup(comm, &dup));
  tc_mesh *created = calloc(1, sizeof *created);
  if (created == NULL) {
    status = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                            "out of memory allocating the mesh handle");
  } else {
    created->comm = dup;
    status = build(created, options, grid);
  }
  status = tc_parallel_agree(comm, status);
  if (status != TC_SUCCESS) {
    /* Already failing: a failed free of the duplicate could only be reported
     * on top of the agreed error, so its code is not looked at. */
    if (created == NULL)
      tc_comm_free(&dup);
    tc_mesh_destroy(&created);
    return status;
  }
  *mesh = created;
  return TC_SUCCESS;
}

void tc_mesh_destroy(tc_mesh **mesh) {
  if (mesh == NULL || *mesh == NULL)
    return;
  tc_mesh *m = *mesh;
  tc_comm_free(&m->comm);
  free(m->coords);
  free(m->node_global_id);
  free(m->node_owner);
  free(m->cell_global_id);
  free(m->cell_nodes);
  free(m->node_cell_offsets);
  free(m->node_cells);
  free(m->node_cell_slots);
  free(m->neighbor_nodes);
  free(m->shared_nodes);
  free(m->shared_term_offsets);
  free(m->shared_terms);
  free(m);
  *mesh = NULL;
}

MPI_Comm tc_mesh_comm(const tc_mesh *mesh) { return mesh->comm; }

const tc_mesh_local *tc_mesh_local_part(const tc_mesh *mesh) { return &mesh->local; }

bool tc_mesh_largest_block(const int64_t cells[3], int ranks, int64_t block[3]) {
  int grid[3];
  if (ranks < 1 || !choose_rank_grid(cells, ranks, grid))
    return false;
  for (int d = 0; d < 3; ++d) /* block 0 is one of the longest (block_begin) */
    block[d] = block_begin(cells[d], grid[d], 1) - block_begin(cells[d], grid[d], 0);
  return true;
}

void tc_mesh_rank_grid(const tc_mesh *mesh, int grid[3], int position[3]) {
  for (int d = 0; d < 3; ++d) {
    grid[d] = mesh->grid[d];
    position[d] = mesh->position[d];
  }
}

/* --- shared-node sums ------------------------------------------------------------ */

tc_err tc_mesh_exchange_fits(const tc_mesh *mesh, int components) {
  for (int n = 0; n < mesh->num_neighbors; ++n)
    TC_CHECK(mesh->neighbor_offsets[n + 1] - mesh->neighbor_offsets[n] <= INT_MAX / components,
             TC_ERR_UNSUPPORTED,
             "shared-node exchange: %lld shared nodes x %d components exceed one MPI message",
             (long long)(mesh->neighbor_offsets[n + 1] - mesh->neighbor_offsets[n]), components);
  return TC_SUCCESS;
}

static tc_err allocate_exchange(const tc_mesh *mesh, int components, double **send,
                                double **receive) {
  int64_t entries = mesh->neighbor_offsets[mesh->num_neighbors];
  TC_CALL(tc_mesh_exchange_fits(mesh, components));
  TC_CALLOC(*send, entries * components);
  TC_CALLOC(*receive, entries * components);
  return TC_SUCCESS;
}

bool tc_mesh_shares_nodes(const tc_mesh *mesh) { return mesh->num_neighbors > 0; }

void tc_mesh_get_exchange_plan(const tc_mesh *mesh, tc_mesh_exchange_plan *plan) {
  *plan = (tc_mesh_exchange_plan){.num_neighbors = mesh->num_neighbors,
                                  .neighbor_rank = mesh->neighbor_rank,
                                  .neighbor_offsets = mesh->neighbor_offsets,
                                  .neighbor_nodes = mesh->neighbor_nodes,
                                  .num_shared = mesh->num_shared,
                                  .shared_nodes = mesh->shared_nodes,
                                  .shared_term_offsets = mesh->shared_term_offsets,
                                  .shared_terms = mesh->shared_terms};
}

tc_err tc_mesh_exchange_packed(const tc_mesh *mesh, int components, const double *send,
                               double *receive) {
  return tc_mesh_exchange_packed_among(mesh, components, send, receive, NULL);
}

tc_err tc_mesh_exchange_packed_among(const tc_mesh *mesh, int components, const double *send,
                                     double *receive, const bool *included) {
  return tc_neighbor_exchange_double(mesh->comm, mesh->num_neighbors, mesh->neighbor_rank,
                                     mesh->neighbor_offsets, components, send, receive,
                                     EXCHANGE_TAG, included);
}

/* One message per neighbour for every field: entry e holds the fields'
 * components in turn ([entries][width], width their sum); each shared node's
 * component is summed over its terms as tc_mesh_sum_shared documents. */
static tc_err exchange_and_sum(const tc_mesh *mesh, int count, double *const values[],
                               const int components[], int width, double *send,
                               double *receive) {
  const int64_t *offsets = mesh->neighbor_offsets;
  for (int64_t e = 0; e < offsets[mesh->num_neighbors]; ++e)
    for (int f = 0, at = 0; f < count; at += components[f], ++f)
      memcpy(&send[e * width + at], &values[f][mesh->neighbor_nodes[e] * components[f]],
             sizeof(double) * components[f]);
  TC_CALL(tc_mesh_exchange_packed(mesh, width, send, receive));

  for (int64_t s = 0; s < mesh->num_shared; ++s) {
    const int64_t *term = &mesh->shared_terms[mesh->shared_term_offsets[s]];
    int64_t num_terms = mesh->shared_term_offsets[s + 1] - mesh->shared_term_offsets[s];
    for (int f = 0, at = 0; f < count; at += components[f], ++f) {
      double *own = &values[f][mesh->shared_nodes[s] * components[f]];
      for (int c = 0; c < components[f]; ++c) {
        double total = term[0] < 0 ? own[c] : receive[term[0] * width + at + c];
        for (int64_t t = 1; t < num_terms; ++t)
          total += term[t] < 0 ? own[c] : receive[term[t] * width + at + c];
        own[c] = total;
      }
    }
  }
  return TC_SUCCESS;
}

tc_err tc_mesh_sum_shared_fields(const tc_mesh *mesh, int count, double *const values[],
                                 const int components[]) {
  TC_CHECK(mesh != NULL, TC_ERR_ARGUMENT, "tc_mesh_sum_shared: mesh is NULL");
  double *send = NULL, *receive = NULL;
  tc_err status = TC_SUCCESS;
  int width = 0;
  for (int f = 0; f < count && status == TC_SUCCESS; ++f) {
    if (components[f] < 1 || components[f] > INT_MAX - width)
      status = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                              "tc_mesh_sum_shared: components must be >= 1, got %d",
                              components[f]);
    else if (values[f] == NULL && mesh->local.num_nodes > 0)
      status = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                              "tc_mesh_sum_shared: values is NULL");
    else
      width += components[f];
  }
  if (status == TC_SUCCESS && width > 0)
    status = allocate_exchange(mesh, width, &send, &receive);
  status = tc_parallel_agree(mesh->comm, status);
  if (status == TC_SUCCESS && width > 0)
    status = exchange_and_sum(mesh, count, values, components, width, send, receive);
  free(send);
  free(receive);
  return status;
}

tc_err tc_mesh_sum_shared(const tc_mesh *mesh, double *values, int components) {
  return tc_mesh_sum_shared_fields(mesh, 1, &values, &components);
}
