/* tc_config: a run's configuration, from the input deck and command-line
 * overrides, through ONE option table (section, key, type, default, doc,
 * bounds, field) that also generates --help, the full-deck printout and the
 * validation. Deck syntax: see tc_ini.h and inputs/hex.in. */
#ifndef TC_CONFIG_H
#define TC_CONFIG_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tc_contract.h"
#include "tc_error.h"

/// Longest string value (paths, label), including the terminating NUL.
enum { TC_CONFIG_STRING_MAX = 1024 };
/// Most GPU batches in flight at once (run.in_flight).
enum { TC_CONFIG_MAX_IN_FLIGHT = 8 };

/// Value of run.layout that lets the backend choose (see tc_config_layout).
enum { TC_CONFIG_LAYOUT_AUTO = -1 };

/// verify.checks.
typedef enum { TC_CHECKS_AUTO, TC_CHECKS_ON, TC_CHECKS_OFF, TC_CHECKS_COUNT } tc_checks_mode;

/// run.progress: the "step k of n" line on rank 0's stderr (tc_progress).
typedef enum { TC_PROGRESS_AUTO, TC_PROGRESS_ON, TC_PROGRESS_OFF, TC_PROGRESS_COUNT } tc_progress_mode;

/// run.exchange: where the CUDA backend sums the values of shared nodes.
typedef enum {
  TC_EXCHANGE_HOST,      ///< node vectors copied to the host, summed there (tc_mesh_sum_shared)
  TC_EXCHANGE_DEVICE,    ///< packed and summed on the GPU; only shared values travel, via host buffers
  TC_EXCHANGE_GPU_AWARE, ///< as device, with device buffers handed to a CUDA-aware MPI
  TC_EXCHANGE_PEER,      ///< as device, copied GPU to GPU (CUDA IPC) between ranks of one node
  TC_EXCHANGE_AUTO,      ///< CUDA backend: peer between ranks that can, device between the others
  TC_EXCHANGE_COUNT
} tc_exchange_mode;

/// run.inputs: how the loop feeds the elasticity trio (FieldFieldTensor,
/// DataFieldTensor, DataDataTensor).
typedef enum {
  TC_INPUTS_AUTO,         ///< the backend's faster (tc_config_inputs)
  TC_INPUTS_MATERIALISED, ///< every input built into memory, then each kernel contracts it (Intrepid's way)
  TC_INPUTS_FUSED,        ///< inputs built on chip where the fused products consume them
  TC_INPUTS_COUNT
} tc_inputs_mode;
/// run.tuning_on_error: what a tuning file that cannot be used does.
typedef enum {
  TC_TUNING_ON_ERROR_FAIL,  ///< the run fails with the file's error
  TC_TUNING_ON_ERROR_RULES, ///< one warning, then AUTO uses the built-in rules
  TC_TUNING_ON_ERROR_COUNT
} tc_tuning_on_error;

/// Boxes with at most this many cells run the checks when verify.checks = auto.
#define TC_CHECKS_AUTO_MAX_CELLS INT64_C(2000000)

/// A run's configuration. Every field is one key of the deck, named
/// [section] key in the comments; tc_config_print_help documents them all.
typedef struct {
  /* [mesh] */
  int64_t cells[3];          ///< cells per direction of the global box, each >= 1
  double length[3];          ///< box extents (same unit as the results), each > 0
  double distortion;         ///< interior node distortion, fraction of a cell, in [0, 0.25)
  /* [element] */
  int64_t order;             ///< 1 (Q1, 8-node hexahedra) or 2 (Q2, 27-node)
  int64_t quadrature;        ///< Gauss points per direction, 0 = order + 1 (tc_config_quadrature)
  /* [physics] */
  bool kernels[TC_KERNEL_COUNT]; ///< which of the nine contractions run (at least one)
  /* [run] */
  char label[TC_CONFIG_STRING_MAX]; ///< free text naming the run in the report and results file
  tc_backend_kind backend;   ///< serial, openmp or cuda (must be compiled in)
  int64_t threads;           ///< OpenMP threads per rank, 0 = the runtime's default
  int layout;                ///< a tc_layout, or TC_CONFIG_LAYOUT_AUTO (tc_config_layout)
  tc_variant variant;        ///< contraction algorithm, TC_VARIANT_AUTO = the backend's choice
  tc_precision precision;    ///< element type of the contractions
  int64_t steps;             ///< assembly steps (>= 1); times are summed over them
  int64_t batch_cells;       ///< cells per batch of the assembly loop, 0 = the backend's choice
  int64_t in_flight;         ///< GPU batches in flight at once (0 to TC_CONFIG_MAX_IN_FLIGHT), 0 = the loop's choice
  bool roofline;             ///< measure the devices' ceilings for the loop's roofline
  bool gpu_sharing;          ///< allow several ranks per GPU
  bool memory_check;         ///< refuse a run that cannot fit in memory (tc_memory_check)
  tc_progress_mode progress; ///< progress line on rank 0's stderr (tc_progress)
  tc_exchange_mode exchange; ///< where the CUDA backend sums shared nodes (host for CPU backends)
  tc_inputs_mode inputs;     ///< how the elasticity trio gets its inputs (tc_config_inputs)
  bool graph;                ///< GPU steps replay a CUDA graph of their batches
  bool probe;                ///< AUTO probes the rule's variant against the vendor's (tc_contract_set_probe)
  char tuning[TC_CONFIG_STRING_MAX]; ///< tuning file for AUTO (tcmini-bench --tune), "none" = the rules
  tc_tuning_on_error tuning_on_error; ///< a tuning file that cannot be used: fail, or the rules
  /* [verify] */
  tc_checks_mode checks;     ///< run the correctness checks (tc_config_checks_enabled)
  double tolerance;          ///< relative tolerance of the checks in double precision
  double tolerance_float;    ///< relative tolerance of the checks in single precision
  /* [output] */
  char path[TC_CONFIG_STRING_MAX];   ///< HDF5 results file, "none" = write none
  bool overwrite;            ///< replace existing output files
  bool element_matrices;     ///< also write the element matrices
  char report[TC_CONFIG_STRING_MAX]; ///< YAML run report, "none" = write none
} tc_config;

