/* tc_output_recover: what runs that died on an output path left behind.
 * A run killed outright (SIGKILL, the out-of-memory killer, a node failure)
 * cannot clean up: it may leave temporary files "<final>.tmp.<owner>", and
 * if it died while publishing (tc_output_publish.c), its journal
 * "<final>.publishing.<owner>" and backups "<final>.old.<owner>" (and a
 * rank killed while MPI-IO opened a temporary, its lock-test file
 * "<final>.tmp.<owner>.locktest.<rank>"). The next
 * run on the path, holding the lock (so no live run owns such files),
 * finishes or undoes an interrupted publication from the journal, so that
 * the final names hold a whole pair, then removes the rest, and notes all
 * it did for the user. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_file_paths.h"
#include "tc_output_impl.h"

enum { MAX_OWNERS = 64, NAME_BYTES = TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES + 16 };

/* Whether text is "<host>.<pid>" as tc_output_owner writes it. */
static bool is_owner(const char *text) {
  const char *dot = strrchr(text, '.');
  if (dot == NULL || dot == text || dot[1] == '\0' || strlen(text) >= TC_OUTPUT_OWNER_BYTES)
    return false;
  for (const char *c = text; c < dot; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '-' || *c == '_'))
      return false;
  for (const char *c = dot + 1; *c; c++)
    if (*c < '0' || *c > '9')
      return false;
  return true;
}

/* The owner in entry when it is base "." kind "." owner. */
static const char *owner_in(const char *entry, const char *base, const char *kind) {
  size_t base_length = strlen(base), kind_length = strlen(kind);
  if (strncmp(entry, base, base_length) != 0 || entry[base_length] != '.' ||
      strncmp(entry + base_length + 1, kind, kind_length) != 0 ||
      entry[base_length + 1 + kind_length] != '.')
    return NULL;
  const char *owner = entry + base_length + kind_length + 2;
  return is_owner(owner) ? owner : NULL;
}

typedef struct {
  char names[MAX_OWNERS][TC_OUTPUT_OWNER_BYTES];
  int count;
} owner_list;

static void add_owner(owner_list *owners, const char *owner) {
  for (int i = 0; i < owners->count; i++)
    if (strcmp(owners->names[i], owner) == 0)
      return;
  if (owners->count < MAX_OWNERS)
    snprintf(owners->names[owners->count++], TC_OUTPUT_OWNER_BYTES, "%s", owner);
}

/* Open MPI's MPI-IO tests file locking on "<file>.locktest.<rank>" beside a
 * file it opens, and removes it again: a rank killed in between leaves one
 * beside its run's temporary. Where entry is such a file, its name without
 * the suffix goes to file (true). */
static bool strip_locktest(const char *entry, char *file, size_t size) {
  static const char suffix[] = ".locktest.";
  const char *mark = NULL;
  for (const char *at = strstr(entry, suffix); at; at = strstr(at + 1, suffix))
    mark = at;
  if (mark == NULL || mark == entry || mark[sizeof suffix - 1] == '\0' ||
      (size_t)(mark - entry) >= size)
    return false;
  for (const char *c = mark + sizeof suffix - 1; *c; c++)
    if (*c < '0' || *c > '9')
      return false;
  snprintf(file, size, "%.*s", (int)(mark - entry), entry);
  return true;
}

/* The owners of every side file of the output path in its directory (and
 * of the lock-test files beside a temporary). */
static tc_err find_owners(const tc_output *output, owner_list *owners) {
  char directory[TC_OUTPUT_PATH_BYTES];
  tc_file_directory_of(output->h5_path, directory, sizeof directory);
  const char *h5_base = tc_file_base_name(output->h5_path);
  const char *xdmf_base = tc_file_base_name(output->xdmf_path);
  DIR *listing = opendir(directory);
  TC_CHECK(listing != NULL, TC_ERR_IO, "cannot list directory '%s': %s", directory,
           strerror(errno));
  owners->count = 0;
  for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
    char temporary[NAME_BYTES];
    if (strip_locktest(entry->d_name, temporary, sizeof temporary)) {
      const char *owner = owner_in(temporary, h5_base, TC_OUTPUT_TEMPORARY);
      if (owner)
        add_owner(owners, owner);
      continue;
    }
    const char *kinds[] = {TC_OUTPUT_TEMPORARY, TC_OUTPUT_BACKUP, TC_OUTPUT_JOURNAL};
    for (int k = 0; k < 3; k++) {
      const char *owner = owner_in(entry->d_name, h5_base, kinds[k]);
      if (owner == NULL && k < 2)
        owner = owner_in(entry->d_name, xdmf_base, kinds[k]);
      if (owner)
        add_owner(owners, owner);
    }
  }
  closedir(listing);
  return TC_SUCCESS;
}

