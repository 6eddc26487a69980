/* tc_loop: the element-assembly loop of one rank (see tc_loop.h): set-up
 * of what every backend shares (results, basis, batch inputs and outputs,
 * the variants), and the step, which runs each phase through the step
 * backend of the rank's device (tc_loop_backend.h) and the contractions
 * through the contraction backend. */
#include "tc_loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_basis.h"
#include "tc_fault.h"
#include "tc_loop_backend.h"
#include "tc_loop_clock.h"
#include "tc_parallel.h"
#include "tc_quadrature.h"

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

/* The step backend of each kind of device. */
static const tc_loop_backend *backend_for(tc_backend_kind kind) {
  return kind == TC_BACKEND_CUDA ? &tc_loop_backend_cuda : &tc_loop_backend_host;
}

/* Static schedule, as the loops over cells, so that page faults stay out of
 * the timed steps and pages land near the threads that use them. */
tc_err tc_loop_first_touch(tc_loop *loop, void *memory, size_t bytes) {
  char *bytes_at = memory;
  const int64_t page = 4096, pages = (int64_t)((bytes + (size_t)page - 1) / (size_t)page);
  TC_CALL(tc_timer_start(loop->timers, TC_PHASE_FIRST_TOUCH));
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < pages; ++p)
    bytes_at[p * page] = 0;
  return tc_timer_stop(loop->timers, TC_PHASE_FIRST_TOUCH);
}

tc_physics_fused_outputs tc_loop_fused_outputs(const tc_loop *loop) {
  void *const *out = loop->output_device;
  const bool *fused = loop->fused;
  return (tc_physics_fused_outputs){
      .stiffness = fused[TC_FIELD_FIELD_TENSOR] ? out[TC_FIELD_FIELD_TENSOR] : NULL,
      .internal_force = fused[TC_DATA_FIELD_TENSOR] ? out[TC_DATA_FIELD_TENSOR] : NULL,
      .stress_strain = fused[TC_DATA_DATA_TENSOR] ? out[TC_DATA_DATA_TENSOR] : NULL};
}

tc_physics_fused_diffusion_outputs tc_loop_fused_diffusion_outputs(const tc_loop *loop) {
  void *const *out = loop->output_device;
  const bool *fused = loop->fused;
  return (tc_physics_fused_diffusion_outputs){
      .mass = fused[TC_FIELD_FIELD_SCALAR] ? out[TC_FIELD_FIELD_SCALAR] : NULL,
      .stiffness = fused[TC_FIELD_FIELD_VECTOR] ? out[TC_FIELD_FIELD_VECTOR] : NULL,
      .load = fused[TC_DATA_FIELD_SCALAR] ? out[TC_DATA_FIELD_SCALAR] : NULL,
      .flux_load = fused[TC_DATA_FIELD_VECTOR] ? out[TC_DATA_FIELD_VECTOR] : NULL,
      .u2 = fused[TC_DATA_DATA_SCALAR] ? out[TC_DATA_DATA_SCALAR] : NULL,
      .grad_u2 = fused[TC_DATA_DATA_VECTOR] ? out[TC_DATA_DATA_VECTOR] : NULL};
}

tc_err tc_loop_alloc_host(tc_loop *loop, double **array, int64_t count) {
  TC_CALLOC(*array, count);
  return tc_loop_first_touch(loop, *array, (size_t)count * sizeof **array);
}

