/* tc_loop_cuda: the CUDA backend of the assembly loop's step (see
 * tc_loop_cuda.h): the device twins of the loop's results, and each phase
 * of a batch queued on the device through the GPU twins of the host
 * modules: the geometry (src/fem/tc_geometry_cuda), the contraction inputs
 * (src/physics/tc_physics_cuda) and the gather-assemble
 * (src/assembly/tc_assembly_cuda). */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#define OMPI_SKIP_MPICXX 1 /* the C interface of MPI only */
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "tc_assembly_cuda.h"
#include "tc_cuda_call.h"
#include "tc_geometry_cuda.h"
#include "tc_loop_cuda.h"
#include "tc_physics_cuda.h"
}

#include "tc_cuda_limits.cuh"
#include "tc_cuda_memory.cuh"

namespace {

using tc_cuda_memory::device_alloc;
using tc_cuda_memory::device_free;
using tc_cuda_memory::upload;

/// The device results. The first nine are indexed by the tc_kernel that forms
/// them; then the element matrices of the three FieldField kernels; then the
/// cell volumes from the geometry; then the row reductions of the three
/// assembled matrices (kRowReductions).
enum result {
  RESULT_ELEMENT_MATRICES = TC_KERNEL_COUNT,
  RESULT_CELL_VOLUME = RESULT_ELEMENT_MATRICES + 3,
  RESULT_LUMPED_MASS,
  RESULT_STIFFNESS_DIAGONAL,
  RESULT_ELASTICITY_DIAGONAL,
  RESULT_COUNT
};

/// The CSR values and element matrices (TC_LOOP_CUDA_MATRICES); the others
/// are vectors (TC_LOOP_CUDA_VECTORS).
bool is_matrix_result(int which) {
  return which < TC_KERNEL_COUNT ? tc_kernel_is_field_field((tc_kernel)which)
                                 : which < RESULT_CELL_VOLUME;
}

/// Which kind of tc_loop_cuda_results a result is.
int result_kind(int which) {
  if (is_matrix_result(which))
    return TC_LOOP_CUDA_MATRICES;
  const bool cell = which == RESULT_CELL_VOLUME ||
                    (which < TC_KERNEL_COUNT && tc_kernel_is_data_data((tc_kernel)which));
  return cell ? TC_LOOP_CUDA_CELL_VECTORS : TC_LOOP_CUDA_NODE_VECTORS;
}

/// A per-row reduction of an assembled matrix (a FieldField kernel: 1 or 3
/// components per node): its row sums or its diagonal
/// (tc_assembly_row_sums_and_diagonal), into a node vector.
struct row_reduction {
  int matrix, target;
  bool row_sums;
};
constexpr row_reduction kRowReductions[] = {
    {TC_FIELD_FIELD_SCALAR, RESULT_LUMPED_MASS, true},
    {TC_FIELD_FIELD_VECTOR, RESULT_STIFFNESS_DIAGONAL, false},
    {TC_FIELD_FIELD_TENSOR, RESULT_ELASTICITY_DIAGONAL, false}};

/// Where each result lives in a tc_loop_results.
double **host_slot(tc_loop_results *r, int which) {
  double **slots[RESULT_COUNT] = {&r->mass,
                                  &r->stiffness,
                                  &r->elasticity,
                                  &r->load,
                                  &r->flux_load,
                                  &r->internal_force,
                                  &r->cell_u2,
                                  &r->cell_grad_u2,
                                  &r->cell_stress_strain,
                                  &r->element_matrices[0],
                                  &r->element_matrices[1],
                                  &r->element_matrices[2],
                                  &r->cell_volume,
                                  &r->lumped_mass,
                                  &r->stiffness_diagonal,
                                  &r->elasticity_diagonal};
  return slots[which];
}

} // namespace

/// Most batches in flight (tc_loop_cuda_set_lanes): run.in_flight's bound.
constexpr int kMaxLanes = TC_CONFIG_MAX_IN_FLIGHT;
/// Work items (cells x fields x points) in flight a multiprocessor that
/// fill the GPU, and the most batches in flight that takes
/// (tc_loop_cuda_lanes_to_fill): 16.9 M items on an H100 or H200. Measured
/// on an H100 since a batch's gathers visit only the nodes it touches
/// (docs/measurements/mini-app-gpu.md): Q1 cells with 27 points (216 items
/// a cell) ran 8% faster eight at a time than four in batches of 1,024, 3%
/// in batches of 4,096, and five and four at a time the same in batches of
/// 16,384; Q2 cells with 125 points (3,375) six and four at a time the same
/// in batches of 1,024. (The workset the loop sizes itself runs one at a
/// time: tc_loop_backend_cuda.c.)
constexpr double kFillItemsPerSM = 128 * 1024;
constexpr int kMostLanesToFill = kMaxLanes;

