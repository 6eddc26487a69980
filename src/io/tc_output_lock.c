/* tc_output_lock: one tcmini run at a time on an output path. Rank 0 holds a
 * record lock (fcntl F_OFD_SETLK, owned by the open file rather than the
 * process, or F_SETLK on kernels without it; NFS and the parallel file
 * systems pass both to their lock managers) on "<path>.lock" from
 * tc_output_create to
 * tc_output_destroy; the kernel drops it when the process dies, however it
 * dies, so a killed run never blocks the next one. The file holds the
 * owner's host and pid, for the loser's message, and is removed on release.
 *
 * Where the file system has no record locks, the lock file is created
 * exclusively instead; a lock file left by a dead process of this host is
 * taken over, one of another host must be removed by hand (the message says
 * so). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tc_fault.h"
#include "tc_output_impl.h"

static bool no_record_locks(int cause) {
  return cause == ENOLCK || cause == EOPNOTSUPP || cause == ENOSYS || cause == EINVAL;
}

/* The holder's "<host>.<pid>" from the lock file ("" if unreadable). */
static void read_holder(const char *path, char holder[TC_OUTPUT_OWNER_BYTES]) {
  holder[0] = '\0';
  FILE *file = fopen(path, "r");
  if (file == NULL)
    return;
  if (fgets(holder, TC_OUTPUT_OWNER_BYTES, file) == NULL)
    holder[0] = '\0';
  fclose(file);
  holder[strcspn(holder, "\n")] = '\0';
}

static tc_err in_use(const tc_output *output, const char *holder, const char *advice) {
  const char *dot = strrchr(holder, '.');
  if (holder[0] == '\0' || dot == NULL)
    TC_FAIL(TC_ERR_IO,
            "output path '%s' is being written by another tcmini run (lock file '%s'): wait for "
            "it to finish or choose another output.path%s",
            output->h5_path, output->lock_path, advice);
  TC_FAIL(TC_ERR_IO,
          "output path '%s' is being written by another tcmini run (pid %s on host %.*s): wait "
          "for it to finish or choose another output.path%s",
          output->h5_path, dot + 1, (int)(dot - holder), holder, advice);
}

/* Writes this process as the holder into the open lock file. A fatal
 * signal removes the file (tc_fault_track_temporary): a run stopped by one
 * publishes nothing more. */
static tc_err write_holder(const tc_output *output, int fd) {
  char owner[TC_OUTPUT_OWNER_BYTES + 1];
  tc_output_owner(owner);
  strcat(owner, "\n");
  ssize_t length = (ssize_t)strlen(owner);
  TC_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, owner, (size_t)length, 0) == length, TC_ERR_IO,
           "cannot write the lock file '%s': %s", output->lock_path, strerror(errno));
  return tc_fault_track_temporary(output->lock_path);
}

/* The exclusive-create lock, for file systems without record locks. */
static tc_err lock_by_creation(tc_output *output) {
  char mine[TC_OUTPUT_OWNER_BYTES];
  tc_output_owner(mine);
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = open(output->lock_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      output->lock_fd = fd;
      return write_holder(output, fd);
    }
    TC_CHECK(errno == EEXIST, TC_ERR_IO,
             "cannot use output path '%s': cannot create its lock file '%s': %s", output->h5_path,
             output->lock_path, strerror(errno));
    char holder[TC_OUTPUT_OWNER_BYTES];
    read_holder(output->lock_path, holder);
    const char *dot = strrchr(holder, '.'), *my_dot = strrchr(mine, '.');
    bool this_host = dot && my_dot && dot - holder == my_dot - mine &&
                     strncmp(holder, mine, (size_t)(dot - holder)) == 0;
    long pid = dot ? strtol(dot + 1, NULL, 10) : 0;
    bool dead = this_host && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (!dead)
      return in_use(output, holder,
                    this_host ? "" : " (if that run is over, remove the lock file)");
    (void)unlink(output->lock_path); /* its holder died: take it over */
  }
  TC_FAIL(TC_ERR_IO, "cannot take the lock file '%s'", output->lock_path);
}

tc_err tc_output_lock(tc_output *output) {
  TC_CHECK(snprintf(output->lock_path, sizeof output->lock_path, "%s.lock", output->h5_path) <
               (int)sizeof output->lock_path,
           TC_ERR_ARGUMENT, "the output path '%s' is too long", output->h5_path);
  for (int attempt = 0; attempt < 8; attempt++) {
    int fd = open(output->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    TC_CHECK(fd >= 0, TC_ERR_IO,
             "cannot use output path '%s': cannot create its lock file '%s': %s", output->h5_path,
             output->lock_path, strerror(errno));
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int locked = fcntl(fd, F_OFD_SETLK, &whole);
    if (locked != 0 && errno == EINVAL) /* a kernel without open-file locks */
      locked = fcntl(fd, F_SETLK, &whole);
    if (locked != 0) {
      int cause = errno;
      close(fd);
      if (no_record_locks(cause))
        return lock_by_creation(output);
      TC_CHECK(cause == EACCES || cause == EAGAIN, TC_ERR_IO, "cannot lock '%s': %s",
               output->lock_path, strerror(cause));
      char holder[TC_OUTPUT_OWNER_BYTES];
      read_holder(output->lock_path, holder);
      return in_use(output, holder, "");
    }
    /* The holder before us may have removed the file between our open and
     * our lock: then the lock is on a file nobody else will find. */
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(output->lock_path, &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      output->lock_fd = fd;
      return write_holder(output, fd);
    }
    close(fd);
  }
  TC_FAIL(TC_ERR_IO, "cannot lock '%s': it keeps being replaced", output->lock_path);
}

void tc_output_unlock(tc_output *output) {
  if (output->lock_fd < 0)
    return;
  /* Removed while still locked, so that no one takes a lock on a file that
   * is about to go; a failure leaves an unlocked file, which the next run
   * reuses. */
  tc_fault_untrack_temporary(output->lock_path);
  (void)unlink(output->lock_path);
  (void)close(output->lock_fd);
  output->lock_fd = -1;
}
