/* test_output: writes results files with tc_output and reads them back with
 * plain HDF5 calls on rank 0. Checks every dataset against references built
 * from the global ids and tc_mesh_node_position (not from the writer's
 * code), the XDMF file, that the file written by all ranks equals the one
 * written by a 1-rank sub-communicator dataset by dataset, that failures
 * (bad directory, HDF5 failure, one rank failing mid-write, ranks adding
 * different fields) give the same error on every rank and leave no file, and
 * the overwrite rule. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "tc_mesh.h"
#include "tc_output.h"
#include "tc_parallel.h"

static int world_rank, world_size, failures;

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "rank %d: %s:%d: check failed: ", world_rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------ the fields -- */

static const char *const deck_text = "# test deck\n[mesh]\ncells = 6 5 4\n";
static const tc_output_phase phases[2] = {{"mesh", 0.5, 0.75, 1.0},
                                          {"assemble_and_contract", 2.0, 2.5, 3.0}};

static double cell_value(int64_t cell, int component) { return (double)cell + 0.25 * component; }
static double cell_scalar(int64_t cell) { return 3.0 * (double)cell + 1.0; }
static double node_value(int64_t node, int component) { return (double)node + 0.125 * component; }
static double position_sum(const double xyz[3]) { return xyz[0] + 10 * xyz[1] + 100 * xyz[2]; }
static double matrix_entry(int64_t cell, int row, int col, int n) {
  return 1000.0 * (double)cell + row * n + col;
}

typedef struct {
  double *cell_value, *cell_scalar, *node_value, *node_scalar, *matrix;
} test_fields;

static void free_fields(test_fields *f) {
  free(f->cell_value);
  free(f->cell_scalar);
  free(f->node_value);
  free(f->node_scalar);
  free(f->matrix);
}

/* Rank-local fields. Rows of nodes this rank does not own hold NaN: only
 * owners may write a node's row, so a NaN in the file means a non-owner did. */
static void make_fields(const tc_mesh *mesh, int rank, test_fields *f) {
  const tc_mesh_local *part = tc_mesh_local_part(mesh);
  int n = part->nodes_per_cell;
  f->cell_value = calloc((size_t)part->num_cells * 2 + 1, sizeof(double));
  f->cell_scalar = calloc((size_t)part->num_cells + 1, sizeof(double));
  f->node_value = calloc((size_t)part->num_nodes * 3 + 1, sizeof(double));
  f->node_scalar = calloc((size_t)part->num_nodes + 1, sizeof(double));
  f->matrix = calloc((size_t)part->num_cells * n * n + 1, sizeof(double));
  if (!f->cell_value || !f->cell_scalar || !f->node_value || !f->node_scalar || !f->matrix)
    tc_abort(MPI_COMM_WORLD, 1, "out of memory for the test fields");
  for (int64_t c = 0; c < part->num_cells; c++) {
    int64_t id = part->cell_global_id[c];
    for (int k = 0; k < 2; k++)
      f->cell_value[c * 2 + k] = cell_value(id, k);
    f->cell_scalar[c] = cell_scalar(id);
    for (int r = 0; r < n; r++)
      for (int s = 0; s < n; s++)
        f->matrix[(c * n + r) * n + s] = matrix_entry(id, r, s, n);
  }
  for (int64_t v = 0; v < part->num_nodes; v++) {
    bool owned = part->node_owner[v] == rank;
    for (int k = 0; k < 3; k++)
      f->node_value[v * 3 + k] = owned ? node_value(part->node_global_id[v], k) : NAN;
    f->node_scalar[v] = owned ? position_sum(part->coords + 3 * v) : NAN;
  }
}

static tc_err add_fields(tc_output *output, const test_fields *f, int n) {
  tc_output_field cells[2] = {
      {"cell_value", 2, f->cell_value, "1", "global cell id + component/4"},
      {"cell_scalar", 1, f->cell_scalar, "1", "3 * global cell id + 1"}};
  tc_output_field nodes[2] = {
      {"node_value", 3, f->node_value, "1", "global node id + component/8"},
      {"node_scalar", 1, f->node_scalar, "m", "x + 10 y + 100 z"}};
  tc_output_matrix matrix = {"element_matrix", n, n, f->matrix, "1", "1000 cell + row n + col"};
  for (int i = 0; i < 2; i++) {
    TC_CALL(tc_output_add_cell_field(output, &cells[i]));
    TC_CALL(tc_output_add_node_field(output, &nodes[i]));
  }
  return tc_output_add_element_matrix(output, &matrix);
}

/* Generates the mesh on comm and writes the test fields to path. */
static tc_err write_file(MPI_Comm comm, const tc_mesh_options *options, const char *path,
                         bool overwrite, const char *version, const char *fail_after,
                         bool extra_field_on_rank0, tc_output_stats *stats) {
  tc_mesh *mesh = NULL;
  TC_CALL(tc_mesh_create(comm, options, &mesh));
  test_fields f = {0};
  make_fields(mesh, tc_rank(comm), &f);
  tc_output *output = NULL;
  tc_err err = tc_output_create(comm, path, overwrite, mesh, &output);
  if (err == TC_SUCCESS)
    err = add_fields(output, &f, tc_mesh_local_part(mesh)->nodes_per_cell);
  if (err == TC_SUCCESS && extra_field_on_rank0 && tc_rank(comm) == 0) {
    tc_output_field extra = {"extra", 1, f.cell_scalar, NULL, NULL};
    err = tc_output_add_cell_field(output, &extra);
  }
  if (err == TC_SUCCESS && fail_after)
    err = tc_output_fail_after(output, fail_after, tc_size(comm) - 1);
  if (err == TC_SUCCESS) {
    tc_output_run_info run = {deck_text, version, "abc1234", "serial", "right", "flat", "double",
                              phases, 2};
    err = tc_output_write(output, &run, stats);
  }
  tc_output_destroy(&output);
  tc_mesh_destroy(&mesh);
  free_fields(&f);
  /* Rank 0 removes the lock file in tc_output_destroy: wait for it before
   * any rank looks at the directory. */
  MPI_Barrier(comm);
  return err;
}

