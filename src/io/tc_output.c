/* tc_output: the parallel HDF5 results file and its XDMF companion: the
 * writer handle, and the write sequence every rank goes through together.
 *
 * The sequence: rank 0 lays the file out in memory with HDF5
 * (tc_output_layout: everything but the datasets' rows, and where each
 * dataset's rows go); the file is created under a temporary name with its
 * whole size reserved on the file system; every rank writes its rows and
 * rank 0 the layout through MPI-IO, the file is flushed, read back and
 * checked (tc_output_transfer); rank 0 writes the XDMF file, and both are
 * published as a pair (tc_output_publish). Every step is agreed over the
 * ranks, and a failure anywhere removes the temporary files and leaves the
 * final names as they were. */
#include "tc_output.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_fault.h"
#include "tc_file_paths.h"
#include "tc_h5.h"
#include "tc_output_impl.h"
#include "tc_signals.h"
#include "tc_xdmf.h"

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
  TC_CHECK(length + 64 < TC_OUTPUT_PATH_BYTES, TC_ERR_ARGUMENT,
           "the output path is too long (%zu bytes)", length);
#ifdef OPEN_MPI
  /* Open MPI 4's MPI-IO (OMPIO) formats "<file>.locktest.<rank>" into a
   * 256-byte buffer without a bound and aborts the job on longer names. */
  /* The limit leaves room for the name a failed run's results take
   * (tc_output_divert_failed). */
  enum {
    OMPIO_NAME_MAX = 255 - 10 - 10, /* ".locktest." and 10 rank digits */
    LONGEST = OMPIO_NAME_MAX - TC_OUTPUT_SUFFIX_BYTES - (int)sizeof TC_FILE_FAILED_TAG + 1
  };
  TC_CHECK(length <= LONGEST, TC_ERR_ARGUMENT,
           "output path '%s' is %zu characters; Open MPI's MPI-IO fails on paths longer than "
           "%d: choose a shorter output.path",
           path, length, (int)LONGEST);
#endif
  snprintf(output->h5_path, TC_OUTPUT_PATH_BYTES, "%s", path);
  (void)tc_file_xdmf_companion(path, output->xdmf_path, TC_OUTPUT_PATH_BYTES); /* fits: above */
  return TC_SUCCESS;
}

void tc_output_add_note(tc_output *output, const char *fmt, ...) {
  size_t used = strlen(output->note);
  if (used > 0 && used + 1 < sizeof output->note)
    output->note[used++] = ' ', output->note[used] = '\0';
  va_list args;
  va_start(args, fmt);
  vsnprintf(output->note + used, sizeof output->note - used, fmt, args);
  va_end(args);
}

/* Rank 0: the directory, then the lock, then what dead runs left, then the
 * final names (which the recovery may have changed). */
static tc_err claim_destination(tc_output *output) {
  TC_CALL(tc_output_check_directory(output));
  TC_CALL(tc_output_lock(output));
  TC_CALL(tc_output_recover(output));
  return tc_output_check_destination(output);
}

tc_err tc_output_create(MPI_Comm comm, const char *path, bool overwrite, const tc_mesh *mesh,
                        tc_output **output) {
  TC_CHECK(output != NULL && mesh != NULL && path != NULL, TC_ERR_ARGUMENT,
           "tc_output_create needs a path, a mesh and somewhere to put the writer");
  *output = NULL;
  tc_output *writer;
  TC_CALLOC(writer, 1);
  writer->fail_rank = -1;
  writer->lock_fd = -1;
  writer->mesh = mesh;
  writer->overwrite = overwrite;
  tc_err duplicated = tc_comm_dup(comm, &writer->comm);
  if (duplicated != TC_SUCCESS) {
    free(writer);
    return duplicated;
  }
  writer->rank = tc_rank(writer->comm);
  writer->size = tc_size(writer->comm);

  tc_err err = set_paths(writer, path);
  if (err == TC_SUCCESS)
    err = check_mesh(writer);
  err = tc_parallel_agree(writer->comm, err);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(writer->comm, check_mesh_totals(writer));
  if (err == TC_SUCCESS) {
    tc_err claimed = writer->rank == 0 ? claim_destination(writer) : TC_SUCCESS;
    if (claimed != TC_SUCCESS && writer->note[0]) {
      /* The writer and its note go: keep what the note says in the error. */
      char message[1024 + TC_OUTPUT_NOTE_BYTES];
      snprintf(message, sizeof message, "%s (found on the path first: %s)", tc_error_message(),
               writer->note);
      tc_error_adopt(claimed, message, tc_error_origin());
    }
    err = tc_parallel_agree(writer->comm, claimed);
  }
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
  tc_output_unlock(writer);
  tc_output_free_fields(writer);
  tc_comm_free(&writer->comm);
  free(writer);
  *output = NULL;
}

