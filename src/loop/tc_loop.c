/* tc_loop: the element-assembly loop of one rank (see tc_loop.h). */
#include "tc_loop.h"

#include <stdlib.h>
#include <string.h>

#include "tc_basis.h"
#include "tc_exchange_cuda.h"
#include "tc_fault.h"
#include "tc_function_space.h"
#include "tc_geometry.h"
#include "tc_loop_cuda.h"
#include "tc_parallel.h"
#include "tc_physics.h"
#include "tc_quadrature.h"

/* Device memory the batch arrays of one rank may take (inputs, outputs and
 * geometry together); a batch holds as many cells as fit. */
static const double batch_memory_budget = 512.0 * 1024 * 1024;

struct tc_loop {
  const tc_config *config;
  const tc_mesh *mesh;
  const tc_mesh_local *local;
  tc_device *device;
  const tc_contract_backend *backend;
  tc_loop_cuda *gpu; /* CUDA: geometry, inputs and assembly on the device (tc_loop_cuda) */
  tc_exchange_cuda *gpu_exchange; /* CUDA with run.exchange = device or gpu-aware */
  bool host_matrices_stale; /* CUDA: the host's matrices lag the device's (tc_loop_finish) */
  tc_layout layout;
  tc_precision precision;
  int64_t num_fields, num_points, batch_cells, num_batches;
  tc_assembly *assembly;
  tc_loop_results results;
  tc_variant variants[TC_KERNEL_COUNT];
  double kernel_flops[TC_KERNEL_COUNT];

  /* reference basis and quadrature */
  double *ref_values, *ref_gradients, *weights;
  /* per-batch geometry, host, double */
  double *node_coords, *jacobians, *inverses, *determinants, *measures, *gradients;
  /* contraction inputs and outputs, in the device's memory */
  bool input_needed[TC_INPUT_COUNT];
  void *input_device[TC_INPUT_COUNT];
  void *output_device[TC_KERNEL_COUNT];
};

static int64_t output_count(tc_kernel kernel, int64_t cells, int64_t fields, int64_t points) {
  tc_contraction shape = tc_physics_contraction(kernel, cells, fields, points, TC_LAYOUT_RIGHT,
                                                TC_DOUBLE);
  return tc_contraction_output_count(&shape);
}

static double bytes_per_cell(const tc_loop *loop) {
  const int64_t F = loop->num_fields, P = loop->num_points;
  double element = (double)tc_precision_size(loop->precision);
  double bytes = 8.0 * (double)(F * 3 + P * 20 + F * P * 3);
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (loop->input_needed[i])
      bytes += element * (double)tc_physics_input_count(i, 1, F, P);
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (loop->config->kernels[k])
      bytes += element * (double)output_count(k, 1, F, P);
  return bytes;
}

/* Touches memory page by page with the threads that will use it (static
 * schedule, as the loops over cells), so that page faults stay out of the
 * timed steps and pages land near those threads. */
static void first_touch(void *memory, size_t bytes) {
  char *bytes_at = memory;
  const int64_t page = 4096, pages = (int64_t)((bytes + (size_t)page - 1) / (size_t)page);
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < pages; ++p)
    bytes_at[p * page] = 0;
}

static tc_err alloc_host(double **array, int64_t count) {
  TC_CALLOC(*array, count);
  first_touch(*array, (size_t)count * sizeof **array);
  return TC_SUCCESS;
}