/* -------------------------------------------------------- reading back -- */

/* Reads a whole dataset as mem_type after checking its shape. */
static void *read_dataset(hid_t file, const char *path, hid_t mem_type, int rank,
                          const hsize_t *dims) {
  hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
  EXPECT(dataset >= 0, "dataset %s is missing", path);
  if (dataset < 0)
    return NULL;
  hid_t space = H5Dget_space(dataset);
  hsize_t found[4] = {0};
  int found_rank = H5Sget_simple_extent_ndims(space);
  bool shape_ok = found_rank == rank && H5Sget_simple_extent_dims(space, found, NULL) == rank;
  size_t count = 1;
  for (int d = 0; d < rank && shape_ok; d++) {
    shape_ok = found[d] == dims[d];
    count *= (size_t)dims[d];
  }
  EXPECT(shape_ok, "dataset %s: rank %d dims %llu %llu %llu, expected rank %d dims %llu ...", path,
         found_rank, (unsigned long long)found[0], (unsigned long long)found[1],
         (unsigned long long)found[2], rank, (unsigned long long)dims[0]);
  void *data = NULL;
  if (shape_ok) {
    data = calloc(count + 1, H5Tget_size(mem_type));
    EXPECT(H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0,
           "cannot read %s", path);
  }
  H5Sclose(space);
  H5Dclose(dataset);
  return data;
}

static char *read_string_attribute(hid_t file, const char *object, const char *name) {
  hid_t attribute = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT(attribute >= 0, "attribute %s of %s is missing", name, object);
  if (attribute < 0)
    return NULL;
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char *value = NULL;
  EXPECT(H5Aread(attribute, type, &value) >= 0, "cannot read attribute %s of %s", name, object);
  char *copy = value ? strdup(value) : NULL;
  H5free_memory(value);
  H5Tclose(type);
  H5Aclose(attribute);
  return copy;
}

static int64_t read_int64_attribute(hid_t file, const char *object, const char *name) {
  int64_t value = -1;
  hid_t attribute = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT(attribute >= 0 && H5Aread(attribute, H5T_NATIVE_INT64, &value) >= 0,
         "cannot read attribute %s of %s", name, object);
  if (attribute >= 0)
    H5Aclose(attribute);
  return value;
}

/* The file's two-row /run/phases table, read field by field into a struct
 * of our own, is expected[]. */
static void expect_phases(hid_t file, const char *path, const tc_output_phase expected[2]) {
  typedef struct {
    char name[32];
    double min, avg, max;
  } phase_row;
  hid_t name_type = H5Tcopy(H5T_C_S1);
  H5Tset_size(name_type, 32);
  hid_t row_type = H5Tcreate(H5T_COMPOUND, sizeof(phase_row));
  H5Tinsert(row_type, "name", HOFFSET(phase_row, name), name_type);
  H5Tinsert(row_type, "min_seconds", HOFFSET(phase_row, min), H5T_NATIVE_DOUBLE);
  H5Tinsert(row_type, "avg_seconds", HOFFSET(phase_row, avg), H5T_NATIVE_DOUBLE);
  H5Tinsert(row_type, "max_seconds", HOFFSET(phase_row, max), H5T_NATIVE_DOUBLE);
  hsize_t dims[1] = {2};
  phase_row *rows = read_dataset(file, "/run/phases", row_type, 1, dims);
  for (int i = 0; i < 2; i++)
    EXPECT(rows && strcmp(rows[i].name, expected[i].name) == 0 &&
               rows[i].min == expected[i].min_seconds && rows[i].avg == expected[i].avg_seconds &&
               rows[i].max == expected[i].max_seconds,
           "%s: phase row %d differs", path, i);
  free(rows);
  H5Tclose(row_type);
  H5Tclose(name_type);
}

static void global_to_ijk(int64_t id, const int64_t n[3], int64_t ijk[3]) {
  ijk[0] = id % n[0];
  ijk[1] = (id / n[0]) % n[1];
  ijk[2] = id / (n[0] * n[1]);
}

/* Positions of the nodes of VTK's hexahedra in the unit cell, copied from
 * VTK (vtkHexahedron / vtkTriQuadraticHexahedron::GetParametricCoords). */
static const double vtk_parametric[27][3] = {
    {0, 0, 0},     {1, 0, 0},     {1, 1, 0},     {0, 1, 0},     {0, 0, 1},     {1, 0, 1},
    {1, 1, 1},     {0, 1, 1},     {.5, 0, 0},    {1, .5, 0},    {.5, 1, 0},    {0, .5, 0},
    {.5, 0, 1},    {1, .5, 1},    {.5, 1, 1},    {0, .5, 1},    {0, 0, .5},    {1, 0, .5},
    {1, 1, .5},    {0, 1, .5},    {0, .5, .5},   {1, .5, .5},   {.5, 0, .5},   {.5, 1, .5},
    {.5, .5, 0},   {.5, .5, 1},   {.5, .5, .5}};

