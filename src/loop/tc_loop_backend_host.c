/* tc_loop_backend_host: the step backend of the CPU devices (serial and
 * OpenMP): the geometry of a batch in host arrays (tc_geometry), the inputs
 * from the physics' builder in one pass (tc_physics_builder), the gather-assemble
 * of tc_assembly, and the shared-node sums of tc_mesh. The batch's inputs
 * and outputs are host memory, first-touched here by the threads that use
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_roofline.h"
#include "tc_function_space.h"
#include "tc_geometry.h"
#include "tc_loop_backend.h"
#include "tc_omp.h"
#include "tc_physics_builder.h"
#include "tc_physics_fused.h"

/* The host geometry of one batch, row-major, cell index slowest. */
typedef struct {
  double *node_coords;  /* (C,F,3) */
  double *jacobians;    /* (C,P,3,3) */
  double *inverses;     /* (C,P,3,3) */
  double *determinants; /* (C,P) */
  double *measures;     /* (C,P) */
  double *gradients;    /* (C,F,P,3) physical basis gradients, for the fused product */
  tc_physics_builder *builder;
} host_state;

static void host_destroy(tc_loop *loop) {
  host_state *h = loop->state;
  if (!h)
    return;
  double *owned[] = {h->node_coords, h->jacobians, h->inverses,
                     h->determinants, h->measures,  h->gradients};
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
    free(owned[i]);
  tc_physics_builder_destroy(&h->builder);
  free(h);
  loop->state = NULL;
}

/* A batch's arrays (inputs, outputs, geometry) take this share of the cache
 * each of the loop's threads has beyond L1, so that the inputs the builder
 * writes are still in cache when the contractions read them, beside the
 * assembled rows the gather updates. Measured on a 2-core Zen 5 (1 MiB L2
 * per core, 32 MiB L3 for both: 17 MiB per core), 2 ranks, best of 3 runs
 * on the quiet machine: Q1 with 3-point quadrature on 48^3 cells (128 KB
 * per cell) 193, 204, 208, 215 and 167 thousand cells/s at 8, 16, 32, 64
 * and 128 cells (128: the two ranks' batches fill the L3); Q2 with 5-point
 * quadrature on 16^3 cells (1.6 MB per cell) 6.0, 6.7, 6.4 and 4.6 thousand
 * at 1, 2, 4 and 8 cells. A quarter gives 34 and 2 cells there, within a
 * few per cent of the best and clear of the cliff. */
static const double cache_share = 0.25;

/* cache_share of the cache per core beyond L1 (bench_machine_cache_estimate:
 * sysfs, else L2 from CPUID and an assumed L3 share), times the threads. */
double tc_loop_host_batch_bytes(int threads) {
  const size_t cache = bench_machine_cache_estimate(NULL);
  return cache_share * (double)cache * (threads > 0 ? threads : 1);
}

static tc_err host_batch_budget(const tc_loop *loop, double *bytes) {
  *bytes = tc_loop_host_batch_bytes(tc_device_num_threads(loop->device));
  return TC_SUCCESS;
}

/* What the budget came from, for the report (run.batch_cells = 0): the
 * loop's phrase for the budget, then the caches it came from. */
static void describe_budget(tc_loop *loop) {
  bench_cache_source source;
  const size_t cache = bench_machine_cache_estimate(&source);
  const int threads = tc_device_num_threads(loop->device);
  char budget[sizeof loop->batch_rule];
  snprintf(budget, sizeof budget, "%s", loop->batch_rule);
  snprintf(loop->batch_rule, sizeof loop->batch_rule,
           "%.120s: a quarter of the %.1f MiB of cache per core beyond L1 (%s), times %d thread%s",
           budget, (double)cache / (1 << 20), bench_cache_source_text(source), threads,
           threads == 1 ? "" : "s");
}

