/* test_loop_cuda: the GPU assembly loop (tc_loop_cuda) against its host
 * twins on small distorted Q1 and Q2 meshes cut into ragged batches:
 *   - geometry: cell volumes against tc_geometry_*;
 *   - inputs: all thirteen contraction inputs, both layouts and precisions,
 *     against tc_physics_build_input (into poisoned buffers, so an entry the
 *     device leaves unwritten fails), and all built in one call bitwise each
 *     built alone;
 *   - assembly: synthetic element outputs of the nine kernels gathered on the
 *     device against tc_assembly_add_* and the per-cell copies, and the
 *     device's lumped mass and diagonals against
 *     tc_assembly_row_sums_and_diagonal, bitwise (each row sums the same
 *     values in the same order), and two device assemblies bitwise equal
 *     (determinism);
 *   - copies: the vectors and the matrices come back each on their own, and
 *     each leaves the other's host arrays alone; a lumped mass or diagonal
 *     without its matrix is refused;
 *   - an inverted cell: reported (by tc_loop_cuda_check_geometry) for exactly
 *     the batches the host geometry finds inverted, naming the batch's cells.
 * Quadrature has more points than the element has nodes (P != F), so that a
 * swapped index cannot pass. 1 rank; exits 77 when no GPU is usable. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_assembly.h"
#include "tc_basis.h"
#include "tc_device.h"
#include "tc_function_space.h"
#include "tc_geometry.h"
#include "tc_loop_cuda.h"
#include "tc_mesh.h"
#include "tc_parallel.h"
#include "tc_physics.h"
#include "tc_physics_builder.h"
#include "tc_quadrature.h"

/* Batches of 15 cells span layers of the 4 x 3 x 3 box, and the gathers visit
 * the range of nodes they touch; batches of 2 cells touch fewer than half of
 * their range, and the gathers visit a list of the nodes they touch. */
enum { SKIP_CODE = 77, BATCH_CELLS = 15, SHORT_BATCH_CELLS = 2 };

/* A box of 22 x 22 x 22 cells in one batch: 10,648 cells, two waves of
 * 32-cell tiles on GPUs of up to 166 SMs. */
static const int64_t large_box[3] = {22, 22, 22};
enum { LARGE_BATCH_CELLS = 22 * 22 * 22 };

/* Relative tolerances of the inputs, against the array's largest magnitude:
 * double differs from the host only by FMA contraction on the GPU; float is
 * the same double value rounded once, so at most one float ulp apart. */
static const double tolerance_double = 1e-13, tolerance_float = 1e-6;

/* Fields unlike tc_physics_default_fields, so that a device that ignored its
 * argument would fail. */
static const tc_physics_fields test_fields = {
    .u0 = -0.5,
    .g = {0.3, -1.25, 0.8},
    .w0 = {0.2, -0.1, 0.05},
    .W = {{0.4, -0.3, 0.1}, {0.25, -0.2, 0.6}, {-0.15, 0.35, 0.05}},
    .lambda = 2.5,
    .mu = 0.75,
};

static int failed_cases, passed_cases;