static tc_err allocate_results(tc_loop *loop) {
  const tc_config *config = loop->config;
  const int64_t nodes = loop->local->num_nodes, cells = loop->local->num_cells;
  tc_loop_results *r = &loop->results;
  TC_CALL(tc_fault_check("alloc")); /* test-only: TCMINI_FAULT=alloc */
  TC_CALL(alloc_host(&r->cell_volume, cells));
  if (config->kernels[TC_FIELD_FIELD_SCALAR]) {
    TC_CALL(alloc_host(&r->mass, tc_assembly_graph(loop->assembly, 1)->num_entries));
    TC_CALL(alloc_host(&r->lumped_mass, nodes));
  }
  if (config->kernels[TC_FIELD_FIELD_VECTOR]) {
    TC_CALL(alloc_host(&r->stiffness, tc_assembly_graph(loop->assembly, 1)->num_entries));
    TC_CALL(alloc_host(&r->stiffness_diagonal, nodes));
  }
  if (config->kernels[TC_FIELD_FIELD_TENSOR]) {
    TC_CALL(alloc_host(&r->elasticity, tc_assembly_graph(loop->assembly, 3)->num_entries));
    TC_CALL(alloc_host(&r->elasticity_diagonal, 3 * nodes));
  }
  if (config->kernels[TC_DATA_FIELD_SCALAR])
    TC_CALL(alloc_host(&r->load, nodes));
  if (config->kernels[TC_DATA_FIELD_VECTOR])
    TC_CALL(alloc_host(&r->flux_load, nodes));
  if (config->kernels[TC_DATA_FIELD_TENSOR])
    TC_CALL(alloc_host(&r->internal_force, 3 * nodes));
  if (config->kernels[TC_DATA_DATA_SCALAR])
    TC_CALL(alloc_host(&r->cell_u2, cells));
  if (config->kernels[TC_DATA_DATA_VECTOR])
    TC_CALL(alloc_host(&r->cell_grad_u2, cells));
  if (config->kernels[TC_DATA_DATA_TENSOR])
    TC_CALL(alloc_host(&r->cell_stress_strain, cells));
  if (config->element_matrices)
    for (int k = TC_FIELD_FIELD_SCALAR; k <= TC_FIELD_FIELD_TENSOR; ++k)
      if (config->kernels[k])
        TC_CALL(alloc_host(&r->element_matrices[k],
                           output_count(k, cells, loop->num_fields, loop->num_points)));
  return TC_SUCCESS;
}

/* The batch arrays: the contraction inputs and outputs in the device's
 * memory and, on CPUs, the host geometry (on GPUs it lives in tc_loop_cuda). */
static tc_err allocate_batch(tc_loop *loop, bool on_gpu) {
  const int64_t C = loop->batch_cells, F = loop->num_fields, P = loop->num_points;
  const int64_t element = tc_precision_size(loop->precision);
  if (!on_gpu) {
    TC_CALL(alloc_host(&loop->node_coords, C * F * 3));
    TC_CALL(alloc_host(&loop->jacobians, C * P * 9));
    TC_CALL(alloc_host(&loop->inverses, C * P * 9));
    TC_CALL(alloc_host(&loop->determinants, C * P));
    TC_CALL(alloc_host(&loop->measures, C * P));
    TC_CALL(alloc_host(&loop->gradients, C * F * P * 3));
  }
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!loop->input_needed[i])
      continue;
    size_t bytes = (size_t)(tc_physics_input_count(i, C, F, P) * element);
    TC_CALL(tc_device_alloc(loop->device, bytes, &loop->input_device[i]));
    if (!on_gpu)
      first_touch(loop->input_device[i], bytes);
  }
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!loop->config->kernels[k])
      continue;
    size_t bytes = (size_t)(output_count(k, C, F, P) * element);
    TC_CALL(tc_device_alloc(loop->device, bytes, &loop->output_device[k]));
    if (!on_gpu)
      first_touch(loop->output_device[k], bytes);
  }
  return TC_SUCCESS;
}

static tc_err setup_basis(tc_loop *loop) {
  const tc_config *config = loop->config;
  tc_quadrature *quadrature = NULL;
  TC_CALL(tc_quadrature_create(tc_config_quadrature(config), &quadrature));
  const int64_t F = loop->num_fields, P = tc_quadrature_num_points(quadrature);
  loop->num_points = P;
  tc_err err = alloc_host(&loop->ref_values, F * P);
  if (err == TC_SUCCESS)
    err = alloc_host(&loop->ref_gradients, F * P * 3);
  if (err == TC_SUCCESS)
    err = alloc_host(&loop->weights, P);
  if (err == TC_SUCCESS)
    err = tc_basis_values((int)config->order, P, tc_quadrature_points(quadrature),
                          loop->ref_values);
  if (err == TC_SUCCESS)
    err = tc_basis_gradients((int)config->order, P, tc_quadrature_points(quadrature),
                             loop->ref_gradients);
  if (err == TC_SUCCESS)
    memcpy(loop->weights, tc_quadrature_weights(quadrature), (size_t)P * sizeof(double));
  tc_quadrature_destroy(&quadrature);
  return err;
}