static tc_err allocate_results(tc_loop *loop) {
  const tc_config *config = loop->config;
  const int64_t nodes = loop->local->num_nodes, cells = loop->local->num_cells;
  tc_loop_results *r = &loop->results;
  TC_CALL(tc_fault_check("alloc")); /* test-only: TCMINI_FAULT=alloc */
  TC_CALL(tc_loop_alloc_host(loop, &r->cell_volume, cells));
  if (config->kernels[TC_FIELD_FIELD_SCALAR]) {
    TC_CALL(tc_loop_alloc_host(loop, &r->mass,
                               tc_assembly_graph(loop->assembly, 1)->num_entries));
    TC_CALL(tc_loop_alloc_host(loop, &r->lumped_mass, nodes));
  }
  if (config->kernels[TC_FIELD_FIELD_VECTOR]) {
    TC_CALL(tc_loop_alloc_host(loop, &r->stiffness,
                               tc_assembly_graph(loop->assembly, 1)->num_entries));
    TC_CALL(tc_loop_alloc_host(loop, &r->stiffness_diagonal, nodes));
  }
  if (config->kernels[TC_FIELD_FIELD_TENSOR]) {
    TC_CALL(tc_loop_alloc_host(loop, &r->elasticity,
                               tc_assembly_graph(loop->assembly, 3)->num_entries));
    TC_CALL(tc_loop_alloc_host(loop, &r->elasticity_diagonal, 3 * nodes));
  }
  if (config->kernels[TC_DATA_FIELD_SCALAR])
    TC_CALL(tc_loop_alloc_host(loop, &r->load, nodes));
  if (config->kernels[TC_DATA_FIELD_VECTOR])
    TC_CALL(tc_loop_alloc_host(loop, &r->flux_load, nodes));
  if (config->kernels[TC_DATA_FIELD_TENSOR])
    TC_CALL(tc_loop_alloc_host(loop, &r->internal_force, 3 * nodes));
  if (config->kernels[TC_DATA_DATA_SCALAR])
    TC_CALL(tc_loop_alloc_host(loop, &r->cell_u2, cells));
  if (config->kernels[TC_DATA_DATA_VECTOR])
    TC_CALL(tc_loop_alloc_host(loop, &r->cell_grad_u2, cells));
  if (config->kernels[TC_DATA_DATA_TENSOR])
    TC_CALL(tc_loop_alloc_host(loop, &r->cell_stress_strain, cells));
  if (config->element_matrices)
    for (int k = TC_FIELD_FIELD_SCALAR; k <= TC_FIELD_FIELD_TENSOR; ++k)
      if (config->kernels[k])
        TC_CALL(tc_loop_alloc_host(loop, &r->element_matrices[k],
                           output_count(k, cells, loop->num_fields, loop->num_points)));
  return TC_SUCCESS;
}

/* Makes `lane`'s inputs and outputs the current batch's. */
static void use_lane_arrays(tc_loop *loop, int lane) {
  memcpy(loop->input_device, loop->lane_inputs[lane], sizeof loop->input_device);
  memcpy(loop->output_device, loop->lane_outputs[lane], sizeof loop->output_device);
}

/* The contraction inputs and outputs of a batch, one set a batch in flight,
 * in the device's memory (the step backend first-touches them on CPUs). */
static tc_err allocate_batch(tc_loop *loop) {
  const int64_t C = loop->batch_cells, F = loop->num_fields, P = loop->num_points;
  const int64_t element = tc_precision_size(loop->precision);
  for (int lane = 0; lane < loop->in_flight; ++lane) {
    for (int i = 0; i < TC_INPUT_COUNT; ++i)
      if (loop->input_needed[i])
        TC_CALL(tc_device_alloc(loop->device,
                                (size_t)(tc_physics_input_count(i, C, F, P) * element),
                                &loop->lane_inputs[lane][i]));
    for (int k = 0; k < TC_KERNEL_COUNT; ++k)
      if (loop->config->kernels[k])
        TC_CALL(tc_device_alloc(loop->device, (size_t)(output_count(k, C, F, P) * element),
                                &loop->lane_outputs[lane][k]));
  }
  use_lane_arrays(loop, 0);
  return TC_SUCCESS;
}

/* Batches in flight: run.in_flight, or the backend's rule; one where a
 * kernel runs the vendor library (whose handle's workspace the streams would
 * share) or AUTO probes on the first batch. */
static void choose_in_flight(tc_loop *loop) {
  const tc_config *config = loop->config;
  char why[sizeof loop->in_flight_rule];
  loop->in_flight = loop->backend->in_flight(loop, why, sizeof why);
  bool vendor = false;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    vendor = vendor || (config->kernels[k] && !loop->fused[k] &&
                        loop->variants[k] == TC_VARIANT_VENDOR);
  if (loop->in_flight > 1 && (vendor || config->probe)) {
    snprintf(why, sizeof why, "one: %s",
             vendor ? "a kernel runs the vendor library" : "run.probe times AUTO's candidates");
    loop->in_flight = 1;
  }
  if (loop->in_flight > 1 && loop->in_flight > loop->num_batches) {
    snprintf(why, sizeof why, "one a batch: %lld batch%s a step", (long long)loop->num_batches,
             loop->num_batches == 1 ? "" : "es");
    loop->in_flight = loop->num_batches > 1 ? (int)loop->num_batches : 1;
  }
  snprintf(loop->in_flight_rule, sizeof loop->in_flight_rule, "%s", why);
}

