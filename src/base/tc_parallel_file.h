/* tc_parallel_file: one file written and read by every rank together through
 * MPI-IO (part of tcmini's MPI layer, beside tc_parallel). Each rank names
 * the byte runs of the file it transfers; the transfers are collective, so
 * that the MPI library can gather small pieces into large file-system
 * requests (collective buffering). Every MPI return code and every byte
 * count is checked: a failure is an error value, never a silent success. */
#ifndef TC_PARALLEL_FILE_H
#define TC_PARALLEL_FILE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"

/// A piece of the file: bytes bytes starting at byte offset.
typedef struct {
  int64_t offset;
  int64_t bytes;
} tc_byte_run;

typedef struct tc_parallel_file tc_parallel_file;

/// Opens the existing file at path on every rank of comm, for writing (write
/// true) or for reading. Fails with TC_ERR_IO naming the path. Collective on
/// comm: every rank gets the same result.
tc_err tc_parallel_file_open(MPI_Comm comm, const char *path, bool write, tc_parallel_file **file);

/// Writes this rank's runs: data holds their bytes one after the other
/// (count runs in ascending order of offset, not overlapping; no rank's runs
/// overlap another's). A rank with nothing to write passes count 0. Fails
/// with TC_ERR_IO when MPI reports an error or fewer bytes than asked for
/// (on any rank: every rank returns the same error). Collective.
tc_err tc_parallel_file_write(tc_parallel_file *file, int64_t count, const tc_byte_run *runs,
                              const void *data);

/// Reads this rank's runs into data (laid out as for tc_parallel_file_write).
/// Fails as tc_parallel_file_write does. Collective.
tc_err tc_parallel_file_read(tc_parallel_file *file, int64_t count, const tc_byte_run *runs,
                             void *data);

/// Puts the closed file at path on stable storage: one process per node
/// (where the node's writes may still be cached) opens it and calls fsync.
/// Fails with TC_ERR_IO on every rank when one fails. Collective on comm.
///
/// Not MPI_File_sync: Open MPI's OMPIO returns from it without its closing
/// barrier on the rank whose fsync fails, and the others then wait forever.
tc_err tc_parallel_file_sync_path(MPI_Comm comm, const char *path);

/// Closes the file and sets *file to NULL (NULL is fine). Collective.
tc_err tc_parallel_file_close(tc_parallel_file **file);

#endif