/* Prints one case's verdict line. */
static void verdict(bool pass, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void verdict(bool pass, const char *format, ...) {
  va_list args;
  va_start(args, format);
  printf("%s ", pass ? "PASS" : "FAIL");
  vprintf(format, args);
  putchar('\n');
  va_end(args);
  if (pass)
    ++passed_cases;
  else
    ++failed_cases;
}

/* A deterministic generator in [-1, 1) (xorshift64*). */
static double next_random(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return (double)((*state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* One order's mesh, basis, CSR structures and GPU loop. */
typedef struct {
  int order;
  tc_device *device;
  tc_mesh *mesh;
  const tc_mesh_local *local;
  tc_assembly *assembly;
  int64_t F, P, batch_cells, num_batches;
  double *ref_values, *ref_gradients, *weights;
  tc_loop_results results; /* host arrays the device twins are copied into */
  tc_loop_cuda *gpu;
} fixture;

/* Host geometry of one batch (tc_geometry_*, tc_hgrad_gradients). */
typedef struct {
  double *node_coords, *jacobians, *inverses, *determinants, *measures, *gradients;
} host_geometry;

static void batch_range(const fixture *fx, int64_t b, int64_t *begin, int64_t *cells) {
  *begin = b * fx->batch_cells;
  *cells = fx->local->num_cells - *begin < fx->batch_cells ? fx->local->num_cells - *begin
                                                            : fx->batch_cells;
}

static int64_t graph_entries(const fixture *fx, int components) {
  return tc_assembly_graph(fx->assembly, components)->num_entries;
}

/* Element count of each array tc_loop_cuda mirrors, its name, and whether it
 * is a matrix (TC_LOOP_CUDA_MATRICES). cell_volume comes last: the host
 * assembly does not form it. */
enum { NUM_ARRAYS = 16 };
static double **result_array(tc_loop_results *r, int which, const fixture *fx, int64_t *count,
                             const char **name, bool *matrix) {
  const int64_t nodes = fx->local->num_nodes, cells = fx->local->num_cells;
  const int64_t N1 = fx->F * fx->F, N3 = 9 * fx->F * fx->F;
  struct {
    double **array;
    int64_t count;
    const char *name;
    bool matrix;
  } table[NUM_ARRAYS] = {
      {&r->mass, graph_entries(fx, 1), "mass", true},
      {&r->stiffness, graph_entries(fx, 1), "stiffness", true},
      {&r->elasticity, graph_entries(fx, 3), "elasticity", true},
      {&r->load, nodes, "load", false},
      {&r->flux_load, nodes, "flux_load", false},
      {&r->internal_force, 3 * nodes, "internal_force", false},
      {&r->cell_u2, cells, "cell_u2", false},
      {&r->cell_grad_u2, cells, "cell_grad_u2", false},
      {&r->cell_stress_strain, cells, "cell_stress_strain", false},
      {&r->element_matrices[0], cells * N1, "element_matrices[mass]", true},
      {&r->element_matrices[1], cells * N1, "element_matrices[stiffness]", true},
      {&r->element_matrices[2], cells * N3, "element_matrices[elasticity]", true},
      {&r->lumped_mass, nodes, "lumped_mass", false},
      {&r->stiffness_diagonal, nodes, "stiffness_diagonal", false},
      {&r->elasticity_diagonal, 3 * nodes, "elasticity_diagonal", false},
      {&r->cell_volume, cells, "cell_volume", false},
  };
  *count = table[which].count;
  if (name)
    *name = table[which].name;
  if (matrix)
    *matrix = table[which].matrix;
  return table[which].array;
}

static tc_err allocate_results(const fixture *fx, tc_loop_results *r) {
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    double **array = result_array(r, which, fx, &count, NULL, NULL);
    TC_CALLOC(*array, count);
  }
  return TC_SUCCESS;
}

static void free_results(const fixture *fx, tc_loop_results *r) {
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    double **array = result_array(r, which, fx, &count, NULL, NULL);
    free(*array);
    *array = NULL;
  }
}

/* The default box, 4 x 3 x 3 cells. */
static const int64_t small_box[3] = {4, 3, 3};

static tc_err fixture_create(tc_device *device, int order, const int64_t box[3],
                             int64_t batch_cells, fixture *fx) {
  memset(fx, 0, sizeof *fx);
  fx->order = order;
  fx->batch_cells = batch_cells;
  fx->device = device;
  /* cells of the same size in every box (1.0 x 0.75 x 0.6 for 4 x 3 x 3),
   * so that a larger box does not make its gradients larger and its sums'
   * cancellation worse */
  const tc_mesh_options options = {.cells = {box[0], box[1], box[2]},
                                   .length = {0.25 * (double)box[0], 0.25 * (double)box[1],
                                              0.2 * (double)box[2]},
                                   .distortion = 0.1,
                                   .order = order};
  TC_CALL(tc_mesh_create(MPI_COMM_WORLD, &options, &fx->mesh));
  fx->local = tc_mesh_local_part(fx->mesh);
  TC_CALL(tc_assembly_create(fx->mesh, &fx->assembly));
  fx->F = fx->local->nodes_per_cell;
  fx->num_batches = (fx->local->num_cells + batch_cells - 1) / batch_cells;
  tc_quadrature *quadrature = NULL;
  TC_CALL(tc_quadrature_create(order + 2, &quadrature));
  fx->P = tc_quadrature_num_points(quadrature);
  tc_err err = TC_SUCCESS;
  fx->ref_values = calloc((size_t)(fx->F * fx->P), sizeof(double));
  fx->ref_gradients = calloc((size_t)(fx->F * fx->P * 3), sizeof(double));
  fx->weights = calloc((size_t)fx->P, sizeof(double));
  if (!fx->ref_values || !fx->ref_gradients || !fx->weights)
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory (basis)");
  if (err == TC_SUCCESS)
    err = tc_basis_values(order, fx->P, tc_quadrature_points(quadrature), fx->ref_values);
  if (err == TC_SUCCESS)
    err = tc_basis_gradients(order, fx->P, tc_quadrature_points(quadrature), fx->ref_gradients);
  if (err == TC_SUCCESS)
    memcpy(fx->weights, tc_quadrature_weights(quadrature), (size_t)fx->P * sizeof(double));
  tc_quadrature_destroy(&quadrature);
  TC_CALL(err);
  TC_CALL(allocate_results(fx, &fx->results));
  TC_CALL(tc_loop_cuda_create(fx->local, fx->batch_cells, fx->P, fx->ref_values, fx->ref_gradients,
                              fx->weights, &test_fields, fx->assembly, &fx->results,
                              tc_device_stream(device), &fx->gpu));
  return TC_SUCCESS;
}

static void fixture_destroy(fixture *fx) {
  tc_loop_cuda_destroy(&fx->gpu);
  if (fx->assembly)
    free_results(fx, &fx->results);
  free(fx->ref_values);
  free(fx->ref_gradients);
  free(fx->weights);
  tc_assembly_destroy(&fx->assembly);
  tc_mesh_destroy(&fx->mesh);
}

static tc_err host_geometry_create(const fixture *fx, host_geometry *g) {
  const int64_t C = fx->batch_cells, F = fx->F, P = fx->P;
  TC_CALLOC(g->node_coords, C * F * 3);
  TC_CALLOC(g->jacobians, C * P * 9);
  TC_CALLOC(g->inverses, C * P * 9);
  TC_CALLOC(g->determinants, C * P);
  TC_CALLOC(g->measures, C * P);
  TC_CALLOC(g->gradients, C * F * P * 3);
  return TC_SUCCESS;
}

static void host_geometry_destroy(host_geometry *g) {
  free(g->node_coords);
  free(g->jacobians);
  free(g->inverses);
  free(g->determinants);
  free(g->measures);
  free(g->gradients);
}

/* The host geometry of cells [begin, begin + cells) of mesh (coordinates
 * coords); TC_ERR_ARGUMENT (from tc_geometry) for an inverted cell. */
static tc_err host_geometry_form(const fixture *fx, const double *coords, int64_t begin,
                                 int64_t cells, host_geometry *g) {
  const int64_t F = fx->F, P = fx->P;
  for (int64_t c = 0; c < cells; ++c)
    for (int64_t a = 0; a < F; ++a)
      for (int i = 0; i < 3; ++i)
        g->node_coords[(c * F + a) * 3 + i] =
            coords[3 * fx->local->cell_nodes[(begin + c) * F + a] + i];
  TC_CALL(tc_geometry_jacobians(cells, (int)F, g->node_coords, P, fx->ref_gradients,
                                g->jacobians));
  TC_CALL(tc_geometry_invert_jacobians(cells, P, g->jacobians, g->determinants, g->inverses));
  TC_CALL(tc_geometry_measures(cells, P, g->determinants, fx->weights, g->measures));
  TC_CALL(tc_hgrad_gradients(cells, (int)F, P, fx->ref_gradients, g->inverses, NULL,
                             TC_LAYOUT_RIGHT, TC_DOUBLE, g->gradients));
  return TC_SUCCESS;
}

static double value_at(const void *array, tc_precision precision, int64_t i) {
  return precision == TC_DOUBLE ? ((const double *)array)[i] : (double)((const float *)array)[i];
}

/* max |device - host| / max |host| (infinite when an entry is not a number). */
static double relative_difference(const void *device, const void *host, int64_t count,
                                  tc_precision precision) {
  double scale = 0.0, difference = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double h = value_at(host, precision, i), d = value_at(device, precision, i);
    if (!(fabs(d - h) <= DBL_MAX))
      return INFINITY;
    scale = fmax(scale, fabs(h));
    difference = fmax(difference, fabs(d - h));
  }
  return scale > 0.0 ? difference / scale : difference;
}

static const char *input_names[TC_INPUT_COUNT] = {
    "values",     "weighted values", "gradients",   "weighted gradients", "strains",
    "weighted stresses", "u_h",      "dV u_h",      "grad u (per cell)",  "grad u_h",
    "dV grad u_h", "eps(w_h)",       "dV sigma(w_h)"};

/* Every input. */
static const bool all_inputs[TC_INPUT_COUNT] = {true, true, true, true, true, true, true,
                                                true, true, true, true, true, true};

/* Geometry and each input `wanted` of every batch, both layouts and
 * precisions, then the cell volumes. */
static tc_err check_inputs(fixture *fx, const bool wanted[TC_INPUT_COUNT]) {
  const int64_t F = fx->F, P = fx->P;
  int64_t largest = 0;
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!wanted[i])
      continue;
    int64_t count = tc_physics_input_count(i, fx->batch_cells, F, P);
    largest = count > largest ? count : largest;
  }
  const size_t bytes = (size_t)largest * sizeof(double);
  host_geometry g = {0};
  void *expected = malloc(bytes), *got = malloc(bytes), *poison = malloc(bytes), *device = NULL;
  double *volumes = calloc((size_t)fx->local->num_cells, sizeof(double));
  double worst[TC_INPUT_COUNT][2] = {{0}};
  tc_err err = expected && got && poison && volumes
                   ? TC_SUCCESS
                   : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory");
  if (err == TC_SUCCESS)
    err = host_geometry_create(fx, &g);
  if (err == TC_SUCCESS)
    err = tc_device_alloc(fx->device, bytes, &device);
  if (err == TC_SUCCESS) {
    memset(poison, 0xff, bytes); /* NaN in either precision */
    err = tc_loop_cuda_zero(fx->gpu);
  }
  for (int64_t b = 0; err == TC_SUCCESS && b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    err = host_geometry_form(fx, fx->local->coords, begin, cells, &g);
    if (err == TC_SUCCESS)
      err = tc_loop_cuda_geometry(fx->gpu, begin, cells);
    for (int64_t c = 0; err == TC_SUCCESS && c < cells; ++c)
      for (int64_t q = 0; q < P; ++q)
        volumes[begin + c] += g.measures[c * P + q];
    const tc_physics_batch batch = {.num_cells = cells,
                                    .num_fields = F,
                                    .num_points = P,
                                    .measures = g.measures,
                                    .ref_values = fx->ref_values,
                                    .ref_gradients = fx->ref_gradients,
                                    .inverse_jacobians = g.inverses,
                                    .gradients = g.gradients,
                                    .node_coords = g.node_coords};
    for (int i = 0; err == TC_SUCCESS && i < TC_INPUT_COUNT; ++i)
      for (int layout = 0; err == TC_SUCCESS && wanted[i] && layout < TC_LAYOUT_COUNT; ++layout)
        for (int precision = 0; err == TC_SUCCESS && precision < TC_PRECISION_COUNT;
             ++precision) {
          const int64_t count = tc_physics_input_count(i, cells, F, P);
          const size_t used = (size_t)(count * tc_precision_size(precision));
          err = tc_physics_build_input(i, &batch, &test_fields, layout, precision, expected);
          if (err == TC_SUCCESS)
            err = tc_device_copy_to_device(fx->device, device, poison, used);
          void *outputs[TC_INPUT_COUNT] = {NULL};
          outputs[i] = device;
          if (err == TC_SUCCESS)
            err = tc_loop_cuda_build_inputs(fx->gpu, cells, layout, precision, outputs);
          if (err == TC_SUCCESS)
            err = tc_device_copy_to_host(fx->device, got, device, used);
          if (err == TC_SUCCESS)
            worst[i][precision] = fmax(worst[i][precision],
                                       relative_difference(got, expected, count, precision));
        }
  }
  if (err == TC_SUCCESS) /* the valid mesh has no inverted cell */
    err = tc_loop_cuda_check_geometry(fx->gpu);
  if (err == TC_SUCCESS)
    err = tc_loop_cuda_copy_results(fx->gpu, TC_LOOP_CUDA_VECTORS, &fx->results);
  if (err == TC_SUCCESS) {
    for (int i = 0; i < TC_INPUT_COUNT; ++i)
      if (wanted[i])
        verdict(worst[i][TC_DOUBLE] <= tolerance_double && worst[i][TC_FLOAT] <= tolerance_float,
                "Q%d input %-18s %lld-cell batches, relative difference double %.2e (tol "
                "%.0e), float %.2e (tol %.0e)",
                fx->order, input_names[i], (long long)fx->batch_cells, worst[i][TC_DOUBLE],
                tolerance_double, worst[i][TC_FLOAT], tolerance_float);
    const double volume_difference = relative_difference(
        fx->results.cell_volume, volumes, fx->local->num_cells, TC_DOUBLE);
    verdict(volume_difference <= tolerance_double,
            "Q%d geometry: cell volumes of %lld cells in %lld batches, relative difference %.2e",
            fx->order, (long long)fx->local->num_cells, (long long)fx->num_batches,
            volume_difference);
  }
  tc_device_free(fx->device, &device);
  host_geometry_destroy(&g);
  free(expected);
  free(got);
  free(poison);
  free(volumes);
  return err;
}

