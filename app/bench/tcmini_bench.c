/* tcmini-bench: the kernel benchmark. Times the nine contractions on the
 * chosen backends, variants, layouts and precisions with the method of the
 * 2015 clinic report on Intrepid contractions (random inputs, warm-up,
 * repetitions each after a cache flush, median; the variants of a case timed
 * in turn, so a shared machine's load falls on all of them alike),
 * verifies every row against the serial reference, and compares with the
 * roofline it measures itself (the CPU's per thread count, the GPU's for the
 * CUDA backend); FieldField cases in layout right get a row of the vendor
 * variant too (cuBLAS, libxsmm), the yardstick. Replays a contraction stored
 * in HDF5; sweeps random shapes (AUTO against the vendor); tunes (writes a
 * tuning file of AUTO's best variant per shape class). Runs on one rank:
 * under mpirun the other ranks wait. Exit code: 0 when every row is
 * verified, 1 on a failed row or a run-time error, 2 on a bad command line
 * (a backend not compiled in or without its GPU, a bad replay file too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_case.h"
#include "bench_flush.h"
#include "bench_options.h"
#include "bench_plan.h"
#include "bench_report.h"
#include "bench_roofline.h"
#include "tc_contract.h"
#include "tc_device.h"
#include "tc_parallel.h"
#include "tc_replay.h"
#include "bench_sweep.h"
#include "bench_tune.h"
#include "tc_tuning.h"

enum { EXIT_VERIFY_FAILED = 1, EXIT_BAD_OPTIONS = 2 };


/* The state of one benchmark run. */
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
} row_capture;

/* ---- set-up -------------------------------------------------------------- */

/* --sweep and --tune measure one backend at one thread count (the serial
 * backend of the default --backend cpu is left out: it is the reference). */
static tc_err plan_one_backend(bench_run *run) {
  const bench_options *o = run->options;
  if (o->sweep == 0 && o->tune_path == NULL)
    return TC_SUCCESS;
  const char *mode = o->tune_path != NULL ? "--tune" : "--sweep";
  TC_CHECK(run->plan.num_configs == 1, TC_ERR_INPUT,
           "%s measures one backend at one thread count: give --backend openmp (one --threads) "
           "or --backend cuda",
           mode);
  const tc_contract_backend *backend = tc_contract_backend_get(run->plan.configs[0].backend);
  if (o->sweep > 0 && o->tune_path == NULL) {
    TC_CHECK(tc_contract_vendor_library(backend) != NULL, TC_ERR_UNSUPPORTED,
             "--sweep compares AUTO with the vendor variant, and %s",
             tc_contract_vendor_refusal(backend, NULL));
    for (int l = 0; l < o->num_layouts; ++l)
      TC_CHECK(o->layouts[l] == TC_LAYOUT_RIGHT, TC_ERR_INPUT,
               "--sweep compares AUTO with the vendor variant, which runs layout right only: "
               "drop --layout left");
  }
  if (o->tune_path != NULL)
    TC_CALL(bench_tuner_create(run->plan.configs[0].backend, &run->tuner));
  return TC_SUCCESS;
}

/* --tuning: the file, checked against the device of its backend's rows;
 * with --tuning-on-error rules, a file that cannot be used is a warning. */
static tc_err load_tuning(bench_run *run) {
  const bench_options *o = run->options;
  if (o->tuning_path == NULL)
    return TC_SUCCESS;
  const bench_config *tuned = NULL;
  for (int c = 0; c < run->plan.num_configs; ++c)
    if (run->plan.configs[c].backend != TC_BACKEND_SERIAL) {
      TC_CHECK(tuned == NULL || tuned->backend == run->plan.configs[c].backend, TC_ERR_INPUT,
               "--tuning is the file of one backend: give --backend openmp or --backend cuda");
      tuned = &run->plan.configs[c];
    }
  TC_CHECK(tuned != NULL, TC_ERR_INPUT,
           "--tuning tunes AUTO of the openmp or cuda backend, and this run has neither");
  tc_device_options device_options = {.backend = tuned->backend, .num_threads = tuned->threads,
                                      .local_size = 1, .allow_gpu_sharing = true};
  tc_device *device = NULL;
  TC_CALL(tc_device_create(&device_options, &device));
  tc_err err = tc_tuning_load(o->tuning_path, tuned->backend, tc_device_model(device), &run->tuning);
  tc_device_destroy(&device);
  if (err != TC_SUCCESS && o->tuning_fallback) {
    fprintf(stderr, "tcmini-bench: warning: %s; AUTO uses the built-in rules\n", tc_error_message());
    tc_error_clear();
    return TC_SUCCESS;
  }
  return err;
}

static void print_roofline(const bench_roofline *r) {
  printf("  %7d  %9.1f  %10.1f  %18.1f  %17.1f\n", r->threads, 1e-9 * r->copy_bytes_per_second,
         1e-9 * r->triad_bytes_per_second, 1e-9 * r->fma_flops_per_second[TC_DOUBLE],
         1e-9 * r->fma_flops_per_second[TC_FLOAT]);
}

