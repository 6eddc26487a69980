/* tcmini: the mini-application driver. Reads the command line and the deck,
 * checks the report's path, runs the rest (tc_run: device, mesh, the
 * element-assembly loop, checks, the HDF5 results file and the report),
 * prints the summary, and turns the outcome into the exit status:
 *   0 success, 1 run-time failure, 2 bad input or usage, 3 a check failed
 * (its results then go beside output.path: tc_output_divert_failed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_config.h"
#include "tc_parallel.h"
#include "tc_report.h"
#include "tc_run.h"
#include "tc_signals.h"
#include "tc_timers.h"

enum { EXIT_BAD_INPUT = 2, EXIT_VERIFY = 3 };

typedef struct {
  const char *deck;      /* deck path, NULL for defaults only */
  int num_overrides;
  char **overrides;      /* section.key=value arguments */
  bool help, version, print_deck;
  const char *bad_option;
} command_line;

static void parse_command_line(int argc, char **argv, command_line *cl) {
  memset(cl, 0, sizeof *cl);
  cl->overrides = calloc((size_t)argc, sizeof *cl->overrides);
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
      cl->help = true;
    else if (!strcmp(arg, "--version"))
      cl->version = true;
    else if (!strcmp(arg, "--print-deck"))
      cl->print_deck = true;
    else if (arg[0] == '-' && !cl->bad_option)
      cl->bad_option = arg;
    else if (strchr(arg, '='))
      cl->overrides[cl->num_overrides++] = argv[i];
    else if (!cl->deck)
      cl->deck = arg;
    else if (!cl->bad_option)
      cl->bad_option = arg;
  }
}

static void print_usage(FILE *stream) {
  fprintf(stream,
          "usage: mpirun -n RANKS tcmini [options] [DECK] [section.key=value ...]\n"
          "\n"
          "Runs the finite-element assembly mini-app on the input DECK (defaults if none),\n"
          "with command-line overrides of deck entries, e.g. mesh.cells=64,64,64 run.backend=cuda.\n"
          "\n"
          "options:\n"
          "  -h, --help     this text and every deck key with its default\n"
          "  --version      version and build facts\n"
          "  --print-deck   print the full effective deck (defaults filled in) and exit\n"
          "\n"
          "exit status: 0 success, 1 run-time failure, 2 bad input, 3 a check failed (the\n"
          "results then go to X.failed.h5 beside output.path X.h5, which is kept)\n"
          "\n");
}

static int exit_status(tc_err err) {
  switch (err) {
  case TC_SUCCESS:
    return 0;
  case TC_ERR_INPUT:
  case TC_ERR_SHAPE:
  case TC_ERR_ARGUMENT:
  case TC_ERR_UNSUPPORTED:
  case TC_ERR_NO_DEVICE:
    return EXIT_BAD_INPUT;
  case TC_ERR_VERIFY:
    return EXIT_VERIFY;
  default:
    return 1;
  }
}

int main(int argc, char **argv) {
  /* The timers start before MPI does, so that the start-up is counted too. */
  tc_timers *timers = NULL;
  tc_err timing = tc_timers_create(&timers);
  if (timing == TC_SUCCESS)
    timing = tc_timer_start(timers, TC_PHASE_TOTAL);
  if (timing == TC_SUCCESS)
    timing = tc_timer_start(timers, TC_PHASE_STARTUP);
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "tcmini: error: %s\n", tc_error_message());
    tc_timers_destroy(&timers);
    return 1;
  }
  const bool root = tc_rank(MPI_COMM_WORLD) == 0;
  command_line cl;
  parse_command_line(argc, argv, &cl);
  int status = 0;
  if (cl.bad_option) {
    if (root)
      fprintf(stderr, "tcmini: error: unknown option or extra argument '%s' (see tcmini --help)\n",
              cl.bad_option);
    status = EXIT_BAD_INPUT;
  } else if (cl.help) {
    if (root) {
      print_usage(stdout);
      tc_config_print_help(stdout);
    }
  } else if (cl.version) {
    if (root)
      tc_report_print_build(stdout);
  } else {
    tc_config config;
    tc_report *report = NULL;
    tc_err err = tc_config_load(MPI_COMM_WORLD, cl.deck, cl.num_overrides, cl.overrides, &config);
    bool bad_deck = err != TC_SUCCESS; /* an unreadable deck is bad input too */
    if (err == TC_SUCCESS && cl.print_deck) {
      if (root)
        tc_config_print_deck(stdout, &config);
    } else if (err == TC_SUCCESS) {
      err = timing;
      if (err == TC_SUCCESS)
        err = tc_signals_install();
      if (err == TC_SUCCESS)
        err = tc_report_create(MPI_COMM_WORLD, &report);
      err = tc_parallel_agree(MPI_COMM_WORLD, err);
      if (err == TC_SUCCESS) /* before any work, so a bad report path costs nothing */
        err = tc_report_check_path(report, config.report, config.overwrite);
      if (err == TC_SUCCESS)
        err = tc_timer_stop(timers, TC_PHASE_STARTUP);
      if (err == TC_SUCCESS)
        err = tc_run(&config, report, timers);
      if (err == TC_SUCCESS) {
        tc_report_print(report, stdout);
        err = tc_report_verdict(report);
      }
    }
    if (err != TC_SUCCESS && root)
      fprintf(stderr, "tcmini: error: %s\n", tc_error_message());
    status = bad_deck ? EXIT_BAD_INPUT : exit_status(err);
    tc_report_destroy(&report);
  }
  tc_timers_destroy(&timers);
  free(cl.overrides);
  tc_parallel_finalize();
  return status;
}
