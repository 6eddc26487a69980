/* tc_file_paths: the checks a file that a run writes passes before any work
 * (its directory exists and is writable; the path itself is absent or a
 * regular file, not a directory, a symbolic link or a device), whether two
 * paths name one file, and the names of a results file's XDMF companion
 * and of the file a run whose checks fail writes instead. */
#ifndef TC_FILE_PATHS_H
#define TC_FILE_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "tc_error.h"

/// Fails with TC_ERR_IO, one line naming the file as `what` ("output path",
/// "report file") and the reason, unless path is absent or a regular file: a
/// directory, a symbolic link (a new file renamed into place would replace
/// the link, not its target; the message names the target) and a device,
/// pipe or socket are refused. *exists says whether a regular file is there
/// (whether it may be replaced is the caller's rule).
tc_err tc_file_check_kind(const char *path, const char *what, bool *exists);

/// tc_file_check_kind, and the directory of path exists and is writable:
/// a file can be written at path by renaming a new file into place. Fails
/// with TC_ERR_IO, one line naming the file as `what` and the reason.
tc_err tc_file_check_writable(const char *path, const char *what);

/// Whether a and b name one file: the same device and inode where both
/// exist, else the same directory (after resolving links and "..") and the
/// same last component.
bool tc_file_same(const char *a, const char *b);

/// The directory part of path: "." for a bare name, "/" for "/x"
/// (truncated to size).
void tc_file_directory_of(const char *path, char *directory, size_t size);

/// The last component of path (after its last '/').
const char *tc_file_base_name(const char *path);

/// The XDMF file written beside results file `path`: "x.h5" -> "x.xmf", any
/// other name + ".xmf". False (xdmf empty) when it does not fit in size.
bool tc_file_xdmf_companion(const char *path, char *xdmf, size_t size);

/// What a results file's name gains for the results of a run whose checks
/// failed (tc_file_failed_name).
#define TC_FILE_FAILED_TAG ".failed"

/// The results file a run whose checks failed writes instead of `path`,
/// beside it: "x.h5" -> "x.failed.h5", any other name + ".failed". False
/// (failed empty) when it does not fit in size.
bool tc_file_failed_name(const char *path, char *failed, size_t size);

#endif
