/* tc_output: the parallel HDF5 results file and its XDMF companion, written
 * collectively by every rank and published atomically. */
#include "tc_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "tc_fault.h"
#include "tc_h5.h"
#include "tc_parallel.h"
#include "tc_xdmf.h"

enum {
  PATH_BYTES = 4096,
  NAME_BYTES = 128,
  FORMAT_VERSION = 1,
  SUFFIX_BYTES = 32, /* ".tmp.<pid hex>.<nanoseconds hex>" and its NUL, at most */
};

/* Datasets of 1 MiB or more start on 1 MiB boundaries: the stripe size of
 * Lustre's default layout and a divisor of GPFS block sizes, so the file
 * domains of collective buffering line up with the file system's locks.
 * Smaller objects are packed (aligning them would only leave holes). */
static const hsize_t alignment_threshold = 1 << 20;
static const hsize_t alignment_bytes = 1 << 20;

/* One dataset to write besides the mesh: a cell or node field or a set of
 * element matrices. */
typedef struct {
  char path[2 * NAME_BYTES];  /* "/cells/<name>" */
  char *name;
  char *units;
  char *description;
  bool on_nodes;
  int trailing_rank;          /* dimensions after the row dimension: 0, 1 or 2 */
  hsize_t trailing[2];
  const double *values;
} field_request;

struct tc_output {
  MPI_Comm comm;               /* a duplicate of the caller's communicator */
  int rank;
  int size;
  const tc_mesh *mesh;
  bool overwrite;
  char h5_path[PATH_BYTES];
  char xdmf_path[PATH_BYTES];
  field_request *fields;
  int num_fields;
  int capacity;
  char fail_after[2 * NAME_BYTES]; /* test hook; "" when off */
  int fail_rank;
};

/* The rows of a global array that this rank writes, ascending. */
typedef struct {
  int64_t count;
  int64_t *global; /* [count] global row ids, ascending */
  int64_t *local;  /* [count] the local index of each row; NULL when it is the row's position */
} row_set;

/* The open file and what the transfers did. */
typedef struct {
  hid_t file;
  hid_t transfer; /* dataset transfer properties: collective MPI-IO */
  int64_t payload_bytes;
  bool collective;
} session;

/* The strings of tc_output_run_info, in this order. */
enum { RUN_DECK, RUN_VERSION, RUN_GIT_REVISION, RUN_BACKEND, RUN_LAYOUT, RUN_VARIANT,
       RUN_PRECISION, NUM_RUN_STRINGS };

/* The names of the /run attributes that hold them (the deck is a dataset). */
static const char *const run_attribute_names[NUM_RUN_STRINGS] = {
    [RUN_VERSION] = "version", [RUN_GIT_REVISION] = "git_revision", [RUN_BACKEND] = "backend",
    [RUN_LAYOUT] = "layout",   [RUN_VARIANT] = "variant",            [RUN_PRECISION] = "precision"};

/* Run metadata as rank 0 gave it, now known on every rank. */
typedef struct {
  char *strings[NUM_RUN_STRINGS];
  int64_t num_phases;
  int64_t phase_name_bytes;
  char *phase_table;              /* rank 0 only: [num_phases] records of name + 3 doubles */
} run_copy;

/* HDF5 wants a buffer even when a rank selects nothing to write. */
static const double nothing_to_write = 0;

/* The error that happened first: a, else b. */
static tc_err first_of(tc_err a, tc_err b) { return a != TC_SUCCESS ? a : b; }

/* Agrees on local after earlier steps agreed on err (the same on every
 * rank): once a step has failed, later failures are waited for but not
 * reported, so that the message stays the first failure's. Collective. */
static tc_err agree_next(MPI_Comm comm, tc_err err, tc_err local) {
  if (err != TC_SUCCESS)
    return first_of(err, tc_parallel_agree(comm, TC_SUCCESS));
  return tc_parallel_agree(comm, local);
}

/* ---------------------------------------------------------------- paths -- */

static tc_err exists_error(const char *path) {
  TC_FAIL(TC_ERR_IO,
          "output file '%s' exists; set output.overwrite = true or choose another output.path",
          path);
}

static void directory_of(const char *path, char directory[PATH_BYTES]) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(directory, PATH_BYTES, ".");
  else if (slash == path)
    snprintf(directory, PATH_BYTES, "/");
  else
    snprintf(directory, PATH_BYTES, "%.*s", (int)(slash - path), path);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The final file may be replaced only when overwrite is set, and never when
 * it is a directory. */
static tc_err check_final_path(const char *path, bool overwrite) {
  struct stat info;
  if (stat(path, &info) != 0) {
    TC_CHECK(errno == ENOENT, TC_ERR_IO, "cannot check output file '%s': %s", path,
             strerror(errno));
    return TC_SUCCESS;
  }
  TC_CHECK(!S_ISDIR(info.st_mode), TC_ERR_IO, "output path '%s' is a directory", path);
  if (!overwrite)
    return exists_error(path);
  return TC_SUCCESS;
}

static tc_err check_destination(const tc_output *output) {
  char directory[PATH_BYTES];
  directory_of(output->h5_path, directory);
  struct stat info;
  TC_CHECK(stat(directory, &info) == 0, TC_ERR_IO, "output directory '%s' cannot be used: %s",
           directory, strerror(errno));
  TC_CHECK(S_ISDIR(info.st_mode), TC_ERR_IO, "output directory '%s' is not a directory",
           directory);
  TC_CHECK(access(directory, W_OK | X_OK) == 0, TC_ERR_IO,
           "output directory '%s' is not writable: %s", directory, strerror(errno));
  TC_CALL(check_final_path(output->h5_path, output->overwrite));
  TC_CALL(check_final_path(output->xdmf_path, output->overwrite));
  return TC_SUCCESS;
}

/* Moves temporary to final; without overwrite, never replaces a file that
 * appeared meanwhile (link() fails on an existing name; file systems without
 * hard links fall back to check-then-rename). */
static tc_err publish(const char *temporary, const char *final, bool overwrite) {
  if (!overwrite) {
    if (link(temporary, final) == 0) {
      if (unlink(temporary) == 0)
        return TC_SUCCESS;
      int cause = errno;
      TC_CHECK(unlink(final) == 0, TC_ERR_IO, "cannot remove '%s': %s", final, strerror(errno));
      TC_FAIL(TC_ERR_IO, "cannot remove '%s': %s", temporary, strerror(cause));
    }
    if (errno == EEXIST || access(final, F_OK) == 0)
      return exists_error(final);
  }
  TC_CHECK(rename(temporary, final) == 0, TC_ERR_IO, "cannot rename '%s' to '%s': %s", temporary,
           final, strerror(errno));
  return TC_SUCCESS;
}

static tc_err remove_if_present(const char *path) {
  TC_CHECK(unlink(path) == 0 || errno == ENOENT, TC_ERR_IO, "cannot remove '%s': %s", path,
           strerror(errno));
  return TC_SUCCESS;
}

/* ------------------------------------------------------------- creation -- */

static tc_err check_mesh(const tc_output *output) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t owned = 0;
  for (int64_t node = 0; node < part->num_nodes; node++) {
    TC_CHECK(part->node_owner[node] >= 0 && part->node_owner[node] < output->size, TC_ERR_ARGUMENT,
             "node %lld is owned by rank %d, outside the output communicator of %d ranks "
             "(pass the communicator the mesh was created on)",
             (long long)part->node_global_id[node], part->node_owner[node], output->size);
    owned += part->node_owner[node] == output->rank;
  }
  TC_CHECK(owned == part->num_owned_nodes, TC_ERR_ARGUMENT,
           "the mesh says this rank owns %lld nodes but %lld carry its rank "
           "(pass the communicator the mesh was created on)",
           (long long)part->num_owned_nodes, (long long)owned);
  return TC_SUCCESS;
}