/* How a step runs its batches, for the report: `how`, then the batches in
 * flight where there are several or several were asked for. */
static void set_replay_note(tc_loop *loop, const char *how) {
  if (loop->in_flight > 1 || loop->config->in_flight > 1)
    snprintf(loop->replay_note, sizeof loop->replay_note,
             "%.250s; %d batch%s in flight (%.150s)%s", how, loop->in_flight,
             loop->in_flight == 1 ? "" : "es", loop->in_flight_rule,
             loop->in_flight > 1 ? ", their phases timed together as the batches phase" : "");
  else
    snprintf(loop->replay_note, sizeof loop->replay_note, "%s", how);
}

static tc_err setup_basis(tc_loop *loop) {
  const tc_config *config = loop->config;
  tc_quadrature *quadrature = NULL;
  TC_CALL(tc_quadrature_create(tc_config_quadrature(config), &quadrature));
  const int64_t F = loop->num_fields, P = tc_quadrature_num_points(quadrature);
  loop->num_points = P;
  tc_err err = tc_loop_alloc_host(loop, &loop->ref_values, F * P);
  if (err == TC_SUCCESS)
    err = tc_loop_alloc_host(loop, &loop->ref_gradients, F * P * 3);
  if (err == TC_SUCCESS)
    err = tc_loop_alloc_host(loop, &loop->weights, P);
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

static tc_err loop_setup(tc_loop *loop, const tc_tuning *tuning) {
  const tc_config *config = loop->config;
  loop->local = tc_mesh_local_part(loop->mesh);
  loop->contract = tc_device_contract_backend(loop->device);
  loop->backend = backend_for(tc_device_backend(loop->device));
  loop->layout = tc_config_layout(config);
  loop->precision = config->precision;
  loop->num_fields = loop->local->nodes_per_cell;
  TC_CALL(setup_basis(loop));
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    loop->fused[k] = config->kernels[k] && tc_config_inputs(config) == TC_INPUTS_FUSED;
    if (loop->fused[k] && tc_physics_kernel_elastic(k))
      loop->fused_elasticity = true;
    else if (loop->fused[k])
      loop->fused_diffusion = true;
    if (config->kernels[k] && !loop->fused[k]) {
      loop->input_needed[tc_physics_left_input(k)] = true;
      loop->input_needed[tc_physics_right_input(k)] = true;
    }
  }
  const int64_t cells = loop->local->num_cells;
  double budget = 0.0;
  if (config->batch_cells == 0)
    TC_CALL(loop->backend->batch_budget(loop, &budget));
  int64_t fit = config->batch_cells > 0 ? config->batch_cells
                                         : (int64_t)(budget / bytes_per_cell(loop));
  if (config->batch_cells > 0)
    snprintf(loop->batch_rule, sizeof loop->batch_rule, "run.batch_cells");
  else
    snprintf(loop->batch_rule, sizeof loop->batch_rule,
             "%.1f MiB of batch arrays at %.0f KB a cell", budget / (1 << 20),
             bytes_per_cell(loop) / 1e3);
  loop->batch_cells = fit < 1 ? 1 : fit > cells ? cells : fit;
  if (loop->batch_cells < 1)
    loop->batch_cells = 1;
  loop->num_batches = cells > 0 ? (cells + loop->batch_cells - 1) / loop->batch_cells : 0;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k] || loop->fused[k])
      continue;
    tc_contraction shape = tc_physics_contraction(k, loop->batch_cells, loop->num_fields,
                                                  loop->num_points, loop->layout, loop->precision);
    TC_CALL(tc_contract_choose(loop->contract, tuning, &shape, config->variant,
                               &loop->variants[k], &loop->choices[k]));
  }
  choose_in_flight(loop);
  set_replay_note(loop, !tc_device_can_record(loop->device) ? "each batch run from the host"
                        : config->graph ? "each batch launched from the host (not yet recorded)"
                                        : "each batch launched from the host (run.graph = false)");
  TC_CALL(tc_assembly_create(loop->mesh, &loop->assembly));
  TC_CALL(allocate_results(loop));
  TC_CALL(allocate_batch(loop));
  TC_CALL(tc_loop_clock_create(loop->device, &loop->clock));
  TC_CALL(tc_timer_start(loop->timers, TC_PHASE_UPLOAD));
  TC_CALL(loop->backend->create(loop));
  TC_CALL(tc_timer_stop(loop->timers, TC_PHASE_UPLOAD));
  return TC_SUCCESS;
}