/* The inputs `wanted` of the first batch built in one call, both layouts
 * and precisions, against each built alone: bitwise (an input built with
 * its weighted partner shares the partner's geometry reads and sums, and
 * must give the same bits). */
static tc_err check_inputs_together(fixture *fx, const bool wanted[TC_INPUT_COUNT]) {
  const int64_t F = fx->F, P = fx->P;
  int64_t begin, cells, largest = 0;
  batch_range(fx, 0, &begin, &cells);
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!wanted[i])
      continue;
    const int64_t count = tc_physics_input_count(i, cells, F, P);
    largest = count > largest ? count : largest;
  }
  const size_t bytes = (size_t)largest * sizeof(double);
  void *alone[TC_INPUT_COUNT] = {NULL}, *together[TC_INPUT_COUNT] = {NULL};
  void *got_alone = malloc(bytes), *got_together = malloc(bytes);
  tc_err err = got_alone && got_together
                   ? TC_SUCCESS
                   : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory");
  for (int i = 0; err == TC_SUCCESS && i < TC_INPUT_COUNT; ++i) {
    if (!wanted[i])
      continue;
    err = tc_device_alloc(fx->device, bytes, &alone[i]);
    if (err == TC_SUCCESS)
      err = tc_device_alloc(fx->device, bytes, &together[i]);
  }
  if (err == TC_SUCCESS)
    err = tc_loop_cuda_geometry(fx->gpu, begin, cells);
  bool same = true;
  for (int layout = 0; err == TC_SUCCESS && layout < TC_LAYOUT_COUNT; ++layout)
    for (int precision = 0; err == TC_SUCCESS && precision < TC_PRECISION_COUNT; ++precision) {
      for (int i = 0; err == TC_SUCCESS && i < TC_INPUT_COUNT; ++i) {
        void *outputs[TC_INPUT_COUNT] = {NULL};
        outputs[i] = alone[i];
        if (wanted[i])
          err = tc_loop_cuda_build_inputs(fx->gpu, cells, layout, precision, outputs);
      }
      if (err == TC_SUCCESS)
        err = tc_loop_cuda_build_inputs(fx->gpu, cells, layout, precision, together);
      for (int i = 0; err == TC_SUCCESS && i < TC_INPUT_COUNT; ++i) {
        if (!wanted[i])
          continue;
        const size_t used =
            (size_t)(tc_physics_input_count(i, cells, F, P) * tc_precision_size(precision));
        err = tc_device_copy_to_host(fx->device, got_alone, alone[i], used);
        if (err == TC_SUCCESS)
          err = tc_device_copy_to_host(fx->device, got_together, together[i], used);
        if (err == TC_SUCCESS && memcmp(got_alone, got_together, used) != 0) {
          same = false;
          printf("  input %s, layout %s, %s: built with the others, not bitwise alone\n",
                 input_names[i], tc_layout_name(layout), tc_precision_name(precision));
        }
      }
    }
  if (err == TC_SUCCESS)
    verdict(same, "Q%d inputs: %s in %lld-cell batches built in one call bitwise each built alone",
            fx->order, wanted == all_inputs ? "all thirteen" : "those checked",
            (long long)fx->batch_cells);
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    tc_device_free(fx->device, &alone[i]);
    tc_device_free(fx->device, &together[i]);
  }
  free(got_alone);
  free(got_together);
  return err;
}

