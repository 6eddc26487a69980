/* tc_output: the parallel HDF5 results file and its XDMF companion: the
 * writer handle, and the write sequence that every rank goes through
 * together (temporary file, contents, close, XDMF file, publication). */
#include "tc_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "tc_fault.h"
#include "tc_h5.h"
#include "tc_output_impl.h"
#include "tc_xdmf.h"

/* Datasets of 1 MiB or more start on 1 MiB boundaries: the stripe size of
 * Lustre's default layout and a divisor of GPFS block sizes, so the file
 * domains of collective buffering line up with the file system's locks.
 * Smaller objects are packed (aligning them would only leave holes). */
static const hsize_t alignment_threshold = 1 << 20;
static const hsize_t alignment_bytes = 1 << 20;

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
  enum { OMPIO_NAME_MAX = 255 - 10 - 10 }; /* ".locktest." and 10 rank digits */
  TC_CHECK(length + TC_OUTPUT_SUFFIX_BYTES <= OMPIO_NAME_MAX, TC_ERR_ARGUMENT,
           "output path '%s' is %zu characters; Open MPI's MPI-IO fails on paths longer than "
           "%d: choose a shorter output.path",
           path, length, OMPIO_NAME_MAX - TC_OUTPUT_SUFFIX_BYTES);
#endif
  snprintf(output->h5_path, TC_OUTPUT_PATH_BYTES, "%s", path);
  if (length > 3 && strcmp(path + length - 3, ".h5") == 0)
    snprintf(output->xdmf_path, TC_OUTPUT_PATH_BYTES, "%.*s.xmf", (int)(length - 3), path);
  else
    snprintf(output->xdmf_path, TC_OUTPUT_PATH_BYTES, "%s.xmf", path);
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
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(writer->comm,
                            writer->rank == 0 ? tc_output_check_destination(writer) : TC_SUCCESS);
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
  tc_output_free_fields(writer);
  tc_comm_free(&writer->comm);
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

static tc_err open_file(const tc_output *output, const char *temporary, tc_output_session *s) {
  hid_t access_list;
  TC_H5_CALL(access_list = H5Pcreate(H5P_FILE_ACCESS));
  tc_err err = TC_SUCCESS;
  if (H5Pset_fapl_mpio(access_list, output->comm, MPI_INFO_NULL) < 0 ||
      H5Pset_all_coll_metadata_ops(access_list, 1) < 0 ||
      H5Pset_coll_metadata_write(access_list, 1) < 0 ||
      H5Pset_alignment(access_list, alignment_threshold, alignment_bytes) < 0)
    err = tc_h5_failure("H5Pset_fapl_mpio", __FILE__, __LINE__, __func__);
  if (err == TC_SUCCESS &&
      (s->file = H5Fcreate(temporary, H5F_ACC_EXCL, H5P_DEFAULT, access_list)) < 0)
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
  int64_t version = TC_OUTPUT_FORMAT_VERSION;
  TC_CALL(tc_output_put_string_attribute(root, "format", "tcmini results"));
  TC_CALL(tc_output_put_int64_attribute(root, "format_version", &version, 1));
  return tc_output_put_string_attribute(root, "created", context);
}

static tc_err write_groups(const tc_output *output, tc_output_session *s, const char *created) {
  TC_CALL(tc_output_group_attributes(output, s, "/", put_root_attributes, created));
  TC_CALL(tc_output_make_group(s->file, "/mesh", "the hexahedral mesh in global numbering"));
  TC_CALL(tc_output_make_group(s->file, "/cells", "per-cell fields, row = global cell id"));
  TC_CALL(tc_output_make_group(s->file, "/nodes", "per-node fields, row = global node id"));
  TC_CALL(tc_output_make_group(s->file, "/element_matrices",
                               "per-cell matrices [cell][row][col], row = global cell id"));
  return tc_output_make_group(s->file, "/run", "how the results were made");
}

static tc_err write_contents(const tc_output *output, tc_output_session *s,
                             const tc_output_run_copy *run, const char *created) {
  tc_output_mesh_rows rows;
  memset(&rows, 0, sizeof rows);
  tc_err err = tc_parallel_agree(output->comm, tc_output_build_mesh_rows(output, &rows));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, write_groups(output, s, created));
  if (err == TC_SUCCESS)
    err = tc_output_write_mesh(output, s, &rows);
  if (err == TC_SUCCESS)
    err = tc_output_write_fields(output, s, &rows);
  if (err == TC_SUCCESS)
    err = tc_output_write_run(output, s, run, created);
  tc_output_free_mesh_rows(&rows);
  return err;
}

