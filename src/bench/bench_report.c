/* bench_report: the columns of tcmini-bench's table, defined once and used
 * for both the aligned table and the CSV file. */
#include "bench_report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tc_fault.h"

typedef void (*column_format)(const bench_row *row, bool csv, char *text, size_t capacity);

typedef struct {
  const char *name;
  int width; /* negative: left-aligned */
  column_format format;
} column;

#define DEFINE_TEXT_COLUMN(id, expression)                                     \
  static void format_##id(const bench_row *row, bool csv, char *text, size_t capacity) { \
    (void)csv;                                                                 \
    snprintf(text, capacity, "%s", (expression));                             \
  }
#define DEFINE_INT_COLUMN(id, expression)                                      \
  static void format_##id(const bench_row *row, bool csv, char *text, size_t capacity) { \
    (void)csv;                                                                 \
    snprintf(text, capacity, "%lld", (long long)(expression));                \
  }
/* Numbers: a fixed number of decimals in the table, full precision in CSV. */
#define DEFINE_REAL_COLUMN(id, decimals, known, expression)                    \
  static void format_##id(const bench_row *row, bool csv, char *text, size_t capacity) { \
    if (!(known))                                                              \
      snprintf(text, capacity, "%s", csv ? "" : "-");                          \
    else if (csv)                                                              \
      snprintf(text, capacity, "%.6g", (double)(expression));                  \
    else                                                                       \
      snprintf(text, capacity, "%.*f", (decimals), (double)(expression));      \
  }

DEFINE_TEXT_COLUMN(kernel, tc_kernel_name(row->shape.kernel))
DEFINE_TEXT_COLUMN(preset, row->preset)
DEFINE_TEXT_COLUMN(backend, tc_backend_name(row->backend))
DEFINE_INT_COLUMN(threads, row->threads)
DEFINE_TEXT_COLUMN(variant, tc_variant_name(row->variant))
DEFINE_TEXT_COLUMN(chosen, row->chosen != NULL ? row->chosen : "-")
DEFINE_TEXT_COLUMN(layout, tc_layout_name(row->shape.layout))
DEFINE_TEXT_COLUMN(precision, tc_precision_name(row->shape.precision))
DEFINE_INT_COLUMN(cells, row->shape.num_cells)
DEFINE_INT_COLUMN(left, row->shape.num_left_fields)
DEFINE_INT_COLUMN(right, row->shape.num_right_fields)
DEFINE_INT_COLUMN(points, row->shape.num_points)
DEFINE_INT_COLUMN(data_points, row->shape.num_data_points)
DEFINE_INT_COLUMN(dim1, row->shape.dim1)
DEFINE_INT_COLUMN(dim2, row->shape.dim2)
DEFINE_TEXT_COLUMN(sum_into, row->shape.sum_into ? "yes" : "no")
DEFINE_INT_COLUMN(reps, row->reps)
DEFINE_REAL_COLUMN(median_ms, 3, true, 1e3 * row->median_seconds)
DEFINE_REAL_COLUMN(min_ms, 3, true, 1e3 * row->min_seconds)
DEFINE_REAL_COLUMN(max_ms, 3, true, 1e3 * row->max_seconds)
DEFINE_REAL_COLUMN(gflops, 2, true, row->gflops)
DEFINE_REAL_COLUMN(gbytes, 2, true, row->gbytes)
DEFINE_REAL_COLUMN(roofline_percent, 1, row->has_roofline, row->roofline_percent)
DEFINE_TEXT_COLUMN(bound, !row->has_roofline ? "-" : row->memory_bound ? "mem" : "fma")
DEFINE_REAL_COLUMN(speedup, 2, row->has_speedup, row->speedup)
DEFINE_TEXT_COLUMN(verified, row->verified ? "ok" : "FAIL")

/* The relative error spans many decades: exponent notation. */
static void format_relative_error(const bench_row *row, bool csv, char *text, size_t capacity) {
  snprintf(text, capacity, csv ? "%.3e" : "%.1e", row->relative_error);
}

