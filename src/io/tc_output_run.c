/* tc_output_run: the /run group of the results file: rank 0's run metadata
 * (versions, backend, layout, variant, precision), shared with every rank,
 * the input deck and the phase-timing table, and the table's final values
 * written into the published file. */
#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"
#include "tc_output_impl.h"

/* The names of the /run attributes that hold them (the deck is a dataset). */
static const char *const run_attribute_names[TC_NUM_RUN_STRINGS] = {
    [TC_RUN_VERSION] = "version", [TC_RUN_GIT_REVISION] = "git_revision",
    [TC_RUN_BACKEND] = "backend", [TC_RUN_LAYOUT] = "layout",
    [TC_RUN_VARIANT] = "variant", [TC_RUN_PRECISION] = "precision"};

static tc_err allocate_text(int64_t bytes, char **text) {
  TC_CALLOC(*text, bytes);
  return TC_SUCCESS;
}

/* Rank 0's text (NULL: "") in a new string on every rank. Collective. */
static tc_err share_text(MPI_Comm comm, const char *text_on_root, char **copy) {
  int64_t length = text_on_root ? (int64_t)strlen(text_on_root) : 0;
  TC_CALL(tc_parallel_agree(comm, tc_broadcast(comm, &length, sizeof length, 0)));
  TC_CALL(tc_parallel_agree(comm, allocate_text(length + 1, copy)));
  if (text_on_root)
    memcpy(*copy, text_on_root, (size_t)length);
  return tc_parallel_agree(comm, tc_broadcast(comm, *copy, length, 0));
}

void tc_output_free_run_copy(tc_output_run_copy *copy) {
  for (int i = 0; i < TC_NUM_RUN_STRINGS; i++)
    free(copy->strings[i]);
  free(copy->phase_table);
  memset(copy, 0, sizeof *copy);
}

static tc_err check_phases(const tc_output_run_info *run) {
  if (run == NULL)
    return TC_SUCCESS;
  TC_CHECK(run->num_phases >= 0 && (run->num_phases == 0 || run->phases != NULL), TC_ERR_ARGUMENT,
           "the run info lists %d phases but gives none", run->num_phases);
  for (int i = 0; i < run->num_phases; i++)
    TC_CHECK(run->phases[i].name != NULL && run->phases[i].name[0] != '\0', TC_ERR_ARGUMENT,
             "phase %d of the run info has no name", i);
  return TC_SUCCESS;
}

static size_t phase_record_bytes(const tc_output_run_copy *copy) {
  return (size_t)copy->phase_name_bytes + 3 * sizeof(double);
}

/* Rank 0's phase table as the records /run/phases stores: a fixed-length
 * name followed by the min, avg and max seconds. */