static void print_machine(const bench_run *run) {
  const bench_options *o = run->options;
  char model[256];
  tc_device_cpu_model(model, sizeof model);
  printf("tcmini-bench %s (git %s), %s\n", TCMINI_VERSION, TCMINI_GIT_REVISION, __VERSION__);
  printf("machine: %s, %d processors, last-level cache %.0f MiB\n", model,
         bench_machine_processors(), (double)bench_machine_last_level_cache() / (1 << 20));
  if (run->flush_bytes > 0)
    printf("method: %lld warm-up + %lld timed runs per row, each after a %.0f MiB cache flush,\n",
           (long long)(o->warmup > 1 ? o->warmup : 1), (long long)o->reps,
           (double)run->flush_bytes / (1 << 20));
  else
    printf("method: %lld warm-up + %lld timed runs per row, no cache flush (--no-flush),\n",
           (long long)(o->warmup > 1 ? o->warmup : 1), (long long)o->reps);
  printf("        the rows of a case timed in turn (one run of each per round); %s;\n"
         "        every row checked against the serial reference",
         o->replay_path ? "inputs from the replay file" : "inputs random in +-[0.5,1.5)");
  if (o->check_cells > 0)
    printf(" on %lld cells per case", (long long)o->check_cells);
  printf("\n");
  if (o->row_time_limit > 0)
    printf("        warm-up and timed runs of a row stop after %lld s each (see column reps)\n",
           (long long)o->row_time_limit);
  if (o->no_roofline)
    printf("        no roofline measured (--no-roofline)\n");
  if (run->plan.num_rooflines > 0) {
    printf("roofline (measured here; STREAM arrays 3 x %.0f MiB, best of passes):\n",
           (double)bench_plan_cpu_array_bytes() / (1 << 20));
    printf("  threads  copy GB/s  triad GB/s  FMA double GFLOP/s  FMA float GFLOP/s\n");
    for (int i = 0; i < run->plan.num_rooflines; ++i)
      print_roofline(&run->plan.rooflines[i]);
  }
  if (run->plan.has_gpu_roofline) {
    printf("GPU roofline of %s (measured here; device memory, STREAM arrays\n"
           "3 x %.0f MiB, best of 10; FMA units, not tensor cores; rows with thr 0):\n",
           run->plan.gpu_description, (double)bench_plan_gpu_array_bytes() / (1 << 20));
    printf("  threads  copy GB/s  triad GB/s  FMA double GFLOP/s  FMA float GFLOP/s\n");
    print_roofline(&run->plan.gpu_roofline);
  }
  printf("\n");
}

/* --version: the release and what this build holds. */
static void print_version(void) {
  printf("tcmini-bench %s (git %s)\ncompiler: %s\nbackends:", TCMINI_VERSION, TCMINI_GIT_REVISION,
         __VERSION__);
  for (int b = 0; b < TC_BACKEND_COUNT; ++b)
    if (tc_device_backend_available((tc_backend_kind)b))
      printf(" %s", tc_backend_name((tc_backend_kind)b));
  printf("\n");
}

/* ---- timing one row -------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Device buffers of one case on one device. */
typedef struct {
  void *left, *right, *output, *initial_output;
  size_t left_bytes, right_bytes, output_bytes;
} device_arrays;

typedef struct {
  tc_device *device;
  bench_flush *flush;        /* the run's host flush, or this device's own */
  bench_flush *device_flush; /* owned: CUDA only */
  tc_device_timer *timer;
  device_arrays arrays;
} bench_device;

/* The timed call: the contraction through the public seam. */
static tc_err run_contraction(bench_device *d, const tc_contraction *shape, tc_variant variant) {
  device_arrays *a = &d->arrays;
  return tc_contract(tc_device_contract_backend(d->device), shape, variant, a->left, a->right,
                     a->output, tc_device_stream(d->device));
}

/* One run after a cache flush; only the contraction is timed. With sum_into
 * the output is first reset (untimed), so that every run computes the same
 * result. */
static tc_err run_once(bench_device *d, const tc_contraction *shape, tc_variant variant,
                       double *seconds) {
  device_arrays *a = &d->arrays;
  if (shape->sum_into)
    TC_CALL(tc_device_copy_on_device(d->device, a->output, a->initial_output, a->output_bytes));
  if (d->flush != NULL) /* NULL with --no-flush */
    TC_CALL(bench_flush_run(d->flush));
  TC_CALL(tc_device_synchronize(d->device));
  TC_CALL(tc_device_timer_start(d->timer));
  TC_CALL(run_contraction(d, shape, variant));
  TC_CALL(tc_device_timer_stop(d->timer));
  return tc_device_timer_seconds(d->timer, seconds);
}

/* Host copies of a case's arrays in one physical layout. */
typedef struct {
  const bench_case *source; /* the case: its reference checks the rows */
  tc_contraction shape;
  void *left, *right, *initial_output;
  void *scratch; /* an output-sized host buffer */
} layout_arrays;

static void fill_nan(tc_precision precision, int64_t count, void *data) {
  for (int64_t i = 0; i < count; ++i) {
    if (precision == TC_DOUBLE)
      ((double *)data)[i] = NAN;
    else
      ((float *)data)[i] = NAN;
  }
}

