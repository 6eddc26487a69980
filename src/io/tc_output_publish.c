/* tc_output_publish: the results files' destination and their publication
 * as a pair. The files are written under temporary names beside the final
 * ones; once both are complete and on stable storage they are renamed into
 * place so that, whatever fails, the final names hold the new pair or the
 * pair they held before, never one of each and never neither.
 *
 * The steps (rank 0), each on the final names X.h5 and X.xmf:
 *   1. fsync both temporaries T.h5, T.xmf (done before: tc_output_transfer,
 *      tc_xdmf_write)
 *   2. write and fsync a journal X.h5.publishing.<owner> naming the files by
 *      device and inode (old X.h5, old X.xmf, T.h5, T.xmf), fsync the
 *      directory (the temporaries' and the journal's names are durable)
 *   3. keep the old pair: hard links X.h5.old.<owner>, X.xmf.old.<owner>
 *   4. rename T.h5 to X.h5, then T.xmf to X.xmf
 *   5. fsync the directory (the new pair is durable)
 *   6. remove the backups and the journal
 * A failure in 4 puts the old pair back from the backups before returning.
 * A run killed between 2 and 6 leaves the journal, from which the next run
 * on the path finishes or undoes the publication (tc_output_recover.c).
 * Without output.overwrite, 3 is skipped and 4 links instead of renaming,
 * so that a file that appeared meanwhile is never replaced. */
#define _GNU_SOURCE /* fallocate */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_file_paths.h"
#include "tc_output_impl.h"

static tc_err exists_error(const char *path) {
  TC_FAIL(TC_ERR_IO,
          "output file '%s' exists; set output.overwrite = true or choose another output.path",
          path);
}

/* ------------------------------------------------------------- names -- */

void tc_output_owner(char owner[TC_OUTPUT_OWNER_BYTES]) {
  char host[256] = "";
  if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
    snprintf(host, sizeof host, "host");
  host[sizeof host - 1] = '\0';
  /* The first label of the host name, in letters, digits, '-' and '_' only,
   * so that "<host>.<pid>" parses back; short, as Open MPI's MPI-IO limits
   * the length of the temporary file's path. */
  host[strcspn(host, ".")] = '\0';
  for (char *c = host; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '-' || *c == '_'))
      *c = '-';
  snprintf(owner, TC_OUTPUT_OWNER_BYTES, "%.*s.%ld", TC_OUTPUT_HOST_CHARS, host, (long)getpid());
}

void tc_output_side_name(const char *final, const char *kind, const char *owner, char *name,
                         size_t size) {
  /* The buffers are sized for the longest output path (set_paths). */
  if (snprintf(name, size, "%s.%s.%s", final, kind, owner) >= (int)size)
    name[0] = '\0';
}

void tc_output_temporary_name(const char *final, char *name, size_t size) {
  char owner[TC_OUTPUT_OWNER_BYTES];
  tc_output_owner(owner);
  tc_output_side_name(final, TC_OUTPUT_TEMPORARY, owner, name, size);
}

/* ------------------------------------------------------- destination -- */

/* The final file may be replaced only when overwrite is set, and only when
 * it is a regular file (tc_file_check_kind: never a directory, a device, or
 * a symbolic link, whose rename would replace the link, not its target). */
static tc_err check_final_path(const char *path, bool overwrite) {
  bool exists;
  TC_CALL(tc_file_check_kind(path, "output path", &exists));
  if (exists && !overwrite)
    return exists_error(path);
  return TC_SUCCESS;
}

