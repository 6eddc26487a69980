/* tc_output_publish: the results files' destination and their atomic
 * publication: the output directory and final names are checked before the
 * run's work, the files are written under temporary names and renamed into
 * place only once they are complete. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_output_impl.h"

static tc_err exists_error(const char *path) {
  TC_FAIL(TC_ERR_IO,
          "output file '%s' exists; set output.overwrite = true or choose another output.path",
          path);
}

void tc_output_directory_of(const char *path, char directory[TC_OUTPUT_PATH_BYTES]) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(directory, TC_OUTPUT_PATH_BYTES, ".");
  else if (slash == path)
    snprintf(directory, TC_OUTPUT_PATH_BYTES, "/");
  else
    snprintf(directory, TC_OUTPUT_PATH_BYTES, "%.*s", (int)(slash - path), path);
}

const char *tc_output_base_name(const char *path) {
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

tc_err tc_output_check_destination(const tc_output *output) {
  char directory[TC_OUTPUT_PATH_BYTES];
  tc_output_directory_of(output->h5_path, directory);
  struct stat info;
  TC_CHECK(stat(directory, &info) == 0, TC_ERR_IO, "output directory '%s' cannot be used: %s",
           directory, strerror(errno));
  TC_CHECK(S_ISDIR(info.st_mode), TC_ERR_IO, "output directory '%s' is not a directory", directory);
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

tc_err tc_output_remove_if_present(const char *path) {
  TC_CHECK(unlink(path) == 0 || errno == ENOENT, TC_ERR_IO, "cannot remove '%s': %s", path,
           strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_output_file_size(const char *path, int64_t *bytes) {
  struct stat info;
  TC_CHECK(stat(path, &info) == 0, TC_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
  *bytes = (int64_t)info.st_size;
  return TC_SUCCESS;
}

/* Rank 0: both files to their final names, the HDF5 file first (the XDMF
 * file refers to it). Undoes the first when the second fails. */
tc_err tc_output_publish_pair(const tc_output *output, const char *h5_temporary,
                              const char *xdmf_temporary) {
  TC_CALL(check_final_path(output->h5_path, output->overwrite));
  TC_CALL(check_final_path(output->xdmf_path, output->overwrite));
  TC_CALL(publish(h5_temporary, output->h5_path, output->overwrite));
  tc_err err = publish(xdmf_temporary, output->xdmf_path, output->overwrite);
  if (err != TC_SUCCESS)
    err = tc_output_first_error(err, tc_output_remove_if_present(output->h5_path));
  return err;
}
