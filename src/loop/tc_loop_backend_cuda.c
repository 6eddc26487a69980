/* tc_loop_backend_cuda: the step backend of a GPU: each phase of a batch
 * queued on the device through tc_loop_cuda (geometry, inputs,
 * gather-assemble and row reductions on the device), the shared-node sums
 * on the host or (run.exchange = device, gpu-aware, peer or auto) on the
 * device through tc_exchange_cuda. Nothing comes back each step but the
 * node vectors the host exchange sums (where this rank shares nodes); the
 * rest stays on the device until copy_results. Plain C: without the CUDA
 * backend in the build the calls it makes fail with TC_ERR_UNSUPPORTED, and
 * a device of that kind cannot be opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_exchange_cuda.h"
#include "tc_loop_backend.h"
#include "tc_loop_cuda.h"

typedef struct {
  tc_loop_cuda *gpu;
  tc_exchange_cuda *exchange; /* all but run.exchange = host */
  int host_stale;             /* tc_loop_cuda_results kinds the host's copies lag */
} cuda_state;

/* A sixteenth of the GPU's memory, at most 8 GiB (shared by the batches in
 * flight that run.in_flight asks for): on an H100 with the
 * elasticity trio fused, worksets of about 170,000 Q1 or 13,600 Q2 cells,
 * where the loop's launches are long enough to fill the GPU
 * (docs/measurements/mini-app-gpu.md, df4729b: Q1 128^3 at 11.3 M cells/s
 * against 10.6 M in 16,384-cell and 8.2 M in 4,096-cell worksets; Q2 32^3
 * at 648-662 k against 637 k in 4,096-cell worksets). */
static tc_err cuda_batch_budget(const tc_loop *loop, double *bytes) {
  size_t memory = 0;
  TC_CALL(tc_device_memory_bytes(loop->device, &memory));
  const double sixteenth = (double)memory / 16.0, most = 8.0 * 1024 * 1024 * 1024;
  *bytes = sixteenth < most ? sixteenth : most;
  if (loop->config->in_flight > 1) /* each batch in flight has arrays of its own */
    *bytes /= (double)loop->config->in_flight;
  return TC_SUCCESS;
}

static void cuda_destroy(tc_loop *loop) {
  cuda_state *s = loop->state;
  if (!s)
    return;
  tc_exchange_cuda_destroy(&s->exchange);
  tc_loop_cuda_destroy(&s->gpu);
  free(s);
  loop->state = NULL;
}

/* The exchange's route as it stands, for the report (tc_loop_exchange_name). */
static void note_route(tc_loop *loop) {
  const cuda_state *s = loop->state;
  const char *why = "";
  snprintf(loop->exchange_name, sizeof loop->exchange_name, "%s",
           tc_exchange_cuda_route_name(s->exchange, &why));
  snprintf(loop->exchange_why, sizeof loop->exchange_why, "%s", why);
}

static tc_err cuda_create(tc_loop *loop) {
  cuda_state *s;
  TC_CALLOC(s, 1);
  loop->state = s;
  void *stream = tc_device_stream(loop->device);
  TC_CALL(tc_loop_cuda_create(loop->local, loop->batch_cells, loop->num_points, loop->ref_values,
                              loop->ref_gradients, loop->weights, tc_physics_default_fields(),
                              loop->assembly, &loop->results, stream, &s->gpu));
  TC_CALL(tc_loop_cuda_set_lanes(s->gpu, loop->in_flight));
  const tc_exchange_mode exchange = tc_config_exchange(loop->config);
  tc_exchange_route route = TC_EXCHANGE_ROUTE_HOST_BUFFERS;
  if (exchange == TC_EXCHANGE_GPU_AWARE)
    route = TC_EXCHANGE_ROUTE_MPI_DEVICE;
  else if (exchange == TC_EXCHANGE_PEER)
    route = TC_EXCHANGE_ROUTE_PEER;
  else if (exchange == TC_EXCHANGE_AUTO)
    route = TC_EXCHANGE_ROUTE_PEER_OR_HOST;
  if (exchange != TC_EXCHANGE_HOST)
    TC_CALL(tc_exchange_cuda_create(loop->mesh, 3 * TC_LOOP_CUDA_MAX_NODE_VECTORS, route, stream,
                                    &s->exchange));
  return TC_SUCCESS;
}

/* The exchange's peer copies set up (where it runs them), and named for the
 * report. */
static tc_err cuda_connect(tc_loop *loop) {
  cuda_state *s = loop->state;
  if (!s->exchange)
    return TC_SUCCESS;
  TC_CALL(tc_exchange_cuda_connect(s->exchange));
  note_route(loop);
  return TC_SUCCESS;
}

/* run.in_flight; or one batch at a time in the workset the loop sizes
 * itself, which fills the GPU and keeps every phase timed on its own; or
 * for a workset set by run.batch_cells as many batches as fill the GPU
 * (tc_loop_cuda_lanes_to_fill). */
static int cuda_in_flight(const tc_loop *loop, char *why, size_t size) {
  if (loop->config->in_flight > 0) {
    snprintf(why, size, "run.in_flight");
    return (int)loop->config->in_flight;
  }
  if (loop->config->batch_cells == 0) {
    snprintf(why, size, "one: the workset the loop sized fills the GPU");
    return 1;
  }
  const int64_t items = loop->num_fields * loop->num_points;
  const int lanes = tc_loop_cuda_lanes_to_fill(loop->batch_cells, items);
  snprintf(why, size, "enough for the GPU: batches of %lld cells x %lld fields x points",
           (long long)loop->batch_cells, (long long)items);
  return lanes;
}

static tc_err cuda_begin_batches(tc_loop *loop) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_begin_batches(s->gpu);
}