/* One device pass over every batch with the synthetic outputs (blocks[b][k],
 * in the precision; on the device kernel k's at device_blocks + k * stride)
 * into the device twins, a batch's nine in one call, then the row
 * reductions, all copied back into fx->results. */
static tc_err device_assembly(fixture *fx, tc_layout layout, tc_precision precision,
                              void *const *blocks, char *device_blocks, size_t stride) {
  TC_CALL(tc_loop_cuda_zero(fx->gpu));
  for (int64_t b = 0; b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    void *outputs[TC_KERNEL_COUNT];
    for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
      tc_contraction shape = tc_physics_contraction(k, cells, fx->F, fx->P, layout, precision);
      const size_t bytes =
          (size_t)(tc_contraction_output_count(&shape) * tc_precision_size(precision));
      outputs[k] = device_blocks + (size_t)k * stride;
      TC_CALL(tc_device_copy_to_device(fx->device, outputs[k], blocks[b * TC_KERNEL_COUNT + k],
                                       bytes));
    }
    TC_CALL(tc_loop_cuda_assemble(fx->gpu, begin, cells, layout, precision, outputs));
  }
  TC_CALL(tc_loop_cuda_reduce_rows(fx->gpu));
  return tc_loop_cuda_copy_results(fx->gpu, TC_LOOP_CUDA_ALL, &fx->results);
}

