/* tc_loop_model: the performance model of the assembly loop, in one place.
 * Per phase of a step and per cell: the compulsory bytes (what must cross
 * memory when the contraction inputs are materialised, as Intrepid does:
 * every array a phase reads read once, every array it writes written once)
 * and the flops (2 per multiply-add), tabulated in docs/performance.md; the
 * ceilings of the rank's device (copy bandwidth, FMA peak), measured once
 * per run; and the report's roofline rows that hold each phase against them. */
#ifndef TC_LOOP_MODEL_H
#define TC_LOOP_MODEL_H

#include <stdint.h>

#include "tc_loop.h"
#include "tc_report.h"
#include "tc_timers.h"

/// Bytes and flops of one cell in one step.
typedef struct {
  double bytes; ///< compulsory traffic
  double flops; ///< floating-point operations
} tc_loop_cost;

/// The model's cost of one cell and step in phase, for this loop's element,
/// quadrature, selected kernels and precision (the same in both layouts):
/// geometry, basis (the contraction inputs), each selected kernel's phase,
/// fused_elasticity (the kernels that run fused, run.inputs = fused, their
/// inputs never stored) and assemble; {0, 0} for the phases outside the
/// model.
tc_loop_cost tc_loop_model_cost(const tc_loop *loop, tc_phase phase);

/// The ceilings of one rank's device, or why they were not measured.
typedef struct {
  bool measured;
  double copy_bytes_per_second;                    ///< bytes read + written per second
  double fma_flops_per_second[TC_PRECISION_COUNT]; ///< FMA peak per precision
  char note[128];                                  ///< why not measured
} tc_loop_ceilings;

/// Measures the ceilings of this rank's device once, briefly: on a CPU
/// (serial, OpenMP) STREAM copy over arrays twice the rank's share of the
/// last-level cache (its size over ranks_on_node) and the FMA peak on the
/// device's threads (bench_roofline_brief); on a GPU the device's copy
/// bandwidth and FMA peak (bench_roofline_measure_cuda). The ranks of a node
/// should measure together, so that each gets its share of what they share
/// (memory bandwidth, and the cache their arrays together overflow). A CPU
/// rank does not measure when ranks_on_node times its threads exceed the
/// node's processors (each would find a core it does not own): measured =
/// false, with a note. Not collective.
tc_err tc_loop_measure_ceilings(const tc_device *device, int ranks_on_node,
                                tc_loop_ceilings *ceilings);

/// The report's roofline of the loop after `steps` steps: a row per modelled
/// phase that ran (every rank's bytes and flops over the phase's slowest
/// time, from stats) and a row "loop" for the whole step (over loop_seconds,
/// the steps' wall time on the slowest rank); ceilings: mine summed over the
/// ranks when every rank measured, else measured = false with rank 0's note
/// (mine NULL: run.roofline = false). rows holds up to TC_PHASE_COUNT + 1
/// rows. Collective on the mesh's communicator.
tc_err tc_loop_roofline(const tc_loop *loop, const tc_phase_stats stats[TC_PHASE_COUNT],
                        double loop_seconds, int64_t steps, const tc_loop_ceilings *mine,
                        tc_report_ceilings *ceilings, tc_report_roofline_row *rows,
                        int *count);

#endif
