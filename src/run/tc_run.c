/* tc_run: the mini-app's run after its deck is loaded, stage by stage (see
 * tc_run.h): the rank's device and tuning file, the mesh and the results
 * file's destination, the loop, the steps, the checks, the results file
 * and the report's figures and roofline. */
#include "tc_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_checks.h"
#include "tc_config.h"
#include "tc_device.h"
#include "tc_loop.h"
#include "tc_loop_model.h"
#include "tc_memory.h"
#include "tc_mesh.h"
#include "tc_output.h"
#include "tc_parallel.h"
#include "tc_physics.h"
#include "tc_progress.h"
#include "tc_report.h"
#include "tc_results.h"
#include "tc_signals.h"
#include "tc_timers.h"
#include "tc_tuning_shared.h"

/* Adds the checks to the report. */
static tc_err report_checks(tc_report *report, const tc_check_list *list) {
  for (int i = 0; i < list->count; ++i) {
    const tc_check *c = &list->checks[i];
    TC_CALL(tc_report_add_check(report, c->name, c->value, c->reference, c->tolerance,
                                c->passed, c->skipped ? c->note : NULL, c->scale));
  }
  return TC_SUCCESS;
}

/* Adds the summaries of the result fields (sums, norms, extremes) to the
 * report, for regression comparisons. Collective. */
static tc_err report_results(tc_report *report, const tc_mesh *mesh, const tc_loop *loop) {
  tc_result_summary summaries[TC_RESULTS_MAX];
  int count = 0;
  TC_CALL(tc_results_summarize(mesh, loop, summaries, &count));
  for (int i = 0; i < count; ++i) {
    const tc_result_summary *s = &summaries[i];
    TC_CALL(tc_report_add_result(report, s->name, s->units, s->count, s->sum, s->sum_abs, s->norm,
                                 s->min, s->max));
  }
  return TC_SUCCESS;
}

/* Figures of merit: cells per second through the whole loop, and GFLOP/s of
 * each kernel (flops of all ranks over the slowest rank's kernel time); the
 * kernels that run fused count together over their fused product's phase
 * time (fused_diffusion, fused_elasticity). With
 * batches in flight the kernels have no time of their own (the batches
 * phase times them together), and no figure. */
static tc_err report_figures(tc_report *report, const tc_config *config, const tc_loop *loop,
                             const tc_phase_stats *stats, double loop_seconds) {
  double cells = (double)(config->cells[0] * config->cells[1] * config->cells[2]);
  TC_CALL(tc_report_add_figure(report, "assembly loop", cells * (double)config->steps / loop_seconds,
                               "cells/s"));
  double fused_flops[2] = {0.0, 0.0}; /* the diffusion kernels', the elasticity trio's */
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!config->kernels[k])
      continue;
    double flops = tc_loop_kernel_flops(loop, k);
    TC_CALL(tc_allreduce_sum_double(MPI_COMM_WORLD, &flops, 1));
    if (tc_loop_kernel_fused(loop, k)) {
      fused_flops[tc_physics_kernel_elastic(k)] += flops;
      continue;
    }
    const double seconds = stats[tc_phase_of_kernel(k)].max;
    if (seconds > 0)
      TC_CALL(tc_report_add_figure(report, tc_kernel_name(k), flops / seconds / 1e9, "GFLOP/s"));
  }
  const tc_phase fused_phases[2] = {TC_PHASE_FUSED_DIFFUSION, TC_PHASE_FUSED_ELASTICITY};
  for (int product = 0; product < 2; ++product) {
    const double seconds = stats[fused_phases[product]].max;
    if (fused_flops[product] > 0 && seconds > 0)
      TC_CALL(tc_report_add_figure(report, tc_phase_name(fused_phases[product]),
                                   fused_flops[product] / seconds / 1e9, "GFLOP/s"));
  }
  return TC_SUCCESS;
}