/* Keeps a copy of the row for --sweep and --tune (the rows of one case). */
static tc_err capture_row(bench_run *run, const bench_row *row) {
  if (run->tuner == NULL && run->options->sweep == 0)
    return TC_SUCCESS;
  if (run->num_captured == run->captured_capacity) {
    int capacity = run->captured_capacity ? 2 * run->captured_capacity : 32;
    bench_row *grown = realloc(run->captured, (size_t)capacity * sizeof *grown);
    TC_CHECK(grown != NULL, TC_ERR_MEMORY, "out of memory keeping the rows of a case");
    run->captured = grown;
    run->captured_capacity = capacity;
  }
  run->captured[run->num_captured++] = *row;
  return TC_SUCCESS;
}

/* A row of a case being measured: the variant, its timings and verdict. */
typedef struct {
  bench_row row;
  bool yardstick;  /* the vendor row added after the asked-for variants */
  bool probes;     /* AUTO by the rules: its first run goes through AUTO, which may probe */
  double *seconds; /* the timed runs (row.reps of them so far) */
  double spent;    /* seconds of those runs */
} pending_row;

/* The row's variant (AUTO resolved, through the tuning file where there is
 * one for this backend) and where it came from. */
static tc_err prepare_row(bench_run *run, const bench_config *config, bench_device *d,
                          const layout_arrays *host, const char *preset, tc_variant variant,
                          bool yardstick, pending_row *p) {
  memset(p, 0, sizeof *p);
  bench_row *row = &p->row;
  row->shape = host->shape;
  row->preset = preset;
  row->backend = config->backend;
  row->threads = tc_device_num_threads(d->device);
  p->yardstick = yardstick;
  if (yardstick) {
    row->variant = TC_VARIANT_VENDOR;
    row->chosen = "yardstick";
  } else {
    const tc_tuning *tuning =
        run->tuning != NULL && tc_tuning_backend(run->tuning) == config->backend ? run->tuning
                                                                                  : NULL;
    tc_choice choice;
    TC_CALL(tc_contract_choose(tc_device_contract_backend(d->device), tuning, &host->shape,
                               variant, &row->variant, &choice));
    row->chosen = tc_choice_name(choice);
    p->probes = choice == TC_CHOICE_RULE;
  }
  TC_CALLOC(p->seconds, run->options->reps);
  return TC_SUCCESS;
}

/* Adds a row's result (in the row's layout in scratch) to the results file. */
static tc_err keep_row_output(row_capture *capture, const bench_row *row, const void *scratch) {
  const tc_contraction *shape = &row->shape;
  bench_relayout(shape, BENCH_ARRAY_OUTPUT, scratch, capture->output, false);
  tc_replay_row info;
  memset(&info, 0, sizeof info);
  snprintf(info.backend, sizeof info.backend, "%s", tc_backend_name(row->backend));
  info.threads = row->threads;
  snprintf(info.layout, sizeof info.layout, "%s", tc_layout_name(shape->layout));
  snprintf(info.variant, sizeof info.variant, "%s", tc_variant_name(row->variant));
  snprintf(info.chosen, sizeof info.chosen, "%s", row->chosen ? row->chosen : "");
  snprintf(info.precision, sizeof info.precision, "%s", tc_precision_name(shape->precision));
  info.verified = row->verified;
  info.relative_error = row->relative_error;
  return tc_replay_writer_add(capture->writer, &info, capture->output);
}

/* The untimed runs of a row: the first on an output poisoned with NaN (an
 * entry the kernel never writes stays NaN and fails), the warm-ups; then its
 * result is checked against the reference (and kept for --replay-output). */
static tc_err check_row(bench_run *run, bench_device *d, const layout_arrays *host,
                        pending_row *p, row_capture *capture) {
  const bench_options *o = run->options;
  const tc_contraction *shape = &host->shape;
  bench_row *row = &p->row;
  if (!shape->sum_into) {
    fill_nan(shape->precision, tc_contraction_output_count(shape), host->scratch);
    TC_CALL(tc_device_copy_to_device(d->device, d->arrays.output, host->scratch,
                                     d->arrays.output_bytes));
  }
  const double limit = (double)o->row_time_limit;
  double spent = 0.0, elapsed = 0.0;
  for (int64_t done = 0; done < (o->warmup > 1 ? o->warmup : 1) && !(limit > 0.0 && spent > limit);
       ++done) {
    /* AUTO's first run: where the library probes (tc_contract_set_probe) it
     * times its candidates here and keeps the faster, which the row then
     * names and times */
    TC_CALL(run_once(d, shape, done == 0 && p->probes ? TC_VARIANT_AUTO : row->variant, &elapsed));
    spent += elapsed;
  }
  if (p->probes) {
    tc_choice choice;
    TC_CALL(tc_contract_choose(tc_device_contract_backend(d->device), NULL, shape,
                               TC_VARIANT_AUTO, &row->variant, &choice));
    row->chosen = tc_choice_name(choice);
  }
  TC_CALL(tc_device_copy_to_host(d->device, host->scratch, d->arrays.output, d->arrays.output_bytes));
  row->relative_error = bench_case_error(host->source, shape->layout, host->scratch);
  row->tolerance = bench_tolerance(shape);
  row->verified = row->relative_error <= row->tolerance; /* false for NaN */
  if (capture != NULL)
    TC_CALL(keep_row_output(capture, row, host->scratch));
  return TC_SUCCESS;
}