static tc_err check_mesh_totals(const tc_output *output) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t totals[2] = {part->num_cells, part->num_owned_nodes};
  TC_CALL(tc_allreduce_sum_int64(output->comm, totals, 2));
  TC_CHECK(totals[0] == part->num_global_cells && totals[1] == part->num_global_nodes,
           TC_ERR_ARGUMENT,
           "the output communicator's ranks hold %lld cells and own %lld nodes of a mesh with "
           "%lld and %lld: pass the communicator the mesh was created on",
           (long long)totals[0], (long long)totals[1], (long long)part->num_global_cells,
           (long long)part->num_global_nodes);
  return TC_SUCCESS;
}

static tc_err set_paths(tc_output *output, const char *path) {
  size_t length = strlen(path);
  TC_CHECK(length > 0, TC_ERR_ARGUMENT, "the output path is empty");
  TC_CHECK(length + 64 < PATH_BYTES, TC_ERR_ARGUMENT, "the output path is too long (%zu bytes)",
           length);
#ifdef OPEN_MPI
  /* Open MPI 4's MPI-IO (OMPIO) formats "<file>.locktest.<rank>" into a
   * 256-byte buffer without a bound and aborts the job on longer names. */
  enum { OMPIO_NAME_MAX = 255 - 10 - 10 }; /* ".locktest." and 10 rank digits */
  TC_CHECK(length + SUFFIX_BYTES <= OMPIO_NAME_MAX, TC_ERR_ARGUMENT,
           "output path '%s' is %zu characters; Open MPI's MPI-IO fails on paths longer than "
           "%d: choose a shorter output.path",
           path, length, OMPIO_NAME_MAX - SUFFIX_BYTES);
#endif
  snprintf(output->h5_path, PATH_BYTES, "%s", path);
  if (length > 3 && strcmp(path + length - 3, ".h5") == 0)
    snprintf(output->xdmf_path, PATH_BYTES, "%.*s.xmf", (int)(length - 3), path);
  else
    snprintf(output->xdmf_path, PATH_BYTES, "%s.xmf", path);
  return TC_SUCCESS;
}

tc_err tc_output_create(MPI_Comm comm, const char *path, bool overwrite, const tc_mesh *mesh,
                        tc_output **output) {
  TC_CHECK(output != NULL && mesh != NULL && path != NULL, TC_ERR_ARGUMENT,
           "tc_output_create needs a path, a mesh and somewhere to put the writer");
  *output = NULL;
  tc_output *writer;
  TC_CALLOC(writer, 1);
  writer->fail_rank = -1;
  writer->mesh = mesh;
  writer->overwrite = overwrite;
  if (MPI_Comm_dup(comm, &writer->comm) != MPI_SUCCESS) {
    free(writer);
    TC_FAIL(TC_ERR_MPI, "MPI_Comm_dup failed on the output communicator");
  }
  writer->rank = tc_rank(writer->comm);
  writer->size = tc_size(writer->comm);

  tc_err err = set_paths(writer, path);
  if (err == TC_SUCCESS)
    err = check_mesh(writer);
  err = tc_parallel_agree(writer->comm, err);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(writer->comm, check_mesh_totals(writer));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(writer->comm, writer->rank == 0 ? check_destination(writer)
                                                            : TC_SUCCESS);
  if (err != TC_SUCCESS) {
    tc_output_destroy(&writer);
    return err;
  }
  *output = writer;
  return TC_SUCCESS;
}

void tc_output_destroy(tc_output **output) {
  if (output == NULL || *output == NULL)
    return;
  tc_output *writer = *output;
  for (int i = 0; i < writer->num_fields; i++) {
    free(writer->fields[i].name);
    free(writer->fields[i].units);
    free(writer->fields[i].description);
  }
  free(writer->fields);
  /* Destroy cannot report: a failure to free the duplicate only leaks it. */
  if (writer->comm != MPI_COMM_NULL)
    (void)MPI_Comm_free(&writer->comm);
  free(writer);
  *output = NULL;
}

const char *tc_output_h5_path(const tc_output *output) { return output->h5_path; }
const char *tc_output_xdmf_path(const tc_output *output) { return output->xdmf_path; }

tc_err tc_output_fail_after(tc_output *output, const char *dataset_path, int rank) {
  TC_CHECK(strlen(dataset_path) < sizeof output->fail_after, TC_ERR_ARGUMENT,
           "dataset path '%s' is too long", dataset_path);
  snprintf(output->fail_after, sizeof output->fail_after, "%s", dataset_path);
  output->fail_rank = rank;
  return TC_SUCCESS;
}

/* ---------------------------------------------------------------- fields -- */

static tc_err duplicate_text(const char *text, char **copy) {
  const char *source = text ? text : "";
  size_t bytes = strlen(source) + 1;
  TC_CALLOC(*copy, bytes);
  memcpy(*copy, source, bytes);
  return TC_SUCCESS;
}

static tc_err check_name(const char *name) {
  TC_CHECK(name != NULL && name[0] != '\0', TC_ERR_ARGUMENT, "an output field has no name");
  TC_CHECK(strlen(name) < NAME_BYTES, TC_ERR_ARGUMENT, "output field name '%s' is too long", name);
  TC_CHECK(strcmp(name, ".") != 0 && strcmp(name, "..") != 0, TC_ERR_ARGUMENT,
           "'%s' is not a usable output field name", name);
  for (const char *c = name; *c; c++)
    TC_CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '-' || *c == '.',
             TC_ERR_ARGUMENT,
             "output field name '%s' may hold only letters, digits, '_', '-' and '.'", name);
  return TC_SUCCESS;
}

static tc_err add_field(tc_output *output, const char *group, const char *name, bool on_nodes,
                        int trailing_rank, const hsize_t trailing[2], const double *values,
                        const char *units, const char *description) {
  TC_CALL(check_name(name));
  char path[2 * NAME_BYTES];
  snprintf(path, sizeof path, "/%s/%s", group, name);
  for (int i = 0; i < output->num_fields; i++)
    TC_CHECK(strcmp(output->fields[i].path, path) != 0, TC_ERR_ARGUMENT,
             "output dataset '%s' was added twice", path);
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t rows = on_nodes ? part->num_nodes : part->num_cells;
  TC_CHECK(values != NULL || rows == 0, TC_ERR_ARGUMENT, "output dataset '%s' has no values",
           path);

  if (output->num_fields == output->capacity) {
    int capacity = output->capacity ? 2 * output->capacity : 8;
    field_request *grown = realloc(output->fields, (size_t)capacity * sizeof *grown);
    TC_CHECK(grown != NULL, TC_ERR_MEMORY, "out of memory adding output dataset '%s'", path);
    output->fields = grown;
    output->capacity = capacity;
  }
  field_request *field = &output->fields[output->num_fields];
  memset(field, 0, sizeof *field);
  snprintf(field->path, sizeof field->path, "%s", path);
  field->on_nodes = on_nodes;
  field->trailing_rank = trailing_rank;
  field->trailing[0] = trailing[0];
  field->trailing[1] = trailing[1];
  field->values = values;
  tc_err err = duplicate_text(name, &field->name);
  if (err == TC_SUCCESS)
    err = duplicate_text(units, &field->units);
  if (err == TC_SUCCESS)
    err = duplicate_text(description, &field->description);
  if (err != TC_SUCCESS) {
    free(field->name);
    free(field->units);
    free(field->description);
    return err;
  }
  output->num_fields++;
  return TC_SUCCESS;
}