static tc_err host_create(tc_loop *loop) {
  const int64_t C = loop->batch_cells, F = loop->num_fields, P = loop->num_points;
  const int64_t element = tc_precision_size(loop->precision);
  host_state *h;
  TC_CALLOC(h, 1);
  loop->state = h;
  TC_CALL(tc_loop_alloc_host(loop, &h->node_coords, C * F * 3));
  TC_CALL(tc_loop_alloc_host(loop, &h->jacobians, C * P * 9));
  TC_CALL(tc_loop_alloc_host(loop, &h->inverses, C * P * 9));
  TC_CALL(tc_loop_alloc_host(loop, &h->determinants, C * P));
  TC_CALL(tc_loop_alloc_host(loop, &h->measures, C * P));
  if (loop->fused_diffusion || loop->fused_elasticity)
    TC_CALL(tc_loop_alloc_host(loop, &h->gradients, C * F * P * 3));
  TC_CALL(tc_physics_builder_create(loop->input_needed, F, P, loop->layout, loop->precision,
                                    tc_physics_default_fields(), &h->builder));
  TC_CALL(tc_assembly_plan_batches(loop->assembly, C));
  if (loop->config->batch_cells == 0)
    describe_budget(loop);
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (loop->input_device[i])
      TC_CALL(tc_loop_first_touch(loop, loop->input_device[i],
                                  (size_t)(tc_physics_input_count(i, C, F, P) * element)));
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (loop->output_device[k]) {
      tc_contraction shape = tc_physics_contraction(k, C, F, P, loop->layout, loop->precision);
      TC_CALL(tc_loop_first_touch(loop, loop->output_device[k],
                                  (size_t)(tc_contraction_output_count(&shape) * element)));
    }
  return TC_SUCCESS;
}

/* Zeroes what a step accumulates into. */
static tc_err host_begin_step(tc_loop *loop) {
  tc_loop_results *r = &loop->results;
  const int64_t nodes = loop->local->num_nodes, cells = loop->local->num_cells;
  const int64_t scalar = tc_assembly_graph(loop->assembly, 1)->num_entries;
  const int64_t vector = tc_assembly_graph(loop->assembly, 3)->num_entries;
  struct {
    double *array;
    int64_t count;
  } zeroed[] = {{r->mass, scalar},          {r->stiffness, scalar}, {r->elasticity, vector},
                {r->load, nodes},           {r->flux_load, nodes},  {r->internal_force, 3 * nodes},
                {r->cell_volume, cells},    {r->cell_u2, cells},    {r->cell_grad_u2, cells},
                {r->cell_stress_strain, cells}};
  for (size_t i = 0; i < sizeof zeroed / sizeof zeroed[0]; ++i)
    if (zeroed[i].array)
      memset(zeroed[i].array, 0, (size_t)zeroed[i].count * sizeof(double));
  return TC_SUCCESS;
}

/* The node coordinates of a batch's cells, which its threads copy. */
typedef struct {
  const tc_loop *loop;
  int64_t begin, cells;
} coords_team;

static void coords_range(void *context, int64_t first, int64_t end) {
  const coords_team *team = context;
  const host_state *h = team->loop->state;
  const tc_mesh_local *m = team->loop->local;
  const int64_t F = team->loop->num_fields;
  for (int64_t c = first; c < end; ++c)
    for (int64_t a = 0; a < F; ++a)
      memcpy(h->node_coords + (c * F + a) * 3,
             m->coords + 3 * m->cell_nodes[(team->begin + c) * F + a], 3 * sizeof(double));
}

static tc_err host_geometry(tc_loop *loop, int64_t begin, int64_t cells) {
  host_state *h = loop->state;
  const int64_t F = loop->num_fields, P = loop->num_points;
  coords_team coords = {.loop = loop, .begin = begin, .cells = cells};
  tc_omp_for(cells, coords_range, &coords);
  TC_CALL(tc_geometry_jacobians(cells, (int)F, h->node_coords, P, loop->ref_gradients,
                                h->jacobians));
  tc_err err = tc_geometry_invert_jacobians(cells, P, h->jacobians, h->determinants, h->inverses);
  if (err != TC_SUCCESS) {
    tc_error_clear();
    TC_FAIL(TC_ERR_INPUT,
            "an inverted or degenerate cell in cells %lld..%lld of this rank: lower "
            "mesh.distortion",
            (long long)begin, (long long)(begin + cells - 1));
  }
  TC_CALL(tc_geometry_measures(cells, P, h->determinants, loop->weights, h->measures));
  for (int64_t c = 0; c < cells; ++c) {
    double volume = 0.0;
    for (int64_t q = 0; q < P; ++q)
      volume += h->measures[c * P + q];
    loop->results.cell_volume[begin + c] = volume;
  }
  return TC_SUCCESS;
}

