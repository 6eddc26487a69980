/* tc_output: the run's results file. One HDF5 file written by every rank
 * together through MPI-IO (collective transfers, no gather to rank 0), in
 * global numbering, so that a file written by 1 rank and by N ranks holds the
 * same arrays; an XDMF file beside it for ParaView; both checked, made
 * durable and published atomically as a pair. The layout and the guarantees
 * are documented in docs/output.md. */
#ifndef TC_OUTPUT_H
#define TC_OUTPUT_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"
#include "tc_mesh.h"

/// A per-cell or per-node field. values is rank-local and node- or
/// cell-major: [num_cells][components] or [num_nodes][components] in the
/// mesh's local numbering (tc_mesh_local). Node values at shared nodes must
/// already be summed (tc_mesh_sum_shared): only the owner's row is written.
/// The pointers are kept, not copied, until tc_output_write returns.
typedef struct {
  const char *name;        ///< dataset name: letters, digits, '_', '-', '.'; unique in its group
  int components;          ///< values per cell or node, >= 1 (1: the dataset is 1-D)
  const double *values;    ///< the local values (may be NULL on a rank with no rows)
  const char *units;       ///< stored as the "units" attribute; NULL means ""
  const char *description; ///< stored as the "description" attribute; NULL means ""
} tc_output_field;

/// One small dense matrix per cell (element matrices), values
/// [num_cells][rows][cols] in the local cell numbering, row-major.
typedef struct {
  const char *name;        ///< dataset name, as for tc_output_field
  int rows;                ///< >= 1
  int cols;                ///< >= 1
  const double *values;    ///< the local values (may be NULL on a rank with no cells)
  const char *units;       ///< NULL means ""
  const char *description; ///< NULL means ""
} tc_output_matrix;

/// One row of the phase-timing table: seconds over ranks.
typedef struct {
  const char *name;   ///< phase name, e.g. "assemble"
  double min_seconds; ///< fastest rank
  double avg_seconds; ///< mean over ranks
  double max_seconds; ///< slowest rank
} tc_output_phase;

/// Run metadata stored under /run. Only rank 0's copy is used (it is
/// broadcast), so other ranks may pass the same struct or zeros. Any string
/// may be NULL (stored as "").
typedef struct {
  const char *deck_text;        ///< the input deck as read, stored as /run/deck
  const char *version;          ///< tcmini version
  const char *git_revision;     ///< source revision of the build
  const char *backend;          ///< serial, openmp or cuda
  const char *layout;           ///< physical array layout, e.g. "left" or "right"
  const char *variant;          ///< contraction algorithm variant(s) used
  const char *precision;        ///< "double" or "float"
  const tc_output_phase *phases; ///< phase timings, stored as the table /run/phases
  int num_phases;               ///< rows in phases
} tc_output_run_info;

/// What one write cost, the same on every rank.
typedef struct {
  int64_t payload_bytes;  ///< raw dataset bytes written, all ranks together
  int64_t file_bytes;     ///< size of the finished .h5 file (payload + HDF5 metadata + alignment)
  double seconds;         ///< wall time of tc_output_write from file creation to the final
                          ///< rename (writing, reading back, flushing), slowest rank
  double gigabytes_per_second; ///< payload_bytes / seconds / 1e9
  double write_seconds;   ///< of seconds: writing the file through MPI-IO (slowest rank)
  double flush_seconds;   ///< of seconds: putting it on stable storage (fsync)
  double verify_seconds;  ///< of seconds: reading it back and comparing (slowest rank)
} tc_output_stats;

typedef struct tc_output tc_output;

