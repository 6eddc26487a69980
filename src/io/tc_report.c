/* tc_report: collects the run report on every rank (device descriptions on
 * rank 0), writes it as YAML (temporary file, then rename) and prints the
 * human summary. Build facts come from compile definitions set in deck.cmake. */
#define _POSIX_C_SOURCE 200809L
#include "tc_report.h"

#include "tc_build.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tc_file_paths.h"
#include "tc_git_revision.h"
#include "tc_parallel.h"

#ifndef TCMINI_VERSION
#define TCMINI_VERSION "unknown"
#endif
#ifndef TCMINI_COMPILER
#define TCMINI_COMPILER "unknown"
#endif
#ifndef TCMINI_C_FLAGS
#define TCMINI_C_FLAGS "unknown"
#endif
#ifndef TCMINI_BUILD_TYPE
#define TCMINI_BUILD_TYPE "unknown"
#endif

enum { NAME_MAX_CHARS = 128, UNIT_MAX_CHARS = 32, DEVICE_MAX_CHARS = 256, WARNING_MAX_CHARS = 384 };

typedef struct {
  char name[NAME_MAX_CHARS];
  double value;
  char unit[UNIT_MAX_CHARS];
} figure;

enum { NOTE_MAX_CHARS = 256 };

typedef struct {
  char name[NAME_MAX_CHARS];
  double value, reference, scale, tolerance;
  bool passed;
  bool skipped;
  char note[NOTE_MAX_CHARS]; ///< why it was skipped
} check;

typedef struct {
  char name[NAME_MAX_CHARS];
  char units[UNIT_MAX_CHARS];
  int64_t count;
  double sum, sum_abs, norm, min, max;
} result;

struct tc_report {
  MPI_Comm comm;
  int rank, ranks;
  char started[32]; ///< UTC, ISO 8601
  bool have_run;
  bool have_workset, workset_chosen;
  char workset_rule[256]; ///< how the loop sized its workset
  char replay[512];       ///< how the steps ran their batches ("": not known)
  char fused_form[160];   ///< the fused elasticity's form ("": none ran)
  char exchange[16];      ///< the shared-node exchange that ran ("": run.exchange's)
  char exchange_why[512]; ///< why run.exchange = auto sent messages between some pair
  int64_t workset_cells, workset_batches;
  tc_config config;
  char *deck;       ///< the effective deck text
  int threads;
  int cores_min, cores_max; ///< CPU cores a rank may run on, over ranks (0: not recorded)
  char warning[WARNING_MAX_CHARS]; ///< "" or why the run's figures may mislead
  char *devices;    ///< rank 0: [ranks][DEVICE_MAX_CHARS] descriptions
  bool variant_known[TC_KERNEL_COUNT];
  tc_variant variants[TC_KERNEL_COUNT];
  bool choice_known[TC_KERNEL_COUNT];
  tc_choice choices[TC_KERNEL_COUNT]; ///< where each variant came from
  char tuning_file[TC_CONFIG_STRING_MAX]; ///< run.tuning ("" before tc_report_set_tuning)
  bool tuning_used;
  char results_file[TC_CONFIG_STRING_MAX + 16]; ///< "" before tc_report_set_results_file
  char variants_text[TC_KERNEL_COUNT * 48]; ///< see tc_report_variants_text
  bool have_times;
  tc_phase_stats times[TC_PHASE_COUNT];
  figure *figures;
  int num_figures;
  check *checks;
  int num_checks;
  result *results;
  int num_results;
  tc_report_ceilings ceilings;
  tc_report_roofline_row *roofline; ///< NULL before tc_report_set_roofline
  int num_roofline;
};