/* The host gather of the same outputs into reference (tc_assembly_add_*, the
 * per-cell copies of tc_loop.c), then the lumped mass and the diagonals
 * (tc_assembly_row_sums_and_diagonal, as tc_loop.c on the CPU). */
static tc_err host_assembly(fixture *fx, tc_layout layout, tc_precision precision,
                            void *const *blocks, tc_loop_results *reference) {
  double *matrices[3] = {reference->mass, reference->stiffness, reference->elasticity};
  double *vectors[3] = {reference->load, reference->flux_load, reference->internal_force};
  double *cell_values[3] = {reference->cell_u2, reference->cell_grad_u2,
                            reference->cell_stress_strain};
  for (int64_t b = 0; b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
      const tc_element_block block = {.data = blocks[b * TC_KERNEL_COUNT + k],
                                      .layout = layout,
                                      .precision = precision,
                                      .batch_cells = cells,
                                      .cell_begin = begin};
      const int components = tc_physics_kernel_components(k);
      if (tc_kernel_is_field_field(k)) {
        TC_CALL(tc_assembly_add_matrices(fx->assembly, components, &block, matrices[k]));
        const int64_t N = fx->F * components;
        for (int64_t c = 0; c < cells; ++c)
          for (int64_t i = 0; i < N; ++i)
            for (int64_t j = 0; j < N; ++j)
              reference->element_matrices[k][((begin + c) * N + i) * N + j] =
                  tc_element_block_get(&block, N, N, c, i, j);
      } else if (tc_kernel_is_data_field(k)) {
        TC_CALL(tc_assembly_add_vectors(fx->assembly, components, &block,
                                        vectors[k - TC_DATA_FIELD_SCALAR]));
      } else {
        for (int64_t c = 0; c < cells; ++c)
          cell_values[k - TC_DATA_DATA_SCALAR][begin + c] =
              tc_element_block_get(&block, 1, 1, c, 0, 0);
      }
    }
  }
  tc_assembly_row_sums_and_diagonal(fx->assembly, 1, reference->mass, reference->lumped_mass,
                                    NULL);
  tc_assembly_row_sums_and_diagonal(fx->assembly, 1, reference->stiffness, NULL,
                                    reference->stiffness_diagonal);
  tc_assembly_row_sums_and_diagonal(fx->assembly, 3, reference->elasticity, NULL,
                                    reference->elasticity_diagonal);
  return TC_SUCCESS;
}

/* Names the arrays (all but cell_volume) where a and b differ in any bit. */
static bool same_bits(const fixture *fx, tc_loop_results *a, tc_loop_results *b, char *differing,
                      size_t room) {
  bool same = true;
  differing[0] = '\0';
  for (int which = 0; which < NUM_ARRAYS - 1; ++which) {
    int64_t count;
    const char *name;
    double **x = result_array(a, which, fx, &count, &name, NULL);
    double **y = result_array(b, which, fx, &count, NULL, NULL);
    if (memcmp(*x, *y, (size_t)count * sizeof(double)) != 0) {
      same = false;
      size_t used = strlen(differing);
      snprintf(differing + used, room - used, " %s", name);
    }
  }
  return same;
}