/* The side files of one owner. */
typedef struct {
  char h5_temporary[NAME_BYTES], xdmf_temporary[NAME_BYTES];
  char h5_backup[NAME_BYTES], xdmf_backup[NAME_BYTES];
  char journal[NAME_BYTES];
} side_files;

static void side_files_of(const tc_output *output, const char *owner, side_files *files) {
  tc_output_side_name(output->h5_path, TC_OUTPUT_TEMPORARY, owner, files->h5_temporary, NAME_BYTES);
  tc_output_side_name(output->xdmf_path, TC_OUTPUT_TEMPORARY, owner, files->xdmf_temporary,
                      NAME_BYTES);
  tc_output_side_name(output->h5_path, TC_OUTPUT_BACKUP, owner, files->h5_backup, NAME_BYTES);
  tc_output_side_name(output->xdmf_path, TC_OUTPUT_BACKUP, owner, files->xdmf_backup, NAME_BYTES);
  tc_output_side_name(output->h5_path, TC_OUTPUT_JOURNAL, owner, files->journal, NAME_BYTES);
}

static bool exists(const char *path) { return tc_output_file_id_of(path).present; }

/* Where one final name stands against a journal: the publication's new
 * file, the file it meant to replace (or no file where there was none), or
 * something else. */
typedef enum { FINAL_NEW, FINAL_OLD, FINAL_OTHER } final_state;

static final_state state_of(const char *final, tc_output_file_id old, tc_output_file_id new) {
  tc_output_file_id now = tc_output_file_id_of(final);
  if (tc_output_same_file(now, new))
    return FINAL_NEW;
  if (tc_output_same_file(now, old) || (!now.present && !old.present))
    return FINAL_OLD;
  return FINAL_OTHER;
}

/* Puts the old file back from its backup (or removes the new one when
 * there was no old one). */
static tc_err undo(const char *final, const char *backup, tc_output_file_id old) {
  if (!old.present)
    return tc_output_remove_if_present(final);
  TC_CHECK(exists(backup), TC_ERR_IO, "cannot put back '%s': its backup '%s' is gone", final,
           backup);
  TC_CHECK(rename(backup, final) == 0, TC_ERR_IO, "cannot put back '%s' from '%s': %s", final,
           backup, strerror(errno));
  return TC_SUCCESS;
}

/* Makes the final names a whole pair again after a publication that died
 * half-way: forward when the missing new file is still there, else back. */
static tc_err finish_publication(tc_output *output, const char *owner, const side_files *files) {
  tc_output_file_id ids[TC_OUTPUT_JOURNAL_FILES];
  TC_CALL(tc_output_read_journal(files->journal, ids));
  final_state h5 = state_of(output->h5_path, ids[TC_OUTPUT_OLD_H5], ids[TC_OUTPUT_NEW_H5]);
  final_state xdmf = state_of(output->xdmf_path, ids[TC_OUTPUT_OLD_XDMF], ids[TC_OUTPUT_NEW_XDMF]);
  if ((h5 == FINAL_NEW) == (xdmf == FINAL_NEW)) {
    /* Whole already; an old file moved aside (no hard links) comes back. */
    if (!exists(output->h5_path) && ids[TC_OUTPUT_OLD_H5].present)
      TC_CALL(undo(output->h5_path, files->h5_backup, ids[TC_OUTPUT_OLD_H5]));
    if (!exists(output->xdmf_path) && ids[TC_OUTPUT_OLD_XDMF].present)
      TC_CALL(undo(output->xdmf_path, files->xdmf_backup, ids[TC_OUTPUT_OLD_XDMF]));
    return TC_SUCCESS;
  }
  const char *missing_temporary = h5 == FINAL_NEW ? files->xdmf_temporary : files->h5_temporary;
  const char *missing_final = h5 == FINAL_NEW ? output->xdmf_path : output->h5_path;
  if (exists(missing_temporary)) {
    TC_CALL(tc_output_place(missing_temporary, missing_final, true));
    tc_output_add_note(output,
                       "finished publishing the results of an earlier run (%s) that was stopped "
                       "half-way: '%s' and '%s' are that run's.",
                       owner, output->h5_path, output->xdmf_path);
  } else {
    if (h5 == FINAL_NEW)
      TC_CALL(undo(output->h5_path, files->h5_backup, ids[TC_OUTPUT_OLD_H5]));
    else
      TC_CALL(undo(output->xdmf_path, files->xdmf_backup, ids[TC_OUTPUT_OLD_XDMF]));
    tc_output_add_note(output,
                       "undid the half-done publication of an earlier run (%s): '%s' and '%s' "
                       "are as they were before it.",
                       owner, output->h5_path, output->xdmf_path);
  }
  return tc_output_sync_directory(output->h5_path);
}