static tc_err add_vector_field(tc_output *output, const char *group, bool on_nodes,
                               const tc_output_field *field) {
  TC_CHECK(field != NULL, TC_ERR_ARGUMENT, "no output field given");
  TC_CHECK(field->components >= 1, TC_ERR_ARGUMENT,
           "output field '%s' has %d components; it needs at least 1",
           field->name ? field->name : "", field->components);
  hsize_t trailing[2] = {(hsize_t)field->components, 1};
  return add_field(output, group, field->name, on_nodes, field->components > 1 ? 1 : 0, trailing,
                   field->values, field->units, field->description);
}

tc_err tc_output_add_cell_field(tc_output *output, const tc_output_field *field) {
  return add_vector_field(output, "cells", false, field);
}

tc_err tc_output_add_node_field(tc_output *output, const tc_output_field *field) {
  return add_vector_field(output, "nodes", true, field);
}

tc_err tc_output_add_element_matrix(tc_output *output, const tc_output_matrix *matrix) {
  TC_CHECK(matrix != NULL, TC_ERR_ARGUMENT, "no element matrix given");
  TC_CHECK(matrix->rows >= 1 && matrix->cols >= 1, TC_ERR_ARGUMENT,
           "element matrix '%s' is %d x %d; it needs at least 1 x 1",
           matrix->name ? matrix->name : "", matrix->rows, matrix->cols);
  hsize_t trailing[2] = {(hsize_t)matrix->rows, (hsize_t)matrix->cols};
  return add_field(output, "element_matrices", matrix->name, false, 2, trailing, matrix->values,
                   matrix->units, matrix->description);
}

/* Every rank must write the same datasets in the same order, or the
 * collective calls would not match: compare with rank 0's list. */
static tc_err fields_signature(const tc_output *output, char **signature, int64_t *bytes) {
  int64_t length = 1;
  for (int i = 0; i < output->num_fields; i++)
    length += (int64_t)strlen(output->fields[i].path) + 48;
  TC_CALLOC(*signature, length);
  int64_t used = 0;
  for (int i = 0; i < output->num_fields; i++) {
    const field_request *field = &output->fields[i];
    const char *separator = i + 1 < output->num_fields ? " " : "";
    unsigned long long rows = field->trailing[0], cols = field->trailing[1];
    if (field->trailing_rank == 0)
      used += snprintf(*signature + used, (size_t)(length - used), "%s%s", field->path, separator);
    else if (field->trailing_rank == 1)
      used += snprintf(*signature + used, (size_t)(length - used), "%s[%llu]%s", field->path, rows,
                       separator);
    else
      used += snprintf(*signature + used, (size_t)(length - used), "%s[%llux%llu]%s", field->path,
                       rows, cols, separator);
  }
  *bytes = used + 1;
  return TC_SUCCESS;
}

static tc_err allocate_text(int64_t bytes, char **text) {
  TC_CALLOC(*text, bytes);
  return TC_SUCCESS;
}

static tc_err check_same_fields(const tc_output *output) {
  char *mine = NULL;
  int64_t bytes = 0;
  tc_err err = tc_parallel_agree(output->comm, fields_signature(output, &mine, &bytes));
  if (err != TC_SUCCESS) {
    free(mine);
    return err;
  }
  int64_t root_bytes = bytes;
  char *root = NULL;
  err = tc_broadcast(output->comm, &root_bytes, sizeof root_bytes, 0);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, allocate_text(root_bytes, &root));
  if (err == TC_SUCCESS) {
    if (output->rank == 0)
      memcpy(root, mine, (size_t)bytes);
    err = tc_broadcast(output->comm, root, root_bytes, 0);
  }
  if (err == TC_SUCCESS) {
    tc_err local = TC_SUCCESS;
    if (strcmp(root, mine) != 0)
      local = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                             "the ranks add different output datasets: '%s' here, '%s' on rank 0",
                             mine, root);
    err = tc_parallel_agree(output->comm, local);
  }
  free(root);
  free(mine);
  return err;
}

/* -------------------------------------------------------------- run info -- */

/* Rank 0's text (NULL: "") in a new string on every rank. Collective. */
static tc_err share_text(MPI_Comm comm, const char *text_on_root, char **copy) {
  int64_t length = text_on_root ? (int64_t)strlen(text_on_root) : 0;
  TC_CALL(tc_parallel_agree(comm, tc_broadcast(comm, &length, sizeof length, 0)));
  TC_CALL(tc_parallel_agree(comm, allocate_text(length + 1, copy)));
  if (text_on_root)
    memcpy(*copy, text_on_root, (size_t)length);
  return tc_parallel_agree(comm, tc_broadcast(comm, *copy, length, 0));
}

static void free_run_copy(run_copy *copy) {
  for (int i = 0; i < NUM_RUN_STRINGS; i++)
    free(copy->strings[i]);
  free(copy->phase_table);
  memset(copy, 0, sizeof *copy);
}

static tc_err check_phases(const tc_output_run_info *run) {
  if (run == NULL)
    return TC_SUCCESS;
  TC_CHECK(run->num_phases >= 0 && (run->num_phases == 0 || run->phases != NULL),
           TC_ERR_ARGUMENT, "the run info lists %d phases but gives none", run->num_phases);
  for (int i = 0; i < run->num_phases; i++)
    TC_CHECK(run->phases[i].name != NULL && run->phases[i].name[0] != '\0', TC_ERR_ARGUMENT,
             "phase %d of the run info has no name", i);
  return TC_SUCCESS;
}

static size_t phase_record_bytes(const run_copy *copy) {
  return (size_t)copy->phase_name_bytes + 3 * sizeof(double);
}

/* Rank 0's phase table as the records /run/phases stores: a fixed-length
 * name followed by the min, avg and max seconds. */
static tc_err pack_phases(const tc_output_run_info *run, run_copy *copy) {
  size_t record = phase_record_bytes(copy);
  TC_CALLOC(copy->phase_table, record * (size_t)(copy->num_phases ? copy->num_phases : 1));
  for (int64_t i = 0; i < copy->num_phases; i++) {
    const tc_output_phase *phase = &run->phases[i];
    char *row = copy->phase_table + (size_t)i * record;
    memcpy(row, phase->name, strlen(phase->name));
    double seconds[3] = {phase->min_seconds, phase->avg_seconds, phase->max_seconds};
    memcpy(row + copy->phase_name_bytes, seconds, sizeof seconds);
  }
  return TC_SUCCESS;
}

static tc_err share_run_info(const tc_output *output, const tc_output_run_info *run,
                             run_copy *copy) {
  bool root = output->rank == 0;
  TC_CALL(tc_parallel_agree(output->comm, root ? check_phases(run) : TC_SUCCESS));
  const char *texts[NUM_RUN_STRINGS] = {NULL};
  if (root && run) {
    texts[RUN_DECK] = run->deck_text;
    texts[RUN_VERSION] = run->version;
    texts[RUN_GIT_REVISION] = run->git_revision;
    texts[RUN_BACKEND] = run->backend;
    texts[RUN_LAYOUT] = run->layout;
    texts[RUN_VARIANT] = run->variant;
    texts[RUN_PRECISION] = run->precision;
  }
  for (int i = 0; i < NUM_RUN_STRINGS; i++)
    TC_CALL(share_text(output->comm, texts[i], &copy->strings[i]));

  int64_t shape[2] = {0, 1};
  if (root && run) {
    shape[0] = run->num_phases;
    for (int i = 0; i < run->num_phases; i++)
      if ((int64_t)strlen(run->phases[i].name) + 1 > shape[1])
        shape[1] = (int64_t)strlen(run->phases[i].name) + 1;
  }
  TC_CALL(tc_parallel_agree(output->comm, tc_broadcast(output->comm, shape, sizeof shape, 0)));
  copy->num_phases = shape[0];
  copy->phase_name_bytes = shape[1];
  return tc_parallel_agree(output->comm, root ? pack_phases(run, copy) : TC_SUCCESS);
}