struct tc_loop_cuda {
  cudaStream_t stream; ///< the loop's stream: lane 0, the zeroing, row sums, copies
  int64_t num_cells, num_nodes, batch_cells, num_points;
  int num_fields;
  tc_physics_fields fields;
  double *coords; ///< the mesh's node coordinates
  tc_assembly_cuda *assembly; ///< the mesh's links and cell nodes, the CSR structures
  /// Geometry of each lane's current batch (its arrays and the reference
  /// basis are owned here); cells is the batch formed last on the lane (-1:
  /// none, or it failed).
  tc_geometry_cuda_batch batches[kMaxLanes];
  /// Batches in flight: the lanes, the current one, their streams (streams[0]
  /// is `stream`), and the gathers' own stream, of the device's highest
  /// priority; events: the step's start, each lane's end, a batch's
  /// contractions done (the gathers wait for it) and its gathers done (its
  /// lane waits for it before the next batch overwrites its outputs).
  int lanes, lane;
  cudaStream_t streams[kMaxLanes], gathers;
  cudaEvent_t forked, joined[kMaxLanes], computed, gathered;
  double *ref_values, *ref_gradients, *weights;
  /// Inverted-cell flags, one device int per batch (set by the geometry
  /// where some det J <= 0, cleared by the check), and their host copy.
  int *inverted, *inverted_host;
  int64_t num_batches;
  double *results[RESULT_COUNT];
  int64_t result_counts[RESULT_COUNT];
};

