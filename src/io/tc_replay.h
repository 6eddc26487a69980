/* tc_replay: HDF5 files that hold one contraction captured elsewhere, and the
 * results of replaying it with tcmini-bench --replay. Every array is
 * row-major in the logical index order of tc_contract.h.
 *   Inputs, in the root or in any group of a file: datasets "left" and
 *   "right" (64- or 32-bit floats, both the same), attribute "kernel" (its
 *   Intrepid name), and for a sumInto replay dataset "output", the output
 *   the contraction adds to.
 *   Results: group "rows" with one dataset per row of the replay, "rows/0",
 *   "rows/1", ..., each with attributes backend, threads, layout, variant,
 *   chosen, precision, verified and relative_error; "output" is a
 *   second name of "rows/0"; root attributes kernel, rows (their number),
 *   input (the file and group replayed).
 * Serial HDF5 calls on one process: nothing here is collective. */
#ifndef TC_REPLAY_H
#define TC_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "tc_contract.h"
#include "tc_error.h"

/// Where a replay's inputs are.
typedef struct {
  const char *path;        ///< the HDF5 file
  const char *group;       ///< the group that holds the datasets; NULL or "/" for the root
  const tc_kernel *kernel; ///< the kernel to run; NULL: the group's attribute "kernel"
  bool sum_into;           ///< add to the group's dataset "output" (Intrepid's sumInto)
} tc_replay_source;

/// One contraction read from a file: host arrays, row-major in logical
/// order, that tc_replay_case_free releases.
typedef struct {
  tc_contraction shape; ///< validated, layout RIGHT, sum_into as the source asked
  void *left, *right;
  void *initial_output; ///< with sum_into: the dataset "output"; NULL otherwise
  bool has_output;      ///< the group holds a dataset "output" (read only with sum_into)
} tc_replay_case;

/// Reads and checks a replay's inputs. The precision is the datasets' (64-
/// or 32-bit floats, the same for all); the sizes come from their dims, which
/// must be the kernel's logical dims (tc_replay_dims_text); with sum_into the
/// group must hold "output" with the output's dims and precision. Every
/// failure is one message in the file's terms: TC_ERR_INPUT for a missing
/// file, group, dataset or attribute and for the wrong types, TC_ERR_SHAPE
/// with the dims expected and found. On failure *replay is left empty.
tc_err tc_replay_read(const tc_replay_source *source, tc_replay_case *replay);

/// Frees the arrays of a case and zeroes it. A zeroed case is fine.
void tc_replay_case_free(tc_replay_case *replay);

/// The arrays of a contraction, for tc_replay_dims_text.
typedef enum { TC_REPLAY_LEFT, TC_REPLAY_RIGHT, TC_REPLAY_OUTPUT } tc_replay_array;

/// Writes the logical dims of one array of kernel in the letters of
/// tc_contract.h, with DataField's roles, into text: "(C,L,P,D1)",
/// "data (C,P) or (C,1)", "fields (C,F,P)", "(C,F)", ...
void tc_replay_dims_text(tc_kernel kernel, tc_replay_array which, char *text, size_t size);

/// Creates (or truncates) the file at path and writes, in group (NULL or "/"
/// for the root; created with its parents), datasets "left" and "right" with
/// shape's logical dims and precision, the attribute "kernel", and with
/// shape->sum_into dataset "output" from initial_output. Host arrays,
/// row-major in logical order whatever shape->layout says.
tc_err tc_replay_write_inputs(const char *path, const char *group, const tc_contraction *shape,
                              const void *left, const void *right, const void *initial_output);

/// Reads dataset "output" at the root of the file at path (the first row of
/// a results file) into the host array output (row-major in logical order,
/// tc_contraction_output_count elements); TC_ERR_SHAPE unless its dims and
/// precision are shape's.
tc_err tc_replay_read_output(const char *path, const tc_contraction *shape, void *output);

/// What one row of a replay ran, stored with its result.
typedef struct {
  char backend[16];      ///< "serial", "openmp", "cuda"
  int threads;           ///< OpenMP threads; 1 for serial; 0 for CUDA
  char layout[16];       ///< "right", "left"
  char variant[32];      ///< the variant that ran ("blocked", "vendor", ...)
  char chosen[16];       ///< how: "asked", "rule", "tuning" (AUTO) or "yardstick"
  char precision[16];    ///< "double", "float"
  bool verified;         ///< within the benchmark's tolerance of the serial reference
  double relative_error; ///< against the serial reference
} tc_replay_row;

/// Reads row index of the results file at path: its description into *row
/// (may be NULL) and its output into output (as tc_replay_read_output).
/// *count (may be NULL) gets the file's number of rows.
tc_err tc_replay_read_row(const char *path, int index, const tc_contraction *shape,
                          tc_replay_row *row, void *output, int *count);

/// A results file being written: its rows go to a temporary file beside
/// path, which is renamed to path only by tc_replay_writer_commit.
typedef struct tc_replay_writer tc_replay_writer;

/// Starts the results file of a replay of source's shape. Refuses, before
/// anything is written, a path that is the replay's input file (always) or
/// any existing file unless overwrite (TC_ERR_INPUT naming it and the way
/// out), and a directory that takes no new file (TC_ERR_IO).
tc_err tc_replay_writer_create(const char *path, bool overwrite, const tc_replay_source *source,
                               const tc_contraction *shape, tc_replay_writer **writer);

/// Adds one row: its description and its output (host, logical row-major,
/// in the shape's precision).
tc_err tc_replay_writer_add(tc_replay_writer *writer, const tc_replay_row *row,
                            const void *output);

/// Closes the file and publishes it under its name (never replacing a file
/// that appeared meanwhile unless overwrite was given). Rows added: at least 1.
tc_err tc_replay_writer_commit(tc_replay_writer *writer);

/// Releases the writer, removing the temporary file unless it was committed,
/// and sets *writer to NULL. NULL is fine.
void tc_replay_writer_destroy(tc_replay_writer **writer);

#endif