static tc_err cuda_use_lane(tc_loop *loop, int lane) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_use_lane(s->gpu, lane);
}

static tc_err cuda_end_batches(tc_loop *loop) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_end_batches(s->gpu);
}

static void *cuda_queue(const tc_loop *loop) {
  const cuda_state *s = loop->state;
  return tc_loop_cuda_queue(s->gpu);
}

/* The step accumulates into device arrays, and the copies back overwrite
 * the host arrays whole: zeroing those (gigabytes of CSR values on large
 * meshes) would be wasted host memory traffic. */
static tc_err cuda_begin_step(tc_loop *loop) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_zero(s->gpu);
}

static tc_err cuda_geometry(tc_loop *loop, int64_t begin, int64_t cells) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_geometry(s->gpu, begin, cells);
}

static tc_err cuda_check_geometry(tc_loop *loop) {
  cuda_state *s = loop->state;
  return tc_loop_cuda_check_geometry(s->gpu);
}

/* Every input the selected kernels read, in one launch. */
static tc_err cuda_inputs(tc_loop *loop, int64_t cells) {
  cuda_state *s = loop->state;
  void *outputs[TC_INPUT_COUNT] = {NULL};
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (loop->input_needed[i])
      outputs[i] = loop->input_device[i];
  return tc_loop_cuda_build_inputs(s->gpu, cells, loop->layout, loop->precision, outputs);
}

static tc_err cuda_fused_diffusion(tc_loop *loop, int64_t cells) {
  cuda_state *s = loop->state;
  const tc_physics_fused_diffusion_outputs outputs = tc_loop_fused_diffusion_outputs(loop);
  return tc_loop_cuda_fused_diffusion(s->gpu, cells, loop->layout, loop->precision, &outputs);
}

static tc_err cuda_fused_elasticity(tc_loop *loop, int64_t cells) {
  cuda_state *s = loop->state;
  const tc_physics_fused_outputs outputs = tc_loop_fused_outputs(loop);
  return tc_loop_cuda_fused_elasticity(s->gpu, cells, loop->layout, loop->precision, &outputs,
                                       &loop->fused_form);
}

/* Every selected kernel's output gathered on the device in one launch (the
 * element-matrix copies included), after the batch before's. */
static tc_err cuda_assemble(tc_loop *loop, int64_t begin, int64_t cells) {
  cuda_state *s = loop->state;
  void *outputs[TC_KERNEL_COUNT] = {NULL};
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (loop->config->kernels[k])
      outputs[k] = loop->output_device[k];
  return tc_loop_cuda_assemble(s->gpu, begin, cells, loop->layout, loop->precision, outputs);
}

/* The row sums and diagonals, then (host exchange, where this rank shares
 * nodes) the node vectors copied to the host, which the exchange reads. */
static tc_err cuda_reduce_rows(tc_loop *loop) {
  cuda_state *s = loop->state;
  TC_CALL(tc_loop_cuda_reduce_rows(s->gpu));
  s->host_stale = TC_LOOP_CUDA_ALL;
  if (!s->exchange && tc_mesh_shares_nodes(loop->mesh)) {
    TC_CALL(tc_loop_cuda_copy_results(s->gpu, TC_LOOP_CUDA_NODE_VECTORS, &loop->results));
    s->host_stale &= ~TC_LOOP_CUDA_NODE_VECTORS;
  }
  return TC_SUCCESS;
}

/* The exchange on the GPU: every node vector summed there (the route that
 * ran kept for the report); or the host's sums of the copies. */
static tc_err cuda_exchange(tc_loop *loop) {
  cuda_state *s = loop->state;
  if (!s->exchange)
    return tc_loop_backend_host.exchange(loop);
  double *vectors[TC_LOOP_CUDA_MAX_NODE_VECTORS];
  int components[TC_LOOP_CUDA_MAX_NODE_VECTORS];
  int count = tc_loop_cuda_node_vectors(s->gpu, vectors, components);
  const tc_err err = tc_exchange_cuda_sum_fields(s->exchange, count, vectors, components);
  if (!loop->exchange_name[0] || strcmp(loop->exchange_name, "auto") == 0)
    note_route(loop); /* connected here: tc_loop_connect was not called */
  return err;
}

/* The results the host lacks: the vectors, and the matrices if asked for. */
static tc_err cuda_copy_results(tc_loop *loop, bool matrices) {
  cuda_state *s = loop->state;
  const int kinds = s->host_stale & (matrices ? TC_LOOP_CUDA_ALL : TC_LOOP_CUDA_VECTORS);
  if (kinds == 0)
    return TC_SUCCESS;
  TC_CALL(tc_loop_cuda_copy_results(s->gpu, kinds, &loop->results));
  s->host_stale &= ~kinds;
  return TC_SUCCESS;
}

const tc_loop_backend tc_loop_backend_cuda = {
    .name = "cuda",
    .batch_budget = cuda_batch_budget,
    .create = cuda_create,
    .connect = cuda_connect,
    .destroy = cuda_destroy,
    .in_flight = cuda_in_flight,
    .begin_step = cuda_begin_step,
    .begin_batches = cuda_begin_batches,
    .use_lane = cuda_use_lane,
    .end_batches = cuda_end_batches,
    .queue = cuda_queue,
    .geometry = cuda_geometry,
    .check_geometry = cuda_check_geometry,
    .inputs = cuda_inputs,
    .fused_diffusion = cuda_fused_diffusion,
    .fused_elasticity = cuda_fused_elasticity,
    .assemble = cuda_assemble,
    .reduce_rows = cuda_reduce_rows,
    .exchange = cuda_exchange,
    .copy_results = cuda_copy_results,
};