tc_err tc_report_create(MPI_Comm comm, tc_report **report) {
  *report = NULL;
  tc_report *created;
  TC_CALLOC(created, 1);
  created->comm = comm;
  created->rank = tc_rank(comm);
  created->ranks = tc_size(comm);
  time_t now = time(NULL);
  struct tm utc;
  if (now == (time_t)-1 || !gmtime_r(&now, &utc) ||
      strftime(created->started, sizeof created->started, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
    snprintf(created->started, sizeof created->started, "unknown");
  *report = created;
  return TC_SUCCESS;
}

void tc_report_destroy(tc_report **report) {
  if (!*report)
    return;
  free((*report)->deck);
  free((*report)->devices);
  free((*report)->figures);
  free((*report)->checks);
  free((*report)->results);
  free((*report)->roofline);
  free(*report);
  *report = NULL;
}

tc_err tc_report_set_run(tc_report *report, const tc_config *config, int threads,
                         const char *device_description) {
  char *deck = NULL, *devices = NULL;
  char mine[DEVICE_MAX_CHARS] = {0};
  snprintf(mine, sizeof mine, "%s", device_description ? device_description : "unknown");
  tc_err err = tc_config_deck_string(config, &deck);
  if (err == TC_SUCCESS && report->rank == 0) {
    devices = calloc((size_t)report->ranks, DEVICE_MAX_CHARS);
    if (!devices)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory for %d device descriptions", report->ranks);
  }
  err = tc_parallel_agree(report->comm, err);
  if (err == TC_SUCCESS)
    err = tc_gather(report->comm, mine, DEVICE_MAX_CHARS, devices, 0);
  if (err != TC_SUCCESS) {
    free(deck);
    free(devices);
    return err;
  }
  free(report->deck);
  free(report->devices);
  report->deck = deck;
  report->devices = devices;
  report->config = *config;
  report->threads = threads;
  report->have_run = true;
  return TC_SUCCESS;
}

void tc_report_set_replay(tc_report *report, const char *note) {
  snprintf(report->replay, sizeof report->replay, "%s", note ? note : "");
}

void tc_report_set_exchange(tc_report *report, const char *name, const char *why) {
  snprintf(report->exchange, sizeof report->exchange, "%s", name ? name : "");
  snprintf(report->exchange_why, sizeof report->exchange_why, "%s", why ? why : "");
}

void tc_report_set_fused_form(tc_report *report, const char *form) {
  snprintf(report->fused_form, sizeof report->fused_form, "%s", form ? form : "");
}

tc_err tc_report_set_workset(tc_report *report, int64_t batch_cells, int64_t batches,
                             bool chosen, const char *rule) {
  report->have_workset = true;
  report->workset_cells = batch_cells;
  report->workset_batches = batches;
  report->workset_chosen = chosen;
  snprintf(report->workset_rule, sizeof report->workset_rule, "%s", rule ? rule : "");
  return TC_SUCCESS;
}

tc_err tc_report_set_cores(tc_report *report, int cores, FILE *warnings) {
  int *all = NULL;
  tc_err err = TC_SUCCESS;
  if (report->rank == 0) {
    all = calloc((size_t)report->ranks, sizeof *all);
    if (!all)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory for %d core counts", report->ranks);
  }
  err = tc_parallel_agree(report->comm, err);
  if (err == TC_SUCCESS)
    err = tc_gather(report->comm, &cores, (int)sizeof cores, all, 0);
  int fewest_rank = 0, counts[3] = {cores, cores, 0}; /* min, max, rank with the min */
  if (err == TC_SUCCESS && report->rank == 0) {
    for (int r = 0; r < report->ranks; r++) {
      if (all[r] < counts[0])
        counts[0] = all[r], fewest_rank = r;
      if (all[r] > counts[1])
        counts[1] = all[r];
    }
    counts[2] = fewest_rank;
  }
  free(all);
  if (err == TC_SUCCESS)
    err = tc_broadcast(report->comm, counts, (int64_t)sizeof counts, 0);
  TC_CALL(err);
  report->cores_min = counts[0];
  report->cores_max = counts[1];
  report->warning[0] = '\0';
  if (report->threads > report->cores_min) {
    snprintf(report->warning, sizeof report->warning,
             "%d OpenMP threads per rank, but rank %d may run on %d core%s only (its CPU "
             "affinity, e.g. mpirun's binding): threads share cores. Give each rank as many "
             "cores as threads (Open MPI: mpirun --map-by slot:PE=%d, or --bind-to none)",
             report->threads, counts[2], report->cores_min, report->cores_min == 1 ? "" : "s",
             report->threads);
    if (warnings && report->rank == 0)
      fprintf(warnings, "tcmini: warning: %s\n", report->warning);
  }
  return TC_SUCCESS;
}

tc_err tc_report_set_variant(tc_report *report, tc_kernel kernel, tc_variant variant) {
  TC_CHECK((int)kernel >= 0 && kernel < TC_KERNEL_COUNT, TC_ERR_ARGUMENT, "unknown kernel %d",
           (int)kernel);
  report->variant_known[kernel] = true;
  report->variants[kernel] = variant;
  size_t used = 0;
  report->variants_text[0] = '\0';
  for (int k = 0; k < TC_KERNEL_COUNT; k++)
    if (report->variant_known[k] && used < sizeof report->variants_text)
      used += (size_t)snprintf(report->variants_text + used, sizeof report->variants_text - used,
                               "%s%s: %s", used ? ", " : "", tc_kernel_name((tc_kernel)k),
                               tc_variant_name(report->variants[k]));
  return TC_SUCCESS;
}

tc_err tc_report_set_variant_choice(tc_report *report, tc_kernel kernel, tc_choice choice) {
  TC_CHECK((int)kernel >= 0 && kernel < TC_KERNEL_COUNT, TC_ERR_ARGUMENT, "unknown kernel %d",
           (int)kernel);
  report->choice_known[kernel] = true;
  report->choices[kernel] = choice;
  return TC_SUCCESS;
}

tc_err tc_report_set_results_file(tc_report *report, const char *path) {
  TC_CHECK(strlen(path) < sizeof report->results_file, TC_ERR_ARGUMENT,
           "results file path '%s' is too long", path);
  snprintf(report->results_file, sizeof report->results_file, "%s", path);
  return TC_SUCCESS;
}

void tc_report_set_tuning(tc_report *report, const char *file, bool used) {
  snprintf(report->tuning_file, sizeof report->tuning_file, "%s", file);
  report->tuning_used = used;
}

const char *tc_report_variants_text(const tc_report *report) { return report->variants_text; }

const char *tc_report_version(void) { return TCMINI_VERSION; }

const char *tc_report_git_revision(void) { return TCMINI_GIT_REVISION; }

/// Names of the backends compiled in, e.g. "serial, openmp".
static void backends_text(char *text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int b = 0; b < TC_BACKEND_COUNT; b++)
    if (tc_contract_backend_get((tc_backend_kind)b) && used < size)
      used += (size_t)snprintf(text + used, size - used, "%s%s", used ? ", " : "",
                               tc_backend_name((tc_backend_kind)b));
}

void tc_report_print_build(FILE *stream) {
  char backends[64];
  backends_text(backends, sizeof backends);
  fprintf(stream,
          "tcmini %s (git %s)\ncompiler: %s (%s)\nbuild type: %s\nC flags: %s\n"
          "backends: %s\nhdf5: %s\n",
          TCMINI_VERSION, TCMINI_GIT_REVISION, TCMINI_COMPILER, __VERSION__, TCMINI_BUILD_TYPE,
          TCMINI_C_FLAGS, backends, TCMINI_HAVE_HDF5 ? "yes" : "no");
}

void tc_report_set_times(tc_report *report, const tc_phase_stats stats[TC_PHASE_COUNT]) {
  memcpy(report->times, stats, sizeof report->times);
  report->have_times = true;
}

/// Copies text into a fixed field, failing when it does not fit.
static tc_err copy_text(char *field, size_t size, const char *text, const char *what) {
  TC_CHECK(text && strlen(text) < size, TC_ERR_ARGUMENT, "%s '%s' is missing or longer than %zu",
           what, text ? text : "(null)", size - 1);
  memcpy(field, text, strlen(text) + 1);
  return TC_SUCCESS;
}

tc_err tc_report_set_roofline(tc_report *report, const tc_report_ceilings *ceilings,
                              const tc_report_roofline_row *rows, int count) {
  TC_CHECK(count >= 0 && (count == 0 || rows), TC_ERR_ARGUMENT, "%d roofline rows", count);
  tc_report_roofline_row *copy = NULL;
  if (count > 0) {
    TC_CALLOC(copy, count);
    memcpy(copy, rows, (size_t)count * sizeof *copy);
  }
  free(report->roofline);
  report->roofline = copy;
  report->num_roofline = count;
  report->ceilings = *ceilings;
  return TC_SUCCESS;
}

/// A rate's share of a ceiling, or NaN without one.
static double fraction_of(double rate, double ceiling) {
  return ceiling > 0 ? rate / ceiling : NAN;
}

tc_err tc_report_add_figure(tc_report *report, const char *name, double value,
                            const char *unit) {
  figure added = {0};
  TC_CALL(copy_text(added.name, sizeof added.name, name, "figure name"));
  TC_CALL(copy_text(added.unit, sizeof added.unit, unit, "figure unit"));
  added.value = value;
  figure *grown = realloc(report->figures, (size_t)(report->num_figures + 1) * sizeof *grown);
  TC_CHECK(grown, TC_ERR_MEMORY, "out of memory adding figure '%s'", name);
  report->figures = grown;
  report->figures[report->num_figures++] = added;
  return TC_SUCCESS;
}

tc_err tc_report_add_check(tc_report *report, const char *name, double value,
                           double reference, double tolerance, bool passed,
                           const char *skipped_note, double scale) {
  check added = {0};
  TC_CALL(copy_text(added.name, sizeof added.name, name, "check name"));
  if (skipped_note)
    TC_CALL(copy_text(added.note, sizeof added.note, skipped_note, "check note"));
  added.value = value;
  added.reference = reference;
  added.scale = scale;
  added.tolerance = tolerance;
  added.skipped = skipped_note != NULL;
  added.passed = passed && !added.skipped;
  check *grown = realloc(report->checks, (size_t)(report->num_checks + 1) * sizeof *grown);
  TC_CHECK(grown, TC_ERR_MEMORY, "out of memory adding check '%s'", name);
  report->checks = grown;
  report->checks[report->num_checks++] = added;
  return TC_SUCCESS;
}

tc_err tc_report_add_result(tc_report *report, const char *name, const char *units,
                            int64_t count, double sum, double sum_abs, double norm, double min,
                            double max) {
  result added = {.count = count, .sum = sum, .sum_abs = sum_abs, .norm = norm, .min = min,
                  .max = max};
  TC_CALL(copy_text(added.name, sizeof added.name, name, "result name"));
  TC_CALL(copy_text(added.units, sizeof added.units, units, "result units"));
  result *grown = realloc(report->results, (size_t)(report->num_results + 1) * sizeof *grown);
  TC_CHECK(grown, TC_ERR_MEMORY, "out of memory adding result '%s'", name);
  report->results = grown;
  report->results[report->num_results++] = added;
  return TC_SUCCESS;
}

tc_err tc_report_verdict(const tc_report *report) {
  char failed[512] = "";
  size_t used = 0;
  int num_failed = 0;
  for (int i = 0; i < report->num_checks; i++) {
    if (report->checks[i].passed || report->checks[i].skipped)
      continue;
    if (used < sizeof failed)
      used += (size_t)snprintf(failed + used, sizeof failed - used, "%s%s",
                               num_failed ? ", " : "", report->checks[i].name);
    num_failed++;
  }
  int ran = 0;
  for (int i = 0; i < report->num_checks; i++)
    ran += !report->checks[i].skipped;
  char where[2 * TC_CONFIG_STRING_MAX + 64] = "";
  if (report->results_file[0] && report->have_run &&
      strcmp(report->results_file, report->config.path) != 0)
    snprintf(where, sizeof where, "; the results are in '%s', not output.path '%s'",
             report->results_file, report->config.path);
  TC_CHECK(num_failed == 0, TC_ERR_VERIFY, "%d of %d checks failed: %s%s", num_failed, ran, failed,
           where);
  return TC_SUCCESS;
}

static const char *verdict_name(const tc_report *report) {
  int ran = 0;
  for (int i = 0; i < report->num_checks; i++) {
    if (report->checks[i].skipped)
      continue;
    if (!report->checks[i].passed)
      return "failed";
    ran++;
  }
  return ran ? "passed" : "not checked";
}

/* ---- YAML ---- */

/// Writes text as a YAML double-quoted scalar.
static void yaml_string(FILE *out, const char *text) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c == '\n')
      fputs("\\n", out);
    else if (*c == '\t')
      fputs("\\t", out);
    else if (*c < 0x20 || *c == 0x7f)
      fprintf(out, "\\x%02x", *c);
    else
      fputc(*c, out);
  }
  fputc('"', out);
}