namespace {

int64_t result_count(const tc_loop_cuda *l, int which) {
  if (which == RESULT_CELL_VOLUME)
    return l->num_cells;
  for (const row_reduction &reduction : kRowReductions)
    if (which == reduction.target)
      return l->num_nodes * tc_physics_kernel_components((tc_kernel)reduction.matrix);
  if (which >= RESULT_ELEMENT_MATRICES) {
    const tc_kernel kernel = (tc_kernel)(which - RESULT_ELEMENT_MATRICES);
    const int components = tc_physics_kernel_components(kernel) == 3 ? 3 : 1;
    const int64_t size = (int64_t)l->num_fields * components;
    return l->num_cells * size * size;
  }
  const tc_kernel kernel = (tc_kernel)which;
  const int components = tc_physics_kernel_components(kernel);
  if (tc_kernel_is_field_field(kernel))
    return tc_assembly_cuda_graph(l->assembly, components)->num_entries;
  if (tc_kernel_is_data_field(kernel))
    return l->num_nodes * components;
  return l->num_cells;
}

/// A lane's geometry scratch, for batches of batch_cells cells.
tc_err alloc_geometry(const tc_loop_cuda *l, tc_geometry_cuda_batch *g) {
  const int64_t F = l->num_fields, P = l->num_points, C = l->batch_cells;
  g->num_fields = l->num_fields;
  g->num_points = P;
  g->cells = -1;
  g->stride = C;
  g->ref_values = l->ref_values;
  g->ref_gradients = l->ref_gradients;
  g->weights = l->weights;
  TC_CALL(device_alloc(&g->node_coords, C * F * 3, "batch node coordinates"));
  TC_CALL(device_alloc(&g->inverses, C * P * 9, "batch inverse Jacobians"));
  TC_CALL(device_alloc(&g->measures, C * P, "batch measures"));
  return TC_SUCCESS;
}

/// The current lane's geometry and stream.
tc_geometry_cuda_batch &lane_batch(tc_loop_cuda *l) { return l->batches[l->lane]; }
cudaStream_t lane_stream(const tc_loop_cuda *l) { return l->streams[l->lane]; }

/// The geometry last formed on the current lane, checked to be of `cells`
/// cells, for the step `what` that reads it.
tc_err formed_batch(tc_loop_cuda *l, int64_t cells, const char *what,
                    const tc_geometry_cuda_batch **batch) {
  *batch = &lane_batch(l);
  TC_CHECK(cells == (*batch)->cells, TC_ERR_ARGUMENT,
           "GPU %s of %lld cells, but the geometry last formed is of %lld cells", what,
           (long long)cells, (long long)(*batch)->cells);
  return TC_SUCCESS;
}

tc_err setup(tc_loop_cuda *l, const tc_mesh_local *mesh, const double *ref_values,
             const double *ref_gradients, const double *weights, const tc_assembly *assembly,
             const tc_loop_results *selected) {
  const int64_t F = l->num_fields, P = l->num_points, C = l->batch_cells;
  cudaStream_t s = l->stream;
  TC_CALL(upload(&l->coords, mesh->coords, 3 * mesh->num_nodes, "node coordinates", s));
  TC_CALL(tc_assembly_cuda_create(assembly, mesh, C, s, &l->assembly));
  TC_CALL(upload(&l->ref_values, ref_values, F * P, "basis values", s));
  TC_CALL(upload(&l->ref_gradients, ref_gradients, F * P * 3, "basis gradients", s));
  TC_CALL(upload(&l->weights, weights, P, "quadrature weights", s));
  TC_CALL(alloc_geometry(l, &l->batches[0]));
  l->lanes = 1;
  l->streams[0] = s;
  l->num_batches = std::max<int64_t>((l->num_cells + C - 1) / C, 1);
  TC_CALL(device_alloc(&l->inverted, l->num_batches, "inverted-cell flags"));
  TC_CUDA_CALL(cudaMemsetAsync(l->inverted, 0, (size_t)l->num_batches * sizeof(int), s));
  l->inverted_host = (int *)calloc((size_t)l->num_batches, sizeof(int));
  TC_CHECK(l->inverted_host, TC_ERR_MEMORY, "out of memory allocating the GPU loop");
  tc_loop_results wanted = *selected;
  for (const row_reduction &reduction : kRowReductions)
    TC_CHECK(!*host_slot(&wanted, reduction.target) || *host_slot(&wanted, reduction.matrix),
             TC_ERR_ARGUMENT, "tc_loop_cuda_create: %s selected without its matrix",
             reduction.row_sums ? "row sums" : "a diagonal");
  for (int which = 0; which < RESULT_COUNT; ++which) {
    if (!*host_slot(&wanted, which))
      continue;
    l->result_counts[which] = result_count(l, which);
    TC_CALL(device_alloc(&l->results[which], l->result_counts[which], "assembled results"));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(s));
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_loop_cuda_create(const tc_mesh_local *mesh, int64_t batch_cells,
                                      int64_t num_points, const double *ref_values,
                                      const double *ref_gradients, const double *weights,
                                      const tc_physics_fields *fields,
                                      const tc_assembly *assembly,
                                      const tc_loop_results *selected, void *stream,
                                      tc_loop_cuda **loop) {
  TC_CHECK(mesh && ref_values && ref_gradients && weights && fields && assembly && selected &&
               loop,
           TC_ERR_ARGUMENT, "tc_loop_cuda_create: a required argument is NULL");
  TC_CHECK(batch_cells >= 1 && num_points >= 1, TC_ERR_ARGUMENT,
           "tc_loop_cuda_create: %lld cells per batch and %lld points (need >= 1 each)",
           (long long)batch_cells, (long long)num_points);
  tc_loop_cuda *created = (tc_loop_cuda *)calloc(1, sizeof *created);
  TC_CHECK(created, TC_ERR_MEMORY, "out of memory allocating the GPU loop");
  created->stream = (cudaStream_t)stream;
  created->num_cells = mesh->num_cells;
  created->num_nodes = mesh->num_nodes;
  created->batch_cells = batch_cells;
  created->num_points = num_points;
  created->num_fields = mesh->nodes_per_cell;
  created->fields = *fields;
  tc_err err = setup(created, mesh, ref_values, ref_gradients, weights, assembly, selected);
  if (err != TC_SUCCESS) {
    tc_loop_cuda_destroy(&created);
    return err;
  }
  *loop = created;
  return TC_SUCCESS;
}

extern "C" void tc_loop_cuda_destroy(tc_loop_cuda **loop) {
  tc_loop_cuda *l = *loop;
  if (!l)
    return;
  device_free(&l->coords);
  tc_assembly_cuda_destroy(&l->assembly);
  device_free(&l->ref_values);
  device_free(&l->ref_gradients);
  device_free(&l->weights);
  for (tc_geometry_cuda_batch &batch : l->batches) {
    device_free(&batch.node_coords);
    device_free(&batch.inverses);
    device_free(&batch.measures);
  }
  for (int lane = 1; lane < kMaxLanes; ++lane)
    if (l->streams[lane])
      cudaStreamDestroy(l->streams[lane]);
  for (cudaEvent_t event : l->joined)
    if (event)
      cudaEventDestroy(event);
  if (l->forked)
    cudaEventDestroy(l->forked);
  for (cudaEvent_t event : {l->computed, l->gathered})
    if (event)
      cudaEventDestroy(event);
  if (l->gathers)
    cudaStreamDestroy(l->gathers);
  device_free(&l->inverted);
  free(l->inverted_host);
  for (double *&result : l->results)
    device_free(&result);
  free(l);
  *loop = NULL;
}

extern "C" tc_err tc_loop_cuda_set_lanes(tc_loop_cuda *loop, int lanes) {
  tc_loop_cuda *l = loop;
  TC_CHECK(lanes >= 1 && lanes <= kMaxLanes && l->lanes == 1, TC_ERR_ARGUMENT,
           "GPU loop: %d batches in flight (1 to %d, set once)", lanes, kMaxLanes);
  if (lanes == 1)
    return TC_SUCCESS;
  TC_CUDA_CALL(cudaEventCreateWithFlags(&l->forked, cudaEventDisableTiming));
  TC_CUDA_CALL(cudaEventCreateWithFlags(&l->computed, cudaEventDisableTiming));
  TC_CUDA_CALL(cudaEventCreateWithFlags(&l->gathered, cudaEventDisableTiming));
  int least = 0, greatest = 0;
  TC_CUDA_CALL(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  TC_CUDA_CALL(cudaStreamCreateWithPriority(&l->gathers, cudaStreamNonBlocking, greatest));
  for (int lane = 1; lane < lanes; ++lane) {
    TC_CUDA_CALL(cudaStreamCreateWithFlags(&l->streams[lane], cudaStreamNonBlocking));
    TC_CUDA_CALL(cudaEventCreateWithFlags(&l->joined[lane], cudaEventDisableTiming));
    TC_CALL(alloc_geometry(l, &l->batches[lane]));
  }
  l->lanes = lanes;
  return TC_SUCCESS;
}

extern "C" int tc_loop_cuda_lanes_to_fill(int64_t batch_cells, int64_t items_per_cell) {
  tc_cuda::device_limits limits = {};
  if (tc_cuda::current_device_limits(&limits) != TC_SUCCESS) {
    tc_error_clear();
    return 1;
  }
  const double items = (double)std::max<int64_t>(batch_cells, 1) * (double)items_per_cell;
  const double wanted = std::ceil(kFillItemsPerSM * limits.sms / items);
  return (int)std::min<double>(std::max(wanted, 1.0), kMostLanesToFill);
}

extern "C" tc_err tc_loop_cuda_begin_batches(tc_loop_cuda *loop) {
  tc_loop_cuda *l = loop;
  l->lane = 0;
  if (l->lanes == 1)
    return TC_SUCCESS;
  TC_CUDA_CALL(cudaEventRecord(l->forked, l->stream));
  for (int lane = 1; lane < l->lanes; ++lane)
    TC_CUDA_CALL(cudaStreamWaitEvent(l->streams[lane], l->forked, 0));
  TC_CUDA_CALL(cudaStreamWaitEvent(l->gathers, l->forked, 0));
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_use_lane(tc_loop_cuda *loop, int lane) {
  TC_CHECK(lane >= 0 && lane < loop->lanes, TC_ERR_ARGUMENT,
           "GPU loop: lane %d of %d batches in flight", lane, loop->lanes);
  loop->lane = lane;
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_end_batches(tc_loop_cuda *loop) {
  tc_loop_cuda *l = loop;
  l->lane = 0;
  if (l->lanes == 1)
    return TC_SUCCESS;
  for (int lane = 1; lane < l->lanes; ++lane) {
    TC_CUDA_CALL(cudaEventRecord(l->joined[lane], l->streams[lane]));
    TC_CUDA_CALL(cudaStreamWaitEvent(l->stream, l->joined[lane], 0));
  }
  TC_CUDA_CALL(cudaEventRecord(l->gathered, l->gathers));
  TC_CUDA_CALL(cudaStreamWaitEvent(l->stream, l->gathered, 0));
  return TC_SUCCESS;
}

extern "C" void *tc_loop_cuda_queue(const tc_loop_cuda *loop) { return lane_stream(loop); }

extern "C" tc_err tc_loop_cuda_zero(tc_loop_cuda *loop) {
  /* The matrices need none: the gather sets each node's rows to zero in the
   * batch of its first cell. */
  for (int which = 0; which < RESULT_COUNT; ++which)
    if (loop->results[which] && !is_matrix_result(which) &&
        (which < RESULT_ELEMENT_MATRICES || which == RESULT_CELL_VOLUME))
      TC_CUDA_CALL(cudaMemsetAsync(loop->results[which], 0,
                                   (size_t)loop->result_counts[which] * sizeof(double),
                                   loop->stream));
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_geometry(tc_loop_cuda *loop, int64_t begin, int64_t cells) {
  tc_loop_cuda *l = loop;
  TC_CHECK(begin >= 0 && cells >= 0 && cells <= l->batch_cells && begin + cells <= l->num_cells &&
               begin % l->batch_cells == 0,
           TC_ERR_ARGUMENT,
           "GPU geometry of cells [%lld, %lld): not a batch of the %lld local cells in batches "
           "of %lld",
           (long long)begin, (long long)(begin + cells), (long long)l->num_cells,
           (long long)l->batch_cells);
  tc_geometry_cuda_batch &current = lane_batch(l);
  current.cells = -1;
  tc_geometry_cuda_batch batch = current;
  batch.cells = cells;
  TC_CALL(tc_geometry_cuda_form(l->coords, tc_assembly_cuda_cell_nodes(l->assembly), begin,
                                &batch, l->results[RESULT_CELL_VOLUME],
                                l->inverted + begin / l->batch_cells, lane_stream(l)));
  current.cells = cells;
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_check_geometry(tc_loop_cuda *loop) {
  tc_loop_cuda *l = loop;
  const size_t bytes = (size_t)l->num_batches * sizeof(int);
  cudaError_t rc = cudaMemcpyAsync(l->inverted_host, l->inverted, bytes, cudaMemcpyDeviceToHost,
                                   l->stream);
  if (rc == cudaSuccess)
    rc = cudaStreamSynchronize(l->stream);
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "reading the GPU geometry's flags failed: %s",
           cudaGetErrorString(rc));
  int64_t first = -1;
  for (int64_t b = 0; b < l->num_batches && first < 0; ++b)
    if (l->inverted_host[b])
      first = b;
  if (first < 0)
    return TC_SUCCESS;
  TC_CUDA_CALL(cudaMemsetAsync(l->inverted, 0, bytes, l->stream));
  for (tc_geometry_cuda_batch &batch : l->batches)
    batch.cells = -1;
  const int64_t begin = first * l->batch_cells;
  TC_FAIL(TC_ERR_INPUT,
          "an inverted or degenerate cell in cells %lld..%lld of this rank: lower "
          "mesh.distortion",
          (long long)begin, (long long)(std::min(begin + l->batch_cells, l->num_cells) - 1));
}

extern "C" tc_err tc_loop_cuda_build_inputs(tc_loop_cuda *loop, int64_t cells, tc_layout layout,
                                            tc_precision precision,
                                            void *const outputs[TC_INPUT_COUNT]) {
  const tc_geometry_cuda_batch *batch = nullptr;
  TC_CALL(formed_batch(loop, cells, "inputs", &batch));
  return tc_physics_cuda_build_inputs(batch, &loop->fields, layout, precision, outputs,
                                      lane_stream(loop));
}

extern "C" tc_err tc_loop_cuda_fused_diffusion(tc_loop_cuda *loop, int64_t cells,
                                               tc_layout layout, tc_precision precision,
                                               const tc_physics_fused_diffusion_outputs *outputs) {
  const tc_geometry_cuda_batch *batch = nullptr;
  TC_CALL(formed_batch(loop, cells, "fused diffusion kernels", &batch));
  return tc_physics_cuda_fused_diffusion(batch, &loop->fields, layout, precision, outputs,
                                         lane_stream(loop));
}

extern "C" tc_err tc_loop_cuda_fused_elasticity(tc_loop_cuda *loop, int64_t cells,
                                                tc_layout layout, tc_precision precision,
                                                const tc_physics_fused_outputs *outputs,
                                                const char **form) {
  const tc_geometry_cuda_batch *batch = nullptr;
  TC_CALL(formed_batch(loop, cells, "fused elasticity", &batch));
  return tc_physics_cuda_fused_elasticity(batch, &loop->fields, layout, precision, outputs,
                                          lane_stream(loop), form);
}

extern "C" tc_err tc_loop_cuda_assemble(tc_loop_cuda *loop, int64_t begin, int64_t cells,
                                        tc_layout layout, tc_precision precision,
                                        void *const outputs[TC_KERNEL_COUNT]) {
  tc_gather gathers[2 * TC_KERNEL_COUNT];
  int count = 0;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!outputs[k])
      continue;
    const tc_kernel kernel = (tc_kernel)k;
    TC_CHECK(loop->results[kernel], TC_ERR_ARGUMENT,
             "GPU assembly of %s: its result was not selected when the GPU loop was created",
             tc_kernel_name(kernel));
    const tc_element_block block = {outputs[k], layout, precision, cells, begin};
    const int components = tc_physics_kernel_components(kernel) == 3 ? 3 : 1;
    const int64_t size = (int64_t)loop->num_fields * components;
    tc_gather &g = gathers[count++];
    g = {TC_GATHER_CELLS, block, components, 1, 1, loop->results[kernel]};
    if (tc_kernel_is_field_field(kernel)) {
      g.kind = TC_GATHER_MATRICES;
      double *kept = loop->results[RESULT_ELEMENT_MATRICES + kernel];
      if (kept)
        gathers[count++] = {TC_GATHER_CELLS, block, components, size, size, kept};
    } else if (tc_kernel_is_data_field(kernel)) {
      g.kind = TC_GATHER_VECTORS;
    }
  }
  if (loop->lanes == 1)
    return tc_assembly_cuda_gather(loop->assembly, count, gathers, loop->stream);
  /* With batches in flight the gathers run in batch order on a stream of
   * their own, so that each entry takes its cells in ascending order; the
   * stream has the device's highest priority, so that the chain of gathers,
   * each of which waits for the one before, takes the multiprocessors that
   * free up ahead of the lanes' queued contractions. The lane waits for its
   * batch's gathers before its next batch overwrites the outputs. */
  const cudaStream_t lane = lane_stream(loop);
  TC_CUDA_CALL(cudaEventRecord(loop->computed, lane));
  TC_CUDA_CALL(cudaStreamWaitEvent(loop->gathers, loop->computed, 0));
  TC_CALL(tc_assembly_cuda_gather(loop->assembly, count, gathers, loop->gathers));
  TC_CUDA_CALL(cudaEventRecord(loop->gathered, loop->gathers));
  TC_CUDA_CALL(cudaStreamWaitEvent(lane, loop->gathered, 0));
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_reduce_rows(tc_loop_cuda *loop) {
  for (const row_reduction &reduction : kRowReductions) {
    double *target = loop->results[reduction.target];
    if (!target)
      continue;
    const int components = tc_physics_kernel_components((tc_kernel)reduction.matrix);
    TC_CALL(tc_assembly_cuda_row_sums_and_diagonal(
        loop->assembly, components, loop->results[reduction.matrix],
        reduction.row_sums ? target : nullptr, reduction.row_sums ? nullptr : target));
  }
  return TC_SUCCESS;
}

extern "C" tc_err tc_loop_cuda_copy_results(tc_loop_cuda *loop, int kinds,
                                            tc_loop_results *host) {
  TC_CHECK(kinds > 0 && (kinds & ~TC_LOOP_CUDA_ALL) == 0, TC_ERR_ARGUMENT,
           "GPU results: unknown kinds %#x to copy", (unsigned)kinds);
  for (int which = 0; which < RESULT_COUNT; ++which) {
    if (!loop->results[which] || !(kinds & result_kind(which)))
      continue;
    double *target = *host_slot(host, which);
    TC_CHECK(target, TC_ERR_ARGUMENT,
             "GPU results: host array %d is NULL but has a device twin", which);
    TC_CUDA_CALL(cudaMemcpyAsync(target, loop->results[which],
                                 (size_t)loop->result_counts[which] * sizeof(double),
                                 cudaMemcpyDeviceToHost, loop->stream));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(loop->stream));
  return TC_SUCCESS;
}

extern "C" int tc_loop_cuda_node_vectors(tc_loop_cuda *loop, double *vectors[], int components[]) {
  constexpr int kNodeVectors[TC_LOOP_CUDA_MAX_NODE_VECTORS] = {
      RESULT_LUMPED_MASS,   RESULT_STIFFNESS_DIAGONAL, RESULT_ELASTICITY_DIAGONAL,
      TC_DATA_FIELD_SCALAR, TC_DATA_FIELD_VECTOR,      TC_DATA_FIELD_TENSOR};
  int count = 0;
  for (int which : kNodeVectors)
    if (loop->results[which] && loop->num_nodes > 0) {
      vectors[count] = loop->results[which];
      components[count++] = (int)(loop->result_counts[which] / loop->num_nodes);
    }
  return count;
}