static tc_err loop_setup(tc_loop *loop) {
  const tc_config *config = loop->config;
  loop->local = tc_mesh_local_part(loop->mesh);
  loop->backend = tc_device_contract_backend(loop->device);
  const bool on_gpu = tc_device_backend(loop->device) == TC_BACKEND_CUDA;
  loop->layout = tc_config_layout(config);
  loop->precision = config->precision;
  loop->num_fields = loop->local->nodes_per_cell;
  TC_CALL(setup_basis(loop));
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (config->kernels[k]) {
      loop->input_needed[tc_physics_left_input(k)] = true;
      loop->input_needed[tc_physics_right_input(k)] = true;
    }
  const int64_t cells = loop->local->num_cells;
  int64_t fit = config->batch_cells > 0 ? config->batch_cells
                                         : (int64_t)(batch_memory_budget / bytes_per_cell(loop));
  loop->batch_cells = fit < 1 ? 1 : fit > cells ? cells : fit;
  if (loop->batch_cells < 1)
    loop->batch_cells = 1;
  loop->num_batches = cells > 0 ? (cells + loop->batch_cells - 1) / loop->batch_cells : 0;
  TC_CALL(tc_assembly_create(loop->mesh, &loop->assembly));
  TC_CALL(allocate_results(loop));
  TC_CALL(allocate_batch(loop, on_gpu));
  if (on_gpu)
    TC_CALL(tc_loop_cuda_create(loop->local, loop->batch_cells, loop->num_points,
                                loop->ref_values, loop->ref_gradients, loop->weights,
                                tc_physics_default_fields(), tc_assembly_graph(loop->assembly, 1),
                                tc_assembly_graph(loop->assembly, 3), &loop->results,
                                tc_device_stream(loop->device), &loop->gpu));
  if (on_gpu && config->exchange != TC_EXCHANGE_HOST)
    TC_CALL(tc_exchange_cuda_create(loop->mesh, 3, config->exchange == TC_EXCHANGE_GPU_AWARE,
                                    tc_device_stream(loop->device), &loop->gpu_exchange));
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k])
      continue;
    tc_contraction shape = tc_physics_contraction(k, loop->batch_cells, loop->num_fields,
                                                  loop->num_points, loop->layout, loop->precision);
    TC_CALL(tc_contract_resolve(loop->backend, &shape, config->variant, &loop->variants[k]));
  }
  return TC_SUCCESS;
}

tc_err tc_loop_create(const tc_config *config, const tc_mesh *mesh, tc_device *device,
                      tc_loop **loop) {
  tc_loop *created;
  TC_CALLOC(created, 1);
  created->config = config;
  created->mesh = mesh;
  created->device = device;
  tc_err err = loop_setup(created);
  if (err != TC_SUCCESS) {
    tc_loop_destroy(&created);
    return err;
  }
  *loop = created;
  return TC_SUCCESS;
}

void tc_loop_destroy(tc_loop **loop) {
  tc_loop *l = *loop;
  if (!l)
    return;
  tc_exchange_cuda_destroy(&l->gpu_exchange);
  tc_loop_cuda_destroy(&l->gpu);
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    tc_device_free(l->device, &l->input_device[i]);
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    tc_device_free(l->device, &l->output_device[k]);
  double *owned[] = {l->ref_values, l->ref_gradients, l->weights, l->node_coords,
                     l->jacobians, l->inverses, l->determinants, l->measures, l->gradients,
                     l->results.mass, l->results.stiffness, l->results.elasticity,
                     l->results.lumped_mass, l->results.stiffness_diagonal,
                     l->results.elasticity_diagonal, l->results.load, l->results.flux_load,
                     l->results.internal_force, l->results.cell_volume, l->results.cell_u2,
                     l->results.cell_grad_u2, l->results.cell_stress_strain,
                     l->results.element_matrices[0], l->results.element_matrices[1],
                     l->results.element_matrices[2]};
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
    free(owned[i]);
  tc_assembly_destroy(&l->assembly);
  free(l);
  *loop = NULL;
}