/* The loop's roofline: each phase of the model against the ceilings. */
static tc_err report_roofline(tc_report *report, const tc_config *config, const tc_loop *loop,
                              const tc_phase_stats *stats, double loop_seconds,
                              const tc_loop_ceilings *ceilings) {
  tc_report_ceilings sums;
  tc_report_roofline_row rows[TC_PHASE_COUNT + 1];
  int count = 0;
  TC_CALL(tc_loop_roofline(loop, stats, loop_seconds, config->steps, ceilings, &sums, rows,
                           &count));
  return tc_report_set_roofline(report, &sums, rows, count);
}

/* The phase table of the results file. */
static void output_phases(const tc_phase_stats stats[TC_PHASE_COUNT],
                          tc_output_phase phases[TC_PHASE_COUNT]) {
  for (int p = 0; p < TC_PHASE_COUNT; ++p)
    phases[p] = (tc_output_phase){tc_phase_name(p), stats[p].min, stats[p].avg, stats[p].max};
}

/* The results file: the node and cell fields of the last step
 * (tc_results_fields: names, units, meanings). */
static tc_err write_output(tc_output *output, const tc_config *config, const tc_loop *loop,
                           const tc_report *report, const tc_phase_stats *stats,
                           tc_output_stats *written) {
  const tc_loop_results *r = tc_loop_get_results(loop);
  int num_fields = 0;
  const tc_result_field *fields = tc_results_fields(&num_fields);
  for (int i = 0; i < num_fields; ++i) {
    const tc_result_field *f = &fields[i];
    tc_output_field field = {f->name, f->components, tc_results_values(f, r), f->units,
                             f->description};
    if (field.values && strcmp(f->group, "cells") == 0)
      TC_CALL(tc_output_add_cell_field(output, &field));
    else if (field.values)
      TC_CALL(tc_output_add_node_field(output, &field));
  }
  static const char *matrix_names[3] = {"mass", "diffusion_stiffness", "elasticity_stiffness"};
  static const char *matrix_units[3] = {"length^3", "length", "stress*length"};
  for (int k = TC_FIELD_FIELD_SCALAR; k <= TC_FIELD_FIELD_TENSOR; ++k) {
    if (!r->element_matrices[k])
      continue;
    int size = (int)tc_loop_num_fields(loop) * (tc_physics_kernel_components(k) == 3 ? 3 : 1);
    tc_output_matrix matrix = {matrix_names[k], size, size, r->element_matrices[k], matrix_units[k],
                               tc_physics_kernel_role(k)};
    TC_CALL(tc_output_add_element_matrix(output, &matrix));
  }
  tc_output_phase phases[TC_PHASE_COUNT];
  output_phases(stats, phases);
  char *deck = NULL;
  TC_CALL(tc_config_deck_string(config, &deck));
  tc_output_run_info run = {
      .deck_text = deck,
      .version = tc_report_version(),
      .git_revision = tc_report_git_revision(),
      .backend = tc_backend_name(config->backend),
      .layout = tc_layout_name(tc_config_layout(config)),
      .variant = tc_report_variants_text(report),
      .precision = tc_precision_name(config->precision),
      .phases = phases,
      .num_phases = TC_PHASE_COUNT,
  };
  tc_err err = tc_output_write(output, &run, written);
  free(deck);
  return err;
}

/* The ranks agree on a rank-local outcome (tc_parallel_agree); the time a
 * rank waits there for the others is the wait phase. The timer is stopped
 * whatever the outcome, so that every rank reaches the agreement. */
static tc_err agree(tc_timers *timers, tc_err local) {
  const tc_err timed = tc_timer_start(timers, TC_PHASE_WAIT);
  tc_err err = tc_parallel_agree(MPI_COMM_WORLD, local);
  if (timed == TC_SUCCESS) {
    const tc_err stopped = tc_timer_stop(timers, TC_PHASE_WAIT);
    err = err != TC_SUCCESS ? err : stopped;
  }
  return err != TC_SUCCESS ? err : timed;
}

/* The results file's figures: the whole write (MPI-IO, flush, read-back
 * check, publication), and of it the MPI-IO writes and the read-back. */