tc_err tc_loop_create(const tc_config *config, const tc_mesh *mesh, tc_device *device,
                      const tc_tuning *tuning, tc_timers *timers, tc_loop **loop) {
  tc_loop *created;
  TC_CALLOC(created, 1);
  created->config = config;
  created->mesh = mesh;
  created->device = device;
  created->timers = timers;
  tc_err err = tc_timer_start(timers, TC_PHASE_SETUP);
  if (err == TC_SUCCESS)
    err = loop_setup(created, tuning);
  if (err == TC_SUCCESS)
    err = tc_timer_stop(timers, TC_PHASE_SETUP);
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
  tc_device_recording_destroy(&l->recording);
  if (l->backend)
    l->backend->destroy(l);
  tc_loop_clock_destroy(&l->clock);
  for (int lane = 0; lane < TC_CONFIG_MAX_IN_FLIGHT; ++lane) {
    for (int i = 0; i < TC_INPUT_COUNT; ++i)
      tc_device_free(l->device, &l->lane_inputs[lane][i]);
    for (int k = 0; k < TC_KERNEL_COUNT; ++k)
      tc_device_free(l->device, &l->lane_outputs[lane][k]);
  }
  double *owned[] = {l->ref_values, l->ref_gradients, l->weights, l->results.mass, l->results.stiffness, l->results.elasticity,
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

/* With run.probe, AUTO by the rules runs as AUTO once, so that the library
 * may probe its candidates on this batch (tc_contract_set_probe); the
 * variant it keeps runs from then on. True while kernel k has yet to. */
static bool probe_pending(const tc_loop *loop, tc_kernel k) {
  return loop->config->probe && !loop->probed[k] && loop->choices[k] == TC_CHOICE_RULE &&
         loop->variants[k] != TC_VARIANT_VENDOR;
}

/* Starts `phase` of a batch on the loop's clock; with batches in flight,
 * whose phases overlap, the batches phase (marked once a step) times them. */
static tc_err mark_phase(tc_loop *loop, tc_phase phase) {
  return loop->in_flight > 1 ? TC_SUCCESS : tc_loop_clock_mark(loop->clock, phase);
}

/* The selected contractions of a batch, each timed as its own phase, and
 * those that run fused (run.inputs = fused) in the phases of their fused
 * products: the scalar problem's six, then the elasticity trio. */
static tc_err batch_contractions(tc_loop *loop, int64_t cells) {
  const tc_config *config = loop->config;
  if (loop->fused_diffusion) {
    TC_CALL(mark_phase(loop, TC_PHASE_FUSED_DIFFUSION));
    TC_CALL(loop->backend->fused_diffusion(loop, cells));
  }
  if (loop->fused_elasticity) {
    TC_CALL(mark_phase(loop, TC_PHASE_FUSED_ELASTICITY));
    TC_CALL(loop->backend->fused_elasticity(loop, cells));
  }
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k])
      continue;
    if (loop->fused[k]) {
      tc_contraction shape = tc_physics_contraction(k, cells, loop->num_fields, loop->num_points,
                                                    loop->layout, loop->precision);
      loop->kernel_flops[k] += tc_contraction_flops(&shape);
      continue;
    }
    tc_contraction shape = tc_physics_contraction(k, cells, loop->num_fields, loop->num_points,
                                                  loop->layout, loop->precision);
    const bool probe = probe_pending(loop, k);
    TC_CALL(mark_phase(loop, tc_phase_of_kernel(k)));
    TC_CALL(tc_contract(loop->contract, &shape, probe ? TC_VARIANT_AUTO : loop->variants[k],
                        loop->input_device[tc_physics_left_input(k)],
                        loop->input_device[tc_physics_right_input(k)], loop->output_device[k],
                        loop->backend->queue(loop)));
    if (probe) {
      TC_CALL(tc_contract_choose(loop->contract, NULL, &shape, TC_VARIANT_AUTO, &loop->variants[k],
                                 &loop->choices[k]));
      loop->probed[k] = true;
    }
    loop->kernel_flops[k] += tc_contraction_flops(&shape);
  }
  return TC_SUCCESS;
}

/* Runs one phase through the step backend, timed on the host. */
#define TC_TIMED(timers, phase, call)                                                         \
  do {                                                                                        \
    TC_CALL(tc_timer_start((timers), (phase)));                                               \
    TC_CALL(call);                                                                            \
    TC_CALL(tc_timer_stop((timers), (phase)));                                                \
  } while (0)

