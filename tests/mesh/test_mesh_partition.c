/* test_mesh_partition: the block decomposition, numbering, ownership,
 * connectivity, node->cell CSR and geometry of tc_mesh, checked against
 * independent references on whatever number of ranks it is run on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_test.h"

/* Smallest cut (interior cell faces) over every rank grid that fits in the
 * box, by brute force over all px, py, pz in 1..ranks. */
static double best_cut(const int64_t n[3], int ranks) {
  double best = INFINITY;
  for (int px = 1; px <= ranks; ++px)
    for (int py = 1; py <= ranks; ++py)
      for (int pz = 1; pz <= ranks; ++pz) {
        if (px * py * pz != ranks || px > n[0] || py > n[1] || pz > n[2])
          continue;
        double cut = (px - 1) * (double)n[1] * n[2] + (py - 1) * (double)n[0] * n[2] +
                     (pz - 1) * (double)n[0] * n[1];
        if (cut < best)
          best = cut;
      }
  return best;
}

/* The decomposition: grid shape and optimality, and the per-direction cell
 * ranges of all blocks (gathered), which must tile [0,n) evenly with the
 * longer blocks first. begin/end receive the ranges, [3][8] each. */
static void check_decomposition(const tc_mesh *mesh, const tc_mesh_options *options,
                                int64_t begin[3][8], int64_t end[3][8]) {
  const tc_mesh_local *local = tc_mesh_local_part(mesh);
  int size = tc_size(MPI_COMM_WORLD), rank = tc_rank(MPI_COMM_WORLD);
  int grid[3], position[3];
  tc_mesh_rank_grid(mesh, grid, position);
  CHECK(grid[0] * grid[1] * grid[2] == size, "grid %dx%dx%d", grid[0], grid[1], grid[2]);
  CHECK(position[0] + grid[0] * (position[1] + grid[1] * position[2]) == rank, "position %d %d %d",
        position[0], position[1], position[2]);
  double cut = (grid[0] - 1) * (double)options->cells[1] * options->cells[2] +
               (grid[1] - 1) * (double)options->cells[0] * options->cells[2] +
               (grid[2] - 1) * (double)options->cells[0] * options->cells[1];
  CHECK(cut == best_cut(options->cells, size), "grid %dx%dx%d cuts %g faces, best is %g", grid[0],
        grid[1], grid[2], cut, best_cut(options->cells, size));

  int64_t ranges[2][3][8];
  for (int d = 0; d < 3; ++d)
    for (int b = 0; b < 8; ++b)
      ranges[0][d][b] = ranges[1][d][b] = -1;
  for (int d = 0; d < 3; ++d) {
    CHECK(grid[d] <= 8, "grid[%d] = %d", d, grid[d]);
    ranges[0][d][position[d]] = local->cell_begin[d];
    ranges[1][d][position[d]] = local->cell_end[d];
  }
  CHECK_CALL(tc_allreduce_max_int64(MPI_COMM_WORLD, &ranges[0][0][0], 2 * 3 * 8));
  for (int d = 0; d < 3; ++d) {
    CHECK(ranges[0][d][position[d]] == local->cell_begin[d] &&
              ranges[1][d][position[d]] == local->cell_end[d],
          "ranks in one slab disagree on its range along %d", d);
    CHECK(ranges[0][d][0] == 0 && ranges[1][d][grid[d] - 1] == options->cells[d],
          "blocks along %d span [%lld, %lld)", d, (long long)ranges[0][d][0],
          (long long)ranges[1][d][grid[d] - 1]);
    for (int b = 0; b < grid[d]; ++b) {
      begin[d][b] = ranges[0][d][b];
      end[d][b] = ranges[1][d][b];
      int64_t length = end[d][b] - begin[d][b];
      CHECK(length >= 1, "block %d along %d is empty", b, d);
      if (b + 1 < grid[d]) {
        int64_t next = ranges[1][d][b + 1] - ranges[0][d][b + 1];
        CHECK(ranges[0][d][b + 1] == end[d][b], "gap after block %d along %d", b, d);
        CHECK(length == next || length == next + 1, "blocks %d, %d along %d: %lld then %lld cells",
              b, b + 1, d, (long long)length, (long long)next);
      }
    }
    CHECK(ranges[1][d][0] - ranges[0][d][0] -
                  (ranges[1][d][grid[d] - 1] - ranges[0][d][grid[d] - 1]) <=
              1,
          "uneven split along %d", d);
  }
}

/* Every global cell is on exactly one rank, with the id its position in the
 * rank's box says; connectivity names the right global nodes. */
