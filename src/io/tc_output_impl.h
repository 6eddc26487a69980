/* tc_output_impl: private to src/io. The writer's state and what the files
 * of the results-file module share: the writer handle (tc_output.c), the
 * field registry (tc_output_registry.c), row sets and their hyperslabs
 * (tc_output_rows.c), the HDF5 primitives (tc_output_h5.c), the mesh
 * (tc_output_mesh.c), the fields (tc_output_fields.c), the run metadata
 * (tc_output_run.c) and the atomic publication (tc_output_publish.c). */
#ifndef TC_OUTPUT_IMPL_H
#define TC_OUTPUT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <hdf5.h>

#include "tc_output.h"
#include "tc_parallel.h"

enum {
  TC_OUTPUT_PATH_BYTES = 4096,
  TC_OUTPUT_NAME_BYTES = 128,
  TC_OUTPUT_FORMAT_VERSION = 1,
  TC_OUTPUT_SUFFIX_BYTES = 32, /* ".tmp.<pid hex>.<nanoseconds hex>" and its NUL, at most */
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
  char fail_after[2 * TC_OUTPUT_NAME_BYTES]; /* test hook; "" when off */
  int fail_rank;
};

/* The open file and what the transfers did. */
typedef struct {
  hid_t file;
  hid_t transfer; /* dataset transfer properties: collective MPI-IO */
  int64_t payload_bytes;
  bool collective;
} tc_output_session;

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

/* Selects the rows in the file dataspace space as few regular hyperslabs. */
tc_err tc_row_set_select(hid_t space, const tc_row_set *rows, int trailing_rank,
                         const hsize_t trailing[2]);

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
tc_err tc_output_group_attributes(const tc_output *output, tc_output_session *s, const char *path,
                                  tc_err (*put)(const tc_output *, hid_t, const void *),
                                  const void *context);

/* What one dataset is: its path, element type and shape. */
typedef struct {
  const char *path;
  hid_t file_type;   /* little-endian type stored in the file */
  hid_t memory_type; /* the same type in native order (no conversion on x86/ARM) */
  size_t element_bytes;
  int64_t global_rows;
  int trailing_rank;
  hsize_t trailing[2];
  const char *units; /* NULL: no attribute */
  const char *description;
} tc_output_dataset_shape;

/* One dataset from start to end: local packing, agreed; the collective write,
 * agreed (and the test hook). Collective. */
tc_err tc_output_write_rows(const tc_output *output, tc_output_session *s,
                            const tc_output_dataset_shape *shape, const tc_row_set *rows,
                            const void *values);

/* A dataset that rank 0 alone fills (rows < 0: a scalar), written
 * collectively. Takes over (closes) type. Collective. */
tc_err tc_output_write_root_only(const tc_output *output, tc_output_session *s, const char *path,
                                 hid_t type, int64_t rows, const void *data,
                                 const char *description);

/* ---- mesh (tc_output_mesh.c) ---- */

/* The rows this rank writes of node and cell datasets. */
typedef struct {
  tc_row_set nodes; /* owned nodes */
  tc_row_set cells; /* local cells */
} tc_output_mesh_rows;

tc_err tc_output_build_mesh_rows(const tc_output *output, tc_output_mesh_rows *rows);
void tc_output_free_mesh_rows(tc_output_mesh_rows *rows);

/* /mesh: its attributes, coordinates, connectivity (tensor and VTK order)
 * and partition. Collective. */
tc_err tc_output_write_mesh(const tc_output *output, tc_output_session *s,
                            const tc_output_mesh_rows *rows);

/* ---- fields (tc_output_fields.c) ---- */

/* The registered cell and node fields and element matrices. Collective. */
tc_err tc_output_write_fields(const tc_output *output, tc_output_session *s,
                              const tc_output_mesh_rows *rows);

/* ---- run metadata (tc_output_run.c) ---- */

/* The strings of tc_output_run_info, in this order. */
enum {
  TC_RUN_DECK,
  TC_RUN_VERSION,
  TC_RUN_GIT_REVISION,
  TC_RUN_BACKEND,
  TC_RUN_LAYOUT,
  TC_RUN_VARIANT,
  TC_RUN_PRECISION,
  TC_NUM_RUN_STRINGS
};

/* Run metadata as rank 0 gave it, now known on every rank. */
typedef struct {
  char *strings[TC_NUM_RUN_STRINGS];
  int64_t num_phases;
  int64_t phase_name_bytes;
  char *phase_table; /* rank 0 only: [num_phases] records of name + 3 doubles */
} tc_output_run_copy;

/* Copies rank 0's run (NULL: empty) to every rank. Collective. */
tc_err tc_output_share_run_info(const tc_output *output, const tc_output_run_info *run,
                                tc_output_run_copy *copy);
void tc_output_free_run_copy(tc_output_run_copy *copy);

/* /run: its attributes, the deck and the phase table. Collective. */
tc_err tc_output_write_run(const tc_output *output, tc_output_session *s,
                           const tc_output_run_copy *run, const char *created);

/* ---- publication (tc_output_publish.c) ---- */

/* The directory part of path ("." when it has none). */
void tc_output_directory_of(const char *path, char directory[TC_OUTPUT_PATH_BYTES]);

/* The file-name part of path. */
const char *tc_output_base_name(const char *path);

/* Rank 0: the directory can take the files, and neither final file exists
 * unless overwrite is set. Not collective. */
tc_err tc_output_check_destination(const tc_output *output);

/* Rank 0: both files to their final names, the HDF5 file first (the XDMF
 * file refers to it). Undoes the first when the second fails. Not collective. */
tc_err tc_output_publish_pair(const tc_output *output, const char *h5_temporary,
                              const char *xdmf_temporary);

/* Removes path; a missing file is not an error. Not collective. */
tc_err tc_output_remove_if_present(const char *path);

/* The size of the file at path. Not collective. */
tc_err tc_output_file_size(const char *path, int64_t *bytes);

#endif
