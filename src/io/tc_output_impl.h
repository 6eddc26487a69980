/* tc_output_impl: private to src/io. The writer's state and what the files
 * of the results-file module share:
 *   tc_output.c          the writer handle and the write sequence
 *   tc_output_registry.c the fields a writer is asked for
 *   tc_output_rows.c     a rank's rows in global order and their byte runs
 *   tc_output_h5.c       HDF5 primitives (attributes, groups, datasets)
 *   tc_output_layout.c   rank 0's description of the whole file, in memory
 *   tc_output_mesh.c     the /mesh group
 *   tc_output_fields.c   the registered fields
 *   tc_output_run.c      the /run group
 *   tc_output_transfer.c every rank's bytes into the file, checked
 *   tc_output_publish.c  the destination and the durable, atomic publication
 *   tc_output_lock.c     one run at a time on a path
 *   tc_output_recover.c  what runs that died on the path left behind */
#ifndef TC_OUTPUT_IMPL_H
#define TC_OUTPUT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <hdf5.h>

#include "tc_h5_image.h"
#include "tc_output.h"
#include "tc_parallel.h"
#include "tc_parallel_file.h"

enum {
  TC_OUTPUT_PATH_BYTES = 4096,
  TC_OUTPUT_NAME_BYTES = 128,
  TC_OUTPUT_NOTE_BYTES = 2048,
  TC_OUTPUT_FORMAT_VERSION = 1,
  TC_OUTPUT_HOST_CHARS = 20, /* of the host name, in the names of temporary files */
  /* ".tmp.<host>.<pid>" and its NUL, at most */
  TC_OUTPUT_SUFFIX_BYTES = 5 + TC_OUTPUT_HOST_CHARS + 1 + 10 + 1,
};

/* One dataset to write besides the mesh: a cell or node field or a set of
 * element matrices. */
typedef struct {
  char path[2 * TC_OUTPUT_NAME_BYTES]; /* "/cells/<name>" */
  char *name;
  char *units;
  char *description;
  bool on_nodes;
  int trailing_rank; /* dimensions after the row dimension: 0, 1 or 2 */
  hsize_t trailing[2];
  const double *values;
} tc_output_field_request;

/* Where the phase table /run/phases lies in the file, to be rewritten with
 * the final times (tc_output_update_phases). */
typedef struct {
  int64_t offset; /* -1: the table has no storage (no rows) */
  int64_t rows;
  int64_t name_bytes; /* of a record's fixed-length name; 3 doubles follow */
} tc_output_phase_table;

struct tc_output {
  MPI_Comm comm; /* a duplicate of the caller's communicator */
  int rank;
  int size;
  const tc_mesh *mesh;
  bool overwrite;
  char h5_path[TC_OUTPUT_PATH_BYTES];
  char xdmf_path[TC_OUTPUT_PATH_BYTES];
  tc_output_field_request *fields;
  int num_fields;
  int capacity;
  int lock_fd; /* rank 0: the lock on the path; -1 when not held */
  char lock_path[TC_OUTPUT_PATH_BYTES];
  char note[TC_OUTPUT_NOTE_BYTES];           /* rank 0: what was found and done on the path */
  bool published;                            /* rank 0: tc_output_write published the pair */
  tc_output_phase_table phases;              /* rank 0: where the published file's phase table is */
  char fail_after[2 * TC_OUTPUT_NAME_BYTES]; /* test hook; "" when off */
  int fail_rank;
};

/* The error that happened first: a, else b. */
static inline tc_err tc_output_first_error(tc_err a, tc_err b) { return a != TC_SUCCESS ? a : b; }

/* Agrees on local after earlier steps agreed on err (the same on every
 * rank): once a step has failed, later failures are waited for but not
 * reported, so that the message stays the first failure's. Collective. */
static inline tc_err tc_output_agree_next(MPI_Comm comm, tc_err err, tc_err local) {
  if (err != TC_SUCCESS)
    return tc_output_first_error(err, tc_parallel_agree(comm, TC_SUCCESS));
  return tc_parallel_agree(comm, local);
}