static void check_cells(const tc_mesh_local *local) {
  const int order = local->order, per_cell = local->nodes_per_cell;
  int64_t extent[3];
  for (int d = 0; d < 3; ++d)
    extent[d] = local->cell_end[d] - local->cell_begin[d];
  CHECK(local->num_cells == extent[0] * extent[1] * extent[2], "num_cells %lld",
        (long long)local->num_cells);
  CHECK(per_cell == (order + 1) * (order + 1) * (order + 1), "nodes_per_cell %d", per_cell);

  int64_t *count = calloc((size_t)local->num_global_cells, sizeof *count);
  int64_t sums[2] = {local->num_cells, 0};
  for (int64_t cell = 0; cell < local->num_cells; ++cell) {
    int64_t i = local->cell_begin[0] + cell % extent[0];
    int64_t j = local->cell_begin[1] + cell / extent[0] % extent[1];
    int64_t k = local->cell_begin[2] + cell / extent[0] / extent[1];
    int64_t gid = i + local->global_cells[0] * (j + local->global_cells[1] * k);
    CHECK(local->cell_global_id[cell] == gid, "cell %lld has id %lld, expected %lld",
          (long long)cell, (long long)local->cell_global_id[cell], (long long)gid);
    count[gid] += 1;
    sums[1] += gid;
    for (int slot = 0; slot < per_cell; ++slot) {
      int a = slot % (order + 1), b = slot / (order + 1) % (order + 1),
          c = slot / (order + 1) / (order + 1);
      int64_t node_gid =
          (order * i + a) +
          local->global_nodes[0] * ((order * j + b) + local->global_nodes[1] * (order * k + c));
      int64_t node = local->cell_nodes[cell * per_cell + slot];
      CHECK(node >= 0 && node < local->num_nodes && local->node_global_id[node] == node_gid,
            "cell %lld slot %d names local node %lld, expected global node %lld", (long long)cell,
            slot, (long long)node, (long long)node_gid);
    }
  }
  CHECK_CALL(tc_allreduce_sum_int64(MPI_COMM_WORLD, count, (int)local->num_global_cells));
  CHECK_CALL(tc_allreduce_sum_int64(MPI_COMM_WORLD, sums, 2));
  for (int64_t gid = 0; gid < local->num_global_cells; ++gid)
    CHECK(count[gid] == 1, "global cell %lld is on %lld ranks", (long long)gid,
          (long long)count[gid]);
  int64_t g = local->num_global_cells;
  CHECK(sums[0] == g && sums[1] == g * (g - 1) / 2, "cell count %lld, id sum %lld",
        (long long)sums[0], (long long)sums[1]);
  free(count);
}

/* Node numbering, one owner per global node by the documented rule (applied
 * to the gathered block ranges), the same owner and coordinates on every rank
 * that holds the node, and coordinates equal to tc_mesh_node_position. */