/* The timed runs of a case's rows, in turn (one run of each row per round),
 * so that every row sees the same state of a shared machine; a row stops
 * after --reps runs, or once its runs took --row-time-limit seconds (one
 * timed run at least). */
static tc_err time_rows(bench_run *run, bench_device *d, const layout_arrays *host,
                        pending_row *rows, int count) {
  const bench_options *o = run->options;
  const double limit = (double)o->row_time_limit;
  for (bool more = true; more;) {
    more = false;
    for (int r = 0; r < count; ++r) {
      pending_row *p = &rows[r];
      if (p->row.reps >= o->reps || (limit > 0.0 && p->spent > limit))
        continue;
      double *seconds = &p->seconds[p->row.reps];
      TC_CALL(run_once(d, &host->shape, p->row.variant, seconds));
      p->spent += *seconds;
      p->row.reps++;
      more = true;
    }
  }
  return TC_SUCCESS;
}

/* Statistics of a timed row, then the row is reported. */
static tc_err finish_row(bench_run *run, const bench_config *config, pending_row *p,
                         double *serial_median) {
  bench_row *row = &p->row;
  const tc_contraction *shape = &row->shape;
  qsort(p->seconds, (size_t)row->reps, sizeof *p->seconds, compare_doubles);
  int middle = row->reps / 2;
  row->median_seconds =
      row->reps % 2 ? p->seconds[middle] : 0.5 * (p->seconds[middle - 1] + p->seconds[middle]);
  row->min_seconds = p->seconds[0];
  row->max_seconds = p->seconds[row->reps - 1];
  double flops = tc_contraction_flops(shape);
  row->gflops = 1e-9 * flops / row->median_seconds;
  row->gbytes = 1e-9 * tc_contraction_bytes(shape) / row->median_seconds;
  if (config->roofline != NULL) {
    double intensity = flops / tc_contraction_bytes(shape);
    double bound = bench_roofline_bound(config->roofline, shape->precision, intensity,
                                        &row->memory_bound);
    row->has_roofline = true;
    row->roofline_percent = 100.0 * flops / row->median_seconds / bound;
  }
  if (config->backend == TC_BACKEND_SERIAL && !(*serial_median > 0.0))
    *serial_median = row->median_seconds;
  if (*serial_median > 0.0) {
    row->has_speedup = true;
    row->speedup = *serial_median / row->median_seconds;
  }
  bench_report_table_row(stdout, row);
  if (run->csv != NULL)
    bench_report_csv_row(run->csv, row);
  run->rows++;
  if (!row->verified)
    run->failures++;
  return capture_row(run, row);
}

/* ---- one case on one device ---------------------------------------------- */

static void close_device(bench_device *d) {
  if (d->device != NULL) {
    tc_device_free(d->device, &d->arrays.left);
    tc_device_free(d->device, &d->arrays.right);
    tc_device_free(d->device, &d->arrays.output);
    tc_device_free(d->device, &d->arrays.initial_output);
  }
  tc_device_timer_destroy(&d->timer);
  bench_flush_destroy(&d->device_flush);
  tc_device_destroy(&d->device);
}

static tc_err open_device(bench_run *run, const bench_config *config,
                          const layout_arrays *host, bench_device *d) {
  tc_device_options device_options = {.backend = config->backend,
                                      .num_threads = config->threads,
                                      .local_rank = 0,
                                      .local_size = 1,
                                      .allow_gpu_sharing = true};
  TC_CALL(tc_device_create(&device_options, &d->device));
  if (run->tuner != NULL && run->tuned_device[0] == '\0')
    snprintf(run->tuned_device, sizeof run->tuned_device, "%s",
             tc_device_model(d->device));
  TC_CALL(bench_flush_for_device(d->device, run->host_flush, run->flush_bytes, &d->device_flush,
                                 &d->flush));
  TC_CALL(tc_device_timer_create(d->device, &d->timer));
  const tc_contraction *shape = &host->shape;
  size_t size = (size_t)tc_precision_size(shape->precision);
  device_arrays *a = &d->arrays;
  a->left_bytes = (size_t)tc_contraction_left_count(shape) * size;
  a->right_bytes = (size_t)tc_contraction_right_count(shape) * size;
  a->output_bytes = (size_t)tc_contraction_output_count(shape) * size;
  TC_CALL(tc_device_alloc(d->device, a->left_bytes, &a->left));
  TC_CALL(tc_device_alloc(d->device, a->right_bytes, &a->right));
  TC_CALL(tc_device_alloc(d->device, a->output_bytes, &a->output));
  TC_CALL(tc_device_copy_to_device(d->device, a->left, host->left, a->left_bytes));
  TC_CALL(tc_device_copy_to_device(d->device, a->right, host->right, a->right_bytes));
  if (shape->sum_into) {
    TC_CALL(tc_device_alloc(d->device, a->output_bytes, &a->initial_output));
    TC_CALL(tc_device_copy_to_device(d->device, a->initial_output, host->initial_output,
                                     a->output_bytes));
  }
  return TC_SUCCESS;
}

