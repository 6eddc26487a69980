/* bench_measure: how tcmini-bench measures one case: in every asked-for
 * layout, on every backend of the plan, each row (a variant, AUTO resolved
 * through the tuning file or the rules, and the vendor yardstick) is run
 * once on an output poisoned with NaN and checked against the serial
 * reference, warmed up, then timed in turn with the other rows of the case
 * (one run of each per round, each after a cache flush), and reported with
 * its median and roofline fraction. Also the state of a benchmark run that
 * the measurement reads and adds to (bench_run). */
#ifndef BENCH_MEASURE_H
#define BENCH_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench_case.h"
#include "bench_flush.h"
#include "bench_options.h"
#include "bench_plan.h"
#include "bench_report.h"
#include "bench_tune.h"
#include "tc_replay.h"
#include "tc_tuning.h"

/// The state of one benchmark run.
typedef struct {
  const bench_options *options;
  bench_plan plan; /* the backends and thread counts, with their rooflines */
  size_t flush_bytes;
  bench_flush *host_flush; /* shared by the CPU backends */
  FILE *csv;
  int rows, failures, skipped;
  tc_tuning *tuning;      /* --tuning: AUTO's entries (NULL: the rules) */
  bench_tuner *tuner;     /* --tune: the measurements */
  char tuned_device[256]; /* --tune: the model of the device measured */
  bench_row *captured;    /* the rows of the case being run (--sweep, --tune) */
  int num_captured, captured_capacity;
  tc_replay_source replay_source; /* --replay: the file and group */
  bench_case replay;              /* --replay: the case read from it */
  bool replay_output_unused;      /* its group holds an "output" that --sum-into would add to */
} bench_run;

/* Where every row's result of a replay goes (--replay-output): the results
 * file, and an output-sized buffer for the row in logical row-major order. */
typedef struct {
  tc_replay_writer *writer;
  void *output;
} bench_row_capture;

/// Measures case c (its rows named preset in the table) in every layout of
/// the run's options on every backend of its plan; the rows go to the table,
/// the CSV, run->captured (--sweep, --tune) and capture (NULL: not kept).
tc_err bench_measure_case(bench_run *run, const bench_case *c, const char *preset,
                          bench_row_capture *capture);

#endif