static tc_err pack_phases(const tc_output_run_info *run, tc_output_run_copy *copy) {
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

tc_err tc_output_share_run_info(const tc_output *output, const tc_output_run_info *run,
                                tc_output_run_copy *copy) {
  bool root = output->rank == 0;
  TC_CALL(tc_parallel_agree(output->comm, root ? check_phases(run) : TC_SUCCESS));
  const char *texts[TC_NUM_RUN_STRINGS] = {NULL};
  if (root && run) {
    texts[TC_RUN_DECK] = run->deck_text;
    texts[TC_RUN_VERSION] = run->version;
    texts[TC_RUN_GIT_REVISION] = run->git_revision;
    texts[TC_RUN_BACKEND] = run->backend;
    texts[TC_RUN_LAYOUT] = run->layout;
    texts[TC_RUN_VARIANT] = run->variant;
    texts[TC_RUN_PRECISION] = run->precision;
  }
  for (int i = 0; i < TC_NUM_RUN_STRINGS; i++)
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

typedef struct {
  const tc_output_run_copy *run;
  const char *created;
} run_attributes;

static tc_err put_run_attributes(const tc_output *output, hid_t group, const void *context) {
  const run_attributes *attributes = context;
  for (int i = TC_RUN_VERSION; i < TC_NUM_RUN_STRINGS; i++)
    TC_CALL(
        tc_output_put_string_attribute(group, run_attribute_names[i], attributes->run->strings[i]));
  int64_t ranks = output->size;
  TC_CALL(tc_output_put_int64_attribute(group, "ranks", &ranks, 1));
  return tc_output_put_string_attribute(group, "created", attributes->created);
}

static tc_err deck_type(size_t length, hid_t *type) {
  TC_H5_CALL(*type = H5Tcopy(H5T_C_S1));
  TC_H5_CALL(H5Tset_size(*type, length ? length : 1));
  TC_H5_CALL(H5Tset_strpad(*type, H5T_STR_NULLPAD));
  TC_H5_CALL(H5Tset_cset(*type, H5T_CSET_UTF8));
  return TC_SUCCESS;
}

static tc_err write_deck(const tc_output *output, tc_output_session *s,
                         const tc_output_run_copy *run) {
  const char *deck = run->strings[TC_RUN_DECK];
  hid_t type = -1;
  tc_err err = tc_parallel_agree(output->comm, deck_type(strlen(deck), &type));
  if (err != TC_SUCCESS)
    return tc_output_first_error(err, tc_output_close_ids(&type, 1));
  return tc_output_write_root_only(output, s, "/run/deck", type, -1, deck,
                                   "the input deck of the run, as read");
}

/* types: the name's string type, the record type. */
static tc_err phase_type(const tc_output_run_copy *run, hid_t types[2]) {
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

static tc_err write_phases(const tc_output *output, tc_output_session *s,
                           const tc_output_run_copy *run) {
  hid_t types[2] = {-1, -1};
  tc_err err = phase_type(run, types);
  err = tc_parallel_agree(output->comm, tc_output_first_error(err, tc_output_close_ids(types, 1)));
  if (err != TC_SUCCESS)
    return tc_output_first_error(err, tc_output_close_ids(types + 1, 1));
  return tc_output_write_root_only(output, s, "/run/phases", types[1], run->num_phases,
                                   run->phase_table,
                                   "phase timings: wall seconds over ranks (min, avg, max)");
}

tc_err tc_output_write_run(const tc_output *output, tc_output_session *s,
                           const tc_output_run_copy *run, const char *created) {
  run_attributes attributes = {run, created};
  TC_CALL(tc_parallel_agree(output->comm, tc_output_group_attributes(
                                              output, s, "/run", put_run_attributes, &attributes)));
  TC_CALL(write_deck(output, s, run));
  return write_phases(output, s, run);
}

/* The phases, made final (tc_output_update_phases). */

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
  err = tc_output_first_error(err, tc_output_close_ids(ids, 5));
  err = tc_output_first_error(err, tc_output_close_ids(&dataset, 1));
  if (file >= 0 && H5Fclose(file) < 0)
    err = tc_output_first_error(err, tc_h5_failure("H5Fclose", __FILE__, __LINE__, __func__));
  return err;
}

tc_err tc_output_update_phases(tc_output *output, const tc_output_phase *phases, int num_phases) {
  TC_CHECK(output != NULL, TC_ERR_ARGUMENT, "tc_output_update_phases needs a writer");
  tc_h5_quiet_state quiet;
  TC_CALL(tc_parallel_agree(output->comm, tc_h5_quiet_begin(&quiet)));
  tc_err err = TC_SUCCESS;
  if (output->rank == 0)
    err = update_phases_on_root(output->h5_path, phases, num_phases);
  err = tc_output_agree_next(output->comm, tc_parallel_agree(output->comm, err),
                             tc_h5_quiet_end(&quiet));
  if (err == TC_ERR_HDF5) {
    char message[TC_OUTPUT_PATH_BYTES + 1024];
    snprintf(message, sizeof message, "updating the phases of '%s': %s", output->h5_path,
             tc_error_message());
    tc_error_adopt(err, message, tc_error_origin());
  }
  return err;
}