tc_err tc_output_divert_failed(tc_output *output) {
  char path[TC_OUTPUT_PATH_BYTES];
  (void)tc_file_failed_name(output->h5_path, path, sizeof path); /* fits: set_paths */
  snprintf(output->h5_path, TC_OUTPUT_PATH_BYTES, "%s", path);
  (void)tc_file_xdmf_companion(path, output->xdmf_path, TC_OUTPUT_PATH_BYTES);
  output->overwrite = true; /* an earlier failed run's pair goes */
  tc_err err = TC_SUCCESS;
  if (output->rank == 0) { /* what a run killed while publishing such a pair left */
    err = tc_output_recover(output);
    if (err == TC_SUCCESS)
      err = tc_output_check_destination(output);
  }
  return tc_parallel_agree(output->comm, err);
}

const char *tc_output_h5_path(const tc_output *output) { return output->h5_path; }
const char *tc_output_xdmf_path(const tc_output *output) { return output->xdmf_path; }
const char *tc_output_note(const tc_output *output) { return output->note; }

tc_err tc_output_fail_after(tc_output *output, const char *dataset_path, int rank) {
  TC_CHECK(strlen(dataset_path) < sizeof output->fail_after, TC_ERR_ARGUMENT,
           "dataset path '%s' is too long", dataset_path);
  snprintf(output->fail_after, sizeof output->fail_after, "%s", dataset_path);
  output->fail_rank = rank;
  return TC_SUCCESS;
}

/* Rank 0: the XDMF file under its temporary name. */
static tc_err write_xdmf(const tc_output *output, const char *temporary) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  tc_xdmf_attribute *attributes;
  TC_CALLOC(attributes, output->num_fields + 1);
  attributes[0] = (tc_xdmf_attribute){"partition", "/mesh/partition", false, 1, true, 4};
  int count = 1;
  for (int i = 0; i < output->num_fields; i++) {
    const tc_output_field_request *field = &output->fields[i];
    if (strncmp(field->path, "/element_matrices/", 18) == 0)
      continue;
    attributes[count++] = (tc_xdmf_attribute){
        field->name, field->path, field->on_nodes, (int)field->trailing[0], false, 8};
  }
  tc_xdmf_grid grid = {tc_file_base_name(output->h5_path),
                       part->nodes_per_cell,
                       part->num_global_cells,
                       part->num_global_nodes,
                       "/mesh/xdmf_connectivity",
                       "/mesh/coordinates",
                       attributes,
                       count};
  tc_err err = tc_xdmf_write(temporary, &grid);
  free(attributes);
  return err;
}