/* ------------------------------------------------------------- row sets -- */

typedef struct {
  int64_t global;
  int64_t local;
} row_pair;

static int compare_rows(const void *a, const void *b) {
  int64_t x = ((const row_pair *)a)->global, y = ((const row_pair *)b)->global;
  return (x > y) - (x < y);
}

static void free_row_set(row_set *rows) {
  free(rows->global);
  free(rows->local);
  memset(rows, 0, sizeof *rows);
}

/* The local rows whose owner is rank (every row when owner is NULL), in
 * ascending global order. */
static tc_err build_row_set(int64_t num_local, const int64_t *global_id, const int *owner,
                            int rank, row_set *rows) {
  memset(rows, 0, sizeof *rows);
  row_pair *pairs;
  TC_CALLOC(pairs, num_local);
  int64_t count = 0;
  for (int64_t i = 0; i < num_local; i++)
    if (owner == NULL || owner[i] == rank)
      pairs[count++] = (row_pair){global_id[i], i};
  qsort(pairs, (size_t)count, sizeof *pairs, compare_rows);

  bool identity = count == num_local;
  for (int64_t i = 0; i < count && identity; i++)
    identity = pairs[i].local == i;
  rows->count = count;
  if (count > 0) {
    rows->global = malloc((size_t)count * sizeof *rows->global);
    rows->local = identity ? NULL : malloc((size_t)count * sizeof *rows->local);
    if (rows->global == NULL || (!identity && rows->local == NULL)) {
      free(pairs);
      free_row_set(rows);
      TC_FAIL(TC_ERR_MEMORY, "out of memory listing %lld output rows", (long long)count);
    }
  }
  for (int64_t i = 0; i < count; i++) {
    rows->global[i] = pairs[i].global;
    if (rows->local)
      rows->local[i] = pairs[i].local;
  }
  free(pairs);
  return TC_SUCCESS;
}

static int64_t local_row(const row_set *rows, int64_t i) {
  return rows->local ? rows->local[i] : i;
}

/* The rows' data in global order: the caller's array itself when the local
 * order already is the global order, else a packed copy in *packed. */
static tc_err gather_rows(const row_set *rows, const void *values, size_t row_bytes,
                          void **packed, const void **data) {
  *packed = NULL;
  if (rows->local == NULL) {
    *data = values;
    return TC_SUCCESS;
  }
  char *buffer;
  TC_CALLOC(buffer, (size_t)rows->count * row_bytes);
  for (int64_t i = 0; i < rows->count; i++)
    memcpy(buffer + (size_t)i * row_bytes,
           (const char *)values + (size_t)rows->local[i] * row_bytes, row_bytes);
  *packed = buffer;
  *data = buffer;
  return TC_SUCCESS;
}

static int64_t run_length(const int64_t *global, int64_t first, int64_t count) {
  int64_t end = first + 1;
  while (end < count && global[end] == global[end - 1] + 1)
    end++;
  return end - first;
}

/* Selects the rows in the file dataspace as few regular hyperslabs: runs of
 * consecutive rows of equal length at a constant stride become one
 * hyperslab (a rank's box of a lexicographic grid is one per grid plane). */
static tc_err select_rows(hid_t space, const row_set *rows, int trailing_rank,
                          const hsize_t trailing[2]) {
  if (rows->count == 0) {
    TC_H5_CALL(H5Sselect_none(space));
    return TC_SUCCESS;
  }
  hsize_t start[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, count[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (int d = 0; d < trailing_rank; d++)
    block[d + 1] = trailing[d];
  const int64_t *global = rows->global;
  H5S_seloper_t operation = H5S_SELECT_SET;
  for (int64_t first = 0; first < rows->count;) {
    int64_t length = run_length(global, first, rows->count);
    int64_t runs = 1, step = length;
    int64_t next = first + length;
    if (next < rows->count && run_length(global, next, rows->count) == length) {
      step = global[next] - global[first];
      for (runs = 2, next += length;
           next < rows->count && global[next] - global[next - length] == step &&
           run_length(global, next, rows->count) == length;
           next += length)
        runs++;
    }
    start[0] = (hsize_t)global[first];
    stride[0] = (hsize_t)step;
    count[0] = (hsize_t)runs;
    block[0] = (hsize_t)length;
    TC_H5_CALL(H5Sselect_hyperslab(space, operation, start, stride, count, block));
    operation = H5S_SELECT_OR;
    first += runs * length;
  }
  return TC_SUCCESS;
}

/* ------------------------------------------------------ HDF5 primitives -- */

/* Closes whichever of ids are open (any kind of HDF5 id) and marks them
 * closed; returns the first failure. */
static tc_err close_ids(hid_t *ids, int count) {
  tc_err first = TC_SUCCESS;
  for (int i = count - 1; i >= 0; i--) {
    if (ids[i] < 0)
      continue;
    if (H5Idec_ref(ids[i]) < 0 && first == TC_SUCCESS)
      first = tc_h5_failure("H5Idec_ref", __FILE__, __LINE__, __func__);
    ids[i] = -1;
  }
  return first;
}

/* ids: string type, scalar space, attribute. */
static tc_err put_string_attribute_with(hid_t object, const char *name, const char *value,
                                        hid_t ids[3]) {
  TC_H5_CALL(ids[0] = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(ids[0], H5T_VARIABLE));
  TC_H5_CALL(H5Tset_cset(ids[0], H5T_CSET_UTF8));
  TC_H5_CALL(ids[1] = H5Screate(H5S_SCALAR));
  TC_H5_CALL(ids[2] = H5Acreate2(object, name, ids[0], ids[1], H5P_DEFAULT, H5P_DEFAULT));
  const char *text = value ? value : "";
  TC_H5_CALL(H5Awrite(ids[2], ids[0], &text));
  return TC_SUCCESS;
}

/* A variable-length UTF-8 string attribute (h5py reads it as str). */
static tc_err put_string_attribute(hid_t object, const char *name, const char *value) {
  hid_t ids[3] = {-1, -1, -1};
  tc_err err = put_string_attribute_with(object, name, value, ids);
  return first_of(err, close_ids(ids, 3));
}

/* ids: space, attribute. */
static tc_err put_int64_attribute_with(hid_t object, const char *name, const int64_t *values,
                                       int count, hid_t ids[2]) {
  hsize_t dims[1] = {(hsize_t)count};
  TC_H5_CALL(ids[0] = count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL));
  TC_H5_CALL(ids[1] = H5Acreate2(object, name, H5T_STD_I64LE, ids[0], H5P_DEFAULT, H5P_DEFAULT));
  TC_H5_CALL(H5Awrite(ids[1], H5T_NATIVE_INT64, values));
  return TC_SUCCESS;
}

/* A 64-bit integer attribute: a scalar when count is 1, else an array. */
static tc_err put_int64_attribute(hid_t object, const char *name, const int64_t *values,
                                  int count) {
  hid_t ids[2] = {-1, -1};
  tc_err err = put_int64_attribute_with(object, name, values, count, ids);
  return first_of(err, close_ids(ids, 2));
}

static tc_err make_group(hid_t file, const char *path, const char *description) {
  hid_t group = H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group < 0)
    return tc_h5_failure("H5Gcreate2", __FILE__, __LINE__, __func__);
  tc_err err = put_string_attribute(group, "description", description);
  return first_of(err, close_ids(&group, 1));
}

