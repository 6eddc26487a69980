/* tc_timers: host wall-clock timers for the phases of a run, declared once
 * in an X-macro list (so the enum and the names cannot drift), and their
 * min/avg/max over ranks. */
#ifndef TC_TIMERS_H
#define TC_TIMERS_H

#include <mpi.h>
#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// The phases: PHASE(ID, "name") for the steps of a run, KERNEL(ID) for the
/// nine contractions, ID being the tc_kernel enumerator without its TC_
/// prefix and the name tc_kernel_name's.
#define TC_PHASE_LIST(PHASE, KERNEL)                                           \
  PHASE(MESH, "mesh")                                                          \
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
  PHASE(FUSED_ELASTICITY, "fused_elasticity")                                  \
  PHASE(ASSEMBLE, "assemble")                                                  \
  PHASE(EXCHANGE, "exchange")                                                  \
  PHASE(CHECKS, "checks")                                                      \
  PHASE(OUTPUT, "output")                                                      \
  PHASE(TOTAL, "total")

#define TC_PHASE_ENUMERATOR_(id, ...) TC_PHASE_##id,
/// One timed phase: TC_PHASE_MESH, ..., TC_PHASE_FIELD_FIELD_SCALAR, ..., TC_PHASE_TOTAL.
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

/// Starts timing phase (TC_ERR_INTERNAL if it is already running).
tc_err tc_timer_start(tc_timers *timers, tc_phase phase);

/// Stops timing phase and adds the interval to its total (TC_ERR_INTERNAL
/// if it is not running).
tc_err tc_timer_stop(tc_timers *timers, tc_phase phase);

/// Adds seconds measured elsewhere (e.g. by tc_device_timer) to phase's total,
/// counting one interval.
tc_err tc_timer_add(tc_timers *timers, tc_phase phase, double seconds);

/// Total seconds accumulated by phase (intervals still running not included).
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

#endif