static tc_err report_output(tc_report *report, const tc_output_stats *written) {
  const double gigabytes = (double)written->payload_bytes / 1e9;
  TC_CALL(tc_report_add_figure(report, "output write", written->gigabytes_per_second, "GB/s"));
  TC_CALL(tc_report_add_figure(report, "output write, data only",
                               written->write_seconds > 0 ? gigabytes / written->write_seconds : 0,
                               "GB/s"));
  return tc_report_add_figure(report, "output read-back check",
                              written->verify_seconds > 0 ? gigabytes / written->verify_seconds
                                                          : 0,
                              "GB/s");
}

/* What a run holds from one stage to the next. */
typedef struct {
  tc_device *device;
  tc_mesh *mesh;
  tc_loop *loop;
  tc_output *output;  /* NULL with output.path = none */
  tc_tuning *tuning;  /* the deck's tuning file, until the loop has chosen */
  tc_loop_ceilings ceilings; /* measured where the deck's roofline is on */
  double loop_seconds; /* the steps' wall time, slowest rank */
} run_state;

/* Opens the rank's device, reads the tuning file (before anything is built
 * or written: a bad one costs nothing), records the run in the report and,
 * with the roofline on, measures the loop's ceilings, every rank of a node
 * at once. */
static tc_err open_device(const tc_config *config, tc_report *report, tc_timers *timers,
                          run_state *s) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int local_rank = 0, local_size = 1;
  tc_err err = tc_timer_start(timers, TC_PHASE_DEVICE);
  if (err == TC_SUCCESS)
    err = tc_node_local_rank(comm, &local_rank, &local_size);
  if (err == TC_SUCCESS) /* before anything large is allocated */
    err = tc_memory_check(config, tc_size(comm), local_size);
  if (err == TC_SUCCESS) {
    tc_device_options options = {.backend = config->backend,
                                 .num_threads = (int)config->threads,
                                 .local_rank = local_rank,
                                 .local_size = local_size,
                                 .allow_gpu_sharing = config->gpu_sharing};
    err = tc_device_create(&options, &s->device);
  }
  if (err == TC_SUCCESS)
    err = tc_timer_stop(timers, TC_PHASE_DEVICE);
  err = agree(timers, err);
  if (err == TC_SUCCESS)
    err = tc_timer_start(timers, TC_PHASE_DEVICE);
  if (err == TC_SUCCESS && tc_config_has_tuning(config)) {
    err = tc_tuning_load_shared(comm, config->tuning, config->backend, tc_device_model(s->device),
                                config->tuning_on_error == TC_TUNING_ON_ERROR_RULES, &s->tuning);
    tc_report_set_tuning(report, config->tuning, s->tuning != NULL);
  }
  if (err == TC_SUCCESS)
    err = tc_report_set_run(report, config, tc_device_num_threads(s->device),
                            tc_device_description(s->device));
  if (err == TC_SUCCESS) /* threads beyond a rank's cores share them: warn */
    err = tc_report_set_cores(report, tc_device_host_cores(), stderr);
  if (err == TC_SUCCESS)
    err = tc_timer_stop(timers, TC_PHASE_DEVICE);
  if (err == TC_SUCCESS && config->roofline) {
    err = tc_timer_start(timers, TC_PHASE_ROOFLINE);
    if (err == TC_SUCCESS)
      err = tc_loop_measure_ceilings(s->device, local_size, &s->ceilings);
    if (err == TC_SUCCESS)
      err = tc_timer_stop(timers, TC_PHASE_ROOFLINE);
    err = agree(timers, err);
  }
  return err;
}

/* The rank's part of the mesh, the results file's checks (before any work)
 * and the assembly loop with its workset. */