/// Writes value so that YAML 1.1 and 1.2 readers both take it as the same
/// float: round-trip digits, always with a '.' (PyYAML reads "1e-09" as a
/// string).
static void yaml_double(FILE *out, double value) {
  if (isnan(value)) {
    fputs(".nan", out);
    return;
  }
  if (isinf(value)) {
    fputs(value > 0 ? ".inf" : "-.inf", out);
    return;
  }
  char text[TC_CONFIG_DOUBLE_CHARS];
  tc_config_format_double(value, text);
  char *exponent = strchr(text, 'e');
  if (strchr(text, '.'))
    fputs(text, out);
  else if (exponent)
    fprintf(out, "%.*s.0%s", (int)(exponent - text), text, exponent);
  else
    fprintf(out, "%s.0", text);
}

static void yaml_key_string(FILE *out, const char *indent, const char *key, const char *value) {
  fprintf(out, "%s%s: ", indent, key);
  yaml_string(out, value);
  fputc('\n', out);
}

/// Writes the deck as a literal block (indentation given explicitly, so any
/// line content reads back unchanged).
static void yaml_block(FILE *out, const char *key, const char *text) {
  fprintf(out, "%s: |2\n", key);
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    if (length > 0)
      fprintf(out, "  %.*s\n", (int)length, line);
    else
      fputc('\n', out);
    line += length + (end ? 1 : 0);
  }
}

