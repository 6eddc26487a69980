/* tc_xdmf: writing the XDMF description of a results file, and the VTK node
 * order of the hexahedra it declares. */
#include "tc_xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Positions (along x, y, z, in steps of half a cell) of the nodes of VTK's
 * triquadratic hexahedron (vtkTriQuadraticHexahedron: corners, the edges
 * 0-1 1-2 3-2 0-3 4-5 5-6 7-6 4-7 0-4 1-5 2-6 3-7, the faces -x +x -y +y -z
 * +z, the centre). The first 8 are also the linear hexahedron's corners. */
static const int vtk_hex27_position[27][3] = {
    {0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0}, {0, 0, 2}, {2, 0, 2}, {2, 2, 2},
    {0, 2, 2}, {1, 0, 0}, {2, 1, 0}, {1, 2, 0}, {0, 1, 0}, {1, 0, 2}, {2, 1, 2},
    {1, 2, 2}, {0, 1, 2}, {0, 0, 1}, {2, 0, 1}, {2, 2, 1}, {0, 2, 1}, {0, 1, 1},
    {2, 1, 1}, {1, 0, 1}, {1, 2, 1}, {1, 1, 0}, {1, 1, 2}, {1, 1, 1}};

void tc_xdmf_vtk_node_order(int order, int tensor_index[27]) {
  int count = order == 1 ? 8 : 27;
  int n = order + 1;
  for (int v = 0; v < count; v++) {
    /* Half-cell steps become node steps: 2 -> order, 1 -> 1 (order 2 only). */
    int a = vtk_hex27_position[v][0] * order / 2;
    int b = vtk_hex27_position[v][1] * order / 2;
    int c = vtk_hex27_position[v][2] * order / 2;
    tensor_index[v] = a + n * (b + n * c);
  }
}

/* Writes text with the XML special characters escaped. */
static void put_escaped(FILE *file, const char *text) {
  for (const char *p = text; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", file); break;
    case '<': fputs("&lt;", file); break;
    case '>': fputs("&gt;", file); break;
    case '"': fputs("&quot;", file); break;
    default: fputc(*p, file);
    }
  }
}

static void put_data_item(FILE *file, const tc_xdmf_grid *grid, const char *dataset,
                          int64_t rows, int columns, bool integer, int bytes) {
  fprintf(file, "        <DataItem Dimensions=\"%lld", (long long)rows);
  if (columns > 1)
    fprintf(file, " %d", columns);
  fprintf(file, "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">",
          integer ? "Int" : "Float", bytes);
  put_escaped(file, grid->h5_file_name);
  fputc(':', file);
  put_escaped(file, dataset);
  fputs("</DataItem>\n", file);
}

static const char *attribute_type(int components) {
  switch (components) {
  case 1: return "Scalar";
  case 3: return "Vector";
  case 6: return "Tensor6";
  case 9: return "Tensor";
  default: return "Matrix";
  }
}

tc_err tc_xdmf_write(const char *path, const tc_xdmf_grid *grid) {
  TC_CHECK(grid->nodes_per_cell == 8 || grid->nodes_per_cell == 27, TC_ERR_ARGUMENT,
           "XDMF hexahedra have 8 or 27 nodes, not %d", grid->nodes_per_cell);
  FILE *file = fopen(path, "w");
  TC_CHECK(file != NULL, TC_ERR_IO, "cannot create '%s': %s", path, strerror(errno));

  fputs("<?xml version=\"1.0\" ?>\n"
        "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<Xdmf Version=\"2.0\">\n"
        "  <Domain>\n"
        "    <Grid Name=\"mesh\" GridType=\"Uniform\">\n",
        file);
  fprintf(file, "      <Topology TopologyType=\"%s\" NumberOfElements=\"%lld\">\n",
          grid->nodes_per_cell == 8 ? "Hexahedron" : "Hexahedron_27", (long long)grid->num_cells);
  put_data_item(file, grid, grid->topology_dataset, grid->num_cells, grid->nodes_per_cell, true, 8);
  fputs("      </Topology>\n"
        "      <Geometry GeometryType=\"XYZ\">\n",
        file);
  put_data_item(file, grid, grid->geometry_dataset, grid->num_nodes, 3, false, 8);
  fputs("      </Geometry>\n", file);
  for (int i = 0; i < grid->num_attributes; i++) {
    const tc_xdmf_attribute *attribute = &grid->attributes[i];
    fputs("      <Attribute Name=\"", file);
    put_escaped(file, attribute->name);
    fprintf(file, "\" AttributeType=\"%s\" Center=\"%s\">\n", attribute_type(attribute->components),
            attribute->on_nodes ? "Node" : "Cell");
    put_data_item(file, grid, attribute->dataset,
                  attribute->on_nodes ? grid->num_nodes : grid->num_cells, attribute->components,
                  attribute->integer, attribute->bytes);
    fputs("      </Attribute>\n", file);
  }
  fputs("    </Grid>\n"
        "  </Domain>\n"
        "</Xdmf>\n",
        file);

  /* On stable storage before it is published (tc_output_publish.c). */
  int write_failed = ferror(file) || fflush(file) != 0 || fsync(fileno(file)) != 0;
  int close_failed = fclose(file);
  TC_CHECK(!write_failed && close_failed == 0, TC_ERR_IO, "cannot write '%s': %s", path,
           strerror(errno));
  return TC_SUCCESS;
}
