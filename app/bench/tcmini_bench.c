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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "tc_device.h"
#include "tc_git_revision.h"
#include "tc_parallel.h"
#include "tc_signals.h"

enum { EXIT_VERIFY_FAILED = 1, EXIT_BAD_OPTIONS = 2 };

/* --version: the release and what this build holds. */
static void print_version(void) {
  printf("tcmini-bench %s (git %s)\ncompiler: %s\nbackends:", TCMINI_VERSION, TCMINI_GIT_REVISION,
         __VERSION__);
  for (int b = 0; b < TC_BACKEND_COUNT; ++b)
    if (tc_device_backend_available((tc_backend_kind)b))
      printf(" %s", tc_backend_name((tc_backend_kind)b));
  printf("\n");
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
  /* SIGINT and SIGTERM stop the measuring between runs, and remove the
   * temporary files of the CSV table and replay results at once. */
  if (tc_signals_install() != TC_SUCCESS) {
    fprintf(stderr, "tcmini-bench: error: %s\n", tc_error_message());
    tc_parallel_finalize();
    return EXIT_FAILURE;
  }
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
    char program[128];
    snprintf(program, sizeof program, "tcmini-bench %s (git %s)", TCMINI_VERSION,
             TCMINI_GIT_REVISION);
    tc_err err = bench_run_benchmark(&run, program);
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
      if (run.failures > 0)
        fprintf(stderr, "tcmini-bench: error: %d of %d rows failed verification (FAIL above)\n",
                run.failures, run.rows);
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