static tc_err build(const tc_config *config, tc_report *report, tc_timers *timers,
                    run_state *s) {
  MPI_Comm comm = MPI_COMM_WORLD;
  tc_mesh_options mesh_options = {.distortion = config->distortion, .order = (int)config->order};
  memcpy(mesh_options.cells, config->cells, sizeof mesh_options.cells);
  memcpy(mesh_options.length, config->length, sizeof mesh_options.length);
  tc_err err = tc_timer_start(timers, TC_PHASE_MESH);
  if (err == TC_SUCCESS)
    err = tc_mesh_create(comm, &mesh_options, &s->mesh);
  if (err == TC_SUCCESS)
    err = tc_timer_stop(timers, TC_PHASE_MESH);
  if (err == TC_SUCCESS && strcmp(config->path, "none") != 0) {
    err = tc_timer_start(timers, TC_PHASE_OUTPUT);
    if (err == TC_SUCCESS)
      err = tc_output_create(comm, config->path, config->overwrite, s->mesh, &s->output);
    if (err == TC_SUCCESS)
      err = tc_timer_stop(timers, TC_PHASE_OUTPUT);
  }
  if (err == TC_SUCCESS && s->output && tc_output_note(s->output)[0]) /* rank 0's, about the path */
    fprintf(stderr, "tcmini: note: %s\n", tc_output_note(s->output));
  if (err == TC_SUCCESS)
    err = agree(timers, tc_loop_create(config, s->mesh, s->device, s->tuning, timers, &s->loop));
  if (err == TC_SUCCESS)
    err = agree(timers, tc_loop_connect(s->loop, timers));
  tc_tuning_destroy(&s->tuning); /* the loop chose its variants */
  if (err == TC_SUCCESS)
    err = tc_report_set_workset(report, tc_loop_batch_cells(s->loop), tc_loop_num_batches(s->loop),
                                config->batch_cells == 0, tc_loop_batch_rule(s->loop));
  return err;
}

/* The assembly steps, each agreed among the ranks (SIGINT and SIGTERM stop
 * the run between steps), then the variants that ran, as the first step's
 * probes left them. */
static tc_err run_steps(const tc_config *config, tc_report *report, tc_timers *timers,
                        run_state *s) {
  MPI_Comm comm = MPI_COMM_WORLD;
  tc_err err = TC_SUCCESS;
  tc_progress progress;
  tc_progress_start(&progress, config->progress, tc_rank(comm), config->steps);
  for (int64_t step = 0; step < config->steps && err == TC_SUCCESS; ++step) {
    tc_progress_step(&progress, step);
    double start = tc_wall_seconds();
    tc_err local = tc_loop_step(s->loop, timers);
    if (local == TC_SUCCESS)
      local = tc_signals_check();
    err = agree(timers, local);
    s->loop_seconds += tc_wall_seconds() - start;
  }
  tc_progress_finish(&progress);
  tc_report_set_replay(report, tc_loop_replay_note(s->loop));
  tc_report_set_fused_form(report, tc_loop_fused_form(s->loop));
  const char *exchange_why = NULL;
  const char *exchange = tc_loop_exchange_name(s->loop, &exchange_why);
  tc_report_set_exchange(report, exchange, exchange_why);
  if (err == TC_SUCCESS) {
    err = tc_timer_start(timers, TC_PHASE_WAIT);
    if (err == TC_SUCCESS)
      err = tc_allreduce_max_double(comm, &s->loop_seconds, 1);
    if (err == TC_SUCCESS)
      err = tc_timer_stop(timers, TC_PHASE_WAIT);
  }
  for (int k = 0; k < TC_KERNEL_COUNT && err == TC_SUCCESS; ++k)
    if (config->kernels[k] && !tc_loop_kernel_fused(s->loop, k)) {
      err = tc_report_set_variant(report, k, tc_loop_variant(s->loop, k));
      if (err == TC_SUCCESS)
        err = tc_report_set_variant_choice(report, k, tc_loop_variant_choice(s->loop, k));
    }
  return err;
}

/* The checks read the results, the assembled matrices included, and the
 * output the vectors and the element matrices: on a GPU these come to the
 * host once, here, outside the loop's time (in the copy_back phase); then
 * the checks run and their results and the results' sums go to the report. */
