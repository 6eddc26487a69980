/* tc_loop_cuda: the assembly loop's per-batch work on the GPU, the state
 * behind the loop's CUDA step backend. The mesh arrays, basis tables and CSR
 * structures are copied to the device once; geometry (tc_geometry_cuda), the
 * contraction inputs (tc_physics_cuda) and the deterministic gather-assemble
 * (tc_assembly_cuda) run on the device's stream (or, with batches in
 * flight, on a stream a batch), and the row sums and diagonals of the
 * assembled matrices on the device's stream; results come back to the host only
 * when asked for: the node and cell vectors every step (shared-node
 * exchange), the matrices once (checks, output). Plain C interface;
 * without the CUDA backend in the build every call fails with
 * TC_ERR_UNSUPPORTED. */
#ifndef TC_LOOP_CUDA_H
#define TC_LOOP_CUDA_H

#include <stdint.h>

#include "tc_build.h"

#include "tc_assembly.h"
#include "tc_contract.h"
#include "tc_loop.h"
#include "tc_mesh.h"
#include "tc_physics.h"
#include "tc_physics_fused.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_loop_cuda tc_loop_cuda;

/// Node vectors of a loop (tc_loop_cuda_node_vectors).
enum { TC_LOOP_CUDA_MAX_NODE_VECTORS = 6 };

/// The device results tc_loop_cuda_copy_results copies back (flags).
typedef enum {
  /// Node vectors (lumped mass and diagonals included): a few doubles a node.
  TC_LOOP_CUDA_NODE_VECTORS = 1,
  /// CSR values and element matrices: the bulk (about 2.4 KB per Q1 node).
  TC_LOOP_CUDA_MATRICES = 2,
  /// Cell arrays (volumes and the cell integrals): a few doubles a cell.
  TC_LOOP_CUDA_CELL_VECTORS = 4,
  TC_LOOP_CUDA_VECTORS = TC_LOOP_CUDA_NODE_VECTORS | TC_LOOP_CUDA_CELL_VECTORS,
  TC_LOOP_CUDA_ALL = TC_LOOP_CUDA_VECTORS | TC_LOOP_CUDA_MATRICES,
} tc_loop_cuda_results;

#if TCMINI_HAVE_CUDA

/// Copies the rank-local mesh (coordinates, cell->node connectivity, the
/// node->cell CSR with slots), the reference basis (ref_values (F,P),
/// ref_gradients (F,P,3), weights (P), host, double, F = nodes_per_cell) and
/// the CSR structures and link positions of assembly (built on the mesh's
/// topology) to the device, and allocates the geometry scratch of a
/// batch of batch_cells cells. `selected` is the loop's host results: a
/// device twin is allocated for each non-NULL array among mass, stiffness,
/// elasticity, lumped_mass, stiffness_diagonal, elasticity_diagonal, load,
/// flux_load, internal_force, cell_volume, cell_u2, cell_grad_u2,
/// cell_stress_strain and element_matrices (TC_ERR_ARGUMENT when lumped_mass
/// or a diagonal is selected without its matrix). stream is the
/// cudaStream_t every later call queues its work on (tc_device_stream).
/// Synchronous. Not collective.
tc_err tc_loop_cuda_create(const tc_mesh_local *mesh, int64_t batch_cells, int64_t num_points,
                           const double *ref_values, const double *ref_gradients,
                           const double *weights, const tc_physics_fields *fields,
                           const tc_assembly *assembly, const tc_loop_results *selected,
                           void *stream, tc_loop_cuda **loop);

/// Releases the device memory and sets *loop to NULL. NULL is fine.
void tc_loop_cuda_destroy(tc_loop_cuda **loop);

/// Batches in flight (lanes): the loop's batches b = 0, 1, ... of a step run
/// on lane b % lanes, each lane a stream of its own with its own geometry
/// scratch (lane 0 is the loop's stream; the contraction inputs and outputs
/// are the caller's, one set a lane), so that the small kernels of several
/// batches overlap. The gathers of the batches stay in batch order
/// (tc_loop_cuda_assemble), so the results are bitwise those of one lane. Makes lanes - 1 more streams and scratch sets (lanes in 1..8; 1:
/// everything on the loop's stream, as before the call). Synchronous.
tc_err tc_loop_cuda_set_lanes(tc_loop_cuda *loop, int lanes);

/// Batches in flight that fill the current GPU when each has batch_cells
/// cells of items_per_cell work items (cells x fields x points: the
/// parallelism of the inputs and the FieldField contractions): enough
/// batches for 131,072 items a multiprocessor, 1 to 4.
int tc_loop_cuda_lanes_to_fill(int64_t batch_cells, int64_t items_per_cell);

/// Starts a step's batches: every lane waits for what the loop's stream
/// holds so far (the zeroing), and lane 0 is current. Asynchronous.
tc_err tc_loop_cuda_begin_batches(tc_loop_cuda *loop);