static const column columns[] = {
    {"kernel", -16, format_kernel},   {"preset", -6, format_preset},
    {"backend", -7, format_backend},  {"thr", 3, format_threads},
    {"variant", -11, format_variant}, {"chosen", -9, format_chosen},
    {"layout", -6, format_layout},
    {"prec", -6, format_precision},   {"C", 8, format_cells},
    {"L", 4, format_left},            {"R", 4, format_right},
    {"P", 4, format_points},          {"Pd", 4, format_data_points},
    {"D1", 2, format_dim1},           {"D2", 2, format_dim2},
    {"sumInto", -7, format_sum_into}, {"reps", 4, format_reps},
    {"median_ms", 10, format_median_ms},
    {"min_ms", 10, format_min_ms},    {"max_ms", 10, format_max_ms},
    {"GFLOP/s", 8, format_gflops},    {"GB/s", 7, format_gbytes},
    {"%roof", 6, format_roofline_percent}, {"bound", -5, format_bound},
    {"speedup", 7, format_speedup},   {"rel_err", 8, format_relative_error},
    {"verified", -8, format_verified},
};
enum { COLUMN_COUNT = sizeof columns / sizeof columns[0] };

void bench_report_table_header(FILE *stream) {
  fprintf(stream,
          "Columns: times are per call (median, min, max of the timed repetitions, each after\n"
          "the cache flush of the method above, if any, the rows of a case timed in turn);\n"
          "GFLOP/s counts 2 flops per\n"
          "multiply-add; GB/s counts compulsory traffic\n"
          "(inputs read once, output written once); %%roof = GFLOP/s over the roofline\n"
          "min(FMA peak, AI x copy bandwidth) measured above for the row's thread count (thr 0:\n"
          "the GPU's), and 'bound' names the smaller term (mem: AI x copy bandwidth, fma: FMA\n"
          "peak); speedup is over the serial backend on the same case; rel_err = ||out - ref|| /\n"
          "||ref|| against the serial reference (over the checked cells). 'chosen' says where the\n"
          "variant came from: asked (named by --variant), rule or tuning (AUTO: the built-in rules\n"
          "or a --tuning file), yardstick (the vendor variant, timed after each FieldField case in\n"
          "layout right: cuBLAS's strided-batched GEMM on cuda, libxsmm on openmp).\n");
  for (int i = 0; i < COLUMN_COUNT; ++i)
    fprintf(stream, "%s%*s", i ? " " : "", columns[i].width, columns[i].name);
  fprintf(stream, "\n");
}

void bench_report_table_row(FILE *stream, const bench_row *row) {
  for (int i = 0; i < COLUMN_COUNT; ++i) {
    char text[64];
    columns[i].format(row, false, text, sizeof text);
    fprintf(stream, "%s%*s", i ? " " : "", columns[i].width, text);
  }
  fprintf(stream, "\n");
  fflush(stream);
}

/* The temporary file bench_report_csv_open writes for path. */
static void csv_temporary(const char *path, char *name, size_t size) {
  snprintf(name, size, "%s.tmp.%ld", path, (long)getpid());
}

tc_err bench_report_csv_open(const char *path, FILE **stream) {
  char temporary[4096];
  csv_temporary(path, temporary, sizeof temporary);
  *stream = fopen(temporary, "w");
  TC_CHECK(*stream != NULL, TC_ERR_IO, "cannot write CSV file '%s': %s", path, strerror(errno));
  (void)tc_fault_track_temporary(temporary); /* a signal removes it (tc_signals) */
  for (int i = 0; i < COLUMN_COUNT; ++i)
    fprintf(*stream, "%s%s", i ? "," : "", columns[i].name);
  fprintf(*stream, "\n");
  return TC_SUCCESS;
}

tc_err bench_report_csv_close(FILE *stream, const char *path, bool keep) {
  char temporary[4096];
  csv_temporary(path, temporary, sizeof temporary);
  int failure = ferror(stream) ? (errno ? errno : EIO) : 0;
  if (fclose(stream) != 0 && failure == 0)
    failure = errno;
  if (keep && failure == 0 && rename(temporary, path) != 0)
    failure = errno;
  if (!keep || failure != 0)
    remove(temporary);
  tc_fault_untrack_temporary(temporary);
  TC_CHECK(!keep || failure == 0, TC_ERR_IO, "cannot write CSV file '%s': %s", path,
           strerror(failure));
  return TC_SUCCESS;
}

void bench_report_csv_row(FILE *stream, const bench_row *row) {
  for (int i = 0; i < COLUMN_COUNT; ++i) {
    char text[64];
    columns[i].format(row, true, text, sizeof text);
    fprintf(stream, "%s%s", i ? "," : "", text);
  }
  fprintf(stream, "\n");
}