/* The variants to run on this backend: those asked for that it supports
 * (AUTO always), or with --variant all AUTO and every variant it supports. */
static int variants_for(bench_run *run, const tc_contract_backend *backend,
                        const tc_contraction *shape, tc_variant variants[TC_VARIANT_COUNT]) {
  const bench_options *o = run->options;
  int count = 0;
  if (o->all_variants) {
    /* AUTO first, to show what it resolves to (--tune times the variants). */
    if (o->tune_path == NULL)
      variants[count++] = TC_VARIANT_AUTO;
    for (int v = TC_VARIANT_AUTO + 1; v < TC_VARIANT_COUNT; ++v)
      if (tc_contract_supports(backend, shape, (tc_variant)v))
        variants[count++] = (tc_variant)v;
    return count;
  }
  for (int v = 0; v < o->num_variants; ++v) {
    if (tc_contract_supports(backend, shape, o->variants[v]))
      variants[count++] = o->variants[v];
    else
      run->skipped++;
  }
  return count;
}

static tc_err run_config(bench_run *run, const bench_config *config, const layout_arrays *host,
                         const char *preset, double *serial_median, row_capture *capture) {
  bench_device d;
  memset(&d, 0, sizeof d);
  pending_row rows[TC_VARIANT_COUNT + 1];
  int count = 0;
  tc_err err = open_device(run, config, host, &d);
  if (err == TC_SUCCESS) {
    tc_variant variants[TC_VARIANT_COUNT];
    const tc_contract_backend *backend = tc_device_contract_backend(d.device);
    int asked = variants_for(run, backend, &host->shape, variants);
    bool vendor_timed = false;
    for (int v = 0; v < asked && err == TC_SUCCESS; ++v) {
      err = prepare_row(run, config, &d, host, preset, variants[v], false, &rows[count++]);
      vendor_timed = vendor_timed || variants[v] == TC_VARIANT_VENDOR;
    }
    /* The yardstick: the vendor variant after the others, where it runs. */
    if (err == TC_SUCCESS && !vendor_timed && config->backend != TC_BACKEND_SERIAL &&
        !run->options->no_yardstick &&
        tc_contract_supports(backend, &host->shape, TC_VARIANT_VENDOR))
      err = prepare_row(run, config, &d, host, preset, TC_VARIANT_VENDOR, true, &rows[count++]);
    for (int r = 0; r < count && err == TC_SUCCESS; ++r)
      err = check_row(run, &d, host, &rows[r], capture);
    if (err == TC_SUCCESS)
      err = time_rows(run, &d, host, rows, count);
    for (int r = 0; r < count && err == TC_SUCCESS; ++r)
      err = finish_row(run, config, &rows[r], serial_median);
  }
  for (int r = 0; r < count; ++r)
    free(rows[r].seconds);
  close_device(&d);
  return err;
}

/* ---- one case in every layout on every backend ------------------------------ */

static void free_layout_arrays(layout_arrays *l, const bench_case *c) {
  if (l->left != c->left) {
    free(l->left);
    free(l->right);
    free(l->initial_output);
  }
  free(l->scratch);
  memset(l, 0, sizeof *l);
}

static tc_err relayout_copy(const tc_contraction *shape, bench_array which, const void *source,
                            void **target) {
  size_t bytes = (size_t)bench_array_count(shape, which) * (size_t)tc_precision_size(shape->precision);
  *target = malloc(bytes);
  TC_CHECK(*target != NULL, TC_ERR_MEMORY, "out of memory allocating %zu bytes", bytes);
  bench_relayout(shape, which, source, *target, true);
  return TC_SUCCESS;
}

/* The case's arrays in layout: the case's own for RIGHT, converted copies else. */
static tc_err make_layout_arrays(const bench_case *c, tc_layout layout, layout_arrays *l) {
  memset(l, 0, sizeof *l);
  l->source = c;
  l->shape = c->shape;
  l->shape.layout = layout;
  size_t output_bytes = (size_t)tc_contraction_output_count(&c->shape) *
                        (size_t)tc_precision_size(c->shape.precision);
  l->scratch = malloc(output_bytes);
  TC_CHECK(l->scratch != NULL, TC_ERR_MEMORY, "out of memory allocating %zu bytes", output_bytes);
  if (layout == TC_LAYOUT_RIGHT) {
    l->left = c->left;
    l->right = c->right;
    l->initial_output = c->initial_output;
    return TC_SUCCESS;
  }
  TC_CALL(relayout_copy(&l->shape, BENCH_ARRAY_LEFT, c->left, &l->left));
  TC_CALL(relayout_copy(&l->shape, BENCH_ARRAY_RIGHT, c->right, &l->right));
  if (c->initial_output != NULL)
    TC_CALL(relayout_copy(&l->shape, BENCH_ARRAY_OUTPUT, c->initial_output, &l->initial_output));
  return TC_SUCCESS;
}