/* The batches of a step, each phase queued on the device at a mark of the
 * loop's clock; with batches in flight, batch b on lane b % in_flight, and
 * the whole timed as the batches phase (the row sums after it go to
 * assemble, as with one lane). */
static tc_err queue_batches(tc_loop *loop) {
  const tc_loop_backend *backend = loop->backend;
  if (loop->in_flight > 1)
    TC_CALL(tc_loop_clock_mark(loop->clock, TC_PHASE_BATCHES));
  TC_CALL(backend->begin_batches(loop));
  for (int64_t b = 0; b < loop->num_batches; ++b) {
    const int64_t begin = b * loop->batch_cells;
    const int64_t cells = begin + loop->batch_cells <= loop->local->num_cells
                              ? loop->batch_cells
                              : loop->local->num_cells - begin;
    const int lane = (int)(b % loop->in_flight);
    use_lane_arrays(loop, lane);
    TC_CALL(backend->use_lane(loop, lane));
    TC_CALL(mark_phase(loop, TC_PHASE_GEOMETRY));
    TC_CALL(backend->geometry(loop, begin, cells));
    TC_CALL(mark_phase(loop, TC_PHASE_BASIS));
    TC_CALL(backend->inputs(loop, cells));
    TC_CALL(batch_contractions(loop, cells));
    TC_CALL(mark_phase(loop, TC_PHASE_ASSEMBLE));
    TC_CALL(backend->assemble(loop, begin, cells));
  }
  TC_CALL(backend->end_batches(loop));
  use_lane_arrays(loop, 0);
  if (loop->in_flight > 1)
    TC_CALL(tc_loop_clock_mark(loop->clock, TC_PHASE_ASSEMBLE));
  return TC_SUCCESS;
}

/* A step's batches may be recorded where the device records, run.graph
 * asks for it, no kernel still probes (a probe waits for the device to time
 * its candidates) and recording has not failed twice (the first batch of a
 * run may make a library's handle, which no recording holds). */
static bool may_record(const tc_loop *loop) {
  if (!loop->config->graph || !tc_device_can_record(loop->device) || loop->record_failures >= 2)
    return false;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (loop->config->kernels[k] && !loop->fused[k] && probe_pending(loop, k))
      return false;
  return true;
}

/* Records the step's batches (nothing runs while they are recorded), then
 * replays the recording. Where the recording fails, the marks and flops it
 * made are taken back and the batches are queued as usual; the reason goes
 * to the report. */
static tc_err record_batches(tc_loop *loop) {
  double flops[TC_KERNEL_COUNT];
  memcpy(flops, loop->kernel_flops, sizeof flops);
  TC_CALL(tc_loop_clock_mark(loop->clock, TC_PHASE_RECORD));
  const int from = tc_loop_clock_count(loop->clock);
  tc_err err = tc_device_record_begin(loop->device);
  if (err == TC_SUCCESS) {
    const tc_err queued = queue_batches(loop);
    tc_device_recording *recording = NULL;
    const tc_err ended = tc_device_record_end(loop->device, &recording);
    err = queued != TC_SUCCESS ? queued : ended;
    if (err == TC_SUCCESS) {
      loop->recording = recording;
      loop->recorded_marks[0] = from;
      loop->recorded_marks[1] = tc_loop_clock_count(loop->clock);
      for (int k = 0; k < TC_KERNEL_COUNT; ++k)
        loop->recorded_flops[k] = loop->kernel_flops[k] - flops[k];
      char how[sizeof loop->replay_note];
      snprintf(how, sizeof how,
               "one CUDA graph of the %lld batches, recorded once (the record phase) and "
               "replayed each step",
               (long long)loop->num_batches);
      set_replay_note(loop, how);
      return tc_device_replay(loop->device, recording);
    }
    tc_device_recording_destroy(&recording);
  }
  char how[sizeof loop->replay_note];
  snprintf(how, sizeof how, "each batch launched from the host (recording a CUDA graph failed: %s)",
           tc_error_message());
  set_replay_note(loop, how);
  tc_error_clear();
  ++loop->record_failures;
  memcpy(loop->kernel_flops, flops, sizeof flops);
  TC_CALL(tc_loop_clock_rewind(loop->clock, from));
  return queue_batches(loop);
}

