/* bench_measure: one case measured in every layout on every backend of the
 * plan (see bench_measure.h). */
#include "bench_measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_contract.h"
#include "tc_device.h"
#include "tc_signals.h"

/* ---- one row ------------------------------------------------------------- */

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
  TC_CALL(tc_signals_check()); /* SIGINT, SIGTERM: stop between runs */
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
static tc_err keep_row_output(bench_row_capture *capture, const bench_row *row, const void *scratch) {
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
                        pending_row *p, bench_row_capture *capture) {
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
                         const char *preset, double *serial_median, bench_row_capture *capture) {
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

tc_err bench_measure_case(bench_run *run, const bench_case *c, const char *preset,
                          bench_row_capture *capture) {
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