/* What one dataset is: its path, element type and shape. */
typedef struct {
  const char *path;
  hid_t file_type;   /* little-endian type stored in the file */
  hid_t memory_type; /* the same type in native order (no conversion on x86/ARM) */
  size_t element_bytes;
  int64_t global_rows;
  int trailing_rank;
  hsize_t trailing[2];
  const char *units;       /* NULL: no attribute */
  const char *description;
} dataset_shape;

static size_t row_bytes_of(const dataset_shape *shape) {
  size_t bytes = shape->element_bytes;
  for (int d = 0; d < shape->trailing_rank; d++)
    bytes *= (size_t)shape->trailing[d];
  return bytes;
}

static tc_err note_transfer(session *s) {
  H5D_mpio_actual_io_mode_t mode;
  TC_H5_CALL(H5Pget_mpio_actual_io_mode(s->transfer, &mode));
  if (mode == H5D_MPIO_NO_COLLECTIVE)
    s->collective = false;
  return TC_SUCCESS;
}

/* ids: file space, memory space, creation properties, dataset. */
static tc_err write_dataset_with(session *s, const dataset_shape *shape, const row_set *rows,
                                 const void *data, hid_t ids[4]) {
  int rank = 1 + shape->trailing_rank;
  hsize_t file_dims[3] = {(hsize_t)shape->global_rows, shape->trailing[0], shape->trailing[1]};
  hsize_t memory_dims[3] = {(hsize_t)rows->count, shape->trailing[0], shape->trailing[1]};
  TC_H5_CALL(ids[0] = H5Screate_simple(rank, file_dims, NULL));
  TC_H5_CALL(ids[1] = H5Screate_simple(rank, memory_dims, NULL));
  /* Every element is written, so HDF5's fill pass would only double the
   * traffic. */
  TC_H5_CALL(ids[2] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_fill_time(ids[2], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[3] = H5Dcreate2(s->file, shape->path, shape->file_type, ids[0], H5P_DEFAULT,
                                 ids[2], H5P_DEFAULT));
  TC_CALL(select_rows(ids[0], rows, shape->trailing_rank, shape->trailing));
  if (rows->count == 0)
    TC_H5_CALL(H5Sselect_none(ids[1]));
  /* An empty dataset has no storage to write to. */
  if (shape->global_rows > 0) {
    TC_H5_CALL(H5Dwrite(ids[3], shape->memory_type, ids[1], ids[0], s->transfer,
                        data ? data : &nothing_to_write));
    TC_CALL(note_transfer(s));
    s->payload_bytes += rows->count * (int64_t)row_bytes_of(shape);
  }
  if (shape->units)
    TC_CALL(put_string_attribute(ids[3], "units", shape->units));
  if (shape->description)
    TC_CALL(put_string_attribute(ids[3], "description", shape->description));
  return TC_SUCCESS;
}

/* Creates the dataset and writes this rank's rows (data: [rows->count] rows
 * in global order), collectively. */
static tc_err write_dataset(session *s, const dataset_shape *shape, const row_set *rows,
                            const void *data) {
  hid_t ids[4] = {-1, -1, -1, -1};
  tc_err err = write_dataset_with(s, shape, rows, data, ids);
  tc_err closed = close_ids(ids, 4);
  return err != TC_SUCCESS ? err : closed;
}

static tc_err fail_point(const tc_output *output, const char *path) {
  TC_CALL(tc_fault_check("io")); /* test-only: TCMINI_FAULT=io */
  TC_CHECK(output->fail_rank != output->rank || strcmp(output->fail_after, path) != 0,
           TC_ERR_IO, "injected failure after writing %s (test hook)", path);
  return TC_SUCCESS;
}

/* One dataset from start to end: local packing, agreed; the collective write,
 * agreed (and the test hook). */
static tc_err write_rows(const tc_output *output, session *s, const dataset_shape *shape,
                         const row_set *rows, const void *values) {
  void *packed = NULL;
  const void *data = NULL;
  tc_err err = tc_parallel_agree(output->comm,
                                 gather_rows(rows, values, row_bytes_of(shape), &packed, &data));
  if (err == TC_SUCCESS) {
    err = write_dataset(s, shape, rows, data);
    if (err == TC_SUCCESS)
      err = fail_point(output, shape->path);
    err = tc_parallel_agree(output->comm, err);
  }
  free(packed);
  return err;
}

/* ----------------------------------------------------------------- mesh -- */

typedef struct {
  row_set nodes; /* owned nodes */
  row_set cells; /* local cells */
} mesh_rows;

static void free_mesh_rows(mesh_rows *rows) {
  free_row_set(&rows->nodes);
  free_row_set(&rows->cells);
}

static tc_err build_mesh_rows(const tc_output *output, mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  TC_CALL(build_row_set(part->num_nodes, part->node_global_id, part->node_owner, output->rank,
                        &rows->nodes));
  return build_row_set(part->num_cells, part->cell_global_id, NULL, output->rank, &rows->cells);
}

/* Connectivity in global node ids, cell rows in global order, nodes in
 * tensor order (vtk_order NULL) or VTK order. */
static tc_err pack_connectivity(const tc_mesh_local *part, const row_set *cells,
                                const int *vtk_order, int64_t **connectivity) {
  int per_cell = part->nodes_per_cell;
  TC_CALLOC(*connectivity, cells->count * per_cell);
  for (int64_t i = 0; i < cells->count; i++) {
    const int64_t *nodes = part->cell_nodes + local_row(cells, i) * per_cell;
    for (int v = 0; v < per_cell; v++)
      (*connectivity)[i * per_cell + v] =
          part->node_global_id[nodes[vtk_order ? vtk_order[v] : v]];
  }
  return TC_SUCCESS;
}

static tc_err write_connectivity(const tc_output *output, session *s, const mesh_rows *rows,
                                 const char *path, const int *vtk_order,
                                 const char *description) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t *connectivity = NULL;
  tc_err err = tc_parallel_agree(output->comm,
                                 pack_connectivity(part, &rows->cells, vtk_order, &connectivity));
  if (err == TC_SUCCESS) {
    dataset_shape shape = {path, H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(int64_t),
                           part->num_global_cells, 1, {(hsize_t)part->nodes_per_cell, 1},
                           NULL, description};
    row_set in_order = rows->cells;
    in_order.local = NULL; /* already packed in global order */
    err = write_rows(output, s, &shape, &in_order, connectivity);
  }
  free(connectivity);
  return err;
}

static tc_err write_partition(const tc_output *output, session *s, const mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int32_t *owner = NULL;
  tc_err err = TC_SUCCESS;
  if (rows->cells.count) {
    owner = malloc((size_t)rows->cells.count * sizeof *owner);
    if (owner == NULL)
      err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                           "out of memory for the partition");
    for (int64_t i = 0; owner && i < rows->cells.count; i++)
      owner[i] = output->rank;
  }
  err = tc_parallel_agree(output->comm, err);
  if (err == TC_SUCCESS) {
    dataset_shape shape = {"/mesh/partition", H5T_STD_I32LE, H5T_NATIVE_INT32, sizeof(int32_t),
                           part->num_global_cells, 0, {1, 1}, NULL,
                           "MPI rank that owned and wrote each cell (row = global cell id)"};
    row_set in_order = rows->cells;
    in_order.local = NULL;
    err = write_rows(output, s, &shape, &in_order, owner);
  }
  free(owner);
  return err;
}

