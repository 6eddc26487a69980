/* tc_file_paths: destination checks and file identity (see tc_file_paths.h). */
#define _XOPEN_SOURCE 700 /* realpath, lstat */
#include "tc_file_paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tc_file_directory_of(const char *path, char *directory, size_t size) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(directory, size, ".");
  else if (slash == path)
    snprintf(directory, size, "/");
  else
    snprintf(directory, size, "%.*s", (int)(slash - path), path);
}

const char *tc_file_base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

tc_err tc_file_check_kind(const char *path, const char *what, bool *exists) {
  struct stat info;
  *exists = false;
  if (lstat(path, &info) != 0) {
    /* absent, or a component of its directory is not a directory (which
     * the directory's check names) */
    TC_CHECK(errno == ENOENT || errno == ENOTDIR, TC_ERR_IO, "cannot check %s '%s': %s", what,
             path, strerror(errno));
    return TC_SUCCESS;
  }
  if (S_ISLNK(info.st_mode)) {
    char target[PATH_MAX];
    const ssize_t length = readlink(path, target, sizeof target - 1);
    target[length > 0 ? length : 0] = '\0';
    TC_FAIL(TC_ERR_IO,
            "%s '%s' is a symbolic link (to '%s'): the new file is renamed into place, which "
            "would replace the link; name the file itself",
            what, path, target);
  }
  TC_CHECK(!S_ISDIR(info.st_mode), TC_ERR_IO, "%s '%s' is a directory", what, path);
  TC_CHECK(S_ISREG(info.st_mode), TC_ERR_IO,
           "%s '%s' is not a regular file (a device, pipe or socket)", what, path);
  *exists = true;
  return TC_SUCCESS;
}

tc_err tc_file_check_writable(const char *path, const char *what) {
  bool exists;
  TC_CALL(tc_file_check_kind(path, what, &exists));
  struct stat info;
  char directory[PATH_MAX];
  tc_file_directory_of(path, directory, sizeof directory);
  TC_CHECK(stat(directory, &info) == 0, TC_ERR_IO, "cannot write %s '%s': directory '%s': %s",
           what, path, directory, strerror(errno));
  TC_CHECK(S_ISDIR(info.st_mode), TC_ERR_IO, "cannot write %s '%s': '%s' is not a directory",
           what, path, directory);
  TC_CHECK(access(directory, W_OK | X_OK) == 0, TC_ERR_IO,
           "cannot write %s '%s': directory '%s' is not writable", what, path, directory);
  return TC_SUCCESS;
}

bool tc_file_same(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (strcmp(tc_file_base_name(a), tc_file_base_name(b)) != 0)
    return false;
  char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
  tc_file_directory_of(a, da, sizeof da);
  tc_file_directory_of(b, db, sizeof db);
  if (realpath(da, ra) == NULL || realpath(db, rb) == NULL)
    return strcmp(da, db) == 0;
  return strcmp(ra, rb) == 0;
}

bool tc_file_xdmf_companion(const char *path, char *xdmf, size_t size) {
  const size_t length = strlen(path);
  const int written = length > 3 && strcmp(path + length - 3, ".h5") == 0
                          ? snprintf(xdmf, size, "%.*s.xmf", (int)(length - 3), path)
                          : snprintf(xdmf, size, "%s.xmf", path);
  if (written < 0 || (size_t)written >= size) {
    if (size > 0)
      xdmf[0] = '\0';
    return false;
  }
  return true;
}

bool tc_file_failed_name(const char *path, char *failed, size_t size) {
  const size_t length = strlen(path);
  const size_t stem = length > 3 && strcmp(path + length - 3, ".h5") == 0 ? length - 3 : length;
  const int written =
      snprintf(failed, size, "%.*s%s%s", (int)stem, path, TC_FILE_FAILED_TAG, path + stem);
  if (written < 0 || (size_t)written >= size) {
    if (size > 0)
      failed[0] = '\0';
    return false;
  }
  return true;
}