/// Makes `lane` current: the geometry, inputs, fused product, gathers (and
/// the contractions, queued by the caller on tc_loop_cuda_queue) of the
/// next batch go on its stream, after the lane's previous batch.
tc_err tc_loop_cuda_use_lane(tc_loop_cuda *loop, int lane);

/// Ends a step's batches: the loop's stream waits for every lane, and lane
/// 0 is current again. Asynchronous.
tc_err tc_loop_cuda_end_batches(tc_loop_cuda *loop);

/// The current lane's stream (a cudaStream_t).
void *tc_loop_cuda_queue(const tc_loop_cuda *loop);

/// Zeroes every device result a step accumulates into but the matrices
/// (the gather zeroes a node's rows in the batch of its first cell); the
/// element matrices, the lumped mass and the diagonals are overwritten.
/// Asynchronous.
tc_err tc_loop_cuda_zero(tc_loop_cuda *loop);

/// Geometry of cells [begin, begin + cells) (a batch: begin a multiple of
/// batch_cells, cells <= batch_cells): gathers
/// their node coordinates, forms Jacobians, determinants, inverses and the
/// weighted measures w_q det J into the device scratch, and the cell volumes
/// (sum of the measures, ascending q) into the cell_volume twin.
/// Asynchronous: whether some det J <= 0 (or is not a number) is known at
/// tc_loop_cuda_check_geometry.
tc_err tc_loop_cuda_geometry(tc_loop_cuda *loop, int64_t begin, int64_t cells);

/// Waits for the geometry of every batch formed since the last check:
/// TC_ERR_INPUT "an inverted or degenerate cell in cells A..B of this rank:
/// lower mesh.distortion" naming the first batch that has one (and inputs
/// are then refused until the next geometry). Each batch has its own flag on
/// the device, set by its geometry and cleared here, so that the geometry
/// leaves nothing on the host to redo when its launches are replayed.
tc_err tc_loop_cuda_check_geometry(tc_loop_cuda *loop);

/// Writes the contraction inputs of the batch whose geometry was formed
/// last (cells must be that batch's count) in one launch: input i into
/// outputs[i] (device memory of tc_physics_input_count(i, cells, F, P)
/// elements; NULL: not built), in the layout and precision given: the same
/// logical arrays tc_physics_build_input writes on the host, computed in
/// double and rounded once. Asynchronous.
tc_err tc_loop_cuda_build_inputs(tc_loop_cuda *loop, int64_t cells, tc_layout layout,
                                 tc_precision precision, void *const outputs[TC_INPUT_COUNT]);

/// The scalar problem's six kernels of the batch whose geometry was formed
/// last (cells must be that batch's count), their inputs built on chip
/// (tc_physics_cuda_fused_diffusion), into the device outputs given.
/// Asynchronous.
tc_err tc_loop_cuda_fused_diffusion(tc_loop_cuda *loop, int64_t cells, tc_layout layout,
                                    tc_precision precision,
                                    const tc_physics_fused_diffusion_outputs *outputs);

/// The elasticity trio of the batch whose geometry was formed last (cells
/// must be that batch's count), its inputs built on chip
/// (tc_physics_cuda_fused_elasticity), into the device outputs given; form
/// (may be NULL) gets the form of the product that ran, in words.
/// Asynchronous.
tc_err tc_loop_cuda_fused_elasticity(tc_loop_cuda *loop, int64_t cells, tc_layout layout,
                                     tc_precision precision,
                                     const tc_physics_fused_outputs *outputs, const char **form);

/// Gather-assembles the contraction outputs of cells [begin, begin + cells)
/// (outputs[k]: kernel k's, device memory, in the layout and precision of the
/// contraction, batch size cells; NULL: not gathered) into the kernels'
/// device twins, in one launch (tc_assembly_cuda_gather): FieldField element
/// matrices into the CSR values (and copied into the element-matrix twin
/// when there is one), DataField element vectors into the node vectors,
/// DataData values into the cell arrays. Each entry sums its cells in
/// ascending order, as tc_assembly_add_* does, so the results are bitwise
/// those of the host and of every other run; with batches in flight the
/// launch waits for the batch before's. TC_ERR_ARGUMENT when a kernel given
/// had no twin at create. Asynchronous.
tc_err tc_loop_cuda_assemble(tc_loop_cuda *loop, int64_t begin, int64_t cells, tc_layout layout,
                             tc_precision precision, void *const outputs[TC_KERNEL_COUNT]);