/* host_geometry fails at once on an inverted cell. */
static tc_err host_check_geometry(tc_loop *loop) {
  (void)loop;
  return TC_SUCCESS;
}

/* The batch's geometry as the physics reads it. */
static tc_physics_batch physics_batch(const tc_loop *loop, int64_t cells) {
  const host_state *h = loop->state;
  tc_physics_batch batch = {
      .num_cells = cells,
      .num_fields = loop->num_fields,
      .num_points = loop->num_points,
      .measures = h->measures,
      .ref_values = loop->ref_values,
      .ref_gradients = loop->ref_gradients,
      .inverse_jacobians = h->inverses,
      .gradients = h->gradients,
      .node_coords = h->node_coords,
  };
  return batch;
}

/* Every input the kernels read, in one pass; first, when kernels run fused,
 * the physical gradients the fused product reads. */
static tc_err host_inputs(tc_loop *loop, int64_t cells) {
  host_state *h = loop->state;
  if (loop->fused_diffusion || loop->fused_elasticity)
    TC_CALL(tc_hgrad_gradients(cells, (int)loop->num_fields, loop->num_points,
                               loop->ref_gradients, h->inverses, NULL, TC_LAYOUT_RIGHT,
                               TC_DOUBLE, h->gradients));
  const tc_physics_batch batch = physics_batch(loop, cells);
  return tc_physics_build_inputs(h->builder, &batch, loop->input_device);
}

static tc_err host_fused_diffusion(tc_loop *loop, int64_t cells) {
  const tc_physics_batch batch = physics_batch(loop, cells);
  const tc_physics_fused_diffusion_outputs outputs = tc_loop_fused_diffusion_outputs(loop);
  return tc_physics_fused_diffusion(&batch, tc_physics_default_fields(), loop->layout,
                                    loop->precision, &outputs);
}

static tc_err host_fused_elasticity(tc_loop *loop, int64_t cells) {
  const tc_physics_batch batch = physics_batch(loop, cells);
  const tc_physics_fused_outputs outputs = tc_loop_fused_outputs(loop);
  return tc_physics_fused_elasticity(&batch, tc_physics_default_fields(), loop->layout,
                                     loop->precision, &outputs, &loop->fused_form);
}

/* A batch's element matrices, which its threads copy. */
typedef struct {
  double *kept;
  int64_t N;
  const tc_element_block *block;
} kept_team;

static void kept_range(void *context, int64_t begin, int64_t end) {
  const kept_team *t = context;
  const int64_t N = t->N;
  for (int64_t c = begin; c < end; ++c)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j)
        t->kept[((t->block->cell_begin + c) * N + i) * N + j] =
            tc_element_block_get(t->block, N, N, c, i, j);
}

/* Copies a FieldField output of the batch into the element-matrix array,
 * row-major [cells][N][N]. */
static void keep_element_matrices(tc_loop *loop, tc_kernel kernel, const tc_element_block *block) {
  double *kept = loop->results.element_matrices[kernel];
  if (!kept)
    return;
  kept_team team = {.kept = kept,
                    .N = loop->num_fields * (tc_physics_kernel_components(kernel) == 3 ? 3 : 1),
                    .block = block};
  tc_omp_for(block->batch_cells, kept_range, &team);
}