static tc_err write_mesh_attributes(const tc_output *output, hid_t group) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int grid[3], position[3];
  tc_mesh_rank_grid(output->mesh, grid, position);
  int64_t order = part->order, per_cell = part->nodes_per_cell;
  int64_t rank_grid[3] = {grid[0], grid[1], grid[2]};
  TC_CALL(put_int64_attribute(group, "order", &order, 1));
  TC_CALL(put_int64_attribute(group, "nodes_per_cell", &per_cell, 1));
  TC_CALL(put_int64_attribute(group, "global_cells", part->global_cells, 3));
  TC_CALL(put_int64_attribute(group, "global_nodes", part->global_nodes, 3));
  TC_CALL(put_int64_attribute(group, "rank_grid", rank_grid, 3));
  TC_CALL(put_string_attribute(group, "cell_type",
                               part->order == 1 ? "hex8 (Q1)" : "hex27 (Q2)"));
  return TC_SUCCESS;
}

/* Opens the group at path and lets put add its attributes. */
static tc_err open_group_attributes(const tc_output *output, session *s, const char *path,
                                    tc_err (*put)(const tc_output *, hid_t, const void *),
                                    const void *context) {
  hid_t group = H5Gopen2(s->file, path, H5P_DEFAULT);
  if (group < 0)
    return tc_h5_failure("H5Gopen2", __FILE__, __LINE__, __func__);
  tc_err err = put(output, group, context);
  return first_of(err, close_ids(&group, 1));
}

static tc_err put_mesh_attributes(const tc_output *output, hid_t group, const void *context) {
  (void)context;
  return write_mesh_attributes(output, group);
}

static tc_err write_mesh(const tc_output *output, session *s, const mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  TC_CALL(tc_parallel_agree(output->comm,
                            open_group_attributes(output, s, "/mesh", put_mesh_attributes, NULL)));

  dataset_shape coordinates = {
      "/mesh/coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
      part->num_global_nodes, 1, {3, 1}, "length unit of the input deck",
      "node positions x, y, z; row = global node id i + gx*(j + gy*k) on the node grid "
      "global_nodes = (gx, gy, gz)"};
  TC_CALL(write_rows(output, s, &coordinates, &rows->nodes, part->coords));

  TC_CALL(write_connectivity(
      output, s, rows, "/mesh/connectivity", NULL,
      "global node ids of each cell's nodes in tensor-product order a + n*(b + n*c), "
      "n = order + 1, (a, b, c) the node's position along x, y, z in the cell; "
      "row = global cell id i + nx*(j + ny*k)"));
  int vtk_order[27];
  tc_xdmf_vtk_node_order(part->order, vtk_order);
  TC_CALL(write_connectivity(
      output, s, rows, "/mesh/xdmf_connectivity", vtk_order,
      part->order == 1
          ? "the cells' global node ids in VTK/XDMF Hexahedron order, for visualisation"
          : "the cells' global node ids in VTK/XDMF Hexahedron_27 (triquadratic) order, "
            "for visualisation"));
  return write_partition(output, s, rows);
}

/* --------------------------------------------------------------- fields -- */

static tc_err write_fields(const tc_output *output, session *s, const mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  for (int i = 0; i < output->num_fields; i++) {
    const field_request *field = &output->fields[i];
    dataset_shape shape = {field->path,
                           H5T_IEEE_F64LE,
                           H5T_NATIVE_DOUBLE,
                           sizeof(double),
                           field->on_nodes ? part->num_global_nodes : part->num_global_cells,
                           field->trailing_rank,
                           {field->trailing[0], field->trailing[1]},
                           field->units,
                           field->description};
    TC_CALL(write_rows(output, s, &shape, field->on_nodes ? &rows->nodes : &rows->cells,
                       field->values));
  }
  return TC_SUCCESS;
}

/* ------------------------------------------------------------------ run -- */

typedef struct {
  const run_copy *run;
  const char *created;
} run_attributes;

static tc_err put_run_attributes(const tc_output *output, hid_t group, const void *context) {
  const run_attributes *attributes = context;
  for (int i = RUN_VERSION; i < NUM_RUN_STRINGS; i++)
    TC_CALL(put_string_attribute(group, run_attribute_names[i], attributes->run->strings[i]));
  int64_t ranks = output->size;
  TC_CALL(put_int64_attribute(group, "ranks", &ranks, 1));
  return put_string_attribute(group, "created", attributes->created);
}

/* ids: element type, file space, memory space, creation properties, dataset. */
static tc_err write_root_only_with(const tc_output *output, session *s, const char *path,
                                   int64_t rows, const void *data, const char *description,
                                   hid_t ids[5]) {
  hsize_t dims[1] = {(hsize_t)(rows < 0 ? 1 : rows)};
  TC_H5_CALL(ids[1] = rows < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL));
  TC_H5_CALL(ids[2] = H5Scopy(ids[1]));
  TC_H5_CALL(ids[3] = H5Pcreate(H5P_DATASET_CREATE));
  TC_H5_CALL(H5Pset_fill_time(ids[3], H5D_FILL_TIME_NEVER));
  TC_H5_CALL(ids[4] = H5Dcreate2(s->file, path, ids[0], ids[1], H5P_DEFAULT, ids[3],
                                 H5P_DEFAULT));
  if (output->rank != 0) {
    TC_H5_CALL(H5Sselect_none(ids[1]));
    TC_H5_CALL(H5Sselect_none(ids[2]));
  }
  /* An empty dataset has no storage to write to. */
  if (rows != 0) {
    TC_H5_CALL(H5Dwrite(ids[4], ids[0], ids[2], ids[1], s->transfer,
                        data ? data : &nothing_to_write));
    TC_CALL(note_transfer(s));
    if (output->rank == 0)
      s->payload_bytes += (int64_t)dims[0] * (int64_t)H5Tget_size(ids[0]);
  }
  TC_CALL(put_string_attribute(ids[4], "description", description));
  return fail_point(output, path);
}

/* A dataset that rank 0 alone fills (rows < 0: a scalar), written
 * collectively. Takes over (closes) type. */
static tc_err write_root_only(const tc_output *output, session *s, const char *path, hid_t type,
                              int64_t rows, const void *data, const char *description) {
  hid_t ids[5] = {type, -1, -1, -1, -1};
  tc_err err = write_root_only_with(output, s, path, rows, data, description, ids);
  err = first_of(err, close_ids(ids, 5));
  return tc_parallel_agree(output->comm, err);
}

static tc_err deck_type(size_t length, hid_t *type) {
  TC_H5_CALL(*type = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(*type, length ? length : 1));
  TC_H5_CALL(H5Tset_strpad(*type, H5T_STR_NULLPAD));
  TC_H5_CALL(H5Tset_cset(*type, H5T_CSET_UTF8));
  return TC_SUCCESS;
}

static tc_err write_deck(const tc_output *output, session *s, const run_copy *run) {
  const char *deck = run->strings[RUN_DECK];
  hid_t type = -1;
  tc_err err = tc_parallel_agree(output->comm, deck_type(strlen(deck), &type));
  if (err != TC_SUCCESS)
    return first_of(err, close_ids(&type, 1));
  return write_root_only(output, s, "/run/deck", type, -1, deck,
                         "the input deck of the run, as read");
}