/// Row sums of the mass twin into the lumped_mass twin, and the diagonals
/// of the stiffness and elasticity twins into their diagonal twins (those
/// that exist), [num_nodes][components]. One thread per CSR row adds the
/// row's entries in ascending order, as tc_assembly_row_sums_and_diagonal
/// does, so the results are bitwise those of the host on the same values.
/// Call it after a step's last tc_loop_cuda_assemble. Asynchronous.
tc_err tc_loop_cuda_reduce_rows(tc_loop_cuda *loop);

/// Copies the device twins of the kinds in `kinds` (tc_loop_cuda_results
/// flags) into the same arrays of host, each of which must be non-NULL;
/// the other host arrays are left alone. Synchronous.
tc_err tc_loop_cuda_copy_results(tc_loop_cuda *loop, int kinds, tc_loop_results *host);

/// The device twins of the node vectors that exist (lumped mass, stiffness
/// and elasticity diagonals, load, flux load, internal force), each
/// [num_nodes][components[i]], for the shared-node exchange on the GPU.
/// Returns how many were written (at most TC_LOOP_CUDA_MAX_NODE_VECTORS).
int tc_loop_cuda_node_vectors(tc_loop_cuda *loop, double *vectors[], int components[]);

#else /* no CUDA backend in this build: the calls exist and refuse */

#define TC_LOOP_CUDA_UNSUPPORTED_                                              \
  tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,             \
                 "the GPU assembly loop is not in this build (configure with " \
                 "-DTCMINI_ENABLE_CUDA=ON)")

static inline tc_err tc_loop_cuda_create(const tc_mesh_local *mesh, int64_t batch_cells,
                                         int64_t num_points, const double *ref_values,
                                         const double *ref_gradients, const double *weights,
                                         const tc_physics_fields *fields,
                                         const tc_assembly *assembly,
                                         const tc_loop_results *selected, void *stream,
                                         tc_loop_cuda **loop) {
  (void)mesh, (void)batch_cells, (void)num_points, (void)ref_values, (void)ref_gradients;
  (void)weights, (void)fields, (void)assembly, (void)selected;
  (void)stream;
  *loop = NULL;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline void tc_loop_cuda_destroy(tc_loop_cuda **loop) { *loop = NULL; }
static inline tc_err tc_loop_cuda_set_lanes(tc_loop_cuda *loop, int lanes) {
  (void)loop, (void)lanes;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline int tc_loop_cuda_lanes_to_fill(int64_t batch_cells, int64_t items_per_cell) {
  (void)batch_cells, (void)items_per_cell;
  return 1;
}
static inline tc_err tc_loop_cuda_begin_batches(tc_loop_cuda *loop) {
  (void)loop;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_use_lane(tc_loop_cuda *loop, int lane) {
  (void)loop, (void)lane;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_end_batches(tc_loop_cuda *loop) {
  (void)loop;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline void *tc_loop_cuda_queue(const tc_loop_cuda *loop) {
  (void)loop;
  return NULL;
}
static inline tc_err tc_loop_cuda_zero(tc_loop_cuda *loop) {
  (void)loop;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_geometry(tc_loop_cuda *loop, int64_t begin, int64_t cells) {
  (void)loop, (void)begin, (void)cells;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_check_geometry(tc_loop_cuda *loop) {
  (void)loop;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_build_inputs(tc_loop_cuda *loop, int64_t cells,
                                               tc_layout layout, tc_precision precision,
                                               void *const outputs[TC_INPUT_COUNT]) {
  (void)loop, (void)cells, (void)layout, (void)precision, (void)outputs;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_fused_diffusion(
    tc_loop_cuda *loop, int64_t cells, tc_layout layout, tc_precision precision,
    const tc_physics_fused_diffusion_outputs *outputs) {
  (void)loop, (void)cells, (void)layout, (void)precision, (void)outputs;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_fused_elasticity(tc_loop_cuda *loop, int64_t cells,
                                                   tc_layout layout, tc_precision precision,
                                                   const tc_physics_fused_outputs *outputs,
                                                   const char **form) {
  (void)loop, (void)cells, (void)layout, (void)precision, (void)outputs, (void)form;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_assemble(tc_loop_cuda *loop, int64_t begin, int64_t cells,
                                           tc_layout layout, tc_precision precision,
                                           void *const outputs[TC_KERNEL_COUNT]) {
  (void)loop, (void)begin, (void)cells, (void)layout, (void)precision, (void)outputs;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_reduce_rows(tc_loop_cuda *loop) {
  (void)loop;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_loop_cuda_copy_results(tc_loop_cuda *loop, int kinds,
                                               tc_loop_results *host) {
  (void)loop, (void)kinds, (void)host;
  return TC_LOOP_CUDA_UNSUPPORTED_;
}
static inline int tc_loop_cuda_node_vectors(tc_loop_cuda *loop, double *vectors[],
                                            int components[]) {
  (void)loop, (void)vectors, (void)components;
  return 0;
}

#endif

#ifdef __cplusplus
}
#endif

#endif
