/* tc_parallel_file: collective MPI-IO transfers of byte runs (see
 * tc_parallel_file.h). A transfer goes in rounds of at most ROUND_BYTES per
 * rank; each round sets a file view of the rank's runs (an hindexed type of
 * bytes) and moves the bytes with one collective call. */
#define _POSIX_C_SOURCE 200809L /* open, fsync */
#include "tc_parallel_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_parallel.h"

/* Bytes a rank moves in one collective call at most (and the longest run
 * piece): well inside MPI's int counts, and small enough that the MPI-IO
 * layer's collective buffers stay small and are reused from round to round
 * (1 GiB rounds wrote the 650 MB file of a 48^3 deck with element matrices
 * 10-40% slower at 2 and 4 ranks; docs/output.md). */
enum { ROUND_BYTES = 16 << 20 };

struct tc_parallel_file {
  MPI_Comm comm;
  MPI_File handle;
  char path[512]; /* for messages; may be cut */
};

/* MPI's message for code. */
static const char *mpi_message(int code, char text[MPI_MAX_ERROR_STRING]) {
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    strcpy(text, "unknown MPI error");
  return text;
}

#define FILE_CALL(file, what, expr)                                                                \
  do {                                                                                             \
    int file_rc_ = (expr);                                                                         \
    if (file_rc_ != MPI_SUCCESS) {                                                                 \
      char file_text_[MPI_MAX_ERROR_STRING];                                                       \
      TC_FAIL(TC_ERR_IO, "%s '%s' failed: %s", what, (file)->path,                                 \
              mpi_message(file_rc_, file_text_));                                                  \
    }                                                                                              \
  } while (0)

static tc_err open_local(MPI_Comm comm, const char *path, bool write, tc_parallel_file *file) {
  TC_CALL(tc_comm_dup(comm, &file->comm));
  int mode = write ? MPI_MODE_WRONLY : MPI_MODE_RDONLY;
  FILE_CALL(file, write ? "opening for writing" : "opening for reading",
            MPI_File_open(file->comm, path, mode, MPI_INFO_NULL, &file->handle));
  /* Errors return codes (the default for files, made sure of). */
  FILE_CALL(file, "setting the error handler of",
            MPI_File_set_errhandler(file->handle, MPI_ERRORS_RETURN));
  return TC_SUCCESS;
}

tc_err tc_parallel_file_open(MPI_Comm comm, const char *path, bool write, tc_parallel_file **file) {
  *file = NULL;
  tc_parallel_file *opened = calloc(1, sizeof *opened);
  tc_err err = TC_SUCCESS;
  if (opened == NULL) {
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory opening '%s'",
                         path);
  } else {
    opened->comm = MPI_COMM_NULL;
    opened->handle = MPI_FILE_NULL;
    strncpy(opened->path, path, sizeof opened->path - 1);
    err = open_local(comm, path, write, opened);
  }
  err = tc_parallel_agree(comm, err);
  if (err != TC_SUCCESS) {
    if (opened) {
      if (opened->handle != MPI_FILE_NULL)
        (void)MPI_File_close(&opened->handle); /* already failing */
      tc_comm_free(&opened->comm);
      free(opened);
    }
    return err;
  }
  *file = opened;
  return TC_SUCCESS;
}

/* The pieces of this rank's runs that make up one round. */
typedef struct {
  int count;
  int *lengths;
  MPI_Aint *displacements;
  int64_t bytes;
} round_plan;

/* Splits runs into rounds of at most ROUND_BYTES; *rounds gets their number
 * and plans (allocated) their pieces. */
static tc_err plan_rounds(int64_t count, const tc_byte_run *runs, int64_t *rounds,
                          round_plan **plans) {
  int64_t total = 0, pieces = 0;
  for (int64_t i = 0; i < count; i++) {
    TC_CHECK(runs[i].bytes >= 0 && runs[i].offset >= 0, TC_ERR_ARGUMENT,
             "a file run has a negative offset or length");
    total += runs[i].bytes;
    pieces += runs[i].bytes / ROUND_BYTES + 2; /* a run may be cut at both ends */
  }
  *rounds = (total + ROUND_BYTES - 1) / ROUND_BYTES;
  *plans = NULL;
  if (*rounds == 0)
    return TC_SUCCESS;
  TC_CALLOC(*plans, *rounds);
  int *lengths;
  MPI_Aint *displacements;
  TC_CALLOC(lengths, pieces);
  displacements = calloc((size_t)pieces, sizeof *displacements);
  if (displacements == NULL) {
    free(lengths);
    free(*plans);
    TC_FAIL(TC_ERR_MEMORY, "out of memory planning a file transfer of %lld runs", (long long)count);
  }
  int64_t round = 0, used = 0;
  (*plans)[0].lengths = lengths;
  (*plans)[0].displacements = displacements;
  for (int64_t i = 0; i < count; i++) {
    int64_t offset = runs[i].offset, left = runs[i].bytes;
    while (left > 0) {
      round_plan *plan = &(*plans)[round];
      int64_t room = ROUND_BYTES - plan->bytes;
      int64_t piece = left < room ? left : room;
      plan->lengths[plan->count] = (int)piece;
      plan->displacements[plan->count] = (MPI_Aint)offset;
      plan->count++;
      used++;
      plan->bytes += piece;
      offset += piece;
      left -= piece;
      if (plan->bytes == ROUND_BYTES && round + 1 < *rounds) {
        round++;
        (*plans)[round].lengths = lengths + used;
        (*plans)[round].displacements = displacements + used;
      }
    }
  }
  return TC_SUCCESS;
}

