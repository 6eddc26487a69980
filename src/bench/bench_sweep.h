/* bench_sweep: tcmini-bench --sweep, the generalisation check: random
 * FieldField shapes drawn from a seed, and the distribution of AUTO's time
 * over a reference's across them (layout right: the vendor variant's;
 * layout left: AUTO's in layout right on the same shape), with the worst
 * shape and the command that reruns it. */
#ifndef BENCH_SWEEP_H
#define BENCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tc_contract.h"

/// The ranges the shapes are drawn from (uniform integers, inclusive).
enum {
  BENCH_SWEEP_MIN_FIELDS = 4,
  BENCH_SWEEP_MAX_FIELDS = 130,
  BENCH_SWEEP_MAX_POINTS = 343,
  BENCH_SWEEP_MAX_DIM = 3
};

/// The index-th shape of the sweep of seed: FieldFieldScalar, Vector or
/// Tensor (equally likely), L and R uniform in [4, 130], P in [1, 343], D1
/// (Vector, Tensor) and D2 (Tensor) in [1, 3]; C so that inputs and output
/// take about memory_mb MiB; the layout and precision given, no sum_into. A
/// seed and index give the same shape whatever the sweep's length.
void bench_sweep_shape(uint64_t seed, int64_t index, tc_layout layout, tc_precision precision,
                       int64_t memory_mb, tc_contraction *shape);

/// One shape's outcome: AUTO's median time and variant in the shape's
/// layout, and the reference's median: in layout right the vendor variant,
/// in layout left AUTO in layout right.
typedef struct {
  tc_contraction shape;
  tc_variant auto_variant;
  const char *chosen;        ///< where AUTO's variant came from (rule, tuning)
  double auto_seconds, reference_seconds; ///< 0: not measured
  bool verified;             ///< both rows verified
} bench_sweep_result;

/// Prints the distribution of auto_seconds / reference_seconds over the
/// results that have both (min, 10th percentile, median, 90th percentile,
/// max, geometric mean, how many above 1 and above 1.05), and the worst shape
/// with the tcmini-bench command that reruns it; layout: the results' (right:
/// AUTO against the vendor, left: layout left against layout right).
/// backend_options: the --backend (and --threads) part of that command.
void bench_sweep_print_summary(FILE *out, const bench_sweep_result *results, int64_t count,
                               tc_layout layout, uint64_t seed, const char *backend_options);

#endif
