/* tc_loop_backend: the backend seam of the assembly loop, one table of the
 * phases of a step per kind of device, chosen once from the rank's device
 * when the loop is created (as tc_contract_backend and tc_device_ops are):
 * the host table (serial and OpenMP backends, tc_loop_backend_host.c) and
 * the CUDA table (tc_loop_backend_cuda.c). tc_loop_step calls through it and
 * never asks which backend runs. Private to src/loop. */
#ifndef TC_LOOP_BACKEND_H
#define TC_LOOP_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "tc_loop_impl.h"

typedef struct tc_loop_backend {
  const char *name;
  /// Bytes the batch arrays (inputs, outputs, geometry) of a rank may take
  /// when run.batch_cells = 0: the loop sizes its workset from it.
  tc_err (*batch_budget)(const tc_loop *loop, double *bytes);
  /// Sets up the backend's state (loop->state) once the loop's common part
  /// (results, batch inputs and outputs, assembly, basis) exists.
  tc_err (*create)(tc_loop *loop);
  /// What needs every rank's state: on GPUs whose exchange copies peer to
  /// peer, each neighbour's buffers mapped (tc_loop_connect). Collective.
  tc_err (*connect)(tc_loop *loop);
  /// Releases loop->state. Safe after a failed create.
  void (*destroy)(tc_loop *loop);
  /// Batches in flight for run.in_flight = 0 (the loop's choice), batches
  /// of loop->batch_cells cells: as many as fill the device (1 on CPUs,
  /// which run one batch at a time); `why` gets the rule, for the report.
  int (*in_flight)(const tc_loop *loop, char *why, size_t size);
  /// Zeroes what a step accumulates into.
  tc_err (*begin_step)(tc_loop *loop);
  /// A step's batches start, and (end_batches) have all been queued: with
  /// batches in flight the lanes fork from and join back into the device's
  /// queue. use_lane makes `lane` (batch b goes on lane b % in_flight) the
  /// one the next batch's phases are queued on; queue is its stream, for
  /// the contractions.
  tc_err (*begin_batches)(tc_loop *loop);
  tc_err (*use_lane)(tc_loop *loop, int lane);
  tc_err (*end_batches)(tc_loop *loop);
  void *(*queue)(const tc_loop *loop);
  /// Geometry of cells [begin, begin + cells), and their volumes. May
  /// return before an inverted cell is known (check_geometry reports it).
  tc_err (*geometry)(tc_loop *loop, int64_t begin, int64_t cells);
  /// After a step's batches: TC_ERR_INPUT naming the cells of the first
  /// batch with an inverted or degenerate cell that geometry did not report.
  tc_err (*check_geometry)(tc_loop *loop);
  /// Every contraction input the selected kernels read, for the batch whose
  /// geometry was formed last, into loop->input_device. Like every phase of
  /// a batch, it may return before the device has finished it.
  tc_err (*inputs)(tc_loop *loop, int64_t cells);
  /// The kernels of loop->fused, their inputs built on chip
  /// (tc_physics_fused.h), into their outputs (loop->output_device): the
  /// scalar problem's six (fused_diffusion) and the elasticity trio
  /// (fused_elasticity, which sets loop->fused_form to the form of the
  /// product that ran).
  tc_err (*fused_diffusion)(tc_loop *loop, int64_t cells);
  tc_err (*fused_elasticity)(tc_loop *loop, int64_t cells);
  /// Every selected kernel's output of the batch (loop->output_device)
  /// gathered into the assembled results, after the batch before's.
  tc_err (*assemble)(tc_loop *loop, int64_t begin, int64_t cells);
  /// Row sums and diagonals of the assembled matrices, after the last batch.
  tc_err (*reduce_rows)(tc_loop *loop);
  /// The node vectors summed over the ranks that share their nodes (on the
  /// host or, on a GPU, where they are). Collective.
  tc_err (*exchange)(tc_loop *loop);
  /// The node and cell vectors on the host, and with `matrices` the
  /// assembled matrices (and element matrices) too.
  tc_err (*copy_results)(tc_loop *loop, bool matrices);
} tc_loop_backend;

extern const tc_loop_backend tc_loop_backend_host;
extern const tc_loop_backend tc_loop_backend_cuda;

/// The host backend's budget of a rank's batch arrays, in bytes, for a rank
/// of `threads` threads: a quarter of the cache per core beyond L1
/// (bench_machine_cache_estimate), times the threads. tc_memory's estimate
/// uses it too.
double tc_loop_host_batch_bytes(int threads);

#endif
