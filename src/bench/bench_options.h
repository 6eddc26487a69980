/* bench_options: tcmini-bench's command line (one option table generates the
 * parsing, the defaults and --help) and the shape presets. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tc_contract.h"
#include "tc_error.h"

#define BENCH_MAX_THREAD_COUNTS 8
/// Most shapes --shapes and --deck may name.
#define BENCH_MAX_SHAPES 256

/// Named shapes: L, R (F = L for DataField), P; the cell count comes from
/// --memory unless the preset fixes it (small) or --cells is given.
typedef enum {
  BENCH_PRESET_SMALL,
  BENCH_PRESET_P8,
  BENCH_PRESET_P27,
  BENCH_PRESET_P64,
  BENCH_PRESET_P125,
  BENCH_PRESET_COUNT
} bench_preset;

/// "small", "p8", ... ; the explicit shape of --left/--right/--points is "custom".
const char *bench_preset_name(int preset);

/// Everything tcmini-bench was asked to do. Text fields point into argv or at
/// the option table's defaults.
typedef struct {
  /* Values exactly as the option table stores them. */
  const char *kernel_text, *backend_text, *variant_text, *layout_text, *precision_text;
  const char *preset_text, *threads_text, *data_points_text;
  const char *csv_path, *replay_path, *replay_output_path;
  const char *replay_group; ///< --replay-group: the group of the replay file ("/": the root)
  const char *shapes_text;  ///< --shapes: explicit shapes "LxRxP,..." (NULL: none)
  const char *deck_path;    ///< --deck: the shapes of a tcmini deck (NULL: none)
  const char *tune_path;    ///< --tune: write a tuning file there (NULL: no tuning)
  const char *tuning_path;  ///< --tuning: AUTO rows read this tuning file (NULL: the rules)
  const char *tuning_on_error_text; ///< --tuning-on-error: fail or rules
  int64_t cells, left_fields, right_fields, points, dim1, dim2, memory_mb, reps, warmup;
  int64_t row_time_limit; ///< seconds; 0: no limit
  int64_t check_cells;    ///< cells verified per case, spread over it; 0: every cell
  int64_t sweep;          ///< --sweep N: N random FieldField shapes (0: no sweep)
  int64_t seed;           ///< --seed of the sweep's shapes
  bool sum_into, help;
  bool no_yardstick; ///< skip the vendor rows (cuBLAS on cuda, libxsmm on openmp)
  bool no_probe;     ///< AUTO by the rules alone (tc_contract_set_probe(false))
  bool tuning_fallback; ///< --tuning-on-error rules: warn and use the rules
  bool version; ///< --version: print the version and build facts and exit
  bool overwrite;    ///< --overwrite: --replay-output may replace an existing file
  bool no_roofline;  ///< --no-roofline: no roofline measurement, no %roof column
  bool no_flush;     ///< --no-flush: no cache flush before the timed runs
  uint64_t given; ///< bit i: option i of the table was on the command line

  /* The lists above, parsed. */
  int num_kernels;
  tc_kernel kernels[TC_KERNEL_COUNT];
  bool kernel_named; ///< --kernel was given (replay then ignores the file's attribute)
  bool precision_named; ///< --precision was given (replay then checks it against the file's)
  int num_backends;
  tc_backend_kind backends[TC_BACKEND_COUNT];
  bool all_variants; ///< --variant all: every variant each backend supports on the shape
  int num_variants;
  tc_variant variants[TC_VARIANT_COUNT];
  int num_layouts;
  tc_layout layouts[TC_LAYOUT_COUNT];
  int num_precisions;
  tc_precision precisions[TC_PRECISION_COUNT];
  int num_presets; ///< 0 with an explicit shape (--left ...)
  bench_preset presets[BENCH_PRESET_COUNT];
  int num_thread_counts; ///< OpenMP thread counts; 0 means the runtime's default
  int thread_counts[BENCH_MAX_THREAD_COUNTS];
  bool one_data_point; ///< --data-points 1
  int num_shapes;       ///< --shapes / --deck: how many explicit shapes
  tc_contraction shapes[BENCH_MAX_SHAPES]; ///< their sizes (C, layout, precision set per case)
} bench_options;

/// Parses argv into *options (defaults first, from the option table).
/// TC_ERR_INPUT with a one-line message naming the option on a bad command line.
tc_err bench_options_parse(int argc, char **argv, bench_options *options);

/// Writes --help: usage, every option with its default, the presets.
void bench_options_print_help(FILE *stream);

/// The shapes to run for one kernel and precision: one per preset, or the
/// explicit shape. *count gets how many were written (at most
/// BENCH_PRESET_COUNT); preset_of[i] names each (-1 for an explicit shape).
/// Cell counts come from --cells, a preset's fixed count, or --memory
/// (inputs + output about that many MB). Layout RIGHT, sum_into from options.
/// With --shapes or --deck, use bench_options_listed_shapes instead.
tc_err bench_options_shapes(const bench_options *options, tc_kernel kernel, tc_precision precision,
                            tc_contraction shapes[BENCH_PRESET_COUNT],
                            int preset_of[BENCH_PRESET_COUNT], int *count);

/// The index-th shape of --shapes or --deck in precision: its kernel and
/// sizes, C from --cells or --memory, layout RIGHT, sum_into from options.
tc_err bench_options_listed_shape(const bench_options *options, int index,
                                  tc_precision precision, tc_contraction *shape);

/// Whether --layout names layout.
bool bench_options_has_layout(const bench_options *options, tc_layout layout);

/// Cells of shape (its C ignored) whose inputs and output take about
/// memory_mb MiB (at least 1).
int64_t bench_cells_for_memory(const tc_contraction *shape, int64_t memory_mb);

#endif