/* types: the name's string type, the record type. */
static tc_err phase_type(const run_copy *run, hid_t types[2]) {
  size_t at = (size_t)run->phase_name_bytes;
  TC_H5_CALL(types[0] = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(types[0], at));
  TC_H5_CALL(types[1] = H5Tcreate(H5T_COMPOUND, phase_record_bytes(run)));
  TC_H5_CALL(H5Tinsert(types[1], "name", 0, types[0]));
  TC_H5_CALL(H5Tinsert(types[1], "min_seconds", at, H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(types[1], "avg_seconds", at + sizeof(double), H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(types[1], "max_seconds", at + 2 * sizeof(double), H5T_IEEE_F64LE));
  return TC_SUCCESS;
}

static tc_err write_phases(const tc_output *output, session *s, const run_copy *run) {
  hid_t types[2] = {-1, -1};
  tc_err err = phase_type(run, types);
  err = tc_parallel_agree(output->comm, first_of(err, close_ids(types, 1)));
  if (err != TC_SUCCESS)
    return first_of(err, close_ids(types + 1, 1));
  return write_root_only(output, s, "/run/phases", types[1], run->num_phases, run->phase_table,
                         "phase timings: wall seconds over ranks (min, avg, max)");
}

/* ----------------------------------------------------------- the write -- */

static tc_err open_file(const tc_output *output, const char *temporary, session *s) {
  hid_t access_list;
  TC_H5_CALL(access_list = H5Pcreate(H5P_FILE_ACCESS));
  tc_err err = TC_SUCCESS;
  if (H5Pset_fapl_mpio(access_list, output->comm, MPI_INFO_NULL) < 0 ||
      H5Pset_all_coll_metadata_ops(access_list, 1) < 0 ||
      H5Pset_coll_metadata_write(access_list, 1) < 0 ||
      H5Pset_alignment(access_list, alignment_threshold, alignment_bytes) < 0)
    err = tc_h5_failure("H5Pset_fapl_mpio", __FILE__, __LINE__, __func__);
  if (err == TC_SUCCESS && (s->file = H5Fcreate(temporary, H5F_ACC_EXCL, H5P_DEFAULT,
                                                access_list)) < 0)
    err = tc_h5_failure("H5Fcreate", __FILE__, __LINE__, __func__);
  if (H5Pclose(access_list) < 0 && err == TC_SUCCESS)
    err = tc_h5_failure("H5Pclose", __FILE__, __LINE__, __func__);
  TC_CALL(err);
  TC_H5_CALL(s->transfer = H5Pcreate(H5P_DATASET_XFER));
  TC_H5_CALL(H5Pset_dxpl_mpio(s->transfer, H5FD_MPIO_COLLECTIVE));
  return TC_SUCCESS;
}

static tc_err put_root_attributes(const tc_output *output, hid_t root, const void *context) {
  (void)output;
  int64_t version = FORMAT_VERSION;
  TC_CALL(put_string_attribute(root, "format", "tcmini results"));
  TC_CALL(put_int64_attribute(root, "format_version", &version, 1));
  return put_string_attribute(root, "created", context);
}

static tc_err write_groups(const tc_output *output, session *s, const char *created) {
  TC_CALL(open_group_attributes(output, s, "/", put_root_attributes, created));
  TC_CALL(make_group(s->file, "/mesh", "the hexahedral mesh in global numbering"));
  TC_CALL(make_group(s->file, "/cells", "per-cell fields, row = global cell id"));
  TC_CALL(make_group(s->file, "/nodes", "per-node fields, row = global node id"));
  TC_CALL(make_group(s->file, "/element_matrices",
                     "per-cell matrices [cell][row][col], row = global cell id"));
  return make_group(s->file, "/run", "how the results were made");
}

static tc_err write_contents(const tc_output *output, session *s, const run_copy *run,
                             const char *created) {
  mesh_rows rows;
  memset(&rows, 0, sizeof rows);
  tc_err err = tc_parallel_agree(output->comm, build_mesh_rows(output, &rows));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, write_groups(output, s, created));
  if (err == TC_SUCCESS)
    err = write_mesh(output, s, &rows);
  if (err == TC_SUCCESS)
    err = write_fields(output, s, &rows);
  if (err == TC_SUCCESS) {
    run_attributes attributes = {run, created};
    err = tc_parallel_agree(output->comm, open_group_attributes(output, s, "/run",
                                                                put_run_attributes, &attributes));
  }
  if (err == TC_SUCCESS)
    err = write_deck(output, s, run);
  if (err == TC_SUCCESS)
    err = write_phases(output, s, run);
  free_mesh_rows(&rows);
  return err;
}

static tc_err close_file(session *s) {
  hid_t file = s->file;
  tc_err err = close_ids(&s->transfer, 1);
  s->file = -1;
  if (file >= 0 && H5Fclose(file) < 0)
    err = first_of(err, tc_h5_failure("H5Fclose", __FILE__, __LINE__, __func__));
  return err;
}

/* Rank 0: the XDMF file under its temporary name. */
static tc_err write_xdmf(const tc_output *output, const char *temporary) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  tc_xdmf_attribute *attributes;
  TC_CALLOC(attributes, output->num_fields + 1);
  attributes[0] = (tc_xdmf_attribute){"partition", "/mesh/partition", false, 1, true, 4};
  int count = 1;
  for (int i = 0; i < output->num_fields; i++) {
    const field_request *field = &output->fields[i];
    if (strncmp(field->path, "/element_matrices/", 18) == 0)
      continue;
    attributes[count++] = (tc_xdmf_attribute){field->name, field->path, field->on_nodes,
                                              (int)field->trailing[0], false, 8};
  }
  tc_xdmf_grid grid = {base_name(output->h5_path), part->nodes_per_cell, part->num_global_cells,
                       part->num_global_nodes, "/mesh/xdmf_connectivity", "/mesh/coordinates",
                       attributes, count};
  tc_err err = tc_xdmf_write(temporary, &grid);
  free(attributes);
  return err;
}