static void check_nodes(const tc_mesh_local *local, const tc_mesh_options *options,
                        const int grid[3], int64_t begin[3][8], int64_t end[3][8]) {
  const int order = local->order, rank = tc_rank(MPI_COMM_WORLD);
  int64_t box[3];
  for (int d = 0; d < 3; ++d) {
    box[d] = order * (local->cell_end[d] - local->cell_begin[d]) + 1;
    CHECK(local->global_nodes[d] == order * local->global_cells[d] + 1, "global_nodes[%d]", d);
  }
  CHECK(local->num_nodes == box[0] * box[1] * box[2], "num_nodes %lld",
        (long long)local->num_nodes);
  const int64_t g = local->num_global_nodes;
  CHECK(g == local->global_nodes[0] * local->global_nodes[1] * local->global_nodes[2],
        "num_global_nodes %lld", (long long)g);

  /* per global node: owned count, then max and -min of owner and coordinates */
  int64_t *owned = calloc((size_t)g, sizeof *owned);
  int64_t *owner_max = malloc((size_t)g * sizeof *owner_max);
  int64_t *owner_neg_min = malloc((size_t)g * sizeof *owner_neg_min);
  double *coord_max = malloc((size_t)g * 3 * sizeof *coord_max);
  double *coord_min = malloc((size_t)g * 3 * sizeof *coord_min);
  for (int64_t n = 0; n < g; ++n) {
    owner_max[n] = owner_neg_min[n] = INT64_MIN;
    for (int d = 0; d < 3; ++d) {
      coord_max[3 * n + d] = -INFINITY;
      coord_min[3 * n + d] = INFINITY;
    }
  }
  int64_t owned_here = 0;
  for (int64_t node = 0; node < local->num_nodes; ++node) {
    const int64_t index[3] = {order * local->cell_begin[0] + node % box[0],
                              order * local->cell_begin[1] + node / box[0] % box[1],
                              order * local->cell_begin[2] + node / box[0] / box[1]};
    int64_t gid =
        index[0] + local->global_nodes[0] * (index[1] + local->global_nodes[1] * index[2]);
    CHECK(local->node_global_id[node] == gid, "node %lld has id %lld, expected %lld",
          (long long)node, (long long)local->node_global_id[node], (long long)gid);
    if (local->node_global_id[node] != gid)
      continue;
    int block[3];
    for (int d = 0; d < 3; ++d) {
      block[d] = -1;
      for (int b = 0; b < grid[d]; ++b)
        if ((order * begin[d][b] <= index[d] && index[d] < order * end[d][b]) ||
            (b == grid[d] - 1 && index[d] == order * local->global_cells[d]))
          block[d] = b;
    }
    int expected_owner = block[0] + grid[0] * (block[1] + grid[1] * block[2]);
    CHECK(local->node_owner[node] == expected_owner, "node %lld: owner %d, expected %d",
          (long long)gid, local->node_owner[node], expected_owner);
    owner_max[gid] = local->node_owner[node];
    owner_neg_min[gid] = -local->node_owner[node];
    if (local->node_owner[node] == rank) {
      owned[gid] += 1;
      owned_here += 1;
    }
    double xyz[3];
    tc_mesh_node_position(options, index[0], index[1], index[2], xyz);
    for (int d = 0; d < 3; ++d) {
      CHECK(local->coords[3 * node + d] == xyz[d], "node %lld coordinate %d: %.17g vs %.17g",
            (long long)gid, d, local->coords[3 * node + d], xyz[d]);
      coord_max[3 * gid + d] = local->coords[3 * node + d];
      coord_min[3 * gid + d] = local->coords[3 * node + d];
    }
  }
  CHECK(owned_here == local->num_owned_nodes,
        "%lld nodes name this rank owner, num_owned_nodes %lld", (long long)owned_here,
        (long long)local->num_owned_nodes);
  int64_t total_owned = local->num_owned_nodes;
  CHECK_CALL(tc_allreduce_sum_int64(MPI_COMM_WORLD, &total_owned, 1));
  CHECK(total_owned == g, "owned nodes sum to %lld of %lld", (long long)total_owned, (long long)g);
  CHECK_CALL(tc_allreduce_sum_int64(MPI_COMM_WORLD, owned, (int)g));
  CHECK_CALL(tc_allreduce_max_int64(MPI_COMM_WORLD, owner_max, (int)g));
  CHECK_CALL(tc_allreduce_max_int64(MPI_COMM_WORLD, owner_neg_min, (int)g));
  CHECK_CALL(tc_allreduce_max_double(MPI_COMM_WORLD, coord_max, (int)(3 * g)));
  CHECK_CALL(tc_allreduce_min_double(MPI_COMM_WORLD, coord_min, (int)(3 * g)));
  for (int64_t n = 0; n < g; ++n) {
    CHECK(owned[n] == 1, "global node %lld owned by %lld ranks", (long long)n, (long long)owned[n]);
    CHECK(owner_max[n] == -owner_neg_min[n], "ranks disagree on the owner of node %lld",
          (long long)n);
    for (int d = 0; d < 3; ++d)
      CHECK(coord_max[3 * n + d] == coord_min[3 * n + d],
            "ranks disagree on coordinate %d of node %lld", d, (long long)n);
  }
  free(owned);
  free(owner_max);
  free(owner_neg_min);
  free(coord_max);
  free(coord_min);
}

/* The node->cell CSR against cell_nodes, with the per-node cell count from
 * the grid (a vertex inside the rank's box touches 8 cells for Q1). */
