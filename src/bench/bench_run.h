/* bench_run: tcmini-bench's whole run, for a driver that has parsed the
 * options: the replay's and written files' checks (before anything is
 * measured), the plan of backends and their rooflines, the tuning file, then
 * the rows of the mode the options name (presets, --shapes, --deck,
 * --sweep, --replay), the tuning file of --tune and the results of
 * --replay-output. */
#ifndef BENCH_RUN_H
#define BENCH_RUN_H

#include "bench_measure.h"

/// Runs the benchmark run->options describe (run otherwise zeroed): prints
/// program (e.g. "tcmini-bench 0.2.19 (git abc1234)", which a tuning file
/// also names) with the compiler, the machine, the method and the rooflines,
/// then the table; counts rows, failures and skipped pairs in run. Frees
/// what it allocated. Rank 0 only.
tc_err bench_run_benchmark(bench_run *run, const char *program);

#endif
