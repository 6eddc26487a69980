/* tc_report: the run report: build facts, run facts (ranks, threads,
 * backend, layout, variants, precision, each rank's device), the effective
 * deck, phase times (min/avg/max over ranks), figures of merit, checks and
 * the verdict. Rank 0 writes it as YAML and prints a short table. */
#ifndef TC_REPORT_H
#define TC_REPORT_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "tc_config.h"
#include "tc_contract.h"
#include "tc_error.h"
#include "tc_timers.h"

typedef struct tc_report tc_report;

/// Creates an empty report for a run on comm, with the build facts (version,
/// git revision, compiler, C flags, backends compiled in) and the start time.
/// Not collective.
tc_err tc_report_create(MPI_Comm comm, tc_report **report);

/// Releases the report and sets *report to NULL. NULL is fine.
void tc_report_destroy(tc_report **report);

/// Records the configuration (the effective deck is kept as text) and this
/// rank's device: threads used and a one-line description (e.g.
/// tc_device_description). The descriptions are gathered to rank 0.
/// Collective on the report's communicator.
tc_err tc_report_set_run(tc_report *report, const tc_config *config, int threads,
                         const char *device_description);

/// Records the loop's workset: cells a batch and batches a step (rank 0's),
/// whether the cells a batch were chosen by the loop (run.batch_cells = 0)
/// or the deck, and how the loop chose them (rule, a phrase; NULL: none).
/// Not collective.
tc_err tc_report_set_workset(tc_report *report, int64_t batch_cells, int64_t batches,
                             bool chosen, const char *rule);

/// Records how rank 0's steps ran their batches (tc_loop_replay_note: from
/// the host, or replayed as a CUDA graph). Not collective.
void tc_report_set_replay(tc_report *report, const char *note);

/// Records the shared-node exchange that ran (tc_loop_exchange_name: its
/// name, and why run.exchange = auto sent messages between some pair; NULL
/// or "": run.exchange's name, no reason). Not collective.
void tc_report_set_exchange(tc_report *report, const char *name, const char *why);

/// Records the form of the fused elasticity product rank 0 ran
/// (tc_loop_fused_form; NULL or "": none ran). Not collective.
void tc_report_set_fused_form(tc_report *report, const char *form);

/// Records the CPU cores each rank may run on (tc_device_host_cores), kept
/// as their min and max over ranks. When the threads per rank recorded by
/// tc_report_set_run exceed the fewest cores of any rank, the threads share
/// cores: the report keeps a warning saying so, and rank 0 prints it to
/// warnings (e.g. stderr; NULL prints nothing). Call after tc_report_set_run.
/// Collective on the report's communicator.
tc_err tc_report_set_cores(tc_report *report, int cores, FILE *warnings);

/// Records the variant that actually ran for kernel (after resolving auto).
/// Not collective.
tc_err tc_report_set_variant(tc_report *report, tc_kernel kernel, tc_variant variant);

/// Records where that variant came from: asked (run.variant named it), rule
/// or tuning (auto: the backend's rules or the tuning file). Not collective.
tc_err tc_report_set_variant_choice(tc_report *report, tc_kernel kernel, tc_choice choice);

/// Records the run's tuning file (run.tuning; "none" for none) and whether
/// it is in use (false when run.tuning_on_error = rules set it aside). Not
/// collective.
void tc_report_set_tuning(tc_report *report, const char *file, bool used);

/// Records the path the results file is written to: output.path, or where
/// the results of a run whose checks failed went instead. Not collective.
tc_err tc_report_set_results_file(tc_report *report, const char *path);

/// The variants recorded so far, one "Kernel: variant" per kernel in kernel
/// order, comma-separated (e.g. "FieldFieldScalar: blocked, DataDataScalar:
/// flat"); "" before any. Owned by the report, valid until the next change.
const char *tc_report_variants_text(const tc_report *report);

/// Records the phase times (from tc_timers_reduce). Not collective.
void tc_report_set_times(tc_report *report, const tc_phase_stats stats[TC_PHASE_COUNT]);