static void utc_now(char text[32]) {
  time_t now = time(NULL);
  struct tm utc;
  if (gmtime_r(&now, &utc) == NULL || strftime(text, 32, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
    snprintf(text, 32, "unknown");
}

/* The datasets of rows: the mesh's, then the registered fields. */
static tc_err list_datasets(const tc_output *output, tc_output_dataset **datasets, int *count) {
  *count = TC_OUTPUT_MESH_DATASETS + output->num_fields;
  TC_CALLOC(*datasets, *count);
  tc_output_mesh_datasets(output, *datasets);
  tc_output_field_datasets(output, *datasets + TC_OUTPUT_MESH_DATASETS);
  return TC_SUCCESS;
}

/* Rank 0 lays out the file; every rank learns where each dataset's rows
 * go and how large the file is. */
static tc_err lay_out(const tc_output *output, tc_output_dataset *datasets, int count,
                      const tc_output_run_info *run, const char *created,
                      tc_output_layout *layout) {
  memset(layout, 0, sizeof *layout);
  int64_t *places = calloc((size_t)count + 2, sizeof *places);
  tc_err err = places ? TC_SUCCESS
                      : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                       "out of memory laying out the results file");
  if (err == TC_SUCCESS && output->rank == 0) {
    err = tc_output_lay_out(output, datasets, count, run, created, layout);
    for (int i = 0; i < count && err == TC_SUCCESS; i++)
      places[i] = datasets[i].offset;
    places[count] = layout->file_bytes;
    places[count + 1] = layout->small_bytes;
  }
  err = tc_parallel_agree(output->comm, err);
  if (err == TC_SUCCESS)
    err = tc_broadcast(output->comm, places, (int64_t)(count + 2) * (int64_t)sizeof *places, 0);
  if (err == TC_SUCCESS) {
    for (int i = 0; i < count; i++)
      datasets[i].offset = places[i];
    layout->file_bytes = places[count];
    layout->small_bytes = places[count + 1];
  }
  free(places);
  return err;
}

/* The temporary names, chosen by rank 0 (they carry its host and pid). */
static tc_err temporary_names(const tc_output *output, char *h5_temporary, char *xdmf_temporary,
                              size_t size) {
  if (output->rank == 0) {
    tc_output_temporary_name(output->h5_path, h5_temporary, size);
    tc_output_temporary_name(output->xdmf_path, xdmf_temporary, size);
  }
  TC_CALL(tc_broadcast(output->comm, h5_temporary, (int64_t)size, 0));
  return tc_broadcast(output->comm, xdmf_temporary, (int64_t)size, 0);
}

/* Rank 0: the XDMF file (durable: tc_xdmf_write syncs it; the HDF5 file
 * was synced by tc_output_transfer), and the pair's publication, with
 * SIGINT and SIGTERM held off (a publication is not stopped half-way). */
static tc_err finish(const tc_output *output, const char *h5_temporary,
                     const char *xdmf_temporary) {
  TC_CALL(write_xdmf(output, xdmf_temporary));
  TC_CALL(tc_fault_check("publish")); /* test-only: TCMINI_FAULT=publish */
  /* From here on the temporaries are the publication's to move or remove. */
  tc_fault_untrack_temporary(h5_temporary);
  tc_fault_untrack_temporary(xdmf_temporary);
  TC_CALL(tc_signals_hold());
  tc_err err = tc_output_publish_pair(output, h5_temporary, xdmf_temporary);
  return tc_output_first_error(err, tc_signals_release());
}

/* HDF5's messages do not say which file: add it (the same on every rank). */
static void name_the_file(const tc_output *output, tc_err err) {
  if (err != TC_ERR_HDF5)
    return;
  char message[TC_OUTPUT_PATH_BYTES + 1024];
  snprintf(message, sizeof message, "writing '%s': %s", output->h5_path, tc_error_message());
  tc_error_adopt(err, message, tc_error_origin());
}

tc_err tc_output_write(tc_output *output, const tc_output_run_info *run, tc_output_stats *stats) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_write needs a writer");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_parallel_agree(output->comm, tc_h5_quiet_begin(&quiet)));

  char created[32];
  char h5_temporary[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES];
  char xdmf_temporary[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES];
  utc_now(created);
  tc_output_dataset *datasets = NULL;
  int count = 0;
  tc_output_mesh_rows rows;
  memset(&rows, 0, sizeof rows);
  tc_output_layout layout;
  memset(&layout, 0, sizeof layout);
  tc_output_transfer_stats moved = {0};

  tc_err err = tc_output_check_same_fields(output);
  if (err == TC_SUCCESS)
    err =
        tc_parallel_agree(output->comm, output->rank == 0 ? tc_output_check_run(run) : TC_SUCCESS);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, tc_broadcast(output->comm, created, sizeof created, 0));
  if (err == TC_SUCCESS) /* files may have appeared since tc_output_create */
    err = tc_parallel_agree(output->comm,
                            output->rank == 0 ? tc_output_check_destination(output) : TC_SUCCESS);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, list_datasets(output, &datasets, &count));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, tc_output_build_mesh_rows(output, &rows));
  if (err == TC_SUCCESS)
    err = lay_out(output, datasets, count, run, created, &layout);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm,
                            tc_output_check_size_limit(output->h5_path, layout.file_bytes));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(
        output->comm, temporary_names(output, h5_temporary, xdmf_temporary, sizeof h5_temporary));
  /* From here on temporary files may exist: every rank goes through to the
   * clean-up below. */
  bool named = err == TC_SUCCESS;
  double start = 0;
  if (named) {
    /* A fatal signal deletes the temporary files (src/base/tc_signals). */
    tc_err tracked = tc_fault_track_temporary(h5_temporary);
    if (tracked == TC_SUCCESS)
      tracked = tc_fault_track_temporary(xdmf_temporary);
    err = tc_parallel_agree(output->comm, tracked); /* start the clock together */
    start = tc_wtime();
  }
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(
        output->comm, output->rank == 0 ? tc_output_create_temporary(output->h5_path, h5_temporary,
                                                                     layout.file_bytes)
                                        : TC_SUCCESS);
  if (err == TC_SUCCESS)
    err = tc_output_transfer(output, h5_temporary, datasets, count, &rows, &layout, &moved);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, output->rank == 0
                                              ? finish(output, h5_temporary, xdmf_temporary)
                                              : TC_SUCCESS);
  double seconds = tc_wtime() - start;
  if (named && err != TC_SUCCESS) {
    /* Nothing may remain: rank 0 removes the temporary files (the XDMF one
     * first: see tc_output_recover.c), and everyone waits for that, so that
     * no rank returns while they still exist. */
    tc_err removed = TC_SUCCESS;
    if (output->rank == 0)
      removed = tc_output_first_error(tc_output_remove_if_present(xdmf_temporary),
                                      tc_output_remove_if_present(h5_temporary));
    err = tc_output_agree_next(output->comm, err, removed);
  }
  if (named) {
    tc_fault_untrack_temporary(h5_temporary);
    tc_fault_untrack_temporary(xdmf_temporary);
  }
  int64_t file_bytes = layout.file_bytes, small_bytes = layout.small_bytes;
  if (err == TC_SUCCESS && output->rank == 0) { /* for tc_output_update_phases */
    output->published = true;
    output->phases = layout.phases;
  }
  tc_output_free_layout(&layout);
  tc_output_free_mesh_rows(&rows);
  free(datasets);
  err = tc_output_agree_next(output->comm, err, tc_h5_quiet_end(&quiet));
  name_the_file(output, err);
  TC_CALL(err);

  int64_t payload = moved.payload_bytes + (output->rank == 0 ? small_bytes : 0);
  TC_CALL(tc_allreduce_sum_int64(output->comm, &payload, 1));
  double phases[4] = {seconds, moved.write_seconds, moved.flush_seconds, moved.verify_seconds};
  TC_CALL(tc_allreduce_max_double(output->comm, phases, 4));
  seconds = phases[0];
  if (stats) {
    stats->payload_bytes = payload;
    stats->file_bytes = file_bytes;
    stats->seconds = seconds;
    stats->gigabytes_per_second = seconds > 0 ? (double)payload / seconds / 1e9 : 0;
    stats->write_seconds = phases[1];
    stats->flush_seconds = phases[2];
    stats->verify_seconds = phases[3];
  }
  return TC_SUCCESS;
}