/// Sets every field to its default from the option table. Not collective.
tc_err tc_config_defaults(tc_config *config);

/// Builds a configuration from defaults, then the deck text (NULL: none),
/// then the overrides "section.key=value" in order (a later one wins), then
/// validates it. Errors (TC_ERR_INPUT) are one line naming where:
///   "inputs/hex.in:12: unknown key 'nxx' in [mesh]"
///   "inputs/hex.in:7: [mesh] cells: expected 3 integers >= 1, got '16 0 16'"
///   "command line: 'mesh.cels=3': unknown key 'cels' in [mesh]"
/// origin names the text in messages (the deck's path). Not collective.
tc_err tc_config_parse(const char *origin, const char *text, int num_overrides,
                       char **overrides, tc_config *config);

/// Reads the deck at path on rank 0 (path NULL: defaults and overrides only),
/// broadcasts its text, parses and validates it on every rank (as
/// tc_config_parse) and agrees on the outcome: every rank returns the same
/// code and recorded message (an unreadable file names the path and the
/// system's reason). Collective on comm.
tc_err tc_config_load(MPI_Comm comm, const char *path, int num_overrides, char **overrides,
                      tc_config *config);

/// Writes the list of every key with its type, default and documentation
/// (the --help text). Not collective.
tc_err tc_config_print_help(FILE *stream);

/// Writes config as a complete deck: every section and key, each preceded by
/// a comment with its documentation and default. Parsing it gives config back
/// exactly. Not collective.
tc_err tc_config_print_deck(FILE *stream, const tc_config *config);

/// The same deck as tc_config_print_deck, in a string the caller frees with
/// free(). Not collective.
tc_err tc_config_deck_string(const tc_config *config, char **text);

/// The layout to run: run.layout, or for auto the backends' best: right, on
/// the CPU backends and on CUDA alike.
tc_layout tc_config_layout(const tc_config *config);

/// run.inputs with auto resolved: fused on the CUDA backend, materialised on
/// the CPU backends.
tc_inputs_mode tc_config_inputs(const tc_config *config);

/// The shared-node exchange asked for: run.exchange, with auto resolved to
/// host on the CPU backends (which always sum on the host). On the CUDA
/// backend auto stays auto: peer between the ranks that can map each
/// other's buffers, device between the others, found when the ranks connect
/// (tc_loop_exchange_name names the route that ran).
tc_exchange_mode tc_config_exchange(const tc_config *config);

/// Gauss points per direction: element.quadrature, or order + 1 for 0.
int tc_config_quadrature(const tc_config *config);

/// Whether the checks run: verify.checks, or for auto: when the box has at
/// most TC_CHECKS_AUTO_MAX_CELLS cells.
bool tc_config_checks_enabled(const tc_config *config);

/// The relative tolerance of the checks for the configured precision:
/// verify.tolerance (double) or verify.tolerance_float (float).
double tc_config_tolerance(const tc_config *config);

/// Number of kernels selected in physics.kernels.
int tc_config_num_kernels(const tc_config *config);

/// Room for tc_config_format_double's text.
enum { TC_CONFIG_DOUBLE_CHARS = 32 };

/// Writes the shortest decimal text (printf %g style) that strtod reads
/// back as exactly value; whole numbers below 1e15 without an exponent.
/// Not collective.
void tc_config_format_double(double value, char text[TC_CONFIG_DOUBLE_CHARS]);

/// "auto", "on", "off".
const char *tc_checks_mode_name(tc_checks_mode mode);

/// "auto", "on", "off".
const char *tc_progress_mode_name(tc_progress_mode mode);

/// "host", "device", "gpu-aware".
const char *tc_exchange_mode_name(tc_exchange_mode mode);
/// "auto", "materialised", "fused".
const char *tc_inputs_mode_name(tc_inputs_mode mode);

/// "fail", "rules".
const char *tc_tuning_on_error_name(tc_tuning_on_error mode);

/// Whether run.tuning names a file (is not "none").
bool tc_config_has_tuning(const tc_config *config);

#endif