/// The ceilings a run's loop is measured against: every rank's device
/// together (sums over ranks).
typedef struct {
  bool measured;                  ///< false: no ceilings (run.roofline = false)
  double copy_bytes_per_second;   ///< copy bandwidth, bytes read + written per second
  double fma_flops_per_second;    ///< FMA peak in the run's precision, 2 flops per FMA
  char source[128];               ///< how they were found, e.g. "measured by this run"
} tc_report_ceilings;

/// One phase of the loop (or the whole loop) against its model.
typedef struct {
  char name[32];          ///< a phase name (tc_phase_name), or "loop" for a whole step
  double bytes_per_cell;  ///< compulsory bytes per cell and step (tc_loop_model.h)
  double flops_per_cell;  ///< flops per cell and step
  double seconds;         ///< the phase's seconds, slowest rank
  double bytes_per_second; ///< every rank's compulsory bytes over seconds
  double flops_per_second; ///< every rank's flops over seconds
} tc_report_roofline_row;

/// Records the loop's roofline: the ceilings and one row per phase (copied).
/// The summary prints them as a table; the YAML has them under roofline:.
/// Not collective.
tc_err tc_report_set_roofline(tc_report *report, const tc_report_ceilings *ceilings,
                              const tc_report_roofline_row *rows, int count);

/// Adds a figure of merit, e.g. ("FieldFieldVector", 41.2, "GFLOP/s").
/// Not collective.
tc_err tc_report_add_figure(tc_report *report, const char *name, double value,
                            const char *unit);

/// Adds the outcome of a check: the value found, the reference it is
/// compared with, the scale the error is measured against, the relative
/// tolerance and whether it passed (the caller's comparison, typically
/// error <= tolerance * scale). A check that did not apply is recorded with
/// skipped_note saying why (NULL for a check that ran); it neither passes
/// nor fails. Values must be the same on every rank (reduced ones).
/// Not collective.
tc_err tc_report_add_check(tc_report *report, const char *name, double value,
                           double reference, double tolerance, bool passed,
                           const char *skipped_note, double scale);

/// Adds the summary of one result field (e.g. "nodes/load"): how many
/// entries, their sum, the sum of their magnitudes, 2-norm, min and max;
/// quantities that do not depend on the run's speed, for regression
/// comparisons (scripts/tcmini-compare). Values must be the same on every
/// rank (reduced ones). Not collective.
tc_err tc_report_add_result(tc_report *report, const char *name, const char *units,
                            int64_t count, double sum, double sum_abs, double norm, double min,
                            double max);

/// The verdict: TC_SUCCESS if every check that ran passed (or none ran), else
/// TC_ERR_VERIFY with a message naming the failed checks (and the results
/// file, when it is not output.path). Not collective.
tc_err tc_report_verdict(const tc_report *report);

/// Checks, before the run, that the report can be written to path: its
/// directory takes a new file, and no file is there unless overwrite is true
/// ("none" always passes). Every rank returns the same result. Collective on
/// the report's communicator.
tc_err tc_report_check_path(const tc_report *report, const char *path, bool overwrite);

/// Rank 0 writes the YAML report to path (through a temporary file renamed
/// into place; "none" writes nothing), with the peak host memory of the
/// ranks so far (min and max over ranks); every rank returns the same result.
/// Collective on the report's communicator.
tc_err tc_report_write(const tc_report *report, const char *path);

/// tcmini's version (the CMake project version, e.g. "0.1.0").
const char *tc_report_version(void);

/// The git revision tcmini was configured from ("unknown" outside git).
const char *tc_report_git_revision(void);

/// Writes the build facts (version, git revision, compiler, build type and
/// flags, backends compiled in, HDF5) as a few "name: value" lines, for
/// --version. Not collective.
void tc_report_print_build(FILE *stream);

/// Rank 0 prints a short human-readable summary (run, phases, figures,
/// checks, verdict) to stream; other ranks print nothing. Not collective.
void tc_report_print(const tc_report *report, FILE *stream);

#endif
