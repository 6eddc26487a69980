/* tc_loop: the element-assembly loop of one rank. Per step and per batch of
 * cells: geometry and basis at quadrature points, the contraction inputs,
 * the selected contractions on the rank's device, gather-assemble into CSR
 * matrices and node/cell vectors; then the shared nodes are summed across
 * ranks. */
#ifndef TC_LOOP_H
#define TC_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_assembly.h"
#include "tc_config.h"
#include "tc_device.h"
#include "tc_mesh.h"
#include "tc_timers.h"
#include "tc_tuning.h"

/// What one step assembles, rank-local (host memory, double). Node vectors
/// are [num_nodes][components] with shared nodes already summed over ranks;
/// matrices hold this rank's cells only (CSR of tc_assembly). Arrays of kernels
/// that were not selected are NULL. On the CUDA backend the arrays reach the
/// host through tc_loop_finish (the matrices, mass, stiffness, elasticity and
/// element_matrices, only when it is asked for them).
typedef struct {
  double *mass;                 ///< FieldFieldScalar, CSR (1 component)
  double *stiffness;            ///< FieldFieldVector, CSR (1 component)
  double *elasticity;           ///< FieldFieldTensor, CSR (3 components)
  double *lumped_mass;          ///< row sums of the mass matrix, per node
  double *stiffness_diagonal;   ///< per node
  double *elasticity_diagonal;  ///< per node, 3 components
  double *load;                 ///< DataFieldScalar: int u_h phi_a, per node
  double *flux_load;            ///< DataFieldVector: int grad u . grad phi_a, per node
  double *internal_force;       ///< DataFieldTensor: int sigma(w_h) : eps(phi_a e_i), per node, 3 components
  double *cell_volume;          ///< per cell: sum of the weighted measures (always)
  double *cell_u2;              ///< DataDataScalar: int u_h^2 per cell
  double *cell_grad_u2;         ///< DataDataVector: int |grad u_h|^2 per cell
  double *cell_stress_strain;   ///< DataDataTensor: int sigma(w_h):eps(w_h) per cell
  double *element_matrices[3];  ///< FieldField outputs per cell, [cells][N][N] (only with output.element_matrices)
} tc_loop_results;

typedef struct tc_loop tc_loop;

/// Sets up the loop: the CSR structures, the quadrature and basis, and the
/// batch buffers on the device (cells per batch: run.batch_cells, else as
/// many as fit the step backend's budget of batch arrays: on CPUs sized for
/// the caches, on GPUs from the memory), and the variant of each kernel
/// (run.variant; for auto, tuning's entry where it has one, NULL: none, else
/// the backend's rules), kept for every batch. tuning is not kept. The
/// set-up is timed into timers as the phases setup, upload (the step
/// backend's own state: on a GPU the copies to the device) and first_touch.
/// Not collective.
tc_err tc_loop_create(const tc_config *config, const tc_mesh *mesh, tc_device *device,
                      const tc_tuning *tuning, tc_timers *timers, tc_loop **loop);
void tc_loop_destroy(tc_loop **loop);

/// The loop's set-up that needs every rank's loop, timed as the upload
/// phase: on GPUs whose exchange copies node values peer to peer
/// (run.exchange = peer or auto), each neighbour's buffers mapped and the
/// route agreed. Call once, after every rank created its loop and the ranks
/// agreed on that, before the first step (which does it otherwise).
/// Collective on the mesh's communicator.
tc_err tc_loop_connect(tc_loop *loop, tc_timers *timers);

/// Runs one assembly step (all batches, then the shared-node sums), timing
/// each phase into timers (the zeroing of the assembled arrays into
/// assemble, the ranks' agreement on the outcome into wait). Collective on
/// the mesh's communicator.
tc_err tc_loop_step(tc_loop *loop, tc_timers *timers);

/// Brings the results of the last step to the host: on the CUDA backend a
/// step leaves them on the device (only the node vectors that the host
/// exchange sums come back, where ranks share nodes), so call this once after
/// the last step wherever results are read (the checks, the output): the node
/// and cell vectors, and with `matrices` the CSR values and element matrices
/// too (the checks, the element-matrix output). The copy is timed into the
/// copy_back phase. Nothing to do on the CPU backends or when the host is
/// current. Not collective.
tc_err tc_loop_finish(tc_loop *loop, tc_timers *timers, bool matrices);

/// The results of the last step (on the CUDA backend, as of tc_loop_finish).
const tc_loop_results *tc_loop_get_results(const tc_loop *loop);
const tc_assembly *tc_loop_assembly(const tc_loop *loop);
/// Cells per batch, and batches per step.
int64_t tc_loop_batch_cells(const tc_loop *loop);
int64_t tc_loop_num_batches(const tc_loop *loop);
/// How the cells per batch were chosen: "run.batch_cells", or the
/// backend's rule (e.g. the CPU's cache per core), for the report.
const char *tc_loop_batch_rule(const tc_loop *loop);
/// How a step runs its batches: from the host, or (GPUs, run.graph) as one
/// CUDA graph recorded once; where recording failed, why. For the report.
const char *tc_loop_replay_note(const tc_loop *loop);
/// The shared-node exchange the steps ran, as run.exchange names it (host,
/// device, gpu-aware, peer, or peer+device where some pairs of ranks copy
/// and others send; run.exchange as resolved before tc_loop_connect), and
/// in *why (may be NULL) why auto sent messages between some pair ("" where
/// none did). For the report.
const char *tc_loop_exchange_name(const tc_loop *loop, const char **why);
/// Quadrature points per cell and scalar fields per cell.
int64_t tc_loop_num_points(const tc_loop *loop);
int64_t tc_loop_num_fields(const tc_loop *loop);
/// The variant each selected kernel runs (as resolved by the backend; after
/// the first step, the one AUTO's first-call probe kept, where it probed).
tc_variant tc_loop_variant(const tc_loop *loop, tc_kernel kernel);
/// True if the kernel runs in a fused product (run.inputs = fused: the fused
/// diffusion kernels or the fused elasticity) rather than as a contraction of
/// materialised inputs.
bool tc_loop_kernel_fused(const tc_loop *loop, tc_kernel kernel);
/// The form of the fused elasticity product the last batch ran, in words
/// (tc_physics_fused.h; NULL where no kernel runs fused or none has run).
const char *tc_loop_fused_form(const tc_loop *loop);
/// Where that variant came from: asked (run.variant), rule, tuning or probe.
tc_choice tc_loop_variant_choice(const tc_loop *loop, tc_kernel kernel);
/// Floating-point operations of a kernel's contractions on this rank, summed over
/// the steps run so far (the phase times are summed the same way).
double tc_loop_kernel_flops(const tc_loop *loop, tc_kernel kernel);

#endif