static tc_err check(const tc_config *config, tc_report *report, tc_timers *timers,
                    run_state *s) {
  MPI_Comm comm = MPI_COMM_WORLD;
  const bool checks_on = tc_config_checks_enabled(config);
  const bool matrices_read = checks_on || (s->output && config->element_matrices);
  tc_err err = TC_SUCCESS;
  if (checks_on || s->output)
    err = agree(timers, tc_loop_finish(s->loop, timers, matrices_read));
  if (err == TC_SUCCESS && checks_on) {
    tc_check_list checks;
    err = tc_timer_start(timers, TC_PHASE_CHECKS);
    if (err == TC_SUCCESS)
      err = tc_parallel_agree(comm, tc_checks_run(config, s->mesh, s->loop, &checks));
    if (err == TC_SUCCESS) /* the sums and norms a regression compares */
      err = tc_parallel_agree(comm, report_results(report, s->mesh, s->loop));
    if (err == TC_SUCCESS)
      err = report_checks(report, &checks);
    if (err == TC_SUCCESS)
      err = tc_timer_stop(timers, TC_PHASE_CHECKS);
  }
  return err;
}

/* A run whose checks failed writes its results beside the path it was
 * given (tc_output_divert_failed), so that a good results file there is
 * kept; the report names the file either way (and the verdict where it
 * went). */
static tc_err divert_if_failed(tc_report *report, run_state *s) {
  tc_err err = TC_SUCCESS;
  if (tc_parallel_agree(MPI_COMM_WORLD, tc_report_verdict(report)) != TC_SUCCESS) {
    tc_error_clear(); /* the verdict is given at the end */
    err = tc_output_divert_failed(s->output);
  }
  if (err == TC_SUCCESS)
    err = tc_report_set_results_file(report, tc_output_h5_path(s->output));
  return err;
}

/* The results file, written with the phase times as they stand; once output
 * and total are final, its phase table is rewritten and the figures, the
 * loop's roofline and the report are written. No results file after a
 * signal. */
static tc_err write_results(const tc_config *config, tc_report *report, tc_timers *timers,
                            run_state *s) {
  MPI_Comm comm = MPI_COMM_WORLD;
  tc_phase_stats stats[TC_PHASE_COUNT];
  tc_err err = agree(timers, tc_signals_check());
  if (err == TC_SUCCESS && s->output) {
    tc_output_stats written;
    err = tc_timer_start(timers, TC_PHASE_OUTPUT);
    if (err == TC_SUCCESS)
      err = divert_if_failed(report, s);
    if (err == TC_SUCCESS)
      err = tc_timers_reduce(comm, timers, stats);
    if (err == TC_SUCCESS)
      err = write_output(s->output, config, s->loop, report, stats, &written);
    if (err == TC_SUCCESS)
      err = tc_timer_stop(timers, TC_PHASE_OUTPUT);
    if (err == TC_SUCCESS)
      err = report_output(report, &written);
  }
  if (err == TC_SUCCESS)
    err = tc_timer_stop(timers, TC_PHASE_TOTAL);
  if (err == TC_SUCCESS)
    err = tc_timers_reduce(comm, timers, stats);
  if (err == TC_SUCCESS && s->output) {
    tc_output_phase phases[TC_PHASE_COUNT];
    output_phases(stats, phases);
    err = tc_output_update_phases(s->output, phases, TC_PHASE_COUNT);
  }
  if (err == TC_SUCCESS) {
    tc_report_set_times(report, stats);
    err = report_figures(report, config, s->loop, stats, s->loop_seconds);
  }
  if (err == TC_SUCCESS)
    err = report_roofline(report, config, s->loop, stats, s->loop_seconds,
                          config->roofline ? &s->ceilings : NULL);
  if (err == TC_SUCCESS)
    err = tc_report_write(report, config->report);
  return err;
}

tc_err tc_run(const tc_config *config, tc_report *report, tc_timers *timers) {
  run_state s = {0};
  tc_err err = open_device(config, report, timers, &s);
  if (err == TC_SUCCESS)
    err = build(config, report, timers, &s);
  if (err == TC_SUCCESS)
    err = run_steps(config, report, timers, &s);
  if (err == TC_SUCCESS)
    err = check(config, report, timers, &s);
  if (err == TC_SUCCESS)
    err = write_results(config, report, timers, &s);
  tc_tuning_destroy(&s.tuning);
  tc_output_destroy(&s.output);
  tc_loop_destroy(&s.loop);
  tc_mesh_destroy(&s.mesh);
  tc_device_destroy(&s.device);
  return err;
}
