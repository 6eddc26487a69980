/* tc_loop_impl: the body of a tc_loop, shared by the loop (tc_loop.c) and
 * its step backends (tc_loop_backend_*.c). Private to src/loop. */
#ifndef TC_LOOP_IMPL_H
#define TC_LOOP_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_loop.h"
#include "tc_physics.h"
#include "tc_physics_fused.h"

struct tc_loop_backend;
struct tc_loop_clock;

struct tc_loop {
  const tc_config *config;
  const tc_mesh *mesh;
  const tc_mesh_local *local;
  tc_device *device;
  const tc_contract_backend *contract;
  const struct tc_loop_backend *backend;
  tc_timers *timers; ///< where tc_loop_create times the set-up phases
  void *state; ///< the step backend's own (tc_loop_backend.h)
  struct tc_loop_clock *clock; ///< the phase times of a step (tc_loop_clock.h)
  tc_layout layout;
  tc_precision precision;
  int64_t num_fields, num_points, batch_cells, num_batches;
  char batch_rule[256]; ///< how batch_cells was chosen (tc_loop_batch_rule)
  tc_assembly *assembly;
  tc_loop_results results;
  tc_variant variants[TC_KERNEL_COUNT]; /* resolved once, run for every batch */
  tc_choice choices[TC_KERNEL_COUNT];   /* where each came from (tc_contract_choose) */
  bool fused[TC_KERNEL_COUNT]; ///< runs in a fused product (run.inputs = fused)
  bool probed[TC_KERNEL_COUNT]; ///< AUTO by the rules has run once (tc_contract's probe)
  bool fused_diffusion, fused_elasticity; ///< which fused products run (some kernel of each)
  const char *fused_form; ///< the fused product's form, in words (NULL: not run yet)
  double kernel_flops[TC_KERNEL_COUNT];
  /// The step's batches recorded on the device (run.graph) and replayed by
  /// every step since; the clock's marks it made and the flops it counts.
  struct tc_device_recording *recording;
  int recorded_marks[2];
  double recorded_flops[TC_KERNEL_COUNT];
  int record_failures;
  char replay_note[512]; ///< how a step runs its batches (tc_loop_replay_note)
  /// The shared-node exchange that ran, as run.exchange names it, and why
  /// auto fell back (tc_loop_exchange_name; set by the step backend's
  /// exchange; "" before the first).
  char exchange_name[16], exchange_why[512];
  /// Reference basis (F,P), (F,P,3) and quadrature weights (P), host, double.
  double *ref_values, *ref_gradients, *weights;
  /// Batches in flight (run.in_flight as resolved; 1 but on GPUs) and how
  /// that number was chosen.
  int in_flight;
  char in_flight_rule[160];
  /// The contraction inputs and outputs of a batch, in the device's memory:
  /// one set a batch in flight, and the current batch's.
  bool input_needed[TC_INPUT_COUNT];
  void *lane_inputs[TC_CONFIG_MAX_IN_FLIGHT][TC_INPUT_COUNT];
  void *lane_outputs[TC_CONFIG_MAX_IN_FLIGHT][TC_KERNEL_COUNT];
  void *input_device[TC_INPUT_COUNT];
  void *output_device[TC_KERNEL_COUNT];
};

/// Host memory of count doubles, zeroed and first-touched by the threads
/// that will use it (tc_loop.c).
tc_err tc_loop_alloc_host(tc_loop *loop, double **array, int64_t count);

/// Touches memory page by page with the OpenMP threads that will use it,
/// timed as the first_touch phase into loop->timers.
tc_err tc_loop_first_touch(tc_loop *loop, void *memory, size_t bytes);

/// The outputs of the kernels that run fused, NULL for the others: the
/// elasticity trio's and the scalar problem's six.
tc_physics_fused_outputs tc_loop_fused_outputs(const tc_loop *loop);
tc_physics_fused_diffusion_outputs tc_loop_fused_diffusion_outputs(const tc_loop *loop);

#endif