/* Checks every dataset of a file written by ranks ranks; boxes holds each
 * writing rank's cell box (begin x y z, end x y z). Rank 0 only. */
static void check_file(const char *path, const tc_mesh_options *options, int order, int ranks,
                       const int64_t *boxes, const tc_output_stats *stats) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT(file >= 0, "cannot open %s", path);
  if (file < 0)
    return;
  const int64_t *nc = options->cells;
  int64_t ng[3] = {order * nc[0] + 1, order * nc[1] + 1, order * nc[2] + 1};
  int64_t cells = nc[0] * nc[1] * nc[2], nodes = ng[0] * ng[1] * ng[2];
  int n = order + 1, per_cell = n * n * n;

  /* Coordinates against the generator's own function. */
  hsize_t dims[3] = {(hsize_t)nodes, 3, 0};
  double *coords = read_dataset(file, "/mesh/coordinates", H5T_NATIVE_DOUBLE, 2, dims);
  int bad = 0;
  for (int64_t v = 0; coords && v < nodes; v++) {
    int64_t ijk[3];
    global_to_ijk(v, ng, ijk);
    double xyz[3];
    tc_mesh_node_position(options, ijk[0], ijk[1], ijk[2], xyz);
    for (int d = 0; d < 3; d++)
      bad += coords[v * 3 + d] != xyz[d];
  }
  EXPECT(coords && bad == 0, "%s: %d coordinates differ from tc_mesh_node_position", path, bad);

  /* Connectivity against the grid formula; VTK order against VTK's table. */
  dims[0] = (hsize_t)cells;
  dims[1] = (hsize_t)per_cell;
  int64_t *connectivity = read_dataset(file, "/mesh/connectivity", H5T_NATIVE_INT64, 2, dims);
  int64_t *vtk = read_dataset(file, "/mesh/xdmf_connectivity", H5T_NATIVE_INT64, 2, dims);
  int bad_vtk = 0;
  bad = 0;
  for (int64_t c = 0; connectivity && vtk && c < cells; c++) {
    int64_t cell[3];
    global_to_ijk(c, nc, cell);
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        for (int z = 0; z < n; z++) {
          int64_t expected = (order * cell[0] + a) +
                             ng[0] * ((order * cell[1] + b) + ng[1] * (order * cell[2] + z));
          bad += connectivity[c * per_cell + a + n * (b + n * z)] != expected;
        }
    for (int v = 0; v < per_cell; v++) {
      int64_t ijk[3];
      global_to_ijk(vtk[c * per_cell + v], ng, ijk);
      for (int d = 0; d < 3; d++)
        bad_vtk += (double)(ijk[d] - order * cell[d]) / order != vtk_parametric[v][d];
    }
  }
  EXPECT(connectivity && bad == 0, "%s: %d connectivity entries wrong", path, bad);
  EXPECT(vtk && bad_vtk == 0, "%s: %d VTK-ordered entries wrong", path, bad_vtk);

  /* Partition against each rank's cell box. */
  int32_t *partition = read_dataset(file, "/mesh/partition", H5T_NATIVE_INT32, 1, dims);
  bad = 0;
  for (int64_t c = 0; partition && c < cells; c++) {
    int64_t cell[3];
    global_to_ijk(c, nc, cell);
    int expected = -1;
    for (int r = 0; r < ranks; r++) {
      const int64_t *box = boxes + 6 * r;
      if (cell[0] >= box[0] && cell[0] < box[3] && cell[1] >= box[1] && cell[1] < box[4] &&
          cell[2] >= box[2] && cell[2] < box[5])
        expected = r;
    }
    bad += partition[c] != expected;
  }
  EXPECT(partition && bad == 0, "%s: %d partition entries wrong", path, bad);

  /* Fields. */
  dims[1] = 2;
  double *cv = read_dataset(file, "/cells/cell_value", H5T_NATIVE_DOUBLE, 2, dims);
  double *cs = read_dataset(file, "/cells/cell_scalar", H5T_NATIVE_DOUBLE, 1, dims);
  bad = 0;
  for (int64_t c = 0; cv && cs && c < cells; c++)
    bad += cv[2 * c] != cell_value(c, 0) || cv[2 * c + 1] != cell_value(c, 1) ||
           cs[c] != cell_scalar(c);
  EXPECT(cv && cs && bad == 0, "%s: %d cell field rows wrong", path, bad);
  dims[0] = (hsize_t)nodes;
  dims[1] = 3;
  double *nv = read_dataset(file, "/nodes/node_value", H5T_NATIVE_DOUBLE, 2, dims);
  double *ns = read_dataset(file, "/nodes/node_scalar", H5T_NATIVE_DOUBLE, 1, dims);
  bad = 0;
  for (int64_t v = 0; nv && ns && coords && v < nodes; v++) {
    for (int k = 0; k < 3; k++)
      bad += nv[3 * v + k] != node_value(v, k);
    bad += ns[v] != position_sum(coords + 3 * v);
  }
  EXPECT(nv && ns && bad == 0, "%s: %d node field rows wrong (NaN: written by a non-owner)", path,
         bad);
  dims[0] = (hsize_t)cells;
  dims[1] = dims[2] = (hsize_t)per_cell;
  double *matrix = read_dataset(file, "/element_matrices/element_matrix", H5T_NATIVE_DOUBLE, 3,
                                dims);
  bad = 0;
  for (int64_t c = 0; matrix && c < cells; c++)
    for (int r = 0; r < per_cell; r++)
      for (int s = 0; s < per_cell; s++)
        bad += matrix[(c * per_cell + r) * per_cell + s] != matrix_entry(c, r, s, per_cell);
  EXPECT(matrix && bad == 0, "%s: %d element matrix entries wrong", path, bad);

  /* Run metadata. */
  char *version = read_string_attribute(file, "/run", "version");
  char *units = read_string_attribute(file, "/nodes/node_scalar", "units");
  EXPECT(version && strcmp(version, "0.1.0-test") == 0, "%s: /run version '%s'", path,
         version ? version : "(none)");
  EXPECT(units && strcmp(units, "m") == 0, "%s: units of node_scalar '%s'", path,
         units ? units : "(none)");
  EXPECT(read_int64_attribute(file, "/run", "ranks") == ranks, "%s: /run ranks", path);
  EXPECT(read_int64_attribute(file, "/mesh", "order") == order, "%s: /mesh order", path);
  free(version);
  free(units);
  hid_t deck_type = H5Tcopy(H5T_C_S1);
  H5Tset_size(deck_type, strlen(deck_text) + 1);
  H5Tset_cset(deck_type, H5T_CSET_UTF8);
  char *deck = read_dataset(file, "/run/deck", deck_type, 0, dims);
  EXPECT(deck && strcmp(deck, deck_text) == 0, "%s: /run/deck differs", path);
  H5Tclose(deck_type);
  free(deck);

  expect_phases(file, path, phases);

  /* What the writer says it wrote: the raw bytes of every dataset. */
  int64_t name_bytes = (int64_t)strlen(phases[1].name) + 1;
  int64_t payload = nodes * 3 * 8 + 2 * cells * per_cell * 8 + cells * 4 + cells * 3 * 8 +
                    nodes * 4 * 8 + cells * per_cell * per_cell * 8 +
                    (int64_t)strlen(deck_text) + 2 * (name_bytes + 24);
  EXPECT(stats->payload_bytes == payload, "%s: payload %lld bytes, expected %lld", path,
         (long long)stats->payload_bytes, (long long)payload);
  struct stat info;
  EXPECT(stat(path, &info) == 0 && info.st_size == stats->file_bytes,
         "%s: file size %lld reported", path, (long long)stats->file_bytes);
  EXPECT(stats->seconds > 0 && stats->gigabytes_per_second > 0, "%s: no timing", path);

  free(coords);
  free(connectivity);
  free(vtk);
  free(partition);
  free(cv);
  free(cs);
  free(nv);
  free(ns);
  free(matrix);
  H5Fclose(file);
}