/// Prepares a results file at path (e.g. "out/run.h5"; the XDMF file is path
/// with ".h5" replaced by ".xmf", or ".xmf" appended). Checks, before any work
/// is done, that the directory exists and is writable, that neither final
/// name is a directory or a symbolic link, that neither file exists unless
/// overwrite is true, and that mesh is partitioned over comm (the
/// communicator the mesh was created on). Rank 0 takes the lock on the path
/// ("<path>.lock", held until tc_output_destroy): a second writer of the same
/// path, in this or another job, fails here with TC_ERR_IO naming the holder.
/// Holding it, rank 0 deals with what runs that died on the path left behind
/// (tc_output_note says what). Every rank returns the same error.
/// Collective on comm.
tc_err tc_output_create(MPI_Comm comm, const char *path, bool overwrite, const tc_mesh *mesh,
                        tc_output **output);

/// Releases the writer (rank 0: and the lock on the path) and sets *output
/// to NULL. NULL is fine. Not collective.
void tc_output_destroy(tc_output **output);

/// Adds a per-cell field, written to /cells/<name>. Every rank must add the
/// same fields in the same order (checked collectively by tc_output_write).
/// Not collective.
tc_err tc_output_add_cell_field(tc_output *output, const tc_output_field *field);

/// Adds a per-node field, written to /nodes/<name>; as tc_output_add_cell_field.
tc_err tc_output_add_node_field(tc_output *output, const tc_output_field *field);

/// Adds element matrices, written to /element_matrices/<name>; as
/// tc_output_add_cell_field.
tc_err tc_output_add_element_matrix(tc_output *output, const tc_output_matrix *matrix);

/// Writes the mesh, the fields and run into a temporary file beside the final
/// path (its whole size reserved first, so that a full file system or quota
/// fails before anything is written), reads it back and compares it with what
/// each rank meant to write, flushes it to stable storage, writes the XDMF
/// file (rank 0), and publishes both as a pair (tc_output_publish.c): the
/// final names then hold the new pair, or, after any failure, the pair they
/// held before. On any failure on any rank, every rank returns the same
/// error and no temporary file is left. stats may be NULL. Collective on the
/// writer's communicator.
tc_err tc_output_write(tc_output *output, const tc_output_run_info *run, tc_output_stats *stats);

/// Sends the results of a run whose checks failed beside the final names,
/// so that a good pair already there is kept: "X.failed.h5" and
/// "X.failed.xmf" for "X.h5" ("X.failed" and "X.failed.xmf" for a path not
/// ending in ".h5"). A failed pair there from an earlier run is replaced
/// (regular files only, as tc_output_create checks the final names), and
/// what a run killed while publishing such a pair left is dealt with first.
/// Call before tc_output_write; tc_output_h5_path then names the new path.
/// Every rank returns the same result. Collective on the writer's
/// communicator.
tc_err tc_output_divert_failed(tc_output *output);

/// Rewrites the phase table /run/phases of the file that tc_output_write
/// published, in place, with the final times (the phases that were still
/// running while the file was written, output and total, among them). The
/// table keeps its rows: the same phases in the same order, names no longer
/// than those written. Only the table's values change; on failure the file
/// keeps the table it had. Rank 0 opens the file on its own; every rank
/// returns the same result. Collective on the writer's communicator.
tc_err tc_output_update_phases(tc_output *output, const tc_output_phase *phases,
                               int num_phases);

/// What tc_output_create found on the path and did about it (rank 0; ""
/// when nothing): files left by runs that died there, removed, or a
/// publication they did not finish, finished or undone. For the user to
/// read, e.g. "removed 'out.h5.tmp.node1.4242' (3.7 MiB), left by a run
/// (node1.4242) that did not finish." Not collective.
const char *tc_output_note(const tc_output *output);

/// The final path of the HDF5 file.
const char *tc_output_h5_path(const tc_output *output);

/// The final path of the XDMF file.
const char *tc_output_xdmf_path(const tc_output *output);

/// Test hook: makes rank fail with TC_ERR_IO right after the dataset at
/// dataset_path (e.g. "/nodes/temperature") has been written, so that the
/// cleanup after a failure in the middle of a write can be tested. Not collective.
tc_err tc_output_fail_after(tc_output *output, const char *dataset_path, int rank);

#endif