/* The batches of a step: the recording replayed, recorded now, or queued. */
static tc_err run_batches(tc_loop *loop) {
  if (!loop->recording)
    return may_record(loop) ? record_batches(loop) : queue_batches(loop);
  /* Where the recording step marked its record phase, the launch of the
   * replay, counted with the step's zeroing; then the recording's marks. */
  TC_CALL(tc_loop_clock_mark(loop->clock, TC_PHASE_ASSEMBLE));
  TC_CALL(tc_loop_clock_replayed(loop->clock, loop->recorded_marks[0], loop->recorded_marks[1]));
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    loop->kernel_flops[k] += loop->recorded_flops[k];
  return tc_device_replay(loop->device, loop->recording);
}

/* The batches of one step, then the row sums and diagonals of the matrices:
 * rank-local, not collective. Each phase starts at a mark of the loop's
 * clock on the device's queue, and nothing waits for the device until the
 * clock collects the phase times at the end. */
static tc_err step_batches(tc_loop *loop, tc_timers *timers) {
  const tc_loop_backend *backend = loop->backend;
  TC_CALL(tc_fault_check("step")); /* test-only: TCMINI_FAULT=step */
  TC_CALL(tc_loop_clock_mark(loop->clock, TC_PHASE_ASSEMBLE));
  TC_CALL(backend->begin_step(loop));
  TC_CALL(run_batches(loop));
  TC_CALL(backend->reduce_rows(loop));
  TC_CALL(tc_loop_clock_collect(loop->clock, timers));
  return backend->check_geometry(loop);
}

tc_err tc_loop_connect(tc_loop *loop, tc_timers *timers) {
  TC_TIMED(timers, TC_PHASE_UPLOAD, loop->backend->connect(loop));
  return TC_SUCCESS;
}

tc_err tc_loop_step(tc_loop *loop, tc_timers *timers) {
  /* A failure on one rank (an inverted cell, a failed kernel) is agreed before
   * the exchange, so that no rank waits there for a rank that has left; the
   * time a rank waits there for the others is the step's load imbalance. */
  const tc_err local = step_batches(loop, timers);
  const tc_err waited = tc_timer_start(timers, TC_PHASE_WAIT);
  const tc_err agreed = tc_parallel_agree(tc_mesh_comm(loop->mesh), local);
  TC_CALL(agreed);
  TC_CALL(waited);
  TC_CALL(tc_timer_stop(timers, TC_PHASE_WAIT));
  TC_TIMED(timers, TC_PHASE_EXCHANGE, loop->backend->exchange(loop));
  return TC_SUCCESS;
}

tc_err tc_loop_finish(tc_loop *loop, tc_timers *timers, bool matrices) {
  TC_TIMED(timers, TC_PHASE_COPY_BACK, loop->backend->copy_results(loop, matrices));
  return TC_SUCCESS;
}

const tc_loop_results *tc_loop_get_results(const tc_loop *loop) { return &loop->results; }
const tc_assembly *tc_loop_assembly(const tc_loop *loop) { return loop->assembly; }
int64_t tc_loop_batch_cells(const tc_loop *loop) { return loop->batch_cells; }
int64_t tc_loop_num_batches(const tc_loop *loop) { return loop->num_batches; }
const char *tc_loop_batch_rule(const tc_loop *loop) { return loop->batch_rule; }
const char *tc_loop_replay_note(const tc_loop *loop) { return loop->replay_note; }
const char *tc_loop_exchange_name(const tc_loop *loop, const char **why) {
  if (why)
    *why = loop->exchange_why;
  return loop->exchange_name[0] ? loop->exchange_name
                                : tc_exchange_mode_name(tc_config_exchange(loop->config));
}
int64_t tc_loop_num_points(const tc_loop *loop) { return loop->num_points; }
int64_t tc_loop_num_fields(const tc_loop *loop) { return loop->num_fields; }
tc_variant tc_loop_variant(const tc_loop *loop, tc_kernel kernel) { return loop->variants[kernel]; }
bool tc_loop_kernel_fused(const tc_loop *loop, tc_kernel kernel) { return loop->fused[kernel]; }
const char *tc_loop_fused_form(const tc_loop *loop) { return loop->fused_form; }
tc_choice tc_loop_variant_choice(const tc_loop *loop, tc_kernel kernel) {
  return loop->choices[kernel];
}
double tc_loop_kernel_flops(const tc_loop *loop, tc_kernel kernel) {
  return loop->kernel_flops[kernel];
}