static char *read_text(const char *path) {
  FILE *file = fopen(path, "r");
  if (file == NULL)
    return NULL;
  char *text = calloc(1 << 16, 1);
  size_t length = text ? fread(text, 1, (1 << 16) - 1, file) : 0;
  (void)length;
  fclose(file);
  return text;
}

static void check_xdmf(const char *xdmf_path, const char *h5_name, int order, int64_t cells) {
  char *text = read_text(xdmf_path);
  EXPECT(text != NULL, "cannot read %s", xdmf_path);
  if (text == NULL)
    return;
  char expected[512];
  snprintf(expected, sizeof expected, "TopologyType=\"%s\" NumberOfElements=\"%lld\"",
           order == 1 ? "Hexahedron" : "Hexahedron_27", (long long)cells);
  EXPECT(strstr(text, expected) != NULL, "%s lacks '%s'", xdmf_path, expected);
  const char *datasets[] = {"/mesh/xdmf_connectivity", "/mesh/coordinates", "/mesh/partition",
                            "/cells/cell_value", "/cells/cell_scalar", "/nodes/node_value",
                            "/nodes/node_scalar"};
  for (size_t i = 0; i < sizeof datasets / sizeof *datasets; i++) {
    snprintf(expected, sizeof expected, ">%s:%s</DataItem>", h5_name, datasets[i]);
    EXPECT(strstr(text, expected) != NULL, "%s lacks '%s'", xdmf_path, expected);
  }
  EXPECT(strstr(text, "Name=\"node_value\" AttributeType=\"Vector\" Center=\"Node\"") != NULL,
         "%s: node_value is not a node-centred vector", xdmf_path);
  EXPECT(strstr(text, "element_matrix") == NULL, "%s shows element matrices", xdmf_path);
  free(text);
}

/* Rank 0: every dataset of a (except /mesh/partition, which records the
 * ranks) has the same shape, type and bytes in b. */
typedef struct {
  hid_t other;
  int compared;
} compare_state;

static herr_t compare_object(hid_t group, const char *name, const H5O_info_t *info, void *data) {
  compare_state *state = data;
  if (info->type != H5O_TYPE_DATASET || strcmp(name, "mesh/partition") == 0)
    return 0;
  hid_t mine = H5Dopen2(group, name, H5P_DEFAULT);
  hid_t theirs = H5Dopen2(state->other, name, H5P_DEFAULT);
  EXPECT(theirs >= 0, "dataset %s is missing from the 1-rank file", name);
  if (mine >= 0 && theirs >= 0) {
    hid_t type = H5Dget_type(mine), other_type = H5Dget_type(theirs);
    hid_t space = H5Dget_space(mine), other_space = H5Dget_space(theirs);
    EXPECT(H5Tequal(type, other_type) > 0, "dataset %s: types differ", name);
    EXPECT(H5Sextent_equal(space, other_space) > 0, "dataset %s: shapes differ", name);
    size_t bytes = H5Tget_size(type) * (size_t)H5Sget_simple_extent_npoints(space);
    char *a = calloc(bytes + 1, 1), *b = calloc(bytes + 1, 1);
    EXPECT(H5Dread(mine, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) >= 0 &&
               H5Dread(theirs, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0 &&
               memcmp(a, b, bytes) == 0,
           "dataset %s differs between the N-rank and the 1-rank file", name);
    state->compared++;
    free(a);
    free(b);
    H5Tclose(type);
    H5Tclose(other_type);
    H5Sclose(space);
    H5Sclose(other_space);
  }
  if (mine >= 0)
    H5Dclose(mine);
  if (theirs >= 0)
    H5Dclose(theirs);
  return 0;
}

static void compare_files(const char *a, const char *b) {
  hid_t file = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
  compare_state state = {H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT), 0};
  EXPECT(file >= 0 && state.other >= 0, "cannot open %s and %s", a, b);
  if (file >= 0 && state.other >= 0)
    EXPECT(H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, compare_object, &state, H5O_INFO_BASIC) >= 0,
           "cannot visit %s", a);
  /* coordinates, 2 connectivities, 2 cell, 2 node fields, 1 matrix, deck, phases */
  EXPECT(state.compared == 10, "compared %d datasets, expected 10", state.compared);
  if (file >= 0)
    H5Fclose(file);
  if (state.other >= 0)
    H5Fclose(state.other);
}