tc_err tc_output_check_directory(const tc_output *output) {
  char directory[TC_OUTPUT_PATH_BYTES];
  tc_file_directory_of(output->h5_path, directory, sizeof directory);
  struct stat info;
  TC_CHECK(stat(directory, &info) == 0, TC_ERR_IO, "output directory '%s' cannot be used: %s",
           directory, strerror(errno));
  TC_CHECK(S_ISDIR(info.st_mode), TC_ERR_IO, "output directory '%s' is not a directory", directory);
  TC_CHECK(access(directory, W_OK | X_OK) == 0, TC_ERR_IO,
           "output directory '%s' is not writable: %s", directory, strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_output_check_destination(const tc_output *output) {
  TC_CALL(tc_output_check_directory(output));
  TC_CALL(check_final_path(output->h5_path, output->overwrite));
  return check_final_path(output->xdmf_path, output->overwrite);
}

/* ------------------------------------------------- the temporary file -- */

void tc_output_format_bytes(int64_t bytes, char text[32]) {
  if (bytes >= (int64_t)1 << 30)
    snprintf(text, 32, "%.1f GiB", (double)bytes / (double)((int64_t)1 << 30));
  else if (bytes >= 1 << 20)
    snprintf(text, 32, "%.1f MiB", (double)bytes / (double)(1 << 20));
  else if (bytes >= 1 << 10)
    snprintf(text, 32, "%.1f KiB", (double)bytes / (double)(1 << 10));
  else
    snprintf(text, 32, "%lld bytes", (long long)bytes);
}

/* Reserves bytes for fd on the file system and sets its size; a file system
 * that cannot reserve space only gets the size. */
static int reserve_space(int fd, int64_t bytes) {
  if (bytes == 0)
    return 0;
  if (fallocate(fd, 0, 0, (off_t)bytes) == 0)
    return 0;
  if (errno != EOPNOTSUPP && errno != ENOSYS)
    return -1;
  return ftruncate(fd, (off_t)bytes);
}

tc_err tc_output_create_temporary(const char *final, const char *path, int64_t bytes) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  TC_CHECK(fd >= 0, TC_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
  int failed = reserve_space(fd, bytes);
  int cause = errno;
  if (close(fd) != 0 && !failed) {
    failed = 1;
    cause = errno;
  }
  if (failed) {
    (void)unlink(path); /* already failing; the caller removes it too */
    char size[32];
    tc_output_format_bytes(bytes, size);
    TC_FAIL(TC_ERR_IO, "no room for the results file '%s' (%s): %s", final, size, strerror(cause));
  }
  return TC_SUCCESS;
}

tc_err tc_output_check_size_limit(const char *path, int64_t bytes) {
  struct rlimit limit;
  TC_CHECK(getrlimit(RLIMIT_FSIZE, &limit) == 0, TC_ERR_IO, "cannot read the file-size limit: %s",
           strerror(errno));
  if (limit.rlim_cur == RLIM_INFINITY || (uint64_t)bytes <= (uint64_t)limit.rlim_cur)
    return TC_SUCCESS;
  char size[32], allowed[32];
  tc_output_format_bytes(bytes, size);
  tc_output_format_bytes((int64_t)limit.rlim_cur, allowed);
  TC_FAIL(TC_ERR_IO,
          "the results file '%s' takes %s, more than the file-size limit (ulimit -f) of %s", path,
          size, allowed);
}

tc_err tc_output_sync_directory(const char *path) {
  char directory[TC_OUTPUT_PATH_BYTES];
  tc_file_directory_of(path, directory, sizeof directory);
  int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  TC_CHECK(fd >= 0, TC_ERR_IO, "cannot open directory '%s' to flush it: %s", directory,
           strerror(errno));
  int failed = fsync(fd) != 0;
  int cause = errno;
  (void)close(fd); /* read-only: nothing to lose */
  /* Some file systems cannot fsync a directory (EINVAL): their renames are
   * as durable as they get. */
  TC_CHECK(!failed || cause == EINVAL, TC_ERR_IO, "cannot flush directory '%s' to disk: %s",
           directory, strerror(cause));
  return TC_SUCCESS;
}

tc_err tc_output_remove_if_present(const char *path) {
  TC_CHECK(unlink(path) == 0 || errno == ENOENT, TC_ERR_IO, "cannot remove '%s': %s", path,
           strerror(errno));
  return TC_SUCCESS;
}

/* ------------------------------------------------------------ journal -- */

tc_output_file_id tc_output_file_id_of(const char *path) {
  struct stat info;
  if (lstat(path, &info) != 0)
    return (tc_output_file_id){false, 0, 0};
  return (tc_output_file_id){true, (uint64_t)info.st_dev, (uint64_t)info.st_ino};
}

bool tc_output_same_file(tc_output_file_id a, tc_output_file_id b) {
  return a.present && b.present && a.device == b.device && a.inode == b.inode;
}

static const char *const journal_roles[TC_OUTPUT_JOURNAL_FILES] = {"old_h5", "old_xmf", "new_h5",
                                                                   "new_xmf"};

static tc_err write_journal(const char *path, const tc_output_file_id ids[]) {
  char text[512];
  int used = snprintf(text, sizeof text, "tcmini publication 1\n");
  for (int i = 0; i < TC_OUTPUT_JOURNAL_FILES; i++)
    used += snprintf(text + used, sizeof text - (size_t)used, "%s %d %" PRIu64 " %" PRIu64 "\n",
                     journal_roles[i], ids[i].present ? 1 : 0, ids[i].device, ids[i].inode);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  TC_CHECK(fd >= 0, TC_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
  int failed = write(fd, text, (size_t)used) != used || fsync(fd) != 0;
  int cause = errno;
  if (close(fd) != 0 && !failed) {
    failed = 1;
    cause = errno;
  }
  if (failed) {
    (void)unlink(path); /* already failing */
    TC_FAIL(TC_ERR_IO, "cannot write '%s': %s", path, strerror(cause ? cause : EIO));
  }
  return TC_SUCCESS;
}

tc_err tc_output_read_journal(const char *path, tc_output_file_id ids[]) {
  FILE *file = fopen(path, "r");
  TC_CHECK(file != NULL, TC_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
  char line[256];
  bool ok = fgets(line, sizeof line, file) && strcmp(line, "tcmini publication 1\n") == 0;
  for (int i = 0; i < TC_OUTPUT_JOURNAL_FILES && ok; i++) {
    char role[32];
    int present = 0;
    ok = fgets(line, sizeof line, file) &&
         sscanf(line, "%31s %d %" SCNu64 " %" SCNu64, role, &present, &ids[i].device,
                &ids[i].inode) == 4 &&
         strcmp(role, journal_roles[i]) == 0;
    ids[i].present = present == 1;
  }
  fclose(file);
  TC_CHECK(ok, TC_ERR_IO, "'%s' is not a tcmini publication journal", path);
  return TC_SUCCESS;
}

/* -------------------------------------------------------- publication -- */

static bool no_hard_links(int cause) {
  return cause == EPERM || cause == EOPNOTSUPP || cause == ENOSYS || cause == EMLINK;
}

tc_err tc_output_place(const char *temporary, const char *final, bool overwrite) {
  if (!overwrite) {
    if (link(temporary, final) == 0) {
      TC_CHECK(unlink(temporary) == 0, TC_ERR_IO, "cannot remove '%s': %s", temporary,
               strerror(errno));
      return TC_SUCCESS;
    }
    if (errno == EEXIST)
      return exists_error(final);
    TC_CHECK(no_hard_links(errno), TC_ERR_IO, "cannot link '%s' to '%s': %s", temporary, final,
             strerror(errno));
    if (access(final, F_OK) == 0) /* no hard links: check, then rename */
      return exists_error(final);
  }
  TC_CHECK(rename(temporary, final) == 0, TC_ERR_IO, "cannot rename '%s' to '%s': %s", temporary,
           final, strerror(errno));
  return TC_SUCCESS;
}

/* Keeps final under backup: a hard link, or (file systems without them) a
 * rename, in which case *moved is set. */
static tc_err back_up(const char *final, const char *backup, bool *moved) {
  *moved = false;
  if (link(final, backup) == 0)
    return TC_SUCCESS;
  TC_CHECK(no_hard_links(errno), TC_ERR_IO, "cannot keep '%s' as '%s': %s", final, backup,
           strerror(errno));
  TC_CHECK(rename(final, backup) == 0, TC_ERR_IO, "cannot keep '%s' as '%s': %s", final, backup,
           strerror(errno));
  *moved = true;
  return TC_SUCCESS;
}

/* Puts the file kept under backup back under final (or removes final when
 * there was none: had_old false). */
static tc_err restore(const char *backup, const char *final, bool had_old) {
  if (!had_old)
    return tc_output_remove_if_present(final);
  TC_CHECK(rename(backup, final) == 0, TC_ERR_IO, "cannot put '%s' back as '%s': %s", backup, final,
           strerror(errno));
  return TC_SUCCESS;
}

/* The names of one publication. */
typedef struct {
  char journal[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES + 16];
  char h5_backup[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES];
  char xdmf_backup[TC_OUTPUT_PATH_BYTES + TC_OUTPUT_SUFFIX_BYTES];
} side_names;

/* Steps 3 to 5, after the journal. *whole tells whether the final names
 * hold a whole pair afterwards (the new one, or after a failure the old one
 * put back); when they do not, the journal and the backups must stay for
 * the next run's recovery. */
static tc_err swap_in(const tc_output *output, const char *h5_temporary, const char *xdmf_temporary,
                      const side_names *names, const tc_output_file_id ids[], bool *whole) {
  bool had_h5 = ids[TC_OUTPUT_OLD_H5].present, had_xdmf = ids[TC_OUTPUT_OLD_XDMF].present;
  bool h5_moved = false, xdmf_moved = false;
  *whole = true;
  tc_err err = TC_SUCCESS;
  if (output->overwrite && had_h5)
    err = back_up(output->h5_path, names->h5_backup, &h5_moved);
  if (err == TC_SUCCESS && output->overwrite && had_xdmf)
    err = back_up(output->xdmf_path, names->xdmf_backup, &xdmf_moved);
  bool h5_placed = false;
  if (err == TC_SUCCESS &&
      (err = tc_output_place(h5_temporary, output->h5_path, output->overwrite)) == TC_SUCCESS)
    h5_placed = true;
  if (err == TC_SUCCESS)
    err = tc_output_place(xdmf_temporary, output->xdmf_path, output->overwrite);
  if (err == TC_SUCCESS)
    return tc_output_sync_directory(output->h5_path);

  /* Put the old pair back: the new HDF5 file goes, the old one returns; an
   * old file moved aside (no hard links) is moved back. */
  tc_err undone = TC_SUCCESS;
  if (h5_placed)
    undone = restore(names->h5_backup, output->h5_path, output->overwrite && had_h5);
  else if (h5_moved)
    undone = restore(names->h5_backup, output->h5_path, true);
  if (xdmf_moved)
    undone = tc_output_first_error(undone, restore(names->xdmf_backup, output->xdmf_path, true));
  *whole = undone == TC_SUCCESS;
  return err;
}

tc_err tc_output_publish_pair(const tc_output *output, const char *h5_temporary,
                              const char *xdmf_temporary) {
  TC_CALL(check_final_path(output->h5_path, output->overwrite));
  TC_CALL(check_final_path(output->xdmf_path, output->overwrite));
  char owner[TC_OUTPUT_OWNER_BYTES];
  tc_output_owner(owner);
  side_names names;
  tc_output_side_name(output->h5_path, TC_OUTPUT_JOURNAL, owner, names.journal,
                      sizeof names.journal);
  tc_output_side_name(output->h5_path, TC_OUTPUT_BACKUP, owner, names.h5_backup,
                      sizeof names.h5_backup);
  tc_output_side_name(output->xdmf_path, TC_OUTPUT_BACKUP, owner, names.xdmf_backup,
                      sizeof names.xdmf_backup);
  tc_output_file_id ids[TC_OUTPUT_JOURNAL_FILES] = {
      [TC_OUTPUT_OLD_H5] = tc_output_file_id_of(output->h5_path),
      [TC_OUTPUT_OLD_XDMF] = tc_output_file_id_of(output->xdmf_path),
      [TC_OUTPUT_NEW_H5] = tc_output_file_id_of(h5_temporary),
      [TC_OUTPUT_NEW_XDMF] = tc_output_file_id_of(xdmf_temporary)};
  TC_CHECK(ids[TC_OUTPUT_NEW_H5].present && ids[TC_OUTPUT_NEW_XDMF].present, TC_ERR_IO,
           "the temporary results files '%s' and '%s' are gone", h5_temporary, xdmf_temporary);
  TC_CALL(write_journal(names.journal, ids));
  bool whole = true;
  tc_err err = tc_output_sync_directory(output->h5_path);
  if (err == TC_SUCCESS)
    err = swap_in(output, h5_temporary, xdmf_temporary, &names, ids, &whole);
  if (!whole)
    return err; /* the journal tells the next run on the path how to finish */
  /* The pair is whole: the backups and the journal go (a failure to remove
   * them is left to the next run's recovery). */
  (void)unlink(names.xdmf_backup);
  (void)unlink(names.h5_backup);
  if (unlink(names.journal) != 0 && err == TC_SUCCESS)
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__, "cannot remove '%s': %s",
                         names.journal, strerror(errno));
  return err;
}