static void check_node_cells(const tc_mesh_local *local) {
  const int per_cell = local->nodes_per_cell, order = local->order;
  const int64_t *offsets = local->node_cell_offsets;
  int64_t extent[3], box[3];
  for (int d = 0; d < 3; ++d) {
    extent[d] = local->cell_end[d] - local->cell_begin[d];
    box[d] = order * extent[d] + 1;
  }
  CHECK(offsets[0] == 0 && offsets[local->num_nodes] == local->num_cells * per_cell,
        "CSR holds %lld entries, expected %lld", (long long)offsets[local->num_nodes],
        (long long)(local->num_cells * per_cell));
  for (int64_t node = 0; node < local->num_nodes; ++node) {
    int64_t expected = cells_touching_node_index(extent[0], order, node % box[0]) *
                       cells_touching_node_index(extent[1], order, node / box[0] % box[1]) *
                       cells_touching_node_index(extent[2], order, node / box[0] / box[1]);
    CHECK(offsets[node + 1] - offsets[node] == expected,
          "node %lld touches %lld cells, expected %lld", (long long)node,
          (long long)(offsets[node + 1] - offsets[node]), (long long)expected);
    for (int64_t e = offsets[node]; e < offsets[node + 1] && e < offsets[local->num_nodes]; ++e) {
      int64_t cell = local->node_cells[e];
      int slot = local->node_cell_slots[e];
      CHECK(cell >= 0 && cell < local->num_cells && slot >= 0 && slot < per_cell &&
                local->cell_nodes[cell * per_cell + slot] == node,
            "node %lld entry %lld: cell %lld slot %d", (long long)node, (long long)e,
            (long long)cell, slot);
      CHECK(e == offsets[node] || local->node_cells[e - 1] < cell,
            "cells of node %lld are not ascending", (long long)node);
    }
  }
}

/* Boundary nodes lie exactly on the box faces, every node stays in the box
 * and within distortion * h of its uniform-grid place, and the extremes over
 * all ranks are exactly 0 and L. */
static void check_geometry(const tc_mesh_local *local, const tc_mesh_options *options) {
  double extremes[6] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
  double largest_shift = 0.0;
  for (int64_t node = 0; node < local->num_nodes; ++node) {
    int64_t gid = local->node_global_id[node];
    const int64_t index[3] = {gid % local->global_nodes[0],
                              gid / local->global_nodes[0] % local->global_nodes[1],
                              gid / local->global_nodes[0] / local->global_nodes[1]};
    for (int d = 0; d < 3; ++d) {
      double x = local->coords[3 * node + d];
      int64_t last = local->global_nodes[d] - 1;
      double uniform = options->length[d] * (double)index[d] / (double)last;
      double h = options->length[d] / (double)options->cells[d];
      if (index[d] == 0)
        CHECK(x == 0.0, "node %lld on face %d=0 has coordinate %.17g", (long long)gid, d, x);
      if (index[d] == last)
        CHECK(x == options->length[d], "node %lld on face %d=L has coordinate %.17g",
              (long long)gid, d, x);
      CHECK(x >= 0.0 && x <= options->length[d], "node %lld outside the box", (long long)gid);
      CHECK(fabs(x - uniform) <= options->distortion * h * (1 + 1e-12) + 1e-14 * options->length[d],
            "node %lld moved %g along %d, more than distortion * h = %g", (long long)gid,
            x - uniform, d, options->distortion * h);
      if (fabs(x - uniform) / h > largest_shift)
        largest_shift = fabs(x - uniform) / h;
      if (x < extremes[d])
        extremes[d] = x;
      if (-x < extremes[3 + d])
        extremes[3 + d] = -x;
    }
  }
  CHECK_CALL(tc_allreduce_min_double(MPI_COMM_WORLD, extremes, 6));
  CHECK_CALL(tc_allreduce_max_double(MPI_COMM_WORLD, &largest_shift, 1));
  for (int d = 0; d < 3; ++d)
    CHECK(extremes[d] == 0.0 && -extremes[3 + d] == options->length[d],
          "coordinates along %d span [%.17g, %.17g]", d, extremes[d], -extremes[3 + d]);
  if (options->distortion > 0.0 && options->cells[0] >= 4 && options->cells[1] >= 4 &&
      options->cells[2] >= 4)
    CHECK(largest_shift > 0.5 * options->distortion, "distortion %g moved nodes at most %g cells",
          options->distortion, largest_shift);
  if (options->distortion == 0.0)
    CHECK(largest_shift <= 1e-14, "undistorted mesh moved a node by %g cells", largest_shift);
}

/* Cells stay valid: in every cell, each of the order^3 sub-hexes of its node
 * lattice has a positive triple product of its edges at all 8 corners (the
 * documented bound distortion * pi * (1/n_a + 2/n_b + 2/n_c) < 1 holds for
 * every case run here). */