/// Peak resident host memory of this process in MiB (0 where unknown).
static double peak_host_memory_mib(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0.0;
  return (double)usage.ru_maxrss / 1024.0; /* Linux counts kibibytes */
}

/// memory_mib: min and max over ranks of the peak host memory.
static void write_yaml(const tc_report *report, const double memory_mib[2], FILE *out) {
  fputs("# tcmini run report\nformat: 1\nbuild:\n", out);
  yaml_key_string(out, "  ", "version", TCMINI_VERSION);
  yaml_key_string(out, "  ", "git_revision", TCMINI_GIT_REVISION);
  yaml_key_string(out, "  ", "compiler", TCMINI_COMPILER);
  yaml_key_string(out, "  ", "compiler_version", __VERSION__);
  yaml_key_string(out, "  ", "build_type", TCMINI_BUILD_TYPE);
  yaml_key_string(out, "  ", "c_flags", TCMINI_C_FLAGS);
  fputs("  backends: [", out);
  const char *separator = "";
  for (int b = 0; b < TC_BACKEND_COUNT; b++)
    if (tc_contract_backend_get((tc_backend_kind)b)) {
      fputs(separator, out);
      yaml_string(out, tc_backend_name((tc_backend_kind)b));
      separator = ", ";
    }
  fprintf(out, "]\n  hdf5: %s\n", TCMINI_HAVE_HDF5 ? "true" : "false");

  fputs("run:\n", out);
  yaml_key_string(out, "  ", "started", report->started);
  fprintf(out, "  ranks: %d\n", report->ranks);
  if (report->have_run) {
    const tc_config *config = &report->config;
    yaml_key_string(out, "  ", "label", config->label);
    fprintf(out, "  threads_per_rank: %d\n", report->threads);
    fprintf(out, "  peak_host_memory_mib_per_rank: {min: %.1f, max: %.1f}\n", memory_mib[0],
            memory_mib[1]);
    if (report->cores_min > 0)
      fprintf(out, "  cores_per_rank: {min: %d, max: %d}\n", report->cores_min, report->cores_max);
    if (report->warning[0]) {
      fputs("  warnings: [", out);
      yaml_string(out, report->warning);
      fputs("]\n", out);
    }
    yaml_key_string(out, "  ", "backend", tc_backend_name(config->backend));
    yaml_key_string(out, "  ", "layout", tc_layout_name(tc_config_layout(config)));
    yaml_key_string(out, "  ", "precision", tc_precision_name(config->precision));
    yaml_key_string(out, "  ", "inputs", tc_inputs_mode_name(tc_config_inputs(config)));
    yaml_key_string(out, "  ", "exchange",
                    report->exchange[0] ? report->exchange
                                        : tc_exchange_mode_name(tc_config_exchange(config)));
    if (report->exchange_why[0])
      yaml_key_string(out, "  ", "exchange_fallback", report->exchange_why);
    if (report->have_workset) {
      fprintf(out, "  workset: {cells_per_batch: %lld, batches_per_step: %lld, chosen_by: %s, "
              "rule: ", (long long)report->workset_cells, (long long)report->workset_batches,
              report->workset_chosen ? "loop" : "deck");
      yaml_string(out, report->workset_rule);
      fputs("}\n", out);
    }
    if (report->replay[0])
      yaml_key_string(out, "  ", "batches_run", report->replay);
    if (report->fused_form[0])
      yaml_key_string(out, "  ", "fused_form", report->fused_form);
    fprintf(out, "  checks: %s\n", tc_config_checks_enabled(config) ? "true" : "false");
    fprintf(out, "  tolerance: ");
    yaml_double(out, tc_config_tolerance(config));
    fputs("\n  variants:", out);
    bool any_variant = false;
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      if (config->kernels[k]) {
        fprintf(out, "\n    %s: ", tc_kernel_name((tc_kernel)k));
        yaml_string(out, report->variant_known[k] ? tc_variant_name(report->variants[k])
                                                  : tc_variant_name(config->variant));
        any_variant = true;
      }
    fputs(any_variant ? "\n" : " {}\n", out);
    fputs("  variant_choices:", out);
    bool any_choice = false;
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      if (config->kernels[k] && report->choice_known[k]) {
        fprintf(out, "\n    %s: ", tc_kernel_name((tc_kernel)k));
        yaml_string(out, tc_choice_name(report->choices[k]));
        any_choice = true;
      }
    fputs(any_choice ? "\n" : " {}\n", out);
    if (report->results_file[0] != '\0')
      yaml_key_string(out, "  ", "results_file", report->results_file);
    if (report->tuning_file[0] != '\0') {
      yaml_key_string(out, "  ", "tuning_file", report->tuning_file);
      fprintf(out, "  tuning_used: %s\n", report->tuning_used ? "true" : "false");
    }
    fputs("  devices:\n", out);
    for (int r = 0; r < report->ranks; r++) {
      fprintf(out, "    - {rank: %d, device: ", r);
      yaml_string(out, report->devices + (size_t)r * DEVICE_MAX_CHARS);
      fputs("}\n", out);
    }
    yaml_block(out, "deck", report->deck);
  }

  fputs("phases:", out);
  if (!report->have_times)
    fputs(" {}", out);
  for (int p = 0; report->have_times && p < TC_PHASE_COUNT; p++) {
    const tc_phase_stats *s = &report->times[p];
    fprintf(out, "\n  %s: {min_s: ", tc_phase_name((tc_phase)p));
    yaml_double(out, s->min);
    fputs(", avg_s: ", out);
    yaml_double(out, s->avg);
    fputs(", max_s: ", out);
    yaml_double(out, s->max);
    fprintf(out, ", count: %lld}", (long long)s->count);
  }
  fputs("\nfigures_of_merit:", out);
  if (report->num_figures == 0)
    fputs(" []", out);
  for (int i = 0; i < report->num_figures; i++) {
    fputs("\n  - {name: ", out);
    yaml_string(out, report->figures[i].name);
    fputs(", value: ", out);
    yaml_double(out, report->figures[i].value);
    fputs(", unit: ", out);
    yaml_string(out, report->figures[i].unit);
    fputs("}", out);
  }
  fputs("\nroofline:", out);
  if (!report->roofline)
    fputs(" {}", out);
  if (report->roofline) {
    const tc_report_ceilings *c = &report->ceilings;
    fprintf(out, "\n  ceilings: {measured: %s, copy_GB_s: ", c->measured ? "true" : "false");
    yaml_double(out, c->measured ? c->copy_bytes_per_second / 1e9 : NAN);
    fputs(", fma_GFLOP_s: ", out);
    yaml_double(out, c->measured ? c->fma_flops_per_second / 1e9 : NAN);
    fputs(", source: ", out);
    yaml_string(out, c->source);
    fputs("}\n  phases:", out);
    for (int i = 0; i < report->num_roofline; i++) {
      const tc_report_roofline_row *r = &report->roofline[i];
      fprintf(out, "\n    %s: {bytes_per_cell: ", r->name);
      yaml_double(out, r->bytes_per_cell);
      fputs(", flops_per_cell: ", out);
      yaml_double(out, r->flops_per_cell);
      fputs(", seconds: ", out);
      yaml_double(out, r->seconds);
      fputs(", GB_s: ", out);
      yaml_double(out, r->bytes_per_second / 1e9);
      fputs(", GFLOP_s: ", out);
      yaml_double(out, r->flops_per_second / 1e9);
      fputs(", copy_fraction: ", out);
      yaml_double(out, c->measured ? fraction_of(r->bytes_per_second, c->copy_bytes_per_second)
                                   : NAN);
      fputs(", fma_fraction: ", out);
      yaml_double(out, c->measured ? fraction_of(r->flops_per_second, c->fma_flops_per_second)
                                   : NAN);
      fputs("}", out);
    }
  }
  fputs("\nchecks:", out);
  if (report->num_checks == 0)
    fputs(" []", out);
  for (int i = 0; i < report->num_checks; i++) {
    const check *c = &report->checks[i];
    fputs("\n  - {name: ", out);
    yaml_string(out, c->name);
    fputs(", value: ", out);
    yaml_double(out, c->value);
    fputs(", reference: ", out);
    yaml_double(out, c->reference);
    fputs(", scale: ", out);
    yaml_double(out, c->scale);
    fputs(", tolerance: ", out);
    yaml_double(out, c->tolerance);
    fprintf(out, ", passed: %s, skipped: %s", c->passed ? "true" : "false",
            c->skipped ? "true" : "false");
    if (c->skipped) {
      fputs(", note: ", out);
      yaml_string(out, c->note);
    }
    fputs("}", out);
  }
  fputs("\nresults:", out);
  if (report->num_results == 0)
    fputs(" []", out);
  for (int i = 0; i < report->num_results; i++) {
    const result *r = &report->results[i];
    fputs("\n  - {name: ", out);
    yaml_string(out, r->name);
    fputs(", units: ", out);
    yaml_string(out, r->units);
    fprintf(out, ", count: %lld, sum: ", (long long)r->count);
    yaml_double(out, r->sum);
    fputs(", sum_abs: ", out);
    yaml_double(out, r->sum_abs);
    fputs(", norm: ", out);
    yaml_double(out, r->norm);
    fputs(", min: ", out);
    yaml_double(out, r->min);
    fputs(", max: ", out);
    yaml_double(out, r->max);
    fputs("}", out);
  }
  fputs("\nverdict: ", out);
  yaml_string(out, verdict_name(report));
  fputc('\n', out);
}

