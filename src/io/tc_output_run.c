/* tc_output_run: the /run group of the results file, laid out by rank 0
 * from its own run information: the versions, backend, layout, variant and
 * precision as attributes, the input deck, and the phase-timing table, whose
 * final values are written into the published file at the end of the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_h5.h"
#include "tc_output_impl.h"

/* A string of run, NULL when run is. */
#define RUN_TEXT(run, field) ((run) ? (run)->field : NULL)

typedef struct {
  const tc_output_run_info *run;
  const char *created;
} run_attributes;

static tc_err put_run_attributes(const tc_output *output, hid_t group, const void *context) {
  const run_attributes *attributes = context;
  const tc_output_run_info *run = attributes->run;
  const struct {
    const char *name, *value;
  } texts[] = {{"version", RUN_TEXT(run, version)}, {"git_revision", RUN_TEXT(run, git_revision)},
               {"backend", RUN_TEXT(run, backend)}, {"layout", RUN_TEXT(run, layout)},
               {"variant", RUN_TEXT(run, variant)}, {"precision", RUN_TEXT(run, precision)}};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    TC_CALL(tc_output_put_string_attribute(group, texts[i].name, texts[i].value));
  int64_t ranks = output->size;
  TC_CALL(tc_output_put_int64_attribute(group, "ranks", &ranks, 1));
  return tc_output_put_string_attribute(group, "created", attributes->created);
}

tc_err tc_output_check_run(const tc_output_run_info *run) {
  if (run == NULL)
    return TC_SUCCESS;
  TC_CHECK(run->num_phases >= 0 && (run->num_phases == 0 || run->phases != NULL), TC_ERR_ARGUMENT,
           "the run info lists %d phases but gives none", run->num_phases);
  for (int i = 0; i < run->num_phases; i++)
    TC_CHECK(run->phases[i].name != NULL && run->phases[i].name[0] != '\0', TC_ERR_ARGUMENT,
             "phase %d of the run info has no name", i);
  return TC_SUCCESS;
}

static tc_err deck_type(size_t length, hid_t *type) {
  TC_H5_CALL(*type = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(*type, length ? length : 1));
  TC_H5_CALL(H5Tset_strpad(*type, H5T_STR_NULLPAD));
  TC_H5_CALL(H5Tset_cset(*type, H5T_CSET_UTF8));
  return TC_SUCCESS;
}

static tc_err write_deck(hid_t file, const tc_output_run_info *run, int64_t *small_bytes) {
  const char *deck = RUN_TEXT(run, deck_text) ? run->deck_text : "";
  hid_t type = -1;
  tc_err err = deck_type(strlen(deck), &type);
  if (err != TC_SUCCESS)
    return tc_output_first_error(err, tc_output_close_ids(&type, 1));
  *small_bytes += (int64_t)strlen(deck);
  return tc_output_write_small_dataset(file, "/run/deck", type, -1, deck,
                                       "the input deck of the run, as read", NULL);
}

/* The phase table as /run/phases stores it: records of a fixed-length name
 * (name_bytes) followed by the min, avg and max seconds. */
static tc_err pack_phases(const tc_output_run_info *run, size_t name_bytes, char **table) {
  int count = run ? run->num_phases : 0;
  size_t record = name_bytes + 3 * sizeof(double);
  TC_CALLOC(*table, record * (size_t)(count ? count : 1));
  for (int i = 0; i < count; i++) {
    const tc_output_phase *phase = &run->phases[i];
    char *row = *table + (size_t)i * record;
    memcpy(row, phase->name, strlen(phase->name));
    double seconds[3] = {phase->min_seconds, phase->avg_seconds, phase->max_seconds};
    memcpy(row + name_bytes, seconds, sizeof seconds);
  }
  return TC_SUCCESS;
}