/* Appends a sentence to the writer's note (rank 0), for the driver to show. */
void tc_output_add_note(tc_output *output, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- field registry (tc_output_registry.c) ---- */

/* Frees the registered fields' copies of their texts. Not collective. */
void tc_output_free_fields(tc_output *output);

/* Fails on every rank unless every rank registered the same datasets in the
 * same order (the collective writes would not match). Collective. */
tc_err tc_output_check_same_fields(const tc_output *output);

/* ---- row sets (tc_output_rows.c) ---- */

/* The rows of a global array that this rank writes, ascending. */
typedef struct {
  int64_t count;
  int64_t *global; /* [count] global row ids, ascending */
  int64_t *local;  /* [count] the local index of each row; NULL when it is the row's position */
} tc_row_set;

/* The local rows whose owner is rank (every row when owner is NULL), in
 * ascending global order. Not collective. */
tc_err tc_row_set_build(int64_t num_local, const int64_t *global_id, const int *owner, int rank,
                        tc_row_set *rows);

void tc_row_set_free(tc_row_set *rows);

/* The local index of the i-th row. */
int64_t tc_row_set_local(const tc_row_set *rows, int64_t i);

/* The rows' data in global order: the caller's array itself when the local
 * order already is the global order, else a packed copy in *packed (to be
 * freed). Not collective. */
tc_err tc_row_set_gather(const tc_row_set *rows, const void *values, size_t row_bytes,
                         void **packed, const void **data);

/* The byte runs of the file that the rows occupy in a dataset whose storage
 * starts at offset, row_bytes a row: one run per stretch of consecutive
 * rows, ascending (*runs allocated; NULL when there are none). */
tc_err tc_row_set_runs(const tc_row_set *rows, int64_t offset, int64_t row_bytes, int64_t *count,
                       tc_byte_run **runs);

/* ---- the datasets of the file ---- */

typedef struct tc_output_dataset tc_output_dataset;

/* This rank's rows of dataset in global order: *data points to them, and to
 * *packed (freed by the caller) when a copy was made. */
typedef tc_err (*tc_output_pack)(const tc_output *output, const tc_output_dataset *dataset,
                                 const tc_row_set *rows, void **packed, const void **data);

/* One dataset of rows (a mesh array or a field), described alike on every
 * rank: rank 0 gives it a place in the file, every rank writes its rows. */
struct tc_output_dataset {
  char path[2 * TC_OUTPUT_NAME_BYTES];
  hid_t file_type; /* a predefined little-endian type: the rows' bytes as they are in memory */
  size_t element_bytes;
  int64_t global_rows;
  int trailing_rank; /* dimensions after the row dimension: 0, 1 or 2 */
  hsize_t trailing[2];
  const char *units; /* NULL: no attribute */
  const char *description;
  bool on_nodes;       /* rows: the owned nodes, else the local cells */
  tc_output_pack pack; /* the rows' data in global order */
  const void *values;  /* what pack reads (local order) */
  int64_t offset;      /* where its storage starts; -1 when it has none (no rows) */
};

/* Bytes of one row of dataset. */
int64_t tc_output_row_bytes(const tc_output_dataset *dataset);

/* The rows this rank writes of node and cell datasets. */
typedef struct {
  tc_row_set nodes; /* owned nodes */
  tc_row_set cells; /* local cells */
} tc_output_mesh_rows;

tc_err tc_output_build_mesh_rows(const tc_output *output, tc_output_mesh_rows *rows);
void tc_output_free_mesh_rows(tc_output_mesh_rows *rows);

/* ---- HDF5 primitives (tc_output_h5.c) ---- */

/* Closes whichever of ids are open (any kind of HDF5 id) and marks them
 * closed; returns the first failure. */
tc_err tc_output_close_ids(hid_t *ids, int count);

/* A variable-length UTF-8 string attribute (h5py reads it as str). */
tc_err tc_output_put_string_attribute(hid_t object, const char *name, const char *value);

/* A 64-bit integer attribute: a scalar when count is 1, else an array. */
tc_err tc_output_put_int64_attribute(hid_t object, const char *name, const int64_t *values,
                                     int count);

/* Creates the group at path with a "description" attribute. */
tc_err tc_output_make_group(hid_t file, const char *path, const char *description);

/* Opens the group at path and lets put add its attributes. */
tc_err tc_output_group_attributes(const tc_output *output, hid_t file, const char *path,
                                  tc_err (*put)(const tc_output *, hid_t, const void *),
                                  const void *context);

/* Creates dataset with its storage allocated (not written) and its units and
 * description, and sets dataset->offset to the storage's address. */
tc_err tc_output_create_dataset(hid_t file, tc_output_dataset *dataset);

/* Creates a dataset of rows (rows < 0: a scalar) and writes data into it
 * whole; *offset (if offset is not NULL) gets the address of its storage,
 * -1 when it has none. Takes over (closes) type. */
tc_err tc_output_write_small_dataset(hid_t file, const char *path, hid_t type, int64_t rows,
                                     const void *data, const char *description, int64_t *offset);

/* ---- layout (tc_output_layout.c) ---- */

/* Rank 0's description of the file in memory: everything but the datasets'
 * rows. */
typedef struct {
  tc_h5_image *image;
  int64_t file_bytes;  /* the file's size */
  int64_t small_bytes; /* bytes of the small datasets inside the image */
  tc_output_phase_table phases;
} tc_output_layout;

/* Rank 0: lays out the file with its groups, attributes, datasets (whose
 * offsets it sets), run metadata and small datasets. Not collective. */
tc_err tc_output_lay_out(const tc_output *output, tc_output_dataset *datasets, int count,
                         const tc_output_run_info *run, const char *created,
                         tc_output_layout *layout);

void tc_output_free_layout(tc_output_layout *layout);

/* ---- mesh (tc_output_mesh.c) ---- */

enum { TC_OUTPUT_MESH_DATASETS = 4 };

/* The mesh's datasets: coordinates, connectivity in tensor-product and in
 * VTK order, partition. */
void tc_output_mesh_datasets(const tc_output *output, tc_output_dataset *datasets);

/* The /mesh group's attributes. */
tc_err tc_output_put_mesh_attributes(const tc_output *output, hid_t group, const void *context);

/* ---- fields (tc_output_fields.c) ---- */

/* The registered fields as datasets. */
void tc_output_field_datasets(const tc_output *output, tc_output_dataset *datasets);

/* The default pack: the rows of dataset->values (local order). */
tc_err tc_output_pack_values(const tc_output *output, const tc_output_dataset *dataset,
                             const tc_row_set *rows, void **packed, const void **data);

/* ---- run metadata (tc_output_run.c) ---- */

/* Checks rank 0's run info. Not collective. */
tc_err tc_output_check_run(const tc_output_run_info *run);

/* Rank 0: /run's attributes, the deck and the phase table (where it lies:
 * *phases); adds the small datasets' bytes to *small_bytes. Not collective. */
tc_err tc_output_describe_run(const tc_output *output, hid_t file, const tc_output_run_info *run,
                              const char *created, int64_t *small_bytes,
                              tc_output_phase_table *phases);

/* ---- transfer (tc_output_transfer.c) ---- */

/* What the transfer cost (seconds: this rank's). */
typedef struct {
  int64_t payload_bytes; /* this rank's bytes of the datasets' rows */
  double write_seconds;  /* opening, writing and closing the file */
  double flush_seconds;  /* putting it on stable storage */
  double verify_seconds; /* reading it back and comparing */
} tc_output_transfer_stats;

/* Every rank writes its rows of datasets and rank 0 the layout's bytes into
 * the file at path (created and sized beforehand), flushes it to stable
 * storage, reads everything back and compares it with what was meant to be
 * written, and closes it. Collective. */
tc_err tc_output_transfer(const tc_output *output, const char *path,
                          const tc_output_dataset *datasets, int count,
                          const tc_output_mesh_rows *rows, const tc_output_layout *layout,
                          tc_output_transfer_stats *stats);

/* ---- publication (tc_output_publish.c) ---- */

/* The files beside the final ones are named final "." kind "." owner, the
 * owner being "<host>.<pid>" of the writing process (rank 0). */
#define TC_OUTPUT_TEMPORARY "tmp"      /* a file being written */
#define TC_OUTPUT_BACKUP "old"         /* the previous file, while a new one is put in place */
#define TC_OUTPUT_JOURNAL "publishing" /* a publication in progress (beside the HDF5 file) */
enum { TC_OUTPUT_OWNER_BYTES = TC_OUTPUT_HOST_CHARS + 1 + 20 + 1 };

/* This process's owner text: its host name (letters, digits, '-', '_') and
 * pid, as "<host>.<pid>". */
void tc_output_owner(char owner[TC_OUTPUT_OWNER_BYTES]);

/* final "." kind "." owner into name. */
void tc_output_side_name(const char *final, const char *kind, const char *owner, char *name,
                         size_t size);

/* A file by device and inode (present false: no file). */
typedef struct {
  bool present;
  uint64_t device;
  uint64_t inode;
} tc_output_file_id;

tc_output_file_id tc_output_file_id_of(const char *path);
bool tc_output_same_file(tc_output_file_id a, tc_output_file_id b);

/* The files a publication journal names, in this order. */
enum {
  TC_OUTPUT_OLD_H5,
  TC_OUTPUT_OLD_XDMF,
  TC_OUTPUT_NEW_H5,
  TC_OUTPUT_NEW_XDMF,
  TC_OUTPUT_JOURNAL_FILES
};

/* Reads the journal at path into ids[TC_OUTPUT_JOURNAL_FILES]. */
tc_err tc_output_read_journal(const char *path, tc_output_file_id ids[]);

/* Moves temporary to final: a rename with overwrite, else a hard link and
 * an unlink, which never replace a file that appeared meanwhile. */
tc_err tc_output_place(const char *temporary, const char *final, bool overwrite);

/* Rank 0: the output directory exists and is writable. Not collective. */
tc_err tc_output_check_directory(const tc_output *output);

/* Flushes the directory holding path to disk. */
tc_err tc_output_sync_directory(const char *path);

/* Rank 0: the directory can take the files, the final names are neither
 * directories nor symbolic links, and neither final file exists unless
 * overwrite is set. Not collective. */
tc_err tc_output_check_destination(const tc_output *output);

/* Rank 0: creates the temporary file at path (which must not exist) for the
 * results file final and reserves bytes for it on the file system, so that
 * a full file system or quota shows here, before anything is written. Not
 * collective. */
tc_err tc_output_create_temporary(const char *final, const char *path, int64_t bytes);

/* Every rank: fails when bytes exceed the file-size limit (ulimit -f) of
 * this process. Not collective. */
tc_err tc_output_check_size_limit(const char *path, int64_t bytes);

/* Rank 0: publishes the complete, durable temporary files under the final
 * names as a pair: afterwards the final names hold both new files, or, after
 * a failure, both files they held before (or none, if there were none).
 * Not collective. */
tc_err tc_output_publish_pair(const tc_output *output, const char *h5_temporary,
                              const char *xdmf_temporary);

/* bytes as "3.7 MiB" (KiB, MiB, GiB: powers of 1024). */
void tc_output_format_bytes(int64_t bytes, char text[32]);

/* Removes path; a missing file is not an error. Not collective. */
tc_err tc_output_remove_if_present(const char *path);

/* The temporary name of final written by this process: final ".tmp."
 * host "." pid. */
void tc_output_temporary_name(const char *final, char *name, size_t size);

/* ---- lock (tc_output_lock.c) ---- */

/* Rank 0: takes the lock on the output path, failing with TC_ERR_IO naming
 * the run that holds it. Not collective. */
tc_err tc_output_lock(tc_output *output);

/* Rank 0: releases the lock (if held) and removes the lock file. */
void tc_output_unlock(tc_output *output);

/* ---- debris of dead runs (tc_output_recover.c) ---- */

/* Rank 0, holding the lock: finishes the publication of a run that died
 * half-way through it, and removes the temporary and backup files that runs
 * which died left on the path, noting what it did. Not collective. */
tc_err tc_output_recover(tc_output *output);

#endif