static tc_err run_case(bench_run *run, const bench_case *c, const char *preset,
                       row_capture *capture) {
  const bench_options *o = run->options;
  for (int l = 0; l < o->num_layouts; ++l) {
    layout_arrays host;
    tc_err err = make_layout_arrays(c, o->layouts[l], &host);
    double serial_median = 0.0;
    for (int k = 0; k < run->plan.num_configs && err == TC_SUCCESS; ++k)
      err = run_config(run, &run->plan.configs[k], &host, preset, &serial_median, capture);
    free_layout_arrays(&host, c);
    TC_CALL(err);
  }
  return TC_SUCCESS;
}

/* ---- the modes ------------------------------------------------------------------ */

/* --tune: hands the verified rows of the case just run to the tuner. */
static tc_err tune_case(bench_run *run) {
  if (run->tuner != NULL)
    for (int k = 0; k < run->num_captured; ++k) {
      const bench_row *row = &run->captured[k];
      if (row->verified && row->backend == run->plan.configs[0].backend)
        TC_CALL(bench_tuner_add(run->tuner, &row->shape, row->variant, row->median_seconds));
    }
  run->num_captured = 0;
  return TC_SUCCESS;
}

static tc_err run_presets(bench_run *run) {
  const bench_options *o = run->options;
  for (int k = 0; k < o->num_kernels; ++k)
    for (int p = 0; p < o->num_precisions; ++p) {
      tc_contraction shapes[BENCH_PRESET_COUNT];
      int preset_of[BENCH_PRESET_COUNT], count = 0;
      TC_CALL(bench_options_shapes(o, o->kernels[k], o->precisions[p], shapes, preset_of, &count));
      for (int s = 0; s < count; ++s) {
        uint64_t seed = 1000003u * (uint64_t)(k + 1) + 1009u * (uint64_t)(s + 1) + (uint64_t)p;
        bench_case c;
        tc_err err = bench_case_create_random_checked(&shapes[s], seed, o->check_cells, &c);
        if (err == TC_SUCCESS)
          err = run_case(run, &c, bench_preset_name(preset_of[s]), NULL);
        bench_case_destroy(&c);
        TC_CALL(err);
        TC_CALL(tune_case(run));
      }
    }
  return TC_SUCCESS;
}

/* --shapes and --deck: each listed shape in each precision. */
static tc_err run_listed(bench_run *run) {
  const bench_options *o = run->options;
  for (int i = 0; i < o->num_shapes; ++i)
    for (int p = 0; p < o->num_precisions; ++p) {
      tc_contraction shape;
      TC_CALL(bench_options_listed_shape(o, i, o->precisions[p], &shape));
      uint64_t seed = 7919u * (uint64_t)(i + 1) + (uint64_t)p;
      bench_case c;
      tc_err err = bench_case_create_random_checked(&shape, seed, o->check_cells, &c);
      if (err == TC_SUCCESS)
        err = run_case(run, &c, o->deck_path != NULL ? "deck" : "list", NULL);
      bench_case_destroy(&c);
      TC_CALL(err);
      TC_CALL(tune_case(run));
    }
  return TC_SUCCESS;
}

/* The --backend (and --threads) options that rerun a row of this run. */
static void backend_options_text(const bench_run *run, char *text, size_t capacity) {
  const bench_config *config = &run->plan.configs[0];
  if (config->backend == TC_BACKEND_OPENMP)
    snprintf(text, capacity, "--backend openmp --threads %d", config->threads);
  else
    snprintf(text, capacity, "--backend %s", tc_backend_name(config->backend));
}

/* --sweep N: random FieldField shapes, AUTO against the vendor row. With
 * --tune the shapes feed the tuner instead (every variant timed). */
static tc_err run_sweep(bench_run *run) {
  const bench_options *o = run->options;
  const bool summary = run->tuner == NULL;
  bench_sweep_result *results = NULL;
  if (summary)
    TC_CALLOC(results, o->sweep);
  tc_err err = TC_SUCCESS;
  for (int p = 0; p < o->num_precisions && err == TC_SUCCESS; ++p)
    for (int l = 0; l < o->num_layouts && err == TC_SUCCESS; ++l) {
      for (int64_t i = 0; i < o->sweep && err == TC_SUCCESS; ++i) {
        tc_contraction shape;
        bench_sweep_shape((uint64_t)o->seed, i, TC_LAYOUT_RIGHT, o->precisions[p], o->memory_mb,
                          &shape);
        bench_case c;
        run->num_captured = 0;
        err = bench_case_create_random_checked(&shape, (uint64_t)o->seed * 1000003u + (uint64_t)i,
                                               o->check_cells, &c);
        if (err == TC_SUCCESS) {
          /* run_case walks --layout; the sweep runs one layout per pass. */
          bench_options one = *o;
          one.num_layouts = 1;
          one.layouts[0] = o->layouts[l];
          run->options = &one;
          err = run_case(run, &c, "sweep", NULL);
          run->options = o;
        }
        bench_case_destroy(&c);
        if (err == TC_SUCCESS && !summary)
          err = tune_case(run);
        if (err != TC_SUCCESS || !summary)
          continue;
        bench_sweep_result *r = &results[i];
        memset(r, 0, sizeof *r);
        r->shape = shape;
        r->shape.layout = o->layouts[l];
        r->verified = run->num_captured > 0;
        for (int k = 0; k < run->num_captured; ++k) {
          const bench_row *row = &run->captured[k];
          r->verified = r->verified && row->verified;
          if (row->chosen != NULL && strcmp(row->chosen, "yardstick") == 0) {
            r->vendor_seconds = row->median_seconds;
          } else {
            r->auto_seconds = row->median_seconds;
            r->auto_variant = row->variant;
            r->chosen = row->chosen;
          }
        }
      }
      if (err == TC_SUCCESS && summary) {
        char backend_text[96];
        backend_options_text(run, backend_text, sizeof backend_text);
        printf("\n%s, layout %s, precision %s, --memory %lld:", tc_backend_name(run->plan.configs[0].backend),
               tc_layout_name(o->layouts[l]), tc_precision_name(o->precisions[p]),
               (long long)o->memory_mb);
        bench_sweep_print_summary(stdout, results, o->sweep, (uint64_t)o->seed, backend_text);
        printf("\n");
      }
    }
  free(results);
  return err;
}

