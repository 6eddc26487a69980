/* tc_xdmf: private to src/io. The XDMF (version 2) description that lets
 * ParaView and VisIt open a tcmini results file: the hexahedral grid and its
 * cell and node fields, as references into the HDF5 file beside it. */
#ifndef TC_XDMF_H
#define TC_XDMF_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"

/// One field shown by the viewer.
typedef struct {
  const char *name;    ///< name shown in the viewer
  const char *dataset; ///< absolute dataset path in the HDF5 file, e.g. "/cells/stress"
  bool on_nodes;       ///< node-centred (true) or cell-centred (false)
  int components;      ///< values per node or cell; 1: the dataset is 1-D
  bool integer;        ///< integer (true) or floating-point values
  int bytes;           ///< bytes per value: 4 or 8
} tc_xdmf_attribute;

/// The grid and what to show on it.
typedef struct {
  const char *h5_file_name;      ///< the HDF5 file, relative to the XDMF file's directory
  int nodes_per_cell;            ///< 8 (Hexahedron) or 27 (Hexahedron_27)
  int64_t num_cells;             ///< rows of the topology dataset
  int64_t num_nodes;             ///< rows of the geometry dataset
  const char *topology_dataset;  ///< int64 [num_cells][nodes_per_cell] in VTK node order
  const char *geometry_dataset;  ///< float64 [num_nodes][3]
  const tc_xdmf_attribute *attributes;
  int num_attributes;
} tc_xdmf_grid;

/// The tensor-product node index a + n*(b + n*c) (n = order+1, the
/// tc_mesh.h order within a cell) of each node of the VTK/XDMF hexahedron of
/// that order: tensor_index[v] for v < 8 (order 1, Hexahedron) or v < 27
/// (order 2, Hexahedron_27 = VTK_TRIQUADRATIC_HEXAHEDRON: corners, edge
/// midpoints, face centres -x +x -y +y -z +z, body centre).
void tc_xdmf_vtk_node_order(int order, int tensor_index[27]);

/// Writes the XDMF file at path (plain stdio; the caller makes it atomic)
/// and flushes it to stable storage (fsync). Fails with TC_ERR_IO if the
/// file cannot be written completely. Not collective.
tc_err tc_xdmf_write(const char *path, const tc_xdmf_grid *grid);

#endif