/* ----------------------------------------------------------- the cases -- */

static void join(char *out, size_t size, const char *dir, const char *name) {
  snprintf(out, size, "%s/%s", dir, name);
}

static void test_layout(const char *dir, int order) {
  tc_mesh_options options = {{order == 1 ? 6 : 3, order == 1 ? 5 : 3, order == 1 ? 4 : 2},
                             {1.0, 2.0, 0.5}, 0.1, order};
  char many[512], one[512], name[64];
  snprintf(name, sizeof name, "q%d_all.h5", order);
  join(many, sizeof many, dir, name);
  snprintf(name, sizeof name, "q%d_one.h5", order);
  join(one, sizeof one, dir, name);

  tc_output_stats stats = {0};
  tc_err err = write_file(MPI_COMM_WORLD, &options, many, false, "0.1.0-test", NULL, false, &stats);
  EXPECT(err == TC_SUCCESS, "writing %s: %s", many, tc_error_message());

  /* Each rank's cell box, for the partition check. */
  int64_t box[6] = {0}, *boxes = calloc(6 * (size_t)world_size, sizeof(int64_t));
  tc_mesh *mesh = NULL;
  if (tc_mesh_create(MPI_COMM_WORLD, &options, &mesh) == TC_SUCCESS) {
    const tc_mesh_local *part = tc_mesh_local_part(mesh);
    memcpy(box, part->cell_begin, sizeof part->cell_begin);
    memcpy(box + 3, part->cell_end, sizeof part->cell_end);
  }
  tc_mesh_destroy(&mesh);
  MPI_Gather(box, 6, MPI_INT64_T, boxes, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (world_rank == 0 && err == TC_SUCCESS) {
    check_file(many, &options, order, world_size, boxes, &stats);
    char xdmf[512];
    snprintf(xdmf, sizeof xdmf, "%.*s.xmf", (int)(strlen(many) - 3), many);
    check_xdmf(xdmf, strrchr(many, '/') + 1, order,
               options.cells[0] * options.cells[1] * options.cells[2]);
  }

  /* The same run on a 1-rank sub-communicator. */
  MPI_Comm solo;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
  if (world_rank == 0) {
    tc_output_stats solo_stats = {0};
    tc_err solo_err = write_file(solo, &options, one, false, "0.1.0-test", NULL, false,
                                 &solo_stats);
    EXPECT(solo_err == TC_SUCCESS, "writing %s: %s", one, tc_error_message());
    int64_t whole[6] = {0, 0, 0, options.cells[0], options.cells[1], options.cells[2]};
    if (solo_err == TC_SUCCESS) {
      check_file(one, &options, order, 1, whole, &solo_stats);
      if (err == TC_SUCCESS)
        compare_files(many, one);
    }
    MPI_Comm_free(&solo);
  }
  free(boxes);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Entries of dir whose name starts with prefix (temporary files included). */
static int count_entries(const char *dir, const char *prefix) {
  DIR *listing = opendir(dir);
  if (listing == NULL)
    return 0;
  int count = 0;
  for (struct dirent *entry; (entry = readdir(listing)) != NULL;)
    count += strncmp(entry->d_name, prefix, strlen(prefix)) == 0;
  closedir(listing);
  return count;
}

/* Every rank must get code, with a message containing text, and no file may
 * start with prefix in dir. */
static void expect_failure(tc_err err, tc_err code, const char *text, const char *dir,
                           const char *prefix, const char *what) {
  EXPECT(err == code, "%s: got '%s' (%s), expected %s", what, tc_err_name(err),
         tc_error_message(), tc_err_name(code));
  EXPECT(strstr(tc_error_message(), text) != NULL, "%s: message '%s' lacks '%s'", what,
         tc_error_message(), text);
  EXPECT(count_entries(dir, prefix) == 0, "%s: files '%s*' remain in %s", what, prefix, dir);
  if (world_rank == 0)
    printf("%s -> %s\n", what, tc_error_message());
  tc_error_clear();
}

static void test_failures(const char *dir) {
  tc_mesh_options options = {{4, 3, 2}, {1, 1, 1}, 0.05, 1};
  char path[600], parent[512];

  /* The directory is a regular file. */
  join(parent, sizeof parent, dir, "plainfile");
  if (world_rank == 0) {
    FILE *plain = fopen(parent, "w");
    EXPECT(plain && fclose(plain) == 0, "cannot create %s", parent);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  join(path, sizeof path, parent, "out.h5");
  tc_err err = write_file(MPI_COMM_WORLD, &options, path, false, "x", NULL, false, NULL);
  expect_failure(err, TC_ERR_IO, "is not a directory", dir, "plainfile.", "parent is a file");

  /* A directory nobody can create files in, even root (/proc/1). */
  err = write_file(MPI_COMM_WORLD, &options, "/proc/1/tc_output_test.h5", false, "x", NULL, false,
                   NULL);
  EXPECT(err == TC_ERR_IO || err == TC_ERR_HDF5, "/proc/1: got %s", tc_err_name(err));
  expect_failure(err, err, "/proc/1", "/proc/1", "tc_output_test", "directory /proc/1");

  /* A name that fits NAME_MAX but not the temporary name (and, with Open
   * MPI, not its MPI-IO's lock-file buffer). */
  char long_name[260];
  memset(long_name, 'n', 250);
  snprintf(long_name + 250, sizeof long_name - 250, ".h5");
  join(path, sizeof path, dir, long_name);
  err = write_file(MPI_COMM_WORLD, &options, path, false, "x", NULL, false, NULL);
#ifdef OPEN_MPI
  expect_failure(err, TC_ERR_ARGUMENT, "choose a shorter output.path", dir, "nnnnn",
                 "path too long");
#else
  expect_failure(err, TC_ERR_HDF5, "H5Fcreate failed", dir, "nnnnn", "path too long");
#endif

  /* A file-size limit (ulimit -f) smaller than the results file: every rank
   * checks it before the file is created (a write past it would kill the
   * process with SIGXFSZ); the process must then finish cleanly. */
  {
    tc_mesh_options big = {{20, 20, 20}, {1, 1, 1}, 0.05, 1};
    struct rlimit saved, limit;
    EXPECT(getrlimit(RLIMIT_FSIZE, &saved) == 0, "cannot read the file size limit");
    limit = saved;
    limit.rlim_cur = 256 << 10;
    EXPECT(setrlimit(RLIMIT_FSIZE, &limit) == 0, "cannot limit the file size");
    join(path, sizeof path, dir, "full.h5");
    err = write_file(MPI_COMM_WORLD, &big, path, false, "x", NULL, false, NULL);
    EXPECT(setrlimit(RLIMIT_FSIZE, &saved) == 0, "cannot lift the file size limit");
    expect_failure(err, TC_ERR_IO, "more than the file-size limit (ulimit -f) of 256.0 KiB", dir,
                   "full.", "file-size limit");
  }

  /* A symbolic link as the results file: a rename would replace the link. */
  join(path, sizeof path, dir, "link.h5");
  if (world_rank == 0)
    EXPECT(symlink("nowhere/target.h5", path) == 0, "cannot make the link %s", path);
  MPI_Barrier(MPI_COMM_WORLD);
  err = write_file(MPI_COMM_WORLD, &options, path, true, "x", NULL, false, NULL);
  expect_failure(err, TC_ERR_IO, "is a symbolic link (to 'nowhere/target.h5')", dir, "link.xmf",
                 "symbolic link");
  if (world_rank == 0)
    EXPECT(unlink(path) == 0, "cannot remove the link %s", path);
  MPI_Barrier(MPI_COMM_WORLD);

  /* The last rank fails after a dataset is in the temporary file. */
  join(path, sizeof path, dir, "injected.h5");
  err = write_file(MPI_COMM_WORLD, &options, path, false, "x", "/nodes/node_value", false, NULL);
  expect_failure(err, TC_ERR_IO, "injected failure after writing /nodes/node_value", dir,
                 "injected.", "one rank fails mid-write");

  /* Ranks that add different fields must not hang in a collective. */
  if (world_size > 1) {
    join(path, sizeof path, dir, "mismatch.h5");
    err = write_file(MPI_COMM_WORLD, &options, path, false, "x", NULL, true, NULL);
    expect_failure(err, TC_ERR_ARGUMENT, "different output datasets", dir, "mismatch.",
                   "ranks add different fields");
  }
}

/* The phase table rewritten in place once the times are final: new values,
 * the same rows; a wrong row count or a longer name is refused on every
 * rank and leaves the table as it was. */
static void test_update_phases(const char *dir) {
  tc_mesh_options options = {{4, 3, 2}, {1, 1, 1}, 0.05, 1};
  char path[600];
  join(path, sizeof path, dir, "phases.h5");
  tc_mesh *mesh = NULL;
  tc_output *output = NULL;
  tc_err err = tc_mesh_create(MPI_COMM_WORLD, &options, &mesh);
  if (err == TC_SUCCESS)
    err = tc_output_create(MPI_COMM_WORLD, path, false, mesh, &output);
  const tc_output_phase final_phases[2] = {{"mesh", 1.5, 1.75, 2.0},
                                           {"assemble_and_contract", 4.0, 4.5, 5.0}};
  const tc_output_phase too_long[2] = {{"mesh", 1, 1, 1},
                                       {"assemble_and_contract_and_more", 1, 1, 1}};
  tc_err early = tc_output_update_phases(output, final_phases, 2);
  EXPECT(err != TC_SUCCESS || early == TC_ERR_ARGUMENT, "update before the write: %s",
         tc_error_message());
  tc_error_clear();
  if (err == TC_SUCCESS) {
    tc_output_run_info run = {deck_text, "v", "abc1234", "serial", "right", "flat", "double",
                              phases, 2};
    err = tc_output_write(output, &run, NULL);
  }
  EXPECT(err == TC_SUCCESS, "write: %s", tc_error_message());
  err = tc_output_update_phases(output, final_phases, 1);
  EXPECT(err == TC_ERR_ARGUMENT && strstr(tc_error_message(), "lists 2 phases, the update 1"),
         "a different row count: '%s'", tc_error_message());
  tc_error_clear();
  err = tc_output_update_phases(output, too_long, 2);
  EXPECT(err == TC_ERR_ARGUMENT && strstr(tc_error_message(), "is longer than"),
         "a longer name: '%s'", tc_error_message());
  tc_error_clear();
  err = tc_output_update_phases(output, final_phases, 2);
  EXPECT(err == TC_SUCCESS, "update: %s", tc_error_message());
  tc_output_destroy(&output);
  tc_mesh_destroy(&mesh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == 0) {
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT(file >= 0, "%s: cannot open", path);
    if (file >= 0) {
      expect_phases(file, path, final_phases);
      H5Fclose(file);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Writes text into dir/name on rank 0. */
static void make_file(const char *dir, const char *name, const char *text) {
  char path[600];
  join(path, sizeof path, dir, name);
  if (world_rank == 0) {
    FILE *file = fopen(path, "w");
    EXPECT(file && fputs(text, file) >= 0 && fclose(file) == 0, "cannot write %s", path);
  }
}

/* One writer at a time on a path; what dead writers left is removed. */
static void test_lock_and_debris(const char *dir) {
  tc_mesh_options options = {{4, 3, 2}, {1, 1, 1}, 0.05, 1};
  char path[600], message[800];
  tc_mesh *mesh = NULL;
  tc_err err = tc_mesh_create(MPI_COMM_WORLD, &options, &mesh);
  EXPECT(err == TC_SUCCESS, "mesh: %s", tc_error_message());

  join(path, sizeof path, dir, "locked.h5");
  tc_output *first = NULL, *second = NULL;
  err = tc_output_create(MPI_COMM_WORLD, path, true, mesh, &first);
  EXPECT(err == TC_SUCCESS, "first writer: %s", tc_error_message());
  err = tc_output_create(MPI_COMM_WORLD, path, true, mesh, &second);
  long pid = (long)getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  snprintf(message, sizeof message,
           "output path '%s' is being written by another tcmini run (pid %ld on host ", path, pid);
  EXPECT(err == TC_ERR_IO && strstr(tc_error_message(), message) != NULL && second == NULL,
         "second writer of one path: got '%s'", tc_error_message());
  if (world_rank == 0)
    printf("second writer -> %s\n", tc_error_message());
  tc_error_clear();
  tc_output_destroy(&first);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(count_entries(dir, "locked.") == 0, "the lock file remains after the writer is gone");
  err = tc_output_create(MPI_COMM_WORLD, path, true, mesh, &second);
  EXPECT(err == TC_SUCCESS, "writer after the first is gone: %s", tc_error_message());
  tc_output_destroy(&second);
  MPI_Barrier(MPI_COMM_WORLD);

  /* A dead run's temporary files go, with a note, and so do the MPI-IO
   * lock-test files of a rank killed while opening its temporary, even
   * where the temporary itself is gone; a look-alike stays. */
  make_file(dir, "debris.h5.tmp.deadhost.123", "half a results file");
  make_file(dir, "debris.xmf.tmp.deadhost.123", "half an XDMF file");
  make_file(dir, "debris.h5.tmp.deadhost.123.locktest.1", "");
  make_file(dir, "debris.h5.tmp.otherhost.45.locktest.0", "");
  make_file(dir, "debris.h5.tmp.my-notes", "not a temporary file of tcmini's");
  MPI_Barrier(MPI_COMM_WORLD);
  join(path, sizeof path, dir, "debris.h5");
  tc_output *writer = NULL;
  err = tc_output_create(MPI_COMM_WORLD, path, false, mesh, &writer);
  EXPECT(err == TC_SUCCESS, "writer over debris: %s", tc_error_message());
  if (world_rank == 0 && writer) {
    snprintf(message, sizeof message,
             "removed '%s.tmp.deadhost.123' (19 bytes), left by a run (deadhost.123) that did not "
             "finish.",
             path);
    EXPECT(strstr(tc_output_note(writer), message) != NULL, "note '%s' lacks \"%s\"",
           tc_output_note(writer), message);
    EXPECT(strstr(tc_output_note(writer), "debris.xmf.tmp.deadhost.123") != NULL,
           "note '%s' misses the XDMF file", tc_output_note(writer));
    EXPECT(strstr(tc_output_note(writer), "debris.h5.tmp.deadhost.123.locktest.1' (0 bytes), "
                                          "left by a run (deadhost.123)") != NULL &&
               strstr(tc_output_note(writer), "debris.h5.tmp.otherhost.45.locktest.0' (0 bytes), "
                                              "left by a run (otherhost.45)") != NULL,
           "note '%s' misses a lock-test file", tc_output_note(writer));
    printf("debris -> %s\n", tc_output_note(writer));
  }
  tc_output_destroy(&writer);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(count_entries(dir, "debris.") == 1, "debris left or a look-alike removed (%d entries)",
         count_entries(dir, "debris."));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == 0) {
    join(path, sizeof path, dir, "debris.h5.tmp.my-notes");
    EXPECT(unlink(path) == 0, "cannot remove %s", path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  tc_mesh_destroy(&mesh);
}

static void test_overwrite(const char *dir) {
  tc_mesh_options options = {{4, 3, 2}, {1, 1, 1}, 0.05, 1};
  char path[512], xdmf[512], message[1024];
  join(path, sizeof path, dir, "again.h5");
  join(xdmf, sizeof xdmf, dir, "again.xmf");
  tc_err err = write_file(MPI_COMM_WORLD, &options, path, false, "first", NULL, false, NULL);
  EXPECT(err == TC_SUCCESS, "first write: %s", tc_error_message());

  err = write_file(MPI_COMM_WORLD, &options, path, false, "second", NULL, false, NULL);
  snprintf(message, sizeof message,
           "output file '%s' exists; set output.overwrite = true or choose another output.path",
           path);
  EXPECT(err == TC_ERR_IO && strstr(tc_error_message(), message) != NULL,
         "existing file not refused: '%s'", tc_error_message());
  EXPECT(count_entries(dir, "again.") == 2, "refusal left or removed files");
  tc_error_clear();

  err = write_file(MPI_COMM_WORLD, &options, path, true, "third", NULL, false, NULL);
  EXPECT(err == TC_SUCCESS, "overwrite: %s", tc_error_message());
  if (world_rank == 0) {
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char *version = file >= 0 ? read_string_attribute(file, "/run", "version") : NULL;
    EXPECT(version && strcmp(version, "third") == 0, "overwritten file has version '%s'",
           version ? version : "(none)");
    free(version);
    if (file >= 0)
      H5Fclose(file);
    EXPECT(unlink(path) == 0, "cannot remove %s", path);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* The XDMF file alone also blocks the write. */
  err = write_file(MPI_COMM_WORLD, &options, path, false, "fourth", NULL, false, NULL);
  snprintf(message, sizeof message, "output file '%s' exists", xdmf);
  EXPECT(err == TC_ERR_IO && strstr(tc_error_message(), message) != NULL,
         "existing XDMF file not refused: '%s'", tc_error_message());
  EXPECT(count_entries(dir, "again.") == 1, "refusal left files");
  tc_error_clear();
}

/* No fields, no run information, no stats: the smallest valid file. */
static void test_minimal(const char *dir) {
  tc_mesh_options options = {{3, 2, 2}, {1, 1, 1}, 0, 2};
  char path[512], xdmf[512];
  join(path, sizeof path, dir, "minimal.h5");
  join(xdmf, sizeof xdmf, dir, "minimal.xmf");
  tc_mesh *mesh = NULL;
  tc_output *output = NULL;
  tc_err err = tc_mesh_create(MPI_COMM_WORLD, &options, &mesh);
  if (err == TC_SUCCESS)
    err = tc_output_create(MPI_COMM_WORLD, path, false, mesh, &output);
  if (err == TC_SUCCESS)
    err = tc_output_write(output, NULL, NULL);
  EXPECT(err == TC_SUCCESS, "minimal write: %s", tc_error_message());
  EXPECT(strcmp(tc_output_xdmf_path(output), xdmf) == 0, "XDMF path '%s'",
         tc_output_xdmf_path(output));
  tc_output_destroy(&output);
  tc_mesh_destroy(&mesh);
  if (world_rank == 0 && err == TC_SUCCESS) {
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t phases_set = H5Dopen2(file, "/run/phases", H5P_DEFAULT);
    hid_t space = H5Dget_space(phases_set);
    EXPECT(H5Sget_simple_extent_npoints(space) == 0, "minimal: /run/phases is not empty");
    char *backend = read_string_attribute(file, "/run", "backend");
    EXPECT(backend && backend[0] == '\0', "minimal: backend '%s'", backend ? backend : "(none)");
    free(backend);
    hsize_t dims[1] = {12};
    int32_t *partition = read_dataset(file, "/mesh/partition", H5T_NATIVE_INT32, 1, dims);
    EXPECT(partition != NULL, "minimal: no partition");
    free(partition);
    H5Sclose(space);
    H5Dclose(phases_set);
    H5Fclose(file);
    char *text = read_text(xdmf);
    EXPECT(text && strstr(text, "minimal.h5:/mesh/partition") && !strstr(text, "/cells/"),
           "minimal: unexpected XDMF file");
    free(text);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void remove_directory(const char *dir) {
  DIR *listing = opendir(dir);
  if (listing == NULL)
    return;
  char path[600];
  for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
      continue;
    join(path, sizeof path, dir, entry->d_name);
    EXPECT(unlink(path) == 0, "cannot remove %s", path);
  }
  closedir(listing);
  EXPECT(rmdir(dir) == 0, "cannot remove %s", dir);
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "test_output: %s\n", tc_error_message());
    return 1;
  }
  world_rank = tc_rank(MPI_COMM_WORLD);
  world_size = tc_size(MPI_COMM_WORLD);

  char dir[256] = "";
  if (world_rank == 0) {
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/tc_output_test.XXXXXX", base);
    if (mkdtemp(dir) == NULL)
      tc_abort(MPI_COMM_WORLD, 1, "cannot create a directory under %s", base);
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);

  test_layout(dir, 1);
  test_layout(dir, 2);
  test_minimal(dir);
  test_failures(dir);
  test_overwrite(dir);
  test_lock_and_debris(dir);
  test_update_phases(dir);

  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == 0 && !getenv("TC_OUTPUT_TEST_KEEP"))
    remove_directory(dir);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    printf("test_output on %d ranks: %s (%d failed checks)%s%s\n", world_size,
           failures ? "FAILED" : "passed", failures,
           getenv("TC_OUTPUT_TEST_KEEP") ? ", files kept in " : "",
           getenv("TC_OUTPUT_TEST_KEEP") ? dir : "");
  tc_parallel_finalize();
  return failures ? 1 : 0;
}
