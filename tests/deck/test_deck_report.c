/* test_deck_report: a run report with known contents: device descriptions
 * gathered from every rank, phase times, figures (with characters YAML must
 * escape, NaN and infinity), a passed, a skipped and a failed check; the
 * verdict, the build facts, the YAML file (written through a temporary name; a write
 * that cannot happen fails on every rank) and the human summary. The YAML
 * itself is parsed by check_report.py (test deck_report_yaml_N). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include "deck_test.h"
#include "tc_report.h"

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

static void test_report(const char *path) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = tc_rank(comm);
  tc_report *report;
  REQUIRE_CALL(tc_report_create(comm, &report));
  EXPECT(tc_report_verdict(report) == TC_SUCCESS, "no checks: not a failure");

  tc_config config;
  char *overrides[] = {"run.label=report test", "run.backend=serial", "mesh.cells=4,4,4",
                       "physics.kernels=FieldFieldScalar,DataDataVector"};
  REQUIRE_CALL(tc_config_parse(NULL, NULL, 4, overrides, &config));
  char device[64];
  snprintf(device, sizeof device, "test device \"%d\" of rank %d", rank, rank);
  REQUIRE_CALL(tc_report_set_run(report, &config, 1, device));
  EXPECT_STREQ(tc_report_variants_text(report), "");
  REQUIRE_CALL(tc_report_set_variant(report, TC_DATA_DATA_SCALAR, TC_VARIANT_FLAT));
  REQUIRE_CALL(tc_report_set_variant(report, TC_FIELD_FIELD_SCALAR, TC_VARIANT_REFERENCE));
  EXPECT_STREQ(tc_report_variants_text(report),
               "FieldFieldScalar: reference, DataDataScalar: flat");
  EXPECT(tc_report_set_variant(report, TC_KERNEL_COUNT, TC_VARIANT_FLAT) == TC_ERR_ARGUMENT,
         "bad kernel");
  tc_error_clear();

  tc_timers *timers;
  REQUIRE_CALL(tc_timers_create(&timers));
  REQUIRE_CALL(tc_timer_add(timers, TC_PHASE_ASSEMBLE, rank + 1.0));
  REQUIRE_CALL(tc_timer_add(timers, TC_PHASE_TOTAL, 10.0));
  tc_phase_stats stats[TC_PHASE_COUNT];
  REQUIRE_CALL(tc_timers_reduce(comm, timers, stats));
  tc_timers_destroy(&timers);
  tc_report_set_times(report, stats);

  REQUIRE_CALL(tc_report_set_workset(report, 7, 3, true, "a test's rule"));
  /* Two roofline rows against 50 GB/s and 100 GFLOP/s: 25 GB/s and 10 GFLOP/s
   * make fractions 0.5 and 0.1. */
  tc_report_ceilings ceilings = {true, 50e9, 100e9, "given by the test"};
  tc_report_roofline_row rows[2] = {{"FieldFieldScalar", 4000.0, 3500.0, 0.5, 25e9, 10e9},
                                    {"loop", 8000.0, 3500.0, 1.0, 40e9, 5e9}};
  REQUIRE_CALL(tc_report_set_roofline(report, &ceilings, rows, 2));

  REQUIRE_CALL(tc_report_add_figure(report, "assembly rate", 1.5e6, "cells/s"));
  REQUIRE_CALL(tc_report_add_figure(report, "weird: \"quoted\" \\ name\t#", 1e-9, "GFLOP/s"));
  REQUIRE_CALL(tc_report_add_figure(report, "not a number", NAN, ""));
  REQUIRE_CALL(tc_report_add_figure(report, "infinite", -INFINITY, "s"));
  REQUIRE_CALL(tc_report_add_check(report, "mass matrix sum", 1 + 1e-10, 1.0, 1e-9, true, NULL,
                                   1.0));
  REQUIRE_CALL(tc_report_add_check(report, "exact Q2 integral", 0.0, 1.0, 1e-9, false,
                                   "quadrature: \"1 point\" is not exact", 1.0));
  EXPECT(tc_report_verdict(report) == TC_SUCCESS, "one passed check, one skipped");
  REQUIRE_CALL(tc_report_add_check(report, "stiffness annihilates linear field", 1e-3, 0.0,
                                   1e-9, false, NULL, 2.0));
  EXPECT(tc_report_verdict(report) == TC_ERR_VERIFY, "a failed check fails the verdict");
  EXPECT_STREQ(tc_error_message(), "1 of 2 checks failed: stiffness annihilates linear field");
  tc_error_clear();

  REQUIRE_CALL(tc_report_write(report, path));
  if (rank == 0) {
    char temporary[256];
    snprintf(temporary, sizeof temporary, "%s.tmp.%ld", path, (long)getpid());
    EXPECT(file_exists(path), "%s written", path);
    EXPECT(!file_exists(temporary), "%s left behind", temporary);
  }

  /* A report that cannot be written fails everywhere with one message. */
  tc_err err = tc_report_write(report, "deck_no_such_directory/report.yaml");
  EXPECT(err == TC_ERR_IO, "unwritable report: code %d", (int)err);
  EXPECT(strstr(tc_error_message(), "cannot write report 'deck_no_such_directory/report.yaml"),
         "message '%s'", tc_error_message());
  char mine[1024] = {0}, root[1024] = {0};
  snprintf(mine, sizeof mine, "%s", tc_error_message());
  memcpy(root, mine, sizeof root);
  EXPECT(tc_broadcast(comm, root, sizeof root, 0) == TC_SUCCESS, "broadcast");
  EXPECT_STREQ(mine, root);
  tc_error_clear();
  EXPECT(tc_report_write(report, "none") == TC_SUCCESS && !file_exists("none"), "none");

  FILE *summary = tmpfile();
  EXPECT(summary, "tmpfile");
  if (summary) {
    tc_report_print(report, summary);
    long size = ftell(summary);
    rewind(summary);
    char *text = calloc((size_t)size + 1, 1);
    EXPECT(text && fread(text, 1, (size_t)size, summary) == (size_t)size, "read back");
    if (text && rank == 0) {
      EXPECT(strstr(text, "verdict: failed"), "summary:\n%s", text);
      EXPECT(strstr(text, "stiffness annihilates linear field FAIL   0.0005      1e-09\n"),
             "failed check:\n%s", text);
      EXPECT(strstr(text, "assemble "), "summary lists assemble:\n%s", text);
      EXPECT(strstr(text, "workset (rank 0): 7 cells a batch (sized by the loop: a test's rule), "
                          "3 batches a step\n"),
             "workset:\n%s", text);
      EXPECT(strstr(text, "loop roofline against copy 50.0 GB/s and FMA 100.0 GFLOP/s "
                          "(given by the test):\n"),
             "roofline header:\n%s", text);
      EXPECT(strstr(text, "FieldFieldScalar           4.00        3.50     25.00     10.00   "
                          "50.0   10.0\n"),
             "roofline row:\n%s", text);
      EXPECT(strstr(text, "exact Q2 integral                  SKIP   quadrature: \"1 point\""),
             "skipped check:\n%s", text);
      EXPECT(!strstr(text, "geometry"), "summary skips untimed phases:\n%s", text);
    } else if (text) {
      EXPECT(size == 0, "only rank 0 prints");
    }
    free(text);
    fclose(summary);
  }
  tc_report_destroy(&report);
  EXPECT(report == NULL, "destroy sets NULL");
}