/* Removes a side file left by owner, noting it. */
static tc_err remove_left(tc_output *output, const char *path, const char *owner) {
  struct stat info;
  if (lstat(path, &info) != 0)
    return TC_SUCCESS;
  TC_CALL(tc_output_remove_if_present(path));
  char size[32];
  tc_output_format_bytes((int64_t)info.st_size, size);
  tc_output_add_note(output, "removed '%s' (%s), left by a run (%s) that did not finish.", path,
                     size, owner);
  return TC_SUCCESS;
}

/* Removes the MPI-IO lock-test files beside owner's temporary, noting each. */
static tc_err remove_locktests(tc_output *output, const char *temporary, const char *owner) {
  char directory[TC_OUTPUT_PATH_BYTES];
  tc_file_directory_of(temporary, directory, sizeof directory);
  const char *base = tc_file_base_name(temporary);
  DIR *listing = opendir(directory);
  TC_CHECK(listing != NULL, TC_ERR_IO, "cannot list directory '%s': %s", directory,
           strerror(errno));
  tc_err err = TC_SUCCESS;
  for (struct dirent *entry; err == TC_SUCCESS && (entry = readdir(listing)) != NULL;) {
    char file[NAME_BYTES], path[2 * NAME_BYTES];
    if (!strip_locktest(entry->d_name, file, sizeof file) || strcmp(file, base) != 0)
      continue;
    if (base == temporary) /* in the working directory, named as the user named it */
      snprintf(path, sizeof path, "%s", entry->d_name);
    else
      snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
    err = remove_left(output, path, owner);
  }
  closedir(listing);
  return err;
}

static tc_err recover_owner(tc_output *output, const char *owner) {
  side_files files;
  side_files_of(output, owner, &files);
  if (exists(files.journal))
    TC_CALL(finish_publication(output, owner, &files));
  TC_CALL(remove_left(output, files.xdmf_temporary, owner));
  TC_CALL(remove_left(output, files.h5_temporary, owner));
  TC_CALL(remove_locktests(output, files.h5_temporary, owner));
  /* Backups whose final name is gone still hold the only copy: put back. */
  if (!exists(output->xdmf_path) && exists(files.xdmf_backup))
    TC_CHECK(rename(files.xdmf_backup, output->xdmf_path) == 0, TC_ERR_IO,
             "cannot put back '%s': %s", output->xdmf_path, strerror(errno));
  if (!exists(output->h5_path) && exists(files.h5_backup))
    TC_CHECK(rename(files.h5_backup, output->h5_path) == 0, TC_ERR_IO, "cannot put back '%s': %s",
             output->h5_path, strerror(errno));
  TC_CALL(tc_output_remove_if_present(files.xdmf_backup));
  TC_CALL(tc_output_remove_if_present(files.h5_backup));
  return tc_output_remove_if_present(files.journal);
}

tc_err tc_output_recover(tc_output *output) {
  owner_list owners;
  TC_CALL(find_owners(output, &owners));
  for (int i = 0; i < owners.count; i++)
    TC_CALL(recover_owner(output, owners.names[i]));
  if (owners.count > 0)
    TC_CALL(tc_output_sync_directory(output->h5_path));
  return TC_SUCCESS;
}