static void free_rounds(round_plan *plans) {
  if (plans) {
    free(plans[0].lengths);
    free(plans[0].displacements);
  }
  free(plans);
}

/* One collective call of one round (plan NULL: this rank moves nothing). */
static tc_err transfer_round(tc_parallel_file *file, bool write, const round_plan *plan,
                             char *data) {
  const char *what = write ? "writing" : "reading";
  MPI_Datatype view = MPI_BYTE;
  int bytes = plan ? (int)plan->bytes : 0;
  if (plan && plan->count > 0) {
    FILE_CALL(
        file, what,
        MPI_Type_create_hindexed(plan->count, plan->lengths, plan->displacements, MPI_BYTE, &view));
    int rc = MPI_Type_commit(&view);
    if (rc != MPI_SUCCESS)
      (void)MPI_Type_free(&view);
    FILE_CALL(file, what, rc);
  }
  int rc = MPI_File_set_view(file->handle, 0, MPI_BYTE, view, "native", MPI_INFO_NULL);
  MPI_Status status;
  int moved = 0;
  if (rc == MPI_SUCCESS)
    rc = write ? MPI_File_write_all(file->handle, data, bytes, MPI_BYTE, &status)
               : MPI_File_read_all(file->handle, data, bytes, MPI_BYTE, &status);
  if (rc == MPI_SUCCESS && bytes > 0) /* ROMIO leaves the status unset for 0 bytes */
    rc = MPI_Get_count(&status, MPI_BYTE, &moved);
  if (view != MPI_BYTE)
    (void)MPI_Type_free(&view); /* the view keeps its own reference */
  FILE_CALL(file, what, rc);
  TC_CHECK(moved == bytes, TC_ERR_IO, "%s '%s': %d of %d bytes were transferred", what, file->path,
           moved, bytes);
  return TC_SUCCESS;
}

static tc_err transfer(tc_parallel_file *file, bool write, int64_t count, const tc_byte_run *runs,
                       char *data) {
  int64_t rounds = 0;
  round_plan *plans = NULL;
  TC_CALL(tc_parallel_agree(file->comm, plan_rounds(count, runs, &rounds, &plans)));
  int64_t all_rounds = rounds;
  tc_err err = tc_allreduce_max_int64(file->comm, &all_rounds, 1);
  int64_t done = 0;
  for (int64_t round = 0; round < all_rounds && err == TC_SUCCESS; round++) {
    const round_plan *plan = round < rounds ? &plans[round] : NULL;
    /* A rank with nothing to move may pass no buffer; no offset is applied to it. */
    char *at = data ? data + done : NULL;
    err = tc_parallel_agree(file->comm, transfer_round(file, write, plan, at));
    if (plan)
      done += plan->bytes;
  }
  free_rounds(plans);
  return err;
}

tc_err tc_parallel_file_write(tc_parallel_file *file, int64_t count, const tc_byte_run *runs,
                              const void *data) {
  /* MPI's write takes a non-const buffer in older bindings; it is only read. */
  return transfer(file, true, count, runs, (char *)(uintptr_t)data);
}

tc_err tc_parallel_file_read(tc_parallel_file *file, int64_t count, const tc_byte_run *runs,
                             void *data) {
  return transfer(file, false, count, runs, data);
}

static tc_err fsync_path(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  TC_CHECK(fd >= 0, TC_ERR_IO, "cannot open '%s' to flush it: %s", path, strerror(errno));
  int failed = fsync(fd) != 0;
  int cause = errno;
  (void)close(fd); /* read-only: the fsync said all there is */
  TC_CHECK(!failed, TC_ERR_IO, "cannot flush '%s' to stable storage: %s", path, strerror(cause));
  return TC_SUCCESS;
}

tc_err tc_parallel_file_sync_path(MPI_Comm comm, const char *path) {
  int local_rank = 0, local_size = 1;
  TC_CALL(tc_parallel_agree(comm, tc_node_local_rank(comm, &local_rank, &local_size)));
  return tc_parallel_agree(comm, local_rank == 0 ? fsync_path(path) : TC_SUCCESS);
}

static tc_err close_local(tc_parallel_file *file) {
  FILE_CALL(file, "closing", MPI_File_close(&file->handle));
  return TC_SUCCESS;
}

tc_err tc_parallel_file_close(tc_parallel_file **file) {
  if (file == NULL || *file == NULL)
    return TC_SUCCESS;
  tc_parallel_file *closing = *file;
  *file = NULL;
  tc_err err = close_local(closing);
  MPI_Comm comm = closing->comm;
  err = tc_parallel_agree(comm, err);
  tc_comm_free(&comm);
  free(closing);
  return err;
}