/* Reads and checks the replay file before anything is measured or timed. */
static tc_err load_replay(bench_run *run) {
  const bench_options *o = run->options;
  run->replay_source = (tc_replay_source){.path = o->replay_path,
                                          .group = o->replay_group,
                                          .kernel = o->kernel_named ? &o->kernels[0] : NULL,
                                          .sum_into = o->sum_into};
  tc_replay_case file;
  TC_CALL(tc_replay_read(&run->replay_source, &file));
  if (o->precision_named && o->precisions[0] != file.shape.precision) {
    tc_precision found = file.shape.precision;
    tc_replay_case_free(&file);
    TC_FAIL(TC_ERR_INPUT, "--precision %s: '%s' holds %s data, and a replay runs in the file's "
            "precision (drop --precision)", tc_precision_name(o->precisions[0]), o->replay_path,
            tc_precision_name(found));
  }
  run->replay_output_unused = file.has_output && !o->sum_into;
  /* The case takes the arrays over. */
  return bench_case_create_from(&file.shape, file.left, file.right, file.initial_output,
                                &run->replay);
}

static tc_err run_replay(bench_run *run, row_capture *capture) {
  const bench_options *o = run->options;
  const tc_contraction *shape = &run->replay.shape;
  bool in_group = strcmp(o->replay_group, "/") != 0;
  printf("replay: %s from '%s'%s%s, %s%s\n", tc_kernel_name(shape->kernel), o->replay_path,
         in_group ? ", group " : "", in_group ? o->replay_group : "",
         tc_precision_name(shape->precision),
         shape->sum_into ? ", added to its dataset 'output' (sum into)" : "");
  if (run->replay_output_unused)
    printf("note: its dataset 'output' is not used; --sum-into adds the contraction to it\n");
  printf("\n");
  bench_report_table_header(stdout);
  TC_CALL(run_case(run, &run->replay, "replay", capture));
  if (capture != NULL) {
    TC_CALL(tc_replay_writer_commit(capture->writer));
    printf("wrote the results of %d row%s to '%s' (rows/0 ... with backend, layout, variant,"
           " precision; output = rows/0)\n", run->rows, run->rows == 1 ? "" : "s",
           o->replay_output_path);
  }
  return TC_SUCCESS;
}

/* --tune: the tuning file from the verified rows (none when a row failed). */
static tc_err write_tuning(bench_run *run) {
  const bench_options *o = run->options;
  TC_CHECK(run->failures == 0, TC_ERR_VERIFY,
           "%d row(s) failed verification: no tuning file written to '%s'", run->failures,
           o->tune_path);
  const bench_config *config = &run->plan.configs[0];
  char comment[512], threads[32] = "";
  if (config->backend == TC_BACKEND_OPENMP)
    snprintf(threads, sizeof threads, ", %d thread%s", config->threads,
             config->threads == 1 ? "" : "s");
  snprintf(comment, sizeof comment,
           "written by tcmini-bench %s (git %s): backend %s%s, shapes from %s, --memory %lld "
           "MB, medians of %lld runs\nfor shapes in no class below, AUTO keeps the built-in rules",
           TCMINI_VERSION, TCMINI_GIT_REVISION, tc_backend_name(config->backend), threads,
           o->sweep > 0 ? "--sweep" : o->deck_path != NULL ? "--deck" : o->num_shapes > 0 ? "--shapes"
                                                                                : "the presets",
           (long long)o->memory_mb, (long long)o->reps);
  return bench_tuner_write(run->tuner, run->tuned_device, comment, o->tune_path, stdout);
}