static tc_err close_file(tc_output_session *s) {
  hid_t file = s->file;
  tc_err err = tc_output_close_ids(&s->transfer, 1);
  s->file = -1;
  if (file >= 0 && H5Fclose(file) < 0)
    err = tc_output_first_error(err, tc_h5_failure("H5Fclose", __FILE__, __LINE__, __func__));
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
    const tc_output_field_request *field = &output->fields[i];
    if (strncmp(field->path, "/element_matrices/", 18) == 0)
      continue;
    attributes[count++] = (tc_xdmf_attribute){
        field->name, field->path, field->on_nodes, (int)field->trailing[0], false, 8};
  }
  tc_xdmf_grid grid = {tc_output_base_name(output->h5_path),
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

/* Rank 0 names the temporary files "<final>.tmp.<pid>.<nanoseconds>" (hex). */
static tc_err temporary_suffix(const tc_output *output, char suffix[TC_OUTPUT_SUFFIX_BYTES]) {
  memset(suffix, 0, TC_OUTPUT_SUFFIX_BYTES);
  if (output->rank == 0) {
    struct timespec now = {0, 0};
    TC_CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0, TC_ERR_INTERNAL, "clock_gettime failed: %s",
             strerror(errno));
    snprintf(suffix, TC_OUTPUT_SUFFIX_BYTES, ".tmp.%lx.%llx", (unsigned long)getpid(),
             (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec);
  }
  return tc_broadcast(output->comm, suffix, TC_OUTPUT_SUFFIX_BYTES, 0);
}

tc_err tc_output_write(tc_output *output, const tc_output_run_info *run, tc_output_stats *stats) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_write needs a writer");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_parallel_agree(output->comm, tc_h5_quiet_begin(&quiet)));

  tc_output_run_copy shared;
  memset(&shared, 0, sizeof shared);
  char suffix[TC_OUTPUT_SUFFIX_BYTES], created[32];
  char h5_temporary[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES],
      xdmf_temporary[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES];
  utc_now(created);
  tc_output_session s = {.file = -1, .transfer = -1, .payload_bytes = 0, .collective = true};
  int64_t file_bytes = 0;

  tc_err err = tc_output_check_same_fields(output);
  if (err == TC_SUCCESS)
    err = tc_output_share_run_info(output, run, &shared);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, tc_broadcast(output->comm, created, sizeof created, 0));
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm,
                            output->rank == 0 ? tc_output_check_destination(output) : TC_SUCCESS);
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
    start = tc_wtime();
  }
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, open_file(output, h5_temporary, &s));
  if (err == TC_SUCCESS)
    err = write_contents(output, &s, &shared, created);
  if (named) /* closing the file is collective: everyone, also after a failure */
    err = tc_output_agree_next(output->comm, err, close_file(&s));
  if (err == TC_SUCCESS) {
    tc_err local = TC_SUCCESS;
    if (output->rank == 0) {
      local = write_xdmf(output, xdmf_temporary);
      if (local == TC_SUCCESS)
        local = tc_output_file_size(h5_temporary, &file_bytes);
      if (local == TC_SUCCESS)
        local = tc_output_publish_pair(output, h5_temporary, xdmf_temporary);
    }
    err = tc_parallel_agree(output->comm, local);
  }
  double seconds = tc_wtime() - start;
  if (named && err != TC_SUCCESS) {
    /* Nothing may remain: rank 0 removes the temporary files, and everyone
     * waits for that, so that no rank returns while they still exist. */
    tc_err removed = TC_SUCCESS;
    if (output->rank == 0)
      removed = tc_output_first_error(tc_output_remove_if_present(h5_temporary),
                                      tc_output_remove_if_present(xdmf_temporary));
    err = tc_output_agree_next(output->comm, err, removed);
  }
  if (named) {
    tc_fault_untrack_temporary(h5_temporary);
    tc_fault_untrack_temporary(xdmf_temporary);
  }
  tc_output_free_run_copy(&shared);
  err = tc_output_agree_next(output->comm, err, tc_h5_quiet_end(&quiet));
  if (err == TC_ERR_HDF5) {
    /* HDF5's messages do not say which file: add it (the same on every rank). */
    char message[TC_OUTPUT_PATH_BYTES + 1024];
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
