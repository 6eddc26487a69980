/* bench_report: the result table of tcmini-bench, printed for people and
 * written as CSV, both from one column list. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "tc_contract.h"
#include "tc_error.h"

/// One measured case on one backend with one variant.
typedef struct {
  tc_contraction shape;
  const char *preset;        ///< "p8", ..., "custom", "replay"
  tc_backend_kind backend;
  int threads;               ///< OpenMP threads (1 serial, 0 CUDA)
  tc_variant variant;        ///< as resolved
  const char *chosen;        ///< where the variant came from: "asked", "rule", "tuning"
                             ///< (tc_choice_name), or "yardstick" for the vendor row added
                             ///< after the asked-for variants
  int reps;                  ///< timed runs (fewer than asked when --row-time-limit stopped them)
  double median_seconds, min_seconds, max_seconds;
  double gflops;             ///< tc_contraction_flops / median, 1e9 flop/s
  double gbytes;             ///< tc_contraction_bytes / median, 1e9 byte/s
  bool has_roofline;         ///< a roofline was measured for this backend and thread count
  double roofline_percent;   ///< achieved flop/s over min(peak, AI * copy bandwidth)
  bool memory_bound;         ///< AI * copy bandwidth is the smaller roof
  bool has_speedup;          ///< the serial row of the same case was measured
  double speedup;            ///< serial median / this median
  double relative_error;     ///< against the serial reference
  double tolerance;
  bool verified;             ///< relative_error <= tolerance
} bench_row;

/// Prints the column legend and header line of the table.
void bench_report_table_header(FILE *stream);
/// Prints one row of the table.
void bench_report_table_row(FILE *stream, const bench_row *row);

/// Opens a temporary file beside path ("path.tmp.PID") and writes the CSV
/// header; bench_report_csv_close puts it in place. TC_ERR_IO, naming path
/// and the reason, if it cannot (the caller checks path itself first:
/// tc_file_check_writable).
tc_err bench_report_csv_open(const char *path, FILE **stream);
/// Writes one row as CSV (full precision, no padding).
void bench_report_csv_row(FILE *stream, const bench_row *row);
/// Closes the stream of bench_report_csv_open(path) and, when keep is set,
/// renames its file to path (replacing a file there); otherwise, or when the
/// writes failed, removes it, so that a failed run leaves an existing CSV
/// file as it was. TC_ERR_IO if the file could not be written (keep set).
tc_err bench_report_csv_close(FILE *stream, const char *path, bool keep);

#endif
