/* tc_output_mesh: the /mesh group of the results file: the rows each rank
 * writes, and the datasets of node coordinates, connectivity in
 * tensor-product and in VTK order, and the partition, with the rank's rows
 * of each packed in global order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * tensor order (dataset->values NULL) or in the VTK order it points to. */
static tc_err pack_connectivity(const tc_output *output, const tc_output_dataset *dataset,
                                const tc_row_set *cells, void **packed, const void **data) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  const int *vtk_order = dataset->values;
  int per_cell = part->nodes_per_cell;
  int64_t *connectivity;
  TC_CALLOC(connectivity, cells->count * per_cell);
  for (int64_t i = 0; i < cells->count; i++) {
    const int64_t *nodes = part->cell_nodes + tc_row_set_local(cells, i) * per_cell;
    for (int v = 0; v < per_cell; v++)
      connectivity[i * per_cell + v] = part->node_global_id[nodes[vtk_order ? vtk_order[v] : v]];
  }
  *packed = connectivity;
  *data = connectivity;
  return TC_SUCCESS;
}

/* The writing rank of each of its cells. */
static tc_err pack_partition(const tc_output *output, const tc_output_dataset *dataset,
                             const tc_row_set *cells, void **packed, const void **data) {
  (void)dataset;
  int32_t *owner;
  TC_CALLOC(owner, cells->count);
  for (int64_t i = 0; i < cells->count; i++)
    owner[i] = output->rank;
  *packed = owner;
  *data = owner;
  return TC_SUCCESS;
}

/* The VTK order of the mesh's cells' nodes (see tc_xdmf_vtk_node_order),
 * for the two orders there are. */
static const int *vtk_order(int order) {
  static int orders[2][27];
  static int made[2];
  int which = order == 1 ? 0 : 1;
  if (!made[which]) {
    tc_xdmf_vtk_node_order(order, orders[which]);
    made[which] = 1;
  }
  return orders[which];
}

void tc_output_mesh_datasets(const tc_output *output, tc_output_dataset *datasets) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  hsize_t per_cell = (hsize_t)part->nodes_per_cell;
  datasets[0] = (tc_output_dataset){
      .path = "/mesh/coordinates",
      .file_type = H5T_IEEE_F64LE,
      .element_bytes = sizeof(double),
      .global_rows = part->num_global_nodes,
      .trailing_rank = 1,
      .trailing = {3, 1},
      .units = "length unit of the input deck",
      .description = "node positions x, y, z; row = global node id i + gx*(j + gy*k) on the "
                     "node grid global_nodes = (gx, gy, gz)",
      .on_nodes = true,
      .pack = tc_output_pack_values,
      .values = part->coords,
      .offset = -1};
  datasets[1] = (tc_output_dataset){
      .path = "/mesh/connectivity",
      .file_type = H5T_STD_I64LE,
      .element_bytes = sizeof(int64_t),
      .global_rows = part->num_global_cells,
      .trailing_rank = 1,
      .trailing = {per_cell, 1},
      .description = "global node ids of each cell's nodes in tensor-product order "
                     "a + n*(b + n*c), n = order + 1, (a, b, c) the node's position along x, y, "
                     "z in the cell; row = global cell id i + nx*(j + ny*k)",
      .pack = pack_connectivity,
      .offset = -1};
  datasets[2] = datasets[1];
  snprintf(datasets[2].path, sizeof datasets[2].path, "/mesh/xdmf_connectivity");
  datasets[2].description =
      part->order == 1
          ? "the cells' global node ids in VTK/XDMF Hexahedron order, for visualisation"
          : "the cells' global node ids in VTK/XDMF Hexahedron_27 (triquadratic) order, "
            "for visualisation";
  datasets[2].values = vtk_order(part->order);
  datasets[3] = (tc_output_dataset){
      .path = "/mesh/partition",
      .file_type = H5T_STD_I32LE,
      .element_bytes = sizeof(int32_t),
      .global_rows = part->num_global_cells,
      .trailing = {1, 1},
      .description = "MPI rank that owned and wrote each cell (row = global cell id)",
      .pack = pack_partition,
      .offset = -1};
}

tc_err tc_output_put_mesh_attributes(const tc_output *output, hid_t group, const void *context) {
  (void)context;
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
  return tc_output_put_string_attribute(group, "cell_type",
                                        part->order == 1 ? "hex8 (Q1)" : "hex27 (Q2)");
}