/* types: the name's string type, the record type. */
static tc_err phase_type(size_t name_bytes, hid_t types[2]) {
  TC_H5_CALL(types[0] = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(types[0], name_bytes));
  TC_H5_CALL(types[1] = H5Tcreate(H5T_COMPOUND, name_bytes + 3 * sizeof(double)));
  TC_H5_CALL(H5Tinsert(types[1], "name", 0, types[0]));
  TC_H5_CALL(H5Tinsert(types[1], "min_seconds", name_bytes, H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(types[1], "avg_seconds", name_bytes + sizeof(double), H5T_IEEE_F64LE));
  TC_H5_CALL(H5Tinsert(types[1], "max_seconds", name_bytes + 2 * sizeof(double), H5T_IEEE_F64LE));
  return TC_SUCCESS;
}

static tc_err write_phases(hid_t file, const tc_output_run_info *run, int64_t *small_bytes,
                           tc_output_phase_table *where) {
  int count = run ? run->num_phases : 0;
  size_t name_bytes = 1;
  for (int i = 0; i < count; i++)
    if (strlen(run->phases[i].name) + 1 > name_bytes)
      name_bytes = strlen(run->phases[i].name) + 1;
  char *table = NULL;
  TC_CALL(pack_phases(run, name_bytes, &table));
  hid_t types[2] = {-1, -1};
  tc_err err = phase_type(name_bytes, types);
  err = tc_output_first_error(err, tc_output_close_ids(types, 1));
  if (err == TC_SUCCESS) {
    *small_bytes += (int64_t)count * (int64_t)(name_bytes + 3 * sizeof(double));
    *where = (tc_output_phase_table){-1, count, (int64_t)name_bytes};
    err = tc_output_write_small_dataset(file, "/run/phases", types[1], count, table,
                                        "phase timings: wall seconds over ranks (min, avg, max)",
                                        &where->offset);
  } else {
    err = tc_output_first_error(err, tc_output_close_ids(types + 1, 1));
  }
  free(table);
  return err;
}

tc_err tc_output_describe_run(const tc_output *output, hid_t file, const tc_output_run_info *run,
                              const char *created, int64_t *small_bytes,
                              tc_output_phase_table *phases) {
  run_attributes attributes = {run, created};
  TC_CALL(tc_output_group_attributes(output, file, "/run", put_run_attributes, &attributes));
  TC_CALL(write_deck(file, run, small_bytes));
  return write_phases(file, run, small_bytes, phases);
}

/* The phases, made final (tc_output_update_phases): rank 0 rewrites the
 * table's records in place, at the address the layout gave it, with plain
 * file I/O (the records only: HDF5 does not reopen the file, so no HDF5
 * error path can leave it open), and flushes them. The table keeps its rows
 * and its name width; a failed write changes values, never the file's
 * structure. */

static tc_err rewrite_table(const tc_output *output, const char *records, size_t bytes) {
  const tc_output_phase_table *table = &output->phases;
  int fd = open(output->h5_path, O_WRONLY | O_CLOEXEC);
  TC_CHECK(fd >= 0, TC_ERR_IO, "cannot update the phase table of '%s': %s", output->h5_path,
           strerror(errno));
  int failed = pwrite(fd, records, bytes, (off_t)table->offset) != (ssize_t)bytes || fsync(fd);
  int cause = errno;
  if (close(fd) != 0 && !failed) {
    failed = 1;
    cause = errno;
  }
  TC_CHECK(!failed, TC_ERR_IO, "cannot update the phase table of '%s': %s", output->h5_path,
           strerror(cause ? cause : EIO));
  return TC_SUCCESS;
}

static tc_err update_on_root(const tc_output *output, const tc_output_phase *phases,
                             int num_phases) {
  const tc_output_phase_table *table = &output->phases;
  TC_CHECK(output->published, TC_ERR_ARGUMENT,
           "tc_output_update_phases: no results file was written to '%s'", output->h5_path);
  TC_CHECK(table->rows == num_phases, TC_ERR_ARGUMENT,
           "the results file lists %lld phases, the update %d", (long long)table->rows, num_phases);
  if (num_phases == 0 || table->offset < 0)
    return TC_SUCCESS;
  for (int i = 0; i < num_phases; i++)
    TC_CHECK(phases[i].name != NULL && strlen(phases[i].name) < (size_t)table->name_bytes,
             TC_ERR_ARGUMENT, "phase name '%s' is longer than the results file's table holds",
             phases[i].name ? phases[i].name : "");
  const tc_output_run_info run = {.phases = phases, .num_phases = num_phases};
  char *records = NULL;
  TC_CALL(pack_phases(&run, (size_t)table->name_bytes, &records));
  tc_err err = rewrite_table(output, records,
                             (size_t)num_phases * ((size_t)table->name_bytes + 3 * sizeof(double)));
  free(records);
  return err;
}

tc_err tc_output_update_phases(tc_output *output, const tc_output_phase *phases, int num_phases) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_update_phases needs a writer");
  return tc_parallel_agree(
      output->comm, output->rank == 0 ? update_on_root(output, phases, num_phases) : TC_SUCCESS);
}