static tc_err file_size(const char *path, int64_t *bytes) {
  struct stat info;
  TC_CHECK(stat(path, &info) == 0, TC_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
  *bytes = (int64_t)info.st_size;
  return TC_SUCCESS;
}

/* Rank 0: both files to their final names, the HDF5 file first (the XDMF
 * file refers to it). Undoes the first when the second fails. */
static tc_err publish_both(const tc_output *output, const char *h5_temporary,
                           const char *xdmf_temporary) {
  TC_CALL(check_final_path(output->h5_path, output->overwrite));
  TC_CALL(check_final_path(output->xdmf_path, output->overwrite));
  TC_CALL(publish(h5_temporary, output->h5_path, output->overwrite));
  tc_err err = publish(xdmf_temporary, output->xdmf_path, output->overwrite);
  if (err != TC_SUCCESS)
    err = first_of(err, remove_if_present(output->h5_path));
  return err;
}

static void utc_now(char text[32]) {
  time_t now = time(NULL);
  struct tm utc;
  if (gmtime_r(&now, &utc) == NULL || strftime(text, 32, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
    snprintf(text, 32, "unknown");
}

/* Rank 0 names the temporary files "<final>.tmp.<pid>.<nanoseconds>" (hex). */
static tc_err temporary_suffix(const tc_output *output, char suffix[SUFFIX_BYTES]) {
  memset(suffix, 0, SUFFIX_BYTES);
  if (output->rank == 0) {
    struct timespec now = {0, 0};
    TC_CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0, TC_ERR_INTERNAL,
             "clock_gettime failed: %s", strerror(errno));
    snprintf(suffix, SUFFIX_BYTES, ".tmp.%lx.%llx", (unsigned long)getpid(),
             (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec);
  }
  return tc_broadcast(output->comm, suffix, SUFFIX_BYTES, 0);
}

tc_err tc_output_write(tc_output *output, const tc_output_run_info *run, tc_output_stats *stats) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_write needs a writer");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_parallel_agree(output->comm, tc_h5_quiet_begin(&quiet)));

  run_copy shared;
  memset(&shared, 0, sizeof shared);
  char suffix[SUFFIX_BYTES], created[32];
  char h5_temporary[PATH_BYTES + SUFFIX_BYTES], xdmf_temporary[PATH_BYTES + SUFFIX_BYTES];
  utc_now(created);
  session s = {.file = -1, .transfer = -1, .payload_bytes = 0, .collective = true};
  int64_t file_bytes = 0;

  tc_err err = check_same_fields(output);
  if (err == TC_SUCCESS)
    err = share_run_info(output, run, &shared);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, tc_broadcast(output->comm, created, sizeof created, 0));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, output->rank == 0 ? check_destination(output)
                                                            : TC_SUCCESS);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, temporary_suffix(output, suffix));
  /* From here on temporary files may exist: every rank goes through to the
   * clean-up below. */
  bool named = err == TC_SUCCESS;
  double start = 0;
  if (named) {
    snprintf(h5_temporary, sizeof h5_temporary, "%s%s", output->h5_path, suffix);
    snprintf(xdmf_temporary, sizeof xdmf_temporary, "%s%s", output->xdmf_path, suffix);
    /* A fatal signal deletes the temporary files (src/base/tc_signals). */
    tc_err tracked = tc_fault_track_temporary(h5_temporary);
    if (tracked == TC_SUCCESS)
      tracked = tc_fault_track_temporary(xdmf_temporary);
    err = tc_parallel_agree(output->comm, tracked); /* start the clock together */
    start = MPI_Wtime();
  }
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, open_file(output, h5_temporary, &s));
  if (err == TC_SUCCESS)
    err = write_contents(output, &s, &shared, created);
  if (named) /* closing the file is collective: everyone, also after a failure */
    err = agree_next(output->comm, err, close_file(&s));
  if (err == TC_SUCCESS) {
    tc_err local = TC_SUCCESS;
    if (output->rank == 0) {
      local = write_xdmf(output, xdmf_temporary);
      if (local == TC_SUCCESS)
        local = file_size(h5_temporary, &file_bytes);
      if (local == TC_SUCCESS)
        local = publish_both(output, h5_temporary, xdmf_temporary);
    }
    err = tc_parallel_agree(output->comm, local);
  }
  double seconds = MPI_Wtime() - start;
  if (named && err != TC_SUCCESS) {
    /* Nothing may remain: rank 0 removes the temporary files, and everyone
     * waits for that, so that no rank returns while they still exist. */
    tc_err removed = TC_SUCCESS;
    if (output->rank == 0)
      removed = first_of(remove_if_present(h5_temporary), remove_if_present(xdmf_temporary));
    err = agree_next(output->comm, err, removed);
  }
  if (named) {
    tc_fault_untrack_temporary(h5_temporary);
    tc_fault_untrack_temporary(xdmf_temporary);
  }
  free_run_copy(&shared);
  err = agree_next(output->comm, err, tc_h5_quiet_end(&quiet));
  if (err == TC_ERR_HDF5) {
    /* HDF5's messages do not say which file: add it (the same on every rank). */
    char message[PATH_BYTES + 1024];
    snprintf(message, sizeof message, "writing '%s': %s", output->h5_path, tc_error_message());
    tc_error_adopt(err, message, tc_error_origin());
  }
  TC_CALL(err);

  int64_t totals[2] = {s.payload_bytes, s.collective ? 0 : 1};
  TC_CALL(tc_allreduce_sum_int64(output->comm, totals, 2));
  TC_CALL(tc_allreduce_max_int64(output->comm, &file_bytes, 1));
  TC_CALL(tc_allreduce_max_double(output->comm, &seconds, 1));
  if (stats) {
    stats->payload_bytes = totals[0];
    stats->file_bytes = file_bytes;
    stats->seconds = seconds;
    stats->gigabytes_per_second = seconds > 0 ? (double)totals[0] / seconds / 1e9 : 0;
    stats->collective = totals[1] == 0;
  }
  return TC_SUCCESS;
}

/* ------------------------------------------------ the phases, made final -- */

/* ids: the dataset's type, its name member's type, its space, the record type
 * of the rewrite and its name type. */
static tc_err rewrite_phase_table(hid_t dataset, const tc_output_phase *phases, int num_phases,
                                  hid_t ids[5], char **records) {
  TC_H5_CALL(ids[0] = H5Dget_type(dataset));
  TC_H5_CALL(ids[1] = H5Tget_member_type(ids[0], 0));
  TC_H5_CALL(ids[2] = H5Dget_space(dataset));
  hssize_t rows;
  TC_H5_CALL(rows = H5Sget_simple_extent_npoints(ids[2]));
  const size_t name_bytes = H5Tget_size(ids[1]);
  TC_CHECK(name_bytes > 0 && rows == num_phases, TC_ERR_ARGUMENT,
           "the results file lists %lld phases, the update %d", (long long)rows, num_phases);
  const size_t record = name_bytes + 3 * sizeof(double);
  TC_CALLOC(*records, record * (size_t)(num_phases > 0 ? num_phases : 1));
  for (int i = 0; i < num_phases; i++) {
    const char *name = phases[i].name ? phases[i].name : "";
    TC_CHECK(strlen(name) < name_bytes, TC_ERR_ARGUMENT,
             "phase name '%s' is longer than the results file's table holds", name);
    char *row = *records + (size_t)i * record;
    memcpy(row, name, strlen(name));
    double seconds[3] = {phases[i].min_seconds, phases[i].avg_seconds, phases[i].max_seconds};
    memcpy(row + name_bytes, seconds, sizeof seconds);
  }
  TC_H5_CALL(ids[4] = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(ids[4], name_bytes));
  TC_H5_CALL(ids[3] = H5Tcreate(H5T_COMPOUND, record));
  TC_H5_CALL(H5Tinsert(ids[3], "name", 0, ids[4]));
  TC_H5_CALL(H5Tinsert(ids[3], "min_seconds", name_bytes, H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(ids[3], "avg_seconds", name_bytes + sizeof(double), H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(ids[3], "max_seconds", name_bytes + 2 * sizeof(double), H5T_IEEE_F64LE));
  TC_H5_CALL(H5Dwrite(dataset, ids[3], H5S_ALL, H5S_ALL, H5P_DEFAULT, *records));
  return TC_SUCCESS;
}

/* Rank 0: opens the published file on its own and rewrites the table. */
static tc_err update_phases_on_root(const char *path, const tc_output_phase *phases,
                                    int num_phases) {
  hid_t file = -1, dataset = -1, ids[5] = {-1, -1, -1, -1, -1};
  char *records = NULL;
  tc_err err = TC_SUCCESS;
  if ((file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
    err = tc_h5_failure("H5Fopen", __FILE__, __LINE__, __func__);
  if (err == TC_SUCCESS && (dataset = H5Dopen2(file, "/run/phases", H5P_DEFAULT)) < 0)
    err = tc_h5_failure("H5Dopen2", __FILE__, __LINE__, __func__);
  if (err == TC_SUCCESS)
    err = rewrite_phase_table(dataset, phases, num_phases, ids, &records);
  free(records);
  err = first_of(err, close_ids(ids, 5));
  err = first_of(err, close_ids(&dataset, 1));
  if (file >= 0 && H5Fclose(file) < 0)
    err = first_of(err, tc_h5_failure("H5Fclose", __FILE__, __LINE__, __func__));
  return err;
}

tc_err tc_output_update_phases(tc_output *output, const tc_output_phase *phases,
                               int num_phases) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_update_phases needs a writer");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_parallel_agree(output->comm, tc_h5_quiet_begin(&quiet)));
  tc_err err = TC_SUCCESS;
  if (output->rank == 0)
    err = update_phases_on_root(output->h5_path, phases, num_phases);
  err = agree_next(output->comm, tc_parallel_agree(output->comm, err), tc_h5_quiet_end(&quiet));
  if (err == TC_ERR_HDF5) {
    char message[PATH_BYTES + 1024];
    snprintf(message, sizeof message, "updating the phases of '%s': %s", output->h5_path,
             tc_error_message());
    tc_error_adopt(err, message, tc_error_origin());
  }
  return err;
}