static tc_err run_modes(bench_run *run, row_capture *capture) {
  const bench_options *o = run->options;
  if (o->csv_path != NULL)
    TC_CALL(bench_report_csv_open(o->csv_path, &run->csv));
  tc_err err;
  if (o->replay_path != NULL) {
    err = run_replay(run, capture);
  } else {
    bench_report_table_header(stdout);
    err = o->sweep > 0 ? run_sweep(run) : o->num_shapes > 0 ? run_listed(run) : run_presets(run);
  }
  if (run->csv != NULL && fclose(run->csv) != 0 && err == TC_SUCCESS)
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__, "writing '%s' failed", o->csv_path);
  run->csv = NULL;
  if (err == TC_SUCCESS && run->tuner != NULL)
    err = write_tuning(run);
  return err;
}

/* The replay's files first (checked before anything is measured), then the
 * configurations and rooflines, then the rows. */
static tc_err run_benchmark(bench_run *run) {
  const bench_options *o = run->options;
  row_capture capture = {NULL, NULL};
  tc_err err = TC_SUCCESS;
  if (o->replay_path != NULL) {
    err = load_replay(run);
    if (err == TC_SUCCESS && o->replay_output_path != NULL)
      err = tc_replay_writer_create(o->replay_output_path, o->overwrite, &run->replay_source,
                                    &run->replay.shape, &capture.writer);
    size_t bytes = (size_t)tc_contraction_output_count(&run->replay.shape) *
                   (size_t)tc_precision_size(run->replay.shape.precision);
    if (err == TC_SUCCESS && capture.writer != NULL && (capture.output = malloc(bytes)) == NULL)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory allocating %zu bytes", bytes);
  }
  size_t cache = bench_machine_last_level_cache();
  run->flush_bytes = 3 * cache > ((size_t)64 << 20) ? 3 * cache : (size_t)64 << 20;
  if (o->no_flush)
    run->flush_bytes = 0;
  if (err == TC_SUCCESS)
    err = bench_plan_create(run->options, &run->plan);
  if (err == TC_SUCCESS)
    err = plan_one_backend(run);
  if (err == TC_SUCCESS)
    err = load_tuning(run);
  if (err == TC_SUCCESS && run->flush_bytes > 0)
    err = bench_flush_create(NULL, run->flush_bytes, &run->host_flush);
  if (err == TC_SUCCESS) {
    print_machine(run);
    err = run_modes(run, capture.writer != NULL ? &capture : NULL);
  }
  tc_replay_writer_destroy(&capture.writer);
  free(capture.output);
  bench_case_destroy(&run->replay);
  bench_flush_destroy(&run->host_flush);
  tc_tuning_destroy(&run->tuning);
  bench_tuner_destroy(&run->tuner);
  free(run->captured);
  run->captured = NULL;
  return err;
}

/* Errors that mean the command line asked for something this build or
 * machine cannot do, or named a bad replay file: exit 2, as tcmini does. */
static bool bad_input(tc_err err) {
  return err == TC_ERR_INPUT || err == TC_ERR_SHAPE || err == TC_ERR_ARGUMENT ||
         err == TC_ERR_UNSUPPORTED || err == TC_ERR_NO_DEVICE;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "tcmini-bench: error: %s\n", tc_error_message());
    return EXIT_FAILURE;
  }
  int rank = tc_rank(MPI_COMM_WORLD);
  int exit_code = EXIT_SUCCESS;
  bench_options options;
  if (bench_options_parse(argc, argv, &options) != TC_SUCCESS) {
    if (rank == 0)
      fprintf(stderr, "tcmini-bench: error: %s\n", tc_error_message());
    exit_code = EXIT_BAD_OPTIONS;
  } else if (options.help) {
    if (rank == 0)
      bench_options_print_help(stdout);
  } else if (options.version) {
    if (rank == 0)
      print_version();
  } else if (rank == 0) {
    if (tc_size(MPI_COMM_WORLD) > 1)
      printf("tcmini-bench runs on rank 0 only; %d other ranks wait\n", tc_size(MPI_COMM_WORLD) - 1);
    bench_run run;
    memset(&run, 0, sizeof run);
    run.options = &options;
    tc_contract_set_probe(!options.no_probe);
    tc_err err = run_benchmark(&run);
    if (err != TC_SUCCESS) {
      /* Where in the source an error arose helps only with a bug. */
      if (err == TC_ERR_INTERNAL)
        fprintf(stderr, "tcmini-bench: error: %s [%s]\n", tc_error_message(), tc_error_origin());
      else
        fprintf(stderr, "tcmini-bench: error: %s\n", tc_error_message());
      exit_code = bad_input(err) ? EXIT_BAD_OPTIONS : EXIT_FAILURE;
    } else {
      printf("\n%d rows, %d verified, %d failed; %d variant/backend pairs skipped (not supported)\n",
             run.rows, run.rows - run.failures, run.failures, run.skipped);
      exit_code = run.failures > 0 ? EXIT_VERIFY_FAILED : EXIT_SUCCESS;
    }
  }
  fflush(stdout);
  if (tc_broadcast(MPI_COMM_WORLD, &exit_code, sizeof exit_code, 0) != TC_SUCCESS ||
      tc_parallel_finalize() != TC_SUCCESS) {
    fprintf(stderr, "tcmini-bench: error: %s\n", tc_error_message());
    return EXIT_FAILURE;
  }
  return exit_code;
}