/* Zeroes what a step accumulates into. */
static void zero_results(tc_loop *loop) {
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
}

static tc_err batch_geometry(tc_loop *loop, int64_t begin, int64_t cells) {
  const tc_mesh_local *m = loop->local;
  const int64_t F = loop->num_fields, P = loop->num_points;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < cells; ++c)
    for (int64_t a = 0; a < F; ++a)
      memcpy(loop->node_coords + (c * F + a) * 3,
             m->coords + 3 * m->cell_nodes[(begin + c) * F + a], 3 * sizeof(double));
  TC_CALL(tc_geometry_jacobians(cells, (int)F, loop->node_coords, P, loop->ref_gradients,
                                loop->jacobians));
  tc_err err = tc_geometry_invert_jacobians(cells, P, loop->jacobians, loop->determinants,
                                            loop->inverses);
  if (err != TC_SUCCESS) {
    tc_error_clear();
    TC_FAIL(TC_ERR_INPUT,
            "an inverted or degenerate cell in cells %lld..%lld of this rank: lower "
            "mesh.distortion",
            (long long)begin, (long long)(begin + cells - 1));
  }
  TC_CALL(tc_geometry_measures(cells, P, loop->determinants, loop->weights, loop->measures));
  for (int64_t c = 0; c < cells; ++c) {
    double volume = 0.0;
    for (int64_t q = 0; q < P; ++q)
      volume += loop->measures[c * P + q];
    loop->results.cell_volume[begin + c] = volume;
  }
  return TC_SUCCESS;
}

static tc_err batch_inputs(tc_loop *loop, int64_t cells) {
  const int64_t F = loop->num_fields, P = loop->num_points;
  TC_CALL(tc_hgrad_gradients(cells, (int)F, P, loop->ref_gradients, loop->inverses, NULL,
                             TC_LAYOUT_RIGHT, TC_DOUBLE, loop->gradients));
  tc_physics_batch batch = {
      .num_cells = cells,
      .num_fields = F,
      .num_points = P,
      .measures = loop->measures,
      .ref_values = loop->ref_values,
      .ref_gradients = loop->ref_gradients,
      .inverse_jacobians = loop->inverses,
      .gradients = loop->gradients,
      .node_coords = loop->node_coords,
  };
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!loop->input_needed[i])
      continue;
    TC_CALL(tc_physics_build_input(i, &batch, tc_physics_default_fields(), loop->layout,
                                   loop->precision, loop->input_device[i]));
  }
  return TC_SUCCESS;
}

/* The GPU's batch_inputs: every input the selected kernels read, built on
 * the device from the geometry tc_loop_cuda_geometry formed. */
static tc_err gpu_inputs(tc_loop *loop, int64_t cells) {
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (loop->input_needed[i])
      TC_CALL(tc_loop_cuda_build_input(loop->gpu, i, cells, loop->layout, loop->precision,
                                       loop->input_device[i]));
  return tc_device_synchronize(loop->device);
}

/* The GPU's batch_assemble: every selected kernel's output gathered on the
 * device (the element-matrix copies included). */
static tc_err gpu_assemble(tc_loop *loop, int64_t begin, int64_t cells) {
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (loop->config->kernels[k])
      TC_CALL(tc_loop_cuda_assemble(loop->gpu, k, begin, cells, loop->layout, loop->precision,
                                    loop->output_device[k]));
  return tc_device_synchronize(loop->device);
}