/* Zeroes every mirrored array. */
static void zero_results(const fixture *fx, tc_loop_results *r) {
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    double **array = result_array(r, which, fx, &count, NULL, NULL);
    memset(*array, 0, (size_t)count * sizeof(double));
  }
}

/* Whether every array of r of the given kind (matrix or not) is bitwise that
 * of expected (or, with expected NULL, still all poison bytes); names the
 * others into differing. */
static bool kind_matches(const fixture *fx, tc_loop_results *r, bool matrices,
                         tc_loop_results *expected, char *differing, size_t room) {
  bool same = true;
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    const char *name;
    bool matrix;
    const unsigned char *got = (const unsigned char *)*result_array(r, which, fx, &count, &name,
                                                                    &matrix);
    if (matrix != matrices)
      continue;
    const size_t bytes = (size_t)count * sizeof(double);
    bool equal = true;
    if (expected)
      equal = memcmp(got, *result_array(expected, which, fx, &count, NULL, NULL), bytes) == 0;
    else
      for (size_t i = 0; i < bytes && equal; ++i)
        equal = got[i] == 0xff;
    if (!equal) {
      same = false;
      size_t used = strlen(differing);
      snprintf(differing + used, room - used, " %s", name);
    }
  }
  return same;
}

/* The device twins hold the results `expected` was copied from: into poisoned
 * host arrays, the vectors alone must bring exactly the vectors, then the
 * matrices alone exactly the matrices. */
static tc_err check_partial_copies(fixture *fx, tc_loop_results *expected) {
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    double **array = result_array(&fx->results, which, fx, &count, NULL, NULL);
    memset(*array, 0xff, (size_t)count * sizeof(double));
  }
  char differing[512] = "";
  TC_CALL(tc_loop_cuda_copy_results(fx->gpu, TC_LOOP_CUDA_VECTORS, &fx->results));
  bool pass = kind_matches(fx, &fx->results, false, expected, differing, sizeof differing) &&
              kind_matches(fx, &fx->results, true, NULL, differing, sizeof differing);
  TC_CALL(tc_loop_cuda_copy_results(fx->gpu, TC_LOOP_CUDA_MATRICES, &fx->results));
  pass = pass && kind_matches(fx, &fx->results, true, expected, differing, sizeof differing);
  verdict(pass, "Q%d copies: vectors alone, then matrices alone, each exactly its arrays%s%s",
          fx->order, pass ? "" : "; wrong:", differing);
  return TC_SUCCESS;
}

static tc_err check_assembly_case(fixture *fx, tc_layout layout, tc_precision precision,
                                  void **blocks, char *device_blocks, size_t stride,
                                  tc_loop_results *reference, tc_loop_results *first) {
  uint64_t state = 0x243f6a8885a308d3ull + (uint64_t)(fx->order * 4 + layout * 2 + precision);
  for (int64_t b = 0; b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
      tc_contraction shape = tc_physics_contraction(k, cells, fx->F, fx->P, layout, precision);
      const int64_t count = tc_contraction_output_count(&shape);
      void *block = blocks[b * TC_KERNEL_COUNT + k];
      for (int64_t e = 0; e < count; ++e) {
        const double value = next_random(&state);
        if (precision == TC_DOUBLE)
          ((double *)block)[e] = value;
        else
          ((float *)block)[e] = (float)value;
      }
    }
  }
  zero_results(fx, reference);
  TC_CALL(host_assembly(fx, layout, precision, blocks, reference));
  TC_CALL(device_assembly(fx, layout, precision, blocks, device_blocks, stride));
  char differing[512];
  bool same = same_bits(fx, &fx->results, reference, differing, sizeof differing);
  verdict(same, "Q%d assembly %s %s: device results bitwise equal to tc_assembly_add_*%s%s",
          fx->order, tc_layout_name(layout), tc_precision_name(precision),
          same ? "" : "; differing:", differing);
  for (int which = 0; which < NUM_ARRAYS; ++which) {
    int64_t count;
    double **from = result_array(&fx->results, which, fx, &count, NULL, NULL);
    memcpy(*result_array(first, which, fx, &count, NULL, NULL), *from,
           (size_t)count * sizeof(double));
  }
  TC_CALL(device_assembly(fx, layout, precision, blocks, device_blocks, stride));
  same = same_bits(fx, &fx->results, first, differing, sizeof differing);
  verdict(same, "Q%d assembly %s %s: two device assemblies bitwise equal%s%s", fx->order,
          tc_layout_name(layout), tc_precision_name(precision), same ? "" : "; differing:",
          differing);
  return check_partial_copies(fx, first);
}

/* Synthetic element outputs of every kernel and batch, gathered on the host
 * and on the device, in every layout and precision. */
