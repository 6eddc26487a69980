/* tc_timers: host wall-clock timers for the phases of a run, declared once
 * in an X-macro list (so the enum and the names cannot drift), and their
 * min/avg/max over ranks. Every second of a run belongs to one phase: a
 * phase started while another runs takes its time out of the outer one
 * until it stops (exclusive time), so that the phases other than "total"
 * add up to "total". */
#ifndef TC_TIMERS_H
#define TC_TIMERS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// The phases, in the order a run meets them: PHASE(ID, "name") for the
/// steps of a run, KERNEL(ID) for the nine contractions, ID being the
/// tc_kernel enumerator without its TC_ prefix and the name tc_kernel_name's.
///   startup:     MPI start, the deck read and validated, the report opened
///   device:      the rank's device opened (a GPU's context), the memory check
///   roofline:    the device's copy bandwidth and FMA peak measured
///   mesh:        the rank's part of the mesh built
///   setup:       the loop's set-up: CSR structures, basis, batch buffers
///                allocated, variants resolved
///   upload:      the step backend's own state: on a GPU the mesh, basis and
///                CSR structures allocated and copied to the device, and
///                (peer exchange) the neighbours' buffers mapped
///   first_touch: host memory touched page by page by the threads that use it
///   record:      on GPUs, the first step's batches recorded as a CUDA graph
///                and prepared for replay (host time; the GPU waits)
///   batches:     on GPUs with batches in flight (run.in_flight > 1), the
///                geometry ... assemble of a step's batches, which overlap,
///                timed together
///   geometry ... exchange: the assembly steps
///   wait:        a rank waiting for the others where the ranks agree on the
///                outcome of a step (load imbalance)
///   copy_back:   the assembled matrices brought to the host (GPU)
///   checks, output: the checks and the results file
///   total:       the whole run, from the program's start until the phase
///                times are final (before the report is written)
#define TC_PHASE_LIST(PHASE, KERNEL)                                           \
  PHASE(STARTUP, "startup")                                                    \
  PHASE(DEVICE, "device")                                                      \
  PHASE(ROOFLINE, "roofline")                                                  \
  PHASE(MESH, "mesh")                                                          \
  PHASE(SETUP, "setup")                                                        \
  PHASE(UPLOAD, "upload")                                                      \
  PHASE(FIRST_TOUCH, "first_touch")                                            \
  PHASE(RECORD, "record")                                                      \
  PHASE(BATCHES, "batches")                                                    \
  PHASE(GEOMETRY, "geometry")                                                  \
  PHASE(BASIS, "basis")                                                        \
  KERNEL(FIELD_FIELD_SCALAR)                                                   \
  KERNEL(FIELD_FIELD_VECTOR)                                                   \
  KERNEL(FIELD_FIELD_TENSOR)                                                   \
  KERNEL(DATA_FIELD_SCALAR)                                                    \
  KERNEL(DATA_FIELD_VECTOR)                                                    \
  KERNEL(DATA_FIELD_TENSOR)                                                    \
  KERNEL(DATA_DATA_SCALAR)                                                     \
  KERNEL(DATA_DATA_VECTOR)                                                     \
  KERNEL(DATA_DATA_TENSOR)                                                     \
  PHASE(FUSED_DIFFUSION, "fused_diffusion")                                    \
  PHASE(FUSED_ELASTICITY, "fused_elasticity")                                  \
  PHASE(ASSEMBLE, "assemble")                                                  \
  PHASE(EXCHANGE, "exchange")                                                  \
  PHASE(WAIT, "wait")                                                          \
  PHASE(COPY_BACK, "copy_back")                                                \
  PHASE(CHECKS, "checks")                                                      \
  PHASE(OUTPUT, "output")                                                      \
  PHASE(TOTAL, "total")

#define TC_PHASE_ENUMERATOR_(id, ...) TC_PHASE_##id,
/// One timed phase: TC_PHASE_STARTUP, ..., TC_PHASE_FIELD_FIELD_SCALAR, ..., TC_PHASE_TOTAL.
typedef enum {
  TC_PHASE_LIST(TC_PHASE_ENUMERATOR_, TC_PHASE_ENUMERATOR_)
  TC_PHASE_COUNT
} tc_phase;
#undef TC_PHASE_ENUMERATOR_

/// The phase's name: "mesh", "FieldFieldScalar", ..., "total"; "unknown"
/// for a bad value.
const char *tc_phase_name(tc_phase phase);

/// The phase that times a contraction kernel.
tc_phase tc_phase_of_kernel(tc_kernel kernel);

/// Seconds on a monotonic host clock (clock_gettime(CLOCK_MONOTONIC)), from
/// an arbitrary origin.
double tc_wall_seconds(void);

/// Accumulating timers, one per phase, for one rank.
typedef struct tc_timers tc_timers;

/// Creates the timers, every phase at zero and stopped. Not collective.
tc_err tc_timers_create(tc_timers **timers);

/// Releases the timers and sets *timers to NULL. NULL is fine.
void tc_timers_destroy(tc_timers **timers);

/// Starts timing phase (TC_ERR_INTERNAL if it is already running). Phases
/// nest: starting one while another (other than TC_PHASE_TOTAL) runs pauses
/// the other until this one stops, so no second is counted twice.
/// TC_PHASE_TOTAL runs beside the others and is never paused.
tc_err tc_timer_start(tc_timers *timers, tc_phase phase);

/// Stops timing phase and adds the interval to its total, then resumes the
/// phase it paused, if any (TC_ERR_INTERNAL if phase is not running or a
/// phase started inside it still runs).
tc_err tc_timer_stop(tc_timers *timers, tc_phase phase);

/// Adds seconds measured elsewhere (e.g. by tc_device_timer) to phase's total,
/// counting one interval. Nothing is taken out of a running phase: the
/// caller keeps such seconds out of the phases it times itself.
tc_err tc_timer_add(tc_timers *timers, tc_phase phase, double seconds);

/// Total seconds accumulated by phase (a running interval counts up to where
/// it was last paused).
double tc_timer_seconds(const tc_timers *timers, tc_phase phase);

/// Intervals accumulated by phase.
int64_t tc_timer_count(const tc_timers *timers, tc_phase phase);

/// One phase's total seconds over the ranks of a communicator.
typedef struct {
  double min, avg, max; ///< seconds
  int64_t count;         ///< intervals timed, the most on any rank
} tc_phase_stats;

/// Reduces every phase's total over comm: stats[p] for p < TC_PHASE_COUNT,
/// the same on every rank. Collective on comm.
tc_err tc_timers_reduce(MPI_Comm comm, const tc_timers *timers,
                        tc_phase_stats stats[TC_PHASE_COUNT]);

/// Sum of the seconds of every phase except TC_PHASE_TOTAL, over stats from
/// tc_timers_reduce: avg (the mean rank's accounted seconds) when average
/// is true, else max. With every second of a run in one phase this is the
/// total's avg (or about its max).
double tc_phase_stats_accounted(const tc_phase_stats stats[TC_PHASE_COUNT], bool average);

#endif
