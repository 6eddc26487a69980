/* tc_output_mesh: the /mesh group of the results file: the rows each rank
 * writes, the node coordinates, the connectivity in tensor-product and in
 * VTK order, and the partition. */
#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"
#include "tc_output_impl.h"
#include "tc_xdmf.h"

void tc_output_free_mesh_rows(tc_output_mesh_rows *rows) {
  tc_row_set_free(&rows->nodes);
  tc_row_set_free(&rows->cells);
}

tc_err tc_output_build_mesh_rows(const tc_output *output, tc_output_mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  TC_CALL(tc_row_set_build(part->num_nodes, part->node_global_id, part->node_owner, output->rank,
                           &rows->nodes));
  return tc_row_set_build(part->num_cells, part->cell_global_id, NULL, output->rank, &rows->cells);
}

/* Connectivity in global node ids, cell rows in global order, nodes in
 * tensor order (vtk_order NULL) or VTK order. */
static tc_err pack_connectivity(const tc_mesh_local *part, const tc_row_set *cells,
                                const int *vtk_order, int64_t **connectivity) {
  int per_cell = part->nodes_per_cell;
  TC_CALLOC(*connectivity, cells->count * per_cell);
  for (int64_t i = 0; i < cells->count; i++) {
    const int64_t *nodes = part->cell_nodes + tc_row_set_local(cells, i) * per_cell;
    for (int v = 0; v < per_cell; v++)
      (*connectivity)[i * per_cell + v] = part->node_global_id[nodes[vtk_order ? vtk_order[v] : v]];
  }
  return TC_SUCCESS;
}

static tc_err write_connectivity(const tc_output *output, tc_output_session *s,
                                 const tc_output_mesh_rows *rows, const char *path,
                                 const int *vtk_order, const char *description) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t *connectivity = NULL;
  tc_err err = tc_parallel_agree(output->comm,
                                 pack_connectivity(part, &rows->cells, vtk_order, &connectivity));
  if (err == TC_SUCCESS) {
    tc_output_dataset_shape shape = {path,
                                     H5T_STD_I64LE,
                                     H5T_NATIVE_INT64,
                                     sizeof(int64_t),
                                     part->num_global_cells,
                                     1,
                                     {(hsize_t)part->nodes_per_cell, 1},
                                     NULL,
                                     description};
    tc_row_set in_order = rows->cells;
    in_order.local = NULL; /* already packed in global order */
    err = tc_output_write_rows(output, s, &shape, &in_order, connectivity);
  }
  free(connectivity);
  return err;
}

static tc_err write_partition(const tc_output *output, tc_output_session *s,
                              const tc_output_mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int32_t *owner = NULL;
  tc_err err = TC_SUCCESS;
  if (rows->cells.count) {
    owner = malloc((size_t)rows->cells.count * sizeof *owner);
    if (owner == NULL)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory for the partition");
    for (int64_t i = 0; owner && i < rows->cells.count; i++)
      owner[i] = output->rank;
  }
  err = tc_parallel_agree(output->comm, err);
  if (err == TC_SUCCESS) {
    tc_output_dataset_shape shape = {
        "/mesh/partition",
        H5T_STD_I32LE,
        H5T_NATIVE_INT32,
        sizeof(int32_t),
        part->num_global_cells,
        0,
        {1, 1},
        NULL,
        "MPI rank that owned and wrote each cell (row = global cell id)"};
    tc_row_set in_order = rows->cells;
    in_order.local = NULL;
    err = tc_output_write_rows(output, s, &shape, &in_order, owner);
  }
  free(owner);
  return err;
}

static tc_err write_mesh_attributes(const tc_output *output, hid_t group) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int grid[3], position[3];
  tc_mesh_rank_grid(output->mesh, grid, position);
  int64_t order = part->order, per_cell = part->nodes_per_cell;
  int64_t rank_grid[3] = {grid[0], grid[1], grid[2]};
  TC_CALL(tc_output_put_int64_attribute(group, "order", &order, 1));
  TC_CALL(tc_output_put_int64_attribute(group, "nodes_per_cell", &per_cell, 1));
  TC_CALL(tc_output_put_int64_attribute(group, "global_cells", part->global_cells, 3));
  TC_CALL(tc_output_put_int64_attribute(group, "global_nodes", part->global_nodes, 3));
  TC_CALL(tc_output_put_int64_attribute(group, "rank_grid", rank_grid, 3));
  TC_CALL(tc_output_put_string_attribute(group, "cell_type",
                                         part->order == 1 ? "hex8 (Q1)" : "hex27 (Q2)"));
  return TC_SUCCESS;
}

static tc_err put_mesh_attributes(const tc_output *output, hid_t group, const void *context) {
  (void)context;
  return write_mesh_attributes(output, group);
}

tc_err tc_output_write_mesh(const tc_output *output, tc_output_session *s,
                            const tc_output_mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  TC_CALL(tc_parallel_agree(
      output->comm, tc_output_group_attributes(output, s, "/mesh", put_mesh_attributes, NULL)));

  tc_output_dataset_shape coordinates = {
      "/mesh/coordinates",
      H5T_IEEE_F64LE,
      H5T_NATIVE_DOUBLE,
      sizeof(double),
      part->num_global_nodes,
      1,
      {3, 1},
      "length unit of the input deck",
      "node positions x, y, z; row = global node id i + gx*(j + gy*k) on the node grid "
      "global_nodes = (gx, gy, gz)"};
  TC_CALL(tc_output_write_rows(output, s, &coordinates, &rows->nodes, part->coords));

  TC_CALL(write_connectivity(
      output, s, rows, "/mesh/connectivity", NULL,
      "global node ids of each cell's nodes in tensor-product order a + n*(b + n*c), "
      "n = order + 1, (a, b, c) the node's position along x, y, z in the cell; "
      "row = global cell id i + nx*(j + ny*k)"));
  int vtk_order[27];
  tc_xdmf_vtk_node_order(part->order, vtk_order);
  TC_CALL(write_connectivity(
      output, s, rows, "/mesh/xdmf_connectivity", vtk_order,
      part->order == 1
          ? "the cells' global node ids in VTK/XDMF Hexahedron order, for visualisation"
          : "the cells' global node ids in VTK/XDMF Hexahedron_27 (triquadratic) order, "
            "for visualisation"));
  return write_partition(output, s, rows);
}