static tc_err check_assembly(fixture *fx) {
  const int64_t blocks_count = fx->num_batches * TC_KERNEL_COUNT;
  void **blocks = calloc((size_t)blocks_count, sizeof *blocks);
  void *device_block = NULL;
  tc_loop_results reference = {0}, first = {0};
  tc_err err = blocks ? TC_SUCCESS
                      : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                       "out of memory");
  size_t largest = 0;
  for (int64_t b = 0; err == TC_SUCCESS && b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    for (int k = 0; err == TC_SUCCESS && k < TC_KERNEL_COUNT; ++k) {
      tc_contraction shape = tc_physics_contraction(k, cells, fx->F, fx->P, TC_LAYOUT_RIGHT,
                                                    TC_DOUBLE);
      const size_t bytes = (size_t)tc_contraction_output_count(&shape) * sizeof(double);
      largest = bytes > largest ? bytes : largest;
      blocks[b * TC_KERNEL_COUNT + k] = malloc(bytes);
      if (!blocks[b * TC_KERNEL_COUNT + k])
        err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory");
    }
  }
  if (err == TC_SUCCESS)
    err = allocate_results(fx, &reference);
  if (err == TC_SUCCESS)
    err = allocate_results(fx, &first);
  if (err == TC_SUCCESS)
    err = tc_device_alloc(fx->device, largest * TC_KERNEL_COUNT, &device_block);
  for (int layout = 0; err == TC_SUCCESS && layout < TC_LAYOUT_COUNT; ++layout)
    for (int precision = 0; err == TC_SUCCESS && precision < TC_PRECISION_COUNT; ++precision)
      err = check_assembly_case(fx, layout, precision, blocks, device_block, largest, &reference,
                                &first);
  tc_device_free(fx->device, &device_block);
  free_results(fx, &reference);
  free_results(fx, &first);
  for (int64_t i = 0; blocks && i < blocks_count; ++i)
    free(blocks[i]);
  free(blocks);
  return err;
}

/* The mesh with its last node (the box's far corner: only the last cell has
 * it) moved beyond the opposite corner of that cell, which inverts the cell.
 * The device must report exactly the batches that the host geometry finds
 * inverted, and refuse inputs of a batch whose geometry failed. */
static tc_err check_inverted(fixture *fx) {
  const tc_mesh_local *m = fx->local;
  const int64_t F = fx->F, last = m->num_cells - 1;
  const int64_t far = m->cell_nodes[last * F + F - 1], near = m->cell_nodes[last * F];
  double *coords = malloc((size_t)(3 * m->num_nodes) * sizeof *coords);
  TC_CHECK(coords, TC_ERR_MEMORY, "out of memory");
  memcpy(coords, m->coords, (size_t)(3 * m->num_nodes) * sizeof *coords);
  for (int i = 0; i < 3; ++i)
    coords[3 * far + i] =
        m->coords[3 * near + i] - 2.0 * (m->coords[3 * far + i] - m->coords[3 * near + i]);
  tc_mesh_local moved = *m;
  moved.coords = coords;
  tc_loop_cuda *gpu = NULL;
  host_geometry g = {0};
  tc_err err = host_geometry_create(fx, &g);
  if (err == TC_SUCCESS)
    err = tc_loop_cuda_create(&moved, fx->batch_cells, fx->P, fx->ref_values, fx->ref_gradients,
                              fx->weights, &test_fields, fx->assembly, &fx->results,
                              tc_device_stream(fx->device), &gpu);
  int inverted_batches = 0, agreeing = 0;
  char detail[256] = "";
  for (int64_t b = 0; err == TC_SUCCESS && b < fx->num_batches; ++b) {
    int64_t begin, cells;
    batch_range(fx, b, &begin, &cells);
    tc_error_clear();
    const bool host_inverted = host_geometry_form(fx, coords, begin, cells, &g) != TC_SUCCESS;
    tc_error_clear();
    tc_err device_err = tc_loop_cuda_geometry(gpu, begin, cells);
    if (device_err == TC_SUCCESS)
      device_err = tc_loop_cuda_check_geometry(gpu);
    char expected[96];
    snprintf(expected, sizeof expected, "cells %lld..%lld of this rank", (long long)begin,
             (long long)(begin + cells - 1));
    bool agree;
    if (host_inverted) {
      ++inverted_batches;
      agree = device_err == TC_ERR_INPUT && strstr(tc_error_message(), expected) &&
              strstr(tc_error_message(), "inverted or degenerate");
      tc_error_clear();
      void *unused = NULL, *outputs[TC_INPUT_COUNT] = {NULL};
      outputs[TC_INPUT_VALUES] = &unused;
      agree = agree && tc_loop_cuda_build_inputs(gpu, cells, TC_LAYOUT_LEFT, TC_DOUBLE,
                                                 outputs) == TC_ERR_ARGUMENT;
    } else {
      agree = device_err == TC_SUCCESS;
    }
    if (!agree && detail[0] == '\0')
      snprintf(detail, sizeof detail, "; batch %lld: host %s, device \"%s\"", (long long)b,
               host_inverted ? "inverted" : "valid", tc_error_message());
    tc_error_clear();
    agreeing += agree;
  }
  if (err == TC_SUCCESS)
    verdict(inverted_batches > 0 && agreeing == fx->num_batches,
            "Q%d inverted cell: %d of %lld batches agree with the host geometry (%d inverted)%s",
            fx->order, agreeing, (long long)fx->num_batches, inverted_batches, detail);
  tc_loop_cuda_destroy(&gpu);
  host_geometry_destroy(&g);
  free(coords);
  return err;
}