static tc_err batch_contractions(tc_loop *loop, int64_t cells, tc_timers *timers) {
  const tc_config *config = loop->config;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k])
      continue;
    tc_contraction shape = tc_physics_contraction(k, cells, loop->num_fields, loop->num_points,
                                                  loop->layout, loop->precision);
    TC_CALL(tc_timer_start(timers, tc_phase_of_kernel(k)));
    TC_CALL(tc_contract(loop->backend, &shape, config->variant,
                        loop->input_device[tc_physics_left_input(k)],
                        loop->input_device[tc_physics_right_input(k)], loop->output_device[k],
                        tc_device_stream(loop->device)));
    TC_CALL(tc_device_synchronize(loop->device));
    TC_CALL(tc_timer_stop(timers, tc_phase_of_kernel(k)));
    loop->kernel_flops[k] += tc_contraction_flops(&shape);
  }
  return TC_SUCCESS;
}

/* Copies a FieldField output of the batch into the element-matrix array,
 * row-major [cells][N][N]. */
static void keep_element_matrices(tc_loop *loop, tc_kernel kernel, const tc_element_block *block) {
  double *kept = loop->results.element_matrices[kernel];
  if (!kept)
    return;
  const int64_t N = loop->num_fields * (tc_physics_kernel_components(kernel) == 3 ? 3 : 1);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < block->batch_cells; ++c)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j)
        kept[((block->cell_begin + c) * N + i) * N + j] =
            tc_element_block_get(block, N, N, c, i, j);
}

static tc_err batch_assemble(tc_loop *loop, int64_t begin, int64_t cells) {
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
static void host_reduce_rows(tc_loop *loop) {
  tc_loop_results *r = &loop->results;
  if (r->mass)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 1, r->mass, r->lumped_mass, NULL);
  if (r->stiffness)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 1, r->stiffness, NULL,
                                      r->stiffness_diagonal);
  if (r->elasticity)
    tc_assembly_row_sums_and_diagonal(loop->assembly, 3, r->elasticity, NULL,
                                      r->elasticity_diagonal);
}

/* The GPU's host_reduce_rows, then (host exchange) the node and cell
 * vectors copied to the host, which the exchange reads; the matrices stay on
 * the device until tc_loop_finish. */
static tc_err gpu_reduce_rows(tc_loop *loop) {
  TC_CALL(tc_loop_cuda_reduce_rows(loop->gpu));
  if (!loop->gpu_exchange)
    TC_CALL(tc_loop_cuda_copy_results(loop->gpu, TC_LOOP_CUDA_VECTORS, &loop->results));
  loop->host_matrices_stale = true;
  return TC_SUCCESS;
}

/* The exchange on the GPU: every node vector summed there, then the node and
 * cell vectors copied to the host. */
static tc_err gpu_exchange(tc_loop *loop) {
  double *vectors[TC_LOOP_CUDA_MAX_NODE_VECTORS];
  int components[TC_LOOP_CUDA_MAX_NODE_VECTORS];
  int count = tc_loop_cuda_node_vectors(loop->gpu, vectors, components);
  for (int i = 0; i < count; ++i)
    TC_CALL(tc_exchange_cuda_sum(loop->gpu_exchange, vectors[i], components[i]));
  return tc_loop_cuda_copy_results(loop->gpu, TC_LOOP_CUDA_VECTORS, &loop->results);
}

/* Every node vector summed over the ranks that share its nodes. */
static tc_err finish_step(tc_loop *loop, tc_timers *timers) {
  tc_loop_results *r = &loop->results;
  TC_CALL(tc_timer_start(timers, TC_PHASE_EXCHANGE));
  if (loop->gpu_exchange) {
    TC_CALL(gpu_exchange(loop));
    return tc_timer_stop(timers, TC_PHASE_EXCHANGE);
  }
  struct {
    double *values;
    int components;
  } exchanged[] = {{r->lumped_mass, 1}, {r->stiffness_diagonal, 1}, {r->elasticity_diagonal, 3},
                   {r->load, 1},        {r->flux_load, 1},          {r->internal_force, 3}};
  for (size_t i = 0; i < sizeof exchanged / sizeof exchanged[0]; ++i)
    if (exchanged[i].values)
      TC_CALL(tc_mesh_sum_shared(loop->mesh, exchanged[i].values, exchanged[i].components));
  TC_CALL(tc_timer_stop(timers, TC_PHASE_EXCHANGE));
  return TC_SUCCESS;
}

