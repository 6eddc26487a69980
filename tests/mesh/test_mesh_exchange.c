/* test_mesh_exchange: tc_mesh_sum_shared against references computed from
 * which ranks hold each global node (gathered by allreduce) and from the grid:
 * counts of touching ranks and cells, several components, bitwise agreement
 * with an ascending-rank-order sum of order-sensitive values,
 * tc_mesh_sum_shared_fields bitwise equal to one call per field, and
 * tc_neighbor_exchange_records delivering each neighbour its own record. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_test.h"

/* A value whose floating-point sum depends on the order of the terms: ranks
 * alternate between 1e16-sized and 1-sized contributions. */
static double contribution(int rank, int64_t gid) {
  double small = 1.0 + (double)(gid % 7) / 3.0 + rank / 7.0;
  return rank % 2 == 1 ? 1e16 * (1.0 + rank / 9.0) + small : small;
}

static void run_case(MPI_Comm comm, const tc_mesh_options *options) {
  const int rank = tc_rank(comm), size = tc_size(comm);
  tc_mesh *mesh = NULL;
  tc_error_clear();
  CHECK_CALL(tc_mesh_create(comm, options, &mesh));
  if (mesh == NULL)
    return;
  const tc_mesh_local *local = tc_mesh_local_part(mesh);
  const int64_t g = local->num_global_nodes, n = local->num_nodes;

  /* holds[r * g + gid] = 1 when rank r has global node gid locally */
  int64_t *holds = calloc((size_t)(size * g), sizeof *holds);
  for (int64_t node = 0; node < n; ++node)
    holds[rank * g + local->node_global_id[node]] = 1;
  CHECK_CALL(tc_allreduce_sum_int64(comm, holds, (int)(size * g)));

  /* three components: 1, local cells touching the node, global id */
  enum { COMPONENTS = 3 };
  double *values = calloc((size_t)(n * COMPONENTS), sizeof *values);
  for (int64_t cell = 0; cell < local->num_cells; ++cell)
    for (int slot = 0; slot < local->nodes_per_cell; ++slot)
      values[local->cell_nodes[cell * local->nodes_per_cell + slot] * COMPONENTS + 1] += 1.0;
  for (int64_t node = 0; node < n; ++node) {
    values[node * COMPONENTS + 0] = 1.0;
    values[node * COMPONENTS + 2] = (double)local->node_global_id[node];
  }
  double *ordered = malloc((size_t)n * sizeof *ordered);
  for (int64_t node = 0; node < n; ++node)
    ordered[node] = contribution(rank, local->node_global_id[node]);
  /* The same two fields summed in one message: bitwise the separate sums. */
  double *together[2] = {malloc((size_t)n * sizeof(double)),
                         malloc((size_t)(n * COMPONENTS) * sizeof(double))};
  memcpy(together[0], ordered, (size_t)n * sizeof(double));
  memcpy(together[1], values, (size_t)(n * COMPONENTS) * sizeof(double));
  CHECK_CALL(tc_mesh_sum_shared(mesh, values, COMPONENTS));
  CHECK_CALL(tc_mesh_sum_shared(mesh, ordered, 1));
  CHECK_CALL(tc_mesh_sum_shared_fields(mesh, 2, together, (const int[]){1, COMPONENTS}));
  CHECK(memcmp(together[0], ordered, (size_t)n * sizeof(double)) == 0 &&
            memcmp(together[1], values, (size_t)(n * COMPONENTS) * sizeof(double)) == 0,
        "tc_mesh_sum_shared_fields differs from one tc_mesh_sum_shared per field");
  free(together[0]);
  free(together[1]);

  int64_t shared_nodes = 0, order_sensitive = 0;
  for (int64_t node = 0; node < n; ++node) {
    int64_t gid = local->node_global_id[node];
    int64_t ranks_holding = 0;
    double reference = 0.0;
    bool first = true;
    for (int r = 0; r < size; ++r) {
      if (!holds[r * g + gid])
        continue;
      ++ranks_holding;
      reference = first ? contribution(r, gid) : reference + contribution(r, gid);
      first = false;
    }
    const int64_t index[3] = {gid % local->global_nodes[0],
                              gid / local->global_nodes[0] % local->global_nodes[1],
                              gid / local->global_nodes[0] / local->global_nodes[1]};
    int64_t cells = 1;
    for (int d = 0; d < 3; ++d)
      cells *= cells_touching_node_index(local->global_cells[d], local->order, index[d]);
    const double *v = &values[node * COMPONENTS];
    CHECK(v[0] == (double)ranks_holding, "node %lld: %g ranks, expected %lld", (long long)gid, v[0],
          (long long)ranks_holding);
    CHECK(v[1] == (double)cells, "node %lld: %g cells, expected %lld", (long long)gid, v[1],
          (long long)cells);
    CHECK(v[2] == (double)(gid * ranks_holding), "node %lld: id sum %g, expected %lld",
          (long long)gid, v[2], (long long)(gid * ranks_holding));
    CHECK(ordered[node] == reference, "node %lld: sum %.17g, ascending-rank sum %.17g",
          (long long)gid, ordered[node], reference);
    shared_nodes += ranks_holding > 1;
    if (ranks_holding > 2) {
      double reversed = 0.0;
      first = true;
      for (int r = size - 1; r >= 0; --r)
        if (holds[r * g + gid]) {
          reversed = first ? contribution(r, gid) : reversed + contribution(r, gid);
          first = false;
        }
      order_sensitive += reversed != reference;
    }
  }
  /* Q1 interior vertices touch 8 cells: spot-check the reference itself. */
  if (local->order == 1 && local->global_cells[0] > 1 && local->global_cells[1] > 1 &&
      local->global_cells[2] > 1)
    CHECK(cells_touching_node_index(local->global_cells[0], 1, 1) *
                  cells_touching_node_index(local->global_cells[1], 1, 1) *
                  cells_touching_node_index(local->global_cells[2], 1, 1) ==
              8,
          "interior Q1 vertex reference");
  int64_t totals[2] = {shared_nodes, order_sensitive};
  CHECK_CALL(tc_allreduce_sum_int64(comm, totals, 2));
  CHECK((size == 1) == (totals[0] == 0), "%lld shared nodes on %d ranks", (long long)totals[0],
        size);
  CHECK(size != 8 || totals[1] > 0, "no shared node's sum depends on the order of its terms, so "
                                    "the order is not tested");
  if (rank == 0 && comm == MPI_COMM_WORLD)
    printf("cells %lldx%lldx%lld order %d: %lld shared node copies, %lld whose sum depends on "
           "order\n",
           (long long)options->cells[0], (long long)options->cells[1], (long long)options->cells[2],
           options->order, (long long)totals[0], (long long)totals[1]);

  /* tc_neighbor_exchange_records: each neighbour gets its own record (the
   * sender, the receiver, and a payload past a 4-byte boundary), as the GPU
   * exchange's peer route sends its buffers' handles. */
  tc_mesh_exchange_plan plan;
  tc_mesh_get_exchange_plan(mesh, &plan);
  enum { RECORD = 13 };
  const int neighbours = plan.num_neighbors;
  unsigned char *records = calloc((size_t)(2 * (neighbours + 1) * RECORD), 1);
  for (int k = 0; k < neighbours; ++k) {
    unsigned char *record = records + k * RECORD;
    memcpy(record, &rank, sizeof rank);
    memcpy(record + 4, &plan.neighbor_rank[k], sizeof rank);
    record[RECORD - 1] = (unsigned char)(rank * 31 + plan.neighbor_rank[k]);
  }
  unsigned char *received = records + (neighbours + 1) * RECORD;
  CHECK_CALL(tc_neighbor_exchange_records(comm, neighbours, plan.neighbor_rank, RECORD, records,
                                          received, 7499));
  for (int k = 0; k < neighbours; ++k) {
    int from = -1, to = -1;
    memcpy(&from, received + k * RECORD, sizeof from);
    memcpy(&to, received + k * RECORD + 4, sizeof to);
    CHECK(from == plan.neighbor_rank[k] && to == rank &&
              received[k * RECORD + RECORD - 1] == (unsigned char)(from * 31 + rank),
          "record %d from rank %d: sent by %d to %d", k, plan.neighbor_rank[k], from, to);
  }
  free(records);

  /* A bad component count fails on every rank with the same message. */
  tc_error_clear();
  tc_err status = tc_mesh_sum_shared(mesh, values, 0);
  char expected[256];
  snprintf(expected, sizeof expected, "%stc_mesh_sum_shared: components must be >= 1, got 0",
           size > 1 ? "rank 0: " : "");
  CHECK(status == TC_ERR_ARGUMENT && strcmp(tc_error_message(), expected) == 0,
        "components 0 gave '%s': %s", tc_err_name(status), tc_error_message());
  tc_error_clear();

  free(holds);
  free(values);
  free(ordered);
  tc_mesh_destroy(&mesh);
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI start failed: %s\n", tc_error_message());
    return 1;
  }
  const tc_mesh_options cases[] = {
      {.cells = {7, 4, 3}, .length = {1.0, 1.0, 1.0}, .distortion = 0.1, .order = 1},
      {.cells = {3, 2, 9}, .length = {2.0, 1.0, 1.0}, .distortion = 0.1, .order = 2},
      {.cells = {4, 4, 8}, .length = {1.0, 1.0, 1.0}, .distortion = 0.0, .order = 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    run_case(MPI_COMM_WORLD, &cases[c]);

  /* The mesh lives on the communicator it is given: even and odd ranks build
   * two meshes side by side. */
  MPI_Comm half;
  if (MPI_Comm_split(MPI_COMM_WORLD, tc_rank(MPI_COMM_WORLD) % 2, 0, &half) == MPI_SUCCESS) {
    run_case(half, &cases[1]);
    MPI_Comm_free(&half);
  } else {
    CHECK(false, "MPI_Comm_split failed");
  }
  return test_finish("test_mesh_exchange");
}