/// Rank 0's part of tc_report_write.
static tc_err write_file(const tc_report *report, const char *path, const double memory_mib[2]) {
  char temporary[TC_CONFIG_STRING_MAX + 32];
  snprintf(temporary, sizeof temporary, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = fopen(temporary, "w");
  TC_CHECK(out, TC_ERR_IO, "cannot write report '%s': %s", temporary, strerror(errno));
  write_yaml(report, memory_mib, out);
  int write_errno = ferror(out) ? (errno ? errno : EIO) : 0;
  if (fclose(out) != 0 && write_errno == 0)
    write_errno = errno;
  if (write_errno == 0 && rename(temporary, path) != 0)
    write_errno = errno;
  if (write_errno != 0) {
    remove(temporary);
    TC_FAIL(TC_ERR_IO, "cannot write report '%s': %s", path, strerror(write_errno));
  }
  return TC_SUCCESS;
}

/// Rank 0's part of tc_report_check_path.
static tc_err check_path(const char *path, bool overwrite) {
  TC_CALL(tc_file_check_writable(path, "report file"));
  TC_CHECK(overwrite || access(path, F_OK) != 0, TC_ERR_IO,
           "report file '%s' exists; set output.overwrite = true or choose another output.report",
           path);
  char probe[TC_CONFIG_STRING_MAX + 32];
  snprintf(probe, sizeof probe, "%s.tmp.%ld", path, (long)getpid());
  FILE *out = fopen(probe, "w");
  TC_CHECK(out, TC_ERR_IO, "cannot write report '%s': %s", path, strerror(errno));
  fclose(out);
  remove(probe);
  return TC_SUCCESS;
}

tc_err tc_report_check_path(const tc_report *report, const char *path, bool overwrite) {
  tc_err err = TC_SUCCESS;
  if (report->rank == 0 && strcmp(path, "none") != 0)
    err = check_path(path, overwrite);
  return tc_parallel_agree(report->comm, err);
}

tc_err tc_report_write(const tc_report *report, const char *path) {
  double peak = peak_host_memory_mib(), extremes[2] = {-peak, peak};
  tc_err err = tc_allreduce_max_double(report->comm, extremes, 2);
  double memory_mib[2] = {-extremes[0], extremes[1]};
  if (err == TC_SUCCESS && report->rank == 0 && strcmp(path, "none") != 0)
    err = write_file(report, path, memory_mib);
  return tc_parallel_agree(report->comm, err);
}

/* ---- human summary ---- */

/// The loop's roofline table: per phase, the model's compulsory traffic and
/// flops per cell, what the phase achieved, and its share of the ceilings.
static void print_roofline(const tc_report *report, FILE *stream) {
  if (!report->roofline)
    return;
  const tc_report_ceilings *c = &report->ceilings;
  if (c->measured)
    fprintf(stream, "loop roofline against copy %.1f GB/s and FMA %.1f GFLOP/s (%s):\n",
            c->copy_bytes_per_second / 1e9, c->fma_flops_per_second / 1e9, c->source);
  else
    fprintf(stream, "loop roofline (%s):\n", c->source);
  fprintf(stream, "%-20s %10s %11s %9s %9s %6s %6s\n", "phase", "KB/cell", "kflop/cell", "GB/s",
          "GFLOP/s", "%copy", "%FMA");
  for (int i = 0; i < report->num_roofline; i++) {
    const tc_report_roofline_row *r = &report->roofline[i];
    fprintf(stream, "%-20s %10.2f %11.2f %9.2f %9.2f", r->name, r->bytes_per_cell / 1e3,
            r->flops_per_cell / 1e3, r->bytes_per_second / 1e9, r->flops_per_second / 1e9);
    if (c->measured)
      fprintf(stream, " %6.1f %6.1f",
              100 * fraction_of(r->bytes_per_second, c->copy_bytes_per_second),
              100 * fraction_of(r->flops_per_second, c->fma_flops_per_second));
    fputc('\n', stream);
  }
}

void tc_report_print(const tc_report *report, FILE *stream) {
  if (report->rank != 0)
    return;
  fprintf(stream, "tcmini %s (git %s), %d rank%s", TCMINI_VERSION, TCMINI_GIT_REVISION,
          report->ranks, report->ranks == 1 ? "" : "s");
  if (report->have_run) {
    const tc_config *config = &report->config;
    fprintf(stream, " x %d thread%s, run '%s': backend %s, layout %s, precision %s, inputs %s\n",
            report->threads, report->threads == 1 ? "" : "s", config->label,
            tc_backend_name(config->backend), tc_layout_name(tc_config_layout(config)),
            tc_precision_name(config->precision), tc_inputs_mode_name(tc_config_inputs(config)));
    fprintf(stream, "device (rank 0): %s\n", report->devices);
    if (report->have_workset)
      fprintf(stream, "workset (rank 0): %lld cells a batch (%s%s%s), %lld batches a step\n",
              (long long)report->workset_cells,
              report->workset_chosen ? "sized by the loop" : "run.batch_cells",
              report->workset_chosen && report->workset_rule[0] ? ": " : "",
              report->workset_chosen ? report->workset_rule : "",
              (long long)report->workset_batches);
    if (report->replay[0])
      fprintf(stream, "batches (rank 0): %s\n", report->replay);
    if (report->fused_form[0])
      fprintf(stream, "fused elasticity (rank 0): %s\n", report->fused_form);
    if (report->exchange_why[0])
      fprintf(stream, "exchange: %s (messages through host buffers where: %s)\n",
              report->exchange, report->exchange_why);
    bool any_variant = false;
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      if (config->kernels[k] && report->variant_known[k]) {
        fprintf(stream, "%s%s %s", any_variant ? ", " : "variants (how chosen): ",
                tc_kernel_name((tc_kernel)k), tc_variant_name(report->variants[k]));
        if (report->choice_known[k])
          fprintf(stream, " (%s)", tc_choice_name(report->choices[k]));
        any_variant = true;
      }
    if (any_variant)
      fputc('\n', stream);
    if (report->tuning_file[0] != '\0' && strcmp(report->tuning_file, "none") != 0)
      fprintf(stream, "tuning file: %s%s\n", report->tuning_file,
              report->tuning_used ? "" : " (not used: the built-in rules apply)");
    if (report->warning[0])
      fprintf(stream, "warning: %s\n", report->warning);
  } else {
    fputc('\n', stream);
  }
  if (report->have_times) {
    fprintf(stream, "%-20s %12s %12s %12s\n", "phase", "min [s]", "avg [s]", "max [s]");
    for (int p = 0; p < TC_PHASE_COUNT; p++) {
      const tc_phase_stats *s = &report->times[p];
      if (s->count > 0)
        fprintf(stream, "%-20s %12.6f %12.6f %12.6f\n", tc_phase_name((tc_phase)p), s->min,
                s->avg, s->max);
    }
  }
  int width = 20;
  for (int i = 0; i < report->num_figures; i++)
    width = (int)fmax(width, (double)strlen(report->figures[i].name));
  if (report->num_figures > 0)
    fprintf(stream, "%-*s %14s  %s\n", width, "figure of merit", "value", "unit");
  for (int i = 0; i < report->num_figures; i++)
    fprintf(stream, "%-*s %14.6g  %s\n", width, report->figures[i].name,
            report->figures[i].value, report->figures[i].unit);
  print_roofline(report, stream);
  width = 20;
  for (int i = 0; i < report->num_checks; i++)
    width = (int)fmax(width, (double)strlen(report->checks[i].name));
  if (report->num_checks > 0)
    fprintf(stream, "%-*s %-6s %-11s %s\n", width, "check", "result", "error/scale",
            "tolerance");
  for (int i = 0; i < report->num_checks; i++) {
    const check *c = &report->checks[i];
    if (c->skipped)
      fprintf(stream, "%-*s SKIP   %s\n", width, c->name, c->note);
    else
      fprintf(stream, "%-*s %-6s %-11.3g %.3g\n", width, c->name, c->passed ? "PASS" : "FAIL",
              fabs(c->value - c->reference) / c->scale, c->tolerance);
  }
  fprintf(stream, "verdict: %s\n", verdict_name(report));
}