static void test_build_facts(void) {
  EXPECT(strlen(tc_report_version()) > 0 && strcmp(tc_report_version(), "unknown") != 0,
         "version '%s'", tc_report_version());
  EXPECT(strlen(tc_report_git_revision()) > 0, "git revision");
  FILE *file = tmpfile();
  EXPECT(file, "tmpfile");
  if (!file)
    return;
  tc_report_print_build(file);
  long size = ftell(file);
  rewind(file);
  char *text = calloc((size_t)size + 1, 1);
  EXPECT(text && fread(text, 1, (size_t)size, file) == (size_t)size, "read back");
  char first[128];
  snprintf(first, sizeof first, "tcmini %s (git %s)\n", tc_report_version(),
           tc_report_git_revision());
  EXPECT(text && strncmp(text, first, strlen(first)) == 0, "--version text:\n%s",
         text ? text : "");
  EXPECT(text && strstr(text, "\nbackends: serial"), "--version lists backends");
  free(text);
  fclose(file);
}

int main(int argc, char **argv) {
  deck_test_init(&argc, &argv);
  if (argc != 2) {
    fprintf(stderr, "usage: test_deck_report REPORT.yaml\n");
    return EXIT_FAILURE;
  }
  test_build_facts();
  test_report(argv[1]);
  return deck_test_finish("test_deck_report");
}