/* The batches of one step, then the row sums and diagonals of the matrices:
 * rank-local, not collective. */
static tc_err step_batches(tc_loop *loop, tc_timers *timers) {
  TC_CALL(tc_fault_check("step")); /* test-only: TCMINI_FAULT=step */
  /* On the GPU the step accumulates into device arrays, and the copies back
   * overwrite the host arrays whole: zeroing those (gigabytes of CSR values
   * on large meshes) would be wasted host memory traffic. */
  if (loop->gpu)
    TC_CALL(tc_loop_cuda_zero(loop->gpu));
  else
    zero_results(loop);
  for (int64_t b = 0; b < loop->num_batches; ++b) {
    const int64_t begin = b * loop->batch_cells;
    const int64_t cells = begin + loop->batch_cells <= loop->local->num_cells
                              ? loop->batch_cells
                              : loop->local->num_cells - begin;
    TC_CALL(tc_timer_start(timers, TC_PHASE_GEOMETRY));
    TC_CALL(loop->gpu ? tc_loop_cuda_geometry(loop->gpu, begin, cells)
                      : batch_geometry(loop, begin, cells));
    TC_CALL(tc_timer_stop(timers, TC_PHASE_GEOMETRY));
    TC_CALL(tc_timer_start(timers, TC_PHASE_BASIS));
    TC_CALL(loop->gpu ? gpu_inputs(loop, cells) : batch_inputs(loop, cells));
    TC_CALL(tc_timer_stop(timers, TC_PHASE_BASIS));
    TC_CALL(batch_contractions(loop, cells, timers));
    TC_CALL(tc_timer_start(timers, TC_PHASE_ASSEMBLE));
    TC_CALL(loop->gpu ? gpu_assemble(loop, begin, cells) : batch_assemble(loop, begin, cells));
    TC_CALL(tc_timer_stop(timers, TC_PHASE_ASSEMBLE));
  }
  TC_CALL(tc_timer_start(timers, TC_PHASE_ASSEMBLE));
  if (loop->gpu)
    TC_CALL(gpu_reduce_rows(loop));
  else
    host_reduce_rows(loop);
  TC_CALL(tc_timer_stop(timers, TC_PHASE_ASSEMBLE));
  return TC_SUCCESS;
}

tc_err tc_loop_step(tc_loop *loop, tc_timers *timers) {
  /* A failure on one rank (an inverted cell, a failed kernel) is agreed before
   * the exchange, so that no rank waits there for a rank that has left. */
  TC_CALL(tc_parallel_agree(tc_mesh_comm(loop->mesh), step_batches(loop, timers)));
  return finish_step(loop, timers);
}

tc_err tc_loop_finish(tc_loop *loop, tc_timers *timers) {
  if (!loop->host_matrices_stale)
    return TC_SUCCESS;
  TC_CALL(tc_timer_start(timers, TC_PHASE_ASSEMBLE));
  TC_CALL(tc_loop_cuda_copy_results(loop->gpu, TC_LOOP_CUDA_MATRICES, &loop->results));
  TC_CALL(tc_timer_stop(timers, TC_PHASE_ASSEMBLE));
  loop->host_matrices_stale = false;
  return TC_SUCCESS;
}

const tc_loop_results *tc_loop_get_results(const tc_loop *loop) { return &loop->results; }
const tc_assembly *tc_loop_assembly(const tc_loop *loop) { return loop->assembly; }
int64_t tc_loop_batch_cells(const tc_loop *loop) { return loop->batch_cells; }
int64_t tc_loop_num_batches(const tc_loop *loop) { return loop->num_batches; }
int64_t tc_loop_num_points(const tc_loop *loop) { return loop->num_points; }
int64_t tc_loop_num_fields(const tc_loop *loop) { return loop->num_fields; }
tc_variant tc_loop_variant(const tc_loop *loop, tc_kernel kernel) { return loop->variants[kernel]; }
double tc_loop_kernel_flops(const tc_loop *loop, tc_kernel kernel) {
  return loop->kernel_flops[kernel];
}
