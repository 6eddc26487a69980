/* bench_run: tcmini-bench's run from its options to its last row (see
 * bench_run.h): the plan and the tuning file, the replay file, the mode
 * (presets, listed shapes, --sweep, --replay), and the files --tune and
 * --replay-output write. */
#include "bench_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sweep.h"
#include "tc_contract.h"
#include "tc_device.h"
#include "tc_fatal_guard.h"
#include "tc_file_paths.h"

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
  /* Layout right's reference is the vendor variant; layout left's is AUTO
   * in layout right, which needs no vendor library. */
  if (o->sweep > 0 && o->tune_path == NULL && bench_options_has_layout(o, TC_LAYOUT_RIGHT))
    TC_CHECK(tc_contract_vendor_library(backend) != NULL, TC_ERR_UNSUPPORTED,
             "--sweep compares AUTO in layout right with the vendor variant, and %s "
             "(--layout left alone compares with layout right)",
             tc_contract_vendor_refusal(backend, NULL));
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
  /* a file the command line names that cannot be read is bad input (exit 2) */
  err = tc_error_recode(err, TC_ERR_IO, TC_ERR_INPUT);
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

static void print_machine(const bench_run *run, const char *program) {
  const bench_options *o = run->options;
  char model[256];
  tc_device_cpu_model(model, sizeof model);
  printf("%s, %s\n", program, __VERSION__);
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
          err = bench_measure_case(run, &c, bench_preset_name(preset_of[s]), NULL);
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
        err = bench_measure_case(run, &c, o->deck_path != NULL ? "deck" : "list", NULL);
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

/* --sweep N: random FieldField shapes, AUTO against the vendor row in layout
 * right, against AUTO in layout right (the same shape and data) in layout
 * left. With --tune the shapes feed the tuner instead (every variant timed). */
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
          /* run_case walks --layout; the sweep runs one layout per pass, and
           * layout left's pass runs layout right after it, without the
           * vendor row, as its reference. */
          bench_options one = *o;
          const bool left = o->layouts[l] == TC_LAYOUT_LEFT && summary;
          one.num_layouts = left ? 2 : 1;
          one.layouts[0] = o->layouts[l];
          one.layouts[1] = TC_LAYOUT_RIGHT;
          one.no_yardstick = one.no_yardstick || left;
          run->options = &one;
          err = bench_measure_case(run, &c, "sweep", NULL);
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
          const bool reference = row->shape.layout != o->layouts[l] ||
                                 (row->chosen != NULL && strcmp(row->chosen, "yardstick") == 0);
          if (reference) {
            r->reference_seconds = row->median_seconds;
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
        bench_sweep_print_summary(stdout, results, o->sweep, o->layouts[l], (uint64_t)o->seed,
                                  backend_text);
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
  /* HDF5 can crash on a damaged file: then one error line, status 2 */
  char what[1200];
  snprintf(what, sizeof what, "reading the replay file '%s'", o->replay_path);
  tc_fatal_guard_begin("tcmini-bench", what);
  const tc_err read = tc_replay_read(&run->replay_source, &file);
  tc_fatal_guard_end();
  if (read == TC_ERR_HDF5) { /* HDF5 found the file but could not read what it holds */
    char message[1400], origin[256];
    snprintf(origin, sizeof origin, "%s", tc_error_origin());
    snprintf(message, sizeof message, "%s: the replay file is damaged or not what it claims to be",
             tc_error_message());
    tc_error_adopt(TC_ERR_INPUT, message, origin);
    return TC_ERR_INPUT;
  }
  TC_CALL(read);
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

static tc_err run_replay(bench_run *run, bench_row_capture *capture) {
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
  TC_CALL(bench_measure_case(run, &run->replay, "replay", capture));
  if (capture != NULL) {
    /* as --tune: results that failed verification are not written */
    TC_CHECK(run->failures == 0, TC_ERR_VERIFY,
             "%d of %d rows failed verification: no results written to '%s'", run->failures,
             run->rows, o->replay_output_path);
    TC_CALL(tc_replay_writer_commit(capture->writer));
    printf("wrote the results of %d row%s to '%s' (rows/0 ... with backend, layout, variant,"
           " precision; output = rows/0)\n", run->rows, run->rows == 1 ? "" : "s",
           o->replay_output_path);
  }
  return TC_SUCCESS;
}

/* --tune: the tuning file from the verified rows (none when a row failed). */
static tc_err write_tuning(bench_run *run, const char *program) {
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
           "written by %s: backend %s%s, shapes from %s, --memory %lld "
           "MB, medians of %lld runs\nfor shapes in no class below, AUTO keeps the built-in rules",
           program, tc_backend_name(config->backend), threads,
           o->sweep > 0 ? "--sweep" : o->deck_path != NULL ? "--deck" : o->num_shapes > 0 ? "--shapes"
                                                                                : "the presets",
           (long long)o->memory_mb, (long long)o->reps);
  return bench_tuner_write(run->tuner, run->tuned_device, comment, o->tune_path, stdout);
}

static tc_err run_modes(bench_run *run, bench_row_capture *capture, const char *program) {
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
  if (run->csv != NULL) {
    const tc_err closed = bench_report_csv_close(run->csv, o->csv_path, err == TC_SUCCESS);
    err = err == TC_SUCCESS ? closed : err;
  }
  run->csv = NULL;
  if (err == TC_SUCCESS && run->tuner != NULL)
    err = write_tuning(run, program);
  return err;
}

tc_err bench_run_benchmark(bench_run *run, const char *program) {
  const bench_options *o = run->options;
  bench_row_capture capture = {NULL, NULL};
  /* the files the run writes, checked before anything is measured */
  tc_err err = o->tune_path != NULL ? tc_file_check_writable(o->tune_path, "tuning file")
                                    : TC_SUCCESS;
  if (err == TC_SUCCESS && o->csv_path != NULL)
    err = tc_file_check_writable(o->csv_path, "CSV file");
  if (err == TC_SUCCESS && o->replay_output_path != NULL)
    err = tc_file_check_writable(o->replay_output_path, "results file");
  if (err == TC_SUCCESS && o->replay_path != NULL) {
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
    print_machine(run, program);
    err = run_modes(run, capture.writer != NULL ? &capture : NULL, program);
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