static tc_err host_assemble(tc_loop *loop, int64_t begin, int64_t cells) {
  const tc_config *config = loop->config;
  tc_loop_results *r = &loop->results;
  double *cell_results[TC_KERNEL_COUNT] = {[TC_DATA_DATA_SCALAR] = r->cell_u2,
                                           [TC_DATA_DATA_VECTOR] = r->cell_grad_u2,
                                           [TC_DATA_DATA_TENSOR] = r->cell_stress_strain};
  double *matrices[TC_KERNEL_COUNT] = {[TC_FIELD_FIELD_SCALAR] = r->mass,
                                       [TC_FIELD_FIELD_VECTOR] = r->stiffness,
                                       [TC_FIELD_FIELD_TENSOR] = r->elasticity};
  double *vectors[TC_KERNEL_COUNT] = {[TC_DATA_FIELD_SCALAR] = r->load,
                                      [TC_DATA_FIELD_VECTOR] = r->flux_load,
                                      [TC_DATA_FIELD_TENSOR] = r->internal_force};
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k])
      continue;
    tc_element_block block = {.data = loop->output_device[k],
                              .layout = loop->layout,
                              .precision = loop->precision,
                              .batch_cells = cells,
                              .cell_begin = begin};
    int components = tc_physics_kernel_components(k);
    if (tc_kernel_is_field_field(k)) {
      TC_CALL(tc_assembly_add_matrices(loop->assembly, components, &block, matrices[k]));
      keep_element_matrices(loop, k, &block);
    } else if (tc_kernel_is_data_field(k)) {
      TC_CALL(tc_assembly_add_vectors(loop->assembly, components, &block, vectors[k]));
    } else {
      for (int64_t c = 0; c < cells; ++c)
        cell_results[k][begin + c] = tc_element_block_get(&block, 1, 1, c, 0, 0);
    }
  }
  return TC_SUCCESS;
}

/* Row sums and diagonals of the rank-local matrices. */
static tc_err host_reduce_rows(tc_loop *loop) {
  tc_loop_results *r = &loop->results;
  if (r->mass)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 1, r->mass, r->lumped_mass, NULL);
  if (r->stiffness)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 1, r->stiffness, NULL,
                                      r->stiffness_diagonal);
  if (r->elasticity)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 3, r->elasticity, NULL,
                                      r->elasticity_diagonal);
  return TC_SUCCESS;
}

/* Every node vector summed over the ranks that share its nodes. */
static tc_err host_exchange(tc_loop *loop) {
  tc_loop_results *r = &loop->results;
  double *const node_vectors[] = {r->lumped_mass, r->stiffness_diagonal, r->elasticity_diagonal,
                                  r->load,        r->flux_load,          r->internal_force};
  const int node_components[] = {1, 1, 3, 1, 1, 3};
  enum { NODE_VECTORS = sizeof node_vectors / sizeof node_vectors[0] };
  double *values[NODE_VECTORS];
  int components[NODE_VECTORS], count = 0;
  for (int i = 0; i < NODE_VECTORS; ++i)
    if (node_vectors[i]) {
      values[count] = node_vectors[i];
      components[count++] = node_components[i];
    }
  return tc_mesh_sum_shared_fields(loop->mesh, count, values, components);
}

/* CPUs run one batch at a time, with all the rank's threads: no lanes. */
static int host_in_flight(const tc_loop *loop, char *why, size_t size) {
  (void)loop;
  snprintf(why, size, "CPU backends run one batch at a time");
  return 1;
}

static tc_err host_batches(tc_loop *loop) {
  (void)loop;
  return TC_SUCCESS;
}

static tc_err host_use_lane(tc_loop *loop, int lane) {
  (void)loop;
  (void)lane;
  return TC_SUCCESS;
}

static void *host_queue(const tc_loop *loop) { return tc_device_stream(loop->device); }

/* The host's results are always current. */
static tc_err host_copy_results(tc_loop *loop, bool matrices) {
  (void)loop;
  (void)matrices;
  return TC_SUCCESS;
}

/* The host's exchange is MPI messages alone: nothing to set up. */
static tc_err host_connect(tc_loop *loop) {
  (void)loop;
  return TC_SUCCESS;
}

const tc_loop_backend tc_loop_backend_host = {
    .name = "host",
    .batch_budget = host_batch_budget,
    .create = host_create,
    .connect = host_connect,
    .destroy = host_destroy,
    .in_flight = host_in_flight,
    .begin_step = host_begin_step,
    .begin_batches = host_batches,
    .use_lane = host_use_lane,
    .end_batches = host_batches,
    .queue = host_queue,
    .geometry = host_geometry,
    .check_geometry = host_check_geometry,
    .inputs = host_inputs,
    .fused_diffusion = host_fused_diffusion,
    .fused_elasticity = host_fused_elasticity,
    .assemble = host_assemble,
    .reduce_rows = host_reduce_rows,
    .exchange = host_exchange,
    .copy_results = host_copy_results,
};