/* Each row reduction selected without its matrix must be refused at create,
 * naming what is missing. */
static void check_selection(fixture *fx) {
  const tc_loop_results *r = &fx->results;
  const tc_loop_results unmatched[3] = {{.lumped_mass = r->lumped_mass},
                                        {.stiffness_diagonal = r->stiffness_diagonal},
                                        {.elasticity_diagonal = r->elasticity_diagonal}};
  int refused = 0;
  for (int i = 0; i < 3; ++i) {
    tc_loop_cuda *gpu = NULL;
    tc_error_clear();
    const tc_err err = tc_loop_cuda_create(
        fx->local, fx->batch_cells, fx->P, fx->ref_values, fx->ref_gradients, fx->weights,
        &test_fields, fx->assembly, &unmatched[i], tc_device_stream(fx->device), &gpu);
    refused += err == TC_ERR_ARGUMENT && gpu == NULL &&
               strstr(tc_error_message(), "without its matrix") != NULL;
    tc_error_clear();
    tc_loop_cuda_destroy(&gpu);
  }
  verdict(refused == 3, "Q%d selection: %d of 3 row reductions without their matrix refused",
          fx->order, refused);
}

static tc_err run_order(tc_device *device, int order) {
  fixture fx;
  tc_err err = fixture_create(device, order, small_box, BATCH_CELLS, &fx);
  if (err == TC_SUCCESS) {
    printf("Q%d: %lld cells, %lld nodes, F = %lld, P = %lld, %lld batches of <= %lld cells\n",
           order, (long long)fx.local->num_cells, (long long)fx.local->num_nodes,
           (long long)fx.F, (long long)fx.P, (long long)fx.num_batches,
           (long long)fx.batch_cells);
    err = check_inputs(&fx, all_inputs);
  }
  if (err == TC_SUCCESS)
    err = check_inputs_together(&fx, all_inputs);
  if (err == TC_SUCCESS)
    err = check_assembly(&fx);
  if (err == TC_SUCCESS)
    err = check_inverted(&fx);
  if (err == TC_SUCCESS)
    check_selection(&fx);
  fixture_destroy(&fx);
  if (err != TC_SUCCESS)
    return err;
  err = fixture_create(device, order, small_box, SHORT_BATCH_CELLS, &fx);
  if (err == TC_SUCCESS) {
    printf("Q%d: %lld batches of <= %lld cells (the gathers visit the nodes they touch)\n",
           order, (long long)fx.num_batches, (long long)fx.batch_cells);
    err = check_assembly(&fx);
  }
  fixture_destroy(&fx);
  if (err != TC_SUCCESS)
    return err;
  /* One large batch: the per-point inputs' tiles stage their cells' nodal
   * values and the values go in slabs only on worksets that give every
   * multiprocessor two waves of 32-cell tiles (64 cells an SM). The
   * gradients and strains, built the same way on any workset, are left
   * out: Q2's strains would take gigabytes. */
  const bool large_inputs[TC_INPUT_COUNT] = {
      [TC_INPUT_VALUES] = true,    [TC_INPUT_WEIGHTED_VALUES] = true,
      [TC_INPUT_FIELD_U] = true,   [TC_INPUT_WEIGHTED_FIELD_U] = true,
      [TC_INPUT_GRADIENT_U] = true, [TC_INPUT_WEIGHTED_GRADIENT_U] = true,
      [TC_INPUT_STRAIN_W] = true,  [TC_INPUT_WEIGHTED_STRESS_W] = true};
  err = fixture_create(device, order, large_box, LARGE_BATCH_CELLS, &fx);
  if (err == TC_SUCCESS)
    err = check_inputs(&fx, large_inputs);
  if (err == TC_SUCCESS)
    err = check_inputs_together(&fx, large_inputs);
  fixture_destroy(&fx);
  return err;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "test_loop_cuda: %s\n", tc_error_message());
    return 1;
  }
  int code = 0;
  tc_device_options options = {.backend = TC_BACKEND_CUDA};
  tc_device *device = NULL;
  tc_err err = tc_node_local_rank(MPI_COMM_WORLD, &options.local_rank, &options.local_size);
  if (err == TC_SUCCESS)
    err = tc_device_create(&options, &device);
  if (err == TC_ERR_NO_DEVICE) {
    printf("SKIP (no usable GPU): %s\n", tc_error_message());
    code = SKIP_CODE;
  } else if (err != TC_SUCCESS) {
    printf("FAIL: %s (%s)\n", tc_error_message(), tc_error_origin());
    code = 1;
  } else {
    printf("device: %s\n", tc_device_description(device));
    for (int order = 1; err == TC_SUCCESS && order <= 2; ++order)
      err = run_order(device, order);
    if (err != TC_SUCCESS) {
      printf("FAIL: %s (%s)\n", tc_error_message(), tc_error_origin());
      code = 1;
    } else {
      printf("test_loop_cuda: %d case(s) passed, %d failed\n", passed_cases, failed_cases);
      code = failed_cases == 0 && passed_cases > 0 ? 0 : 1;
    }
  }
  tc_device_destroy(&device);
  if (tc_parallel_finalize() != TC_SUCCESS && code == 0)
    code = 1;
  return code;
}