static void check_cell_validity(const tc_mesh_local *local) {
  const int order = local->order, side = order + 1, per_cell = local->nodes_per_cell;
  int64_t inverted = 0;
  for (int64_t cell = 0; cell < local->num_cells; ++cell) {
    const int64_t *nodes = &local->cell_nodes[cell * per_cell];
    for (int sub = 0; sub < order * order * order; ++sub) {
      const int base[3] = {sub % order, sub / order % order, sub / order / order};
      for (int corner = 0; corner < 8; ++corner) {
        const int at[3] = {base[0] + (corner & 1), base[1] + (corner >> 1 & 1),
                           base[2] + (corner >> 2 & 1)};
        const double *p = &local->coords[3 * nodes[at[0] + side * (at[1] + side * at[2])]];
        double edge[3][3];
        for (int d = 0; d < 3; ++d) {
          int other[3] = {at[0], at[1], at[2]};
          int inward = other[d] == base[d] ? 1 : -1;
          other[d] += inward;
          const double *q =
              &local->coords[3 * nodes[other[0] + side * (other[1] + side * other[2])]];
          for (int e = 0; e < 3; ++e)
            edge[d][e] = inward * (q[e] - p[e]);
        }
        double volume = edge[0][0] * (edge[1][1] * edge[2][2] - edge[1][2] * edge[2][1]) -
                        edge[0][1] * (edge[1][0] * edge[2][2] - edge[1][2] * edge[2][0]) +
                        edge[0][2] * (edge[1][0] * edge[2][1] - edge[1][1] * edge[2][0]);
        inverted += !(volume > 0.0);
      }
    }
  }
  CHECK(inverted == 0, "%lld sub-cell corners with a non-positive triple product",
        (long long)inverted);
}

/* Hand-computed positions: on the 8^3 unit box at distortion 0.2, node
 * (4,2,2) sits at t = (1/2, 1/4, 1/4): only x moves, by 0.2 * (1/8) *
 * sin(pi/2) * sin(pi/2) * sin(pi/2) = 0.025. Node (2,4,2) moves only along y,
 * node (2,2,4) only along z. */
static void check_hand_computed_positions(void) {
  tc_mesh_options options = {
      .cells = {8, 8, 8}, .length = {1, 1, 1}, .distortion = 0.2, .order = 1};
  const int64_t nodes[3][3] = {{4, 2, 2}, {2, 4, 2}, {2, 2, 4}};
  for (int p = 0; p < 3; ++p) {
    double xyz[3];
    tc_mesh_node_position(&options, nodes[p][0], nodes[p][1], nodes[p][2], xyz);
    for (int d = 0; d < 3; ++d) {
      double expected = nodes[p][d] / 8.0 + (d == p ? 0.025 : 0.0);
      CHECK(fabs(xyz[d] - expected) <= 1e-15, "node %d coordinate %d: %.17g, expected %.17g", p, d,
            xyz[d], expected);
    }
  }
  options.order = 2; /* the same physical points as Q2 node indices */
  double xyz[3];
  tc_mesh_node_position(&options, 8, 4, 4, xyz);
  CHECK(fabs(xyz[0] - 0.525) <= 1e-15 && fabs(xyz[1] - 0.25) <= 1e-15 &&
            fabs(xyz[2] - 0.25) <= 1e-15,
        "Q2 node (8,4,4) at %.17g %.17g %.17g", xyz[0], xyz[1], xyz[2]);
}

static void run_case(const tc_mesh_options *options) {
  tc_mesh *mesh = NULL;
  tc_error_clear();
  CHECK_CALL(tc_mesh_create(MPI_COMM_WORLD, options, &mesh));
  if (mesh == NULL)
    return;
  const tc_mesh_local *local = tc_mesh_local_part(mesh);
  int grid[3], position[3];
  tc_mesh_rank_grid(mesh, grid, position);
  int64_t begin[3][8], end[3][8];
  check_decomposition(mesh, options, begin, end);
  check_cells(local);
  check_nodes(local, options, grid, begin, end);
  check_node_cells(local);
  check_geometry(local, options);
  check_cell_validity(local);
  tc_mesh_destroy(&mesh);
  CHECK(mesh == NULL, "tc_mesh_destroy left the handle set");
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI start failed: %s\n", tc_error_message());
    return 1;
  }
  /* Each box fits 1..8 ranks; together they cover Q1 and Q2, uneven splits,
   * one-cell-thick blocks and a box split along one direction only. */
  const tc_mesh_options cases[] = {
      {.cells = {7, 4, 3}, .length = {1.0, 2.0, 3.0}, .distortion = 0.2, .order = 1},
      {.cells = {3, 2, 9}, .length = {1.0, 1.0, 1.0}, .distortion = 0.1, .order = 2},
      {.cells = {8, 8, 8}, .length = {1.0, 1.0, 1.0}, .distortion = 0.2, .order = 1},
      {.cells = {1, 1, 8}, .length = {0.5, 0.25, 4.0}, .distortion = 0.0, .order = 2},
      {.cells = {5, 7, 4}, .length = {3.0, 1.0, 2.0}, .distortion = 0.24, .order = 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    run_case(&cases[c]);
  check_hand_computed_positions();
  return test_finish("test_mesh_partition");
}
