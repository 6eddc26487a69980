/* write_failure_shim: an LD_PRELOAD library that makes one file look as if
 * its file system were full, for the tests of the results file. It stands in
 * front of the C library's write, pwrite, writev, pwritev, fallocate and
 * rename calls of the process; files whose path (as /proc/self/fd shows it)
 * does not contain TC_SHIM_PATH are left alone.
 *
 *   TC_SHIM_PATH=text        the files concerned: those whose path contains text
 *   TC_SHIM_FULL_AFTER=N     no byte at or past offset N can be written: a write
 *                            that crosses N writes the bytes before it (a short
 *                            write, as on a full disk) and the next one fails
 *                            with ENOSPC; fallocate past N fails with ENOSPC
 *   TC_SHIM_NO_FALLOCATE=1   fallocate fails with EOPNOTSUPP (a file system
 *                            that cannot reserve space)
 *   TC_SHIM_FAIL_RENAME=text rename or link to a path containing text fails
 *                            with EIO ("=name": to a path whose file name is
 *                            name)
 *   TC_SHIM_KILL_RENAME=text rename or link to a path containing text kills
 *                            the process (SIGKILL) instead: a run killed in the
 *                            middle of publishing its files
 *
 * Each failure is counted in the file named by TC_SHIM_LOG, if set (one line
 * "pid what path" per failure), so that a test can tell that the fault was
 * really met. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *setting(const char *name) {
  const char *value = getenv(name);
  return value && value[0] ? value : NULL;
}

/* Whether fd is a file the shim fails writes to. */
static int concerned(int fd) {
  const char *pattern = setting("TC_SHIM_PATH");
  if (pattern == NULL || fd < 0)
    return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t length = readlink(link, path, sizeof path - 1);
  if (length <= 0)
    return 0;
  path[length] = '\0';
  return strstr(path, pattern) != NULL;
}

static void note(const char *what, const char *path) {
  const char *log = setting("TC_SHIM_LOG");
  if (log == NULL)
    return;
  int saved = errno;
  int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd >= 0) {
    char line[4200];
    int length = snprintf(line, sizeof line, "%ld %s %s\n", (long)getpid(), what, path);
    ssize_t (*real_write)(int, const void *, size_t) =
        (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (length > 0)
      (void)real_write(fd, line, (size_t)length);
    close(fd);
  }
  errno = saved;
}

static void note_fd(const char *what, int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t length = readlink(link, path, sizeof path - 1);
  path[length > 0 ? length : 0] = '\0';
  note(what, path);
}

static long long full_after(void) {
  const char *limit = setting("TC_SHIM_FULL_AFTER");
  return limit ? atoll(limit) : -1;
}

/* How many of bytes at offset may be written: all of them (-1: the shim does
 * not limit this file), fewer, or 0 (fail with ENOSPC). */
static long long allowed(int fd, long long offset, size_t bytes) {
  long long limit = full_after();
  if (limit < 0 || !concerned(fd))
    return -1;
  if (offset + (long long)bytes <= limit)
    return -1;
  return offset >= limit ? 0 : limit - offset;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);

ssize_t pwrite(int fd, const void *buffer, size_t bytes, off_t offset) {
  long long may = allowed(fd, offset, bytes);
  if (may == 0) {
    note_fd("ENOSPC", fd);
    errno = ENOSPC;
    return -1;
  }
  return REAL("pwrite", pwrite_fn)(fd, buffer, may > 0 ? (size_t)may : bytes, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t bytes, off_t offset) {
  return pwrite(fd, buffer, bytes, offset);
}

ssize_t write(int fd, const void *buffer, size_t bytes) {
  if (full_after() >= 0 && concerned(fd)) {
    off_t at = lseek(fd, 0, SEEK_CUR);
    long long may = at < 0 ? -1 : allowed(fd, at, bytes);
    if (may == 0) {
      note_fd("ENOSPC", fd);
      errno = ENOSPC;
      return -1;
    }
    if (may > 0)
      bytes = (size_t)may;
  }
  return REAL("write", write_fn)(fd, buffer, bytes);
}

/* Vector writes become one write of the bytes that fit, when a limit cuts
 * them: a short write, as the kernel would give. */
static ssize_t limited_vector(int fd, const struct iovec *vector, int count, off_t offset,
                              int positioned) {
  size_t total = 0;
  for (int i = 0; i < count; i++)
    total += vector[i].iov_len;
  off_t at = positioned ? offset : lseek(fd, 0, SEEK_CUR);
  long long may = at < 0 ? -1 : allowed(fd, at, total);
  if (may < 0)
    return positioned ? REAL("pwritev", pwritev_fn)(fd, vector, count, offset)
                      : REAL("writev", writev_fn)(fd, vector, count);
  if (may == 0) {
    note_fd("ENOSPC", fd);
    errno = ENOSPC;
    return -1;
  }
  int used = 0;
  size_t left = (size_t)may;
  struct iovec cut[64];
  for (int i = 0; i < count && used < 64 && left > 0; i++) {
    cut[used].iov_base = vector[i].iov_base;
    cut[used].iov_len = vector[i].iov_len < left ? vector[i].iov_len : left;
    left -= cut[used].iov_len;
    used++;
  }
  return positioned ? REAL("pwritev", pwritev_fn)(fd, cut, used, offset)
                    : REAL("writev", writev_fn)(fd, cut, used);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
  return limited_vector(fd, vector, count, offset, 1);
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off_t offset) {
  return limited_vector(fd, vector, count, offset, 1);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
  return limited_vector(fd, vector, count, 0, 0);
}

typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*posix_fallocate_fn)(int, off_t, off_t);

/* -1 with errno set when the shim refuses the reservation, 0 otherwise. */
static int refuse_reservation(int fd, off_t offset, off_t length) {
  if (!concerned(fd))
    return 0;
  if (setting("TC_SHIM_NO_FALLOCATE")) {
    note_fd("EOPNOTSUPP", fd);
    errno = EOPNOTSUPP;
    return -1;
  }
  long long limit = full_after();
  if (limit >= 0 && offset + length > limit) {
    note_fd("ENOSPC", fd);
    errno = ENOSPC;
    return -1;
  }
  return 0;
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
  if (refuse_reservation(fd, offset, length) < 0)
    return -1;
  return REAL("fallocate", fallocate_fn)(fd, mode, offset, length);
}

int fallocate64(int fd, int mode, off_t offset, off_t length) {
  return fallocate(fd, mode, offset, length);
}

int posix_fallocate(int fd, off_t offset, off_t length) {
  if (refuse_reservation(fd, offset, length) < 0)
    return errno;
  return REAL("posix_fallocate", posix_fallocate_fn)(fd, offset, length);
}

int posix_fallocate64(int fd, off_t offset, off_t length) {
  return posix_fallocate(fd, offset, length);
}

typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);

/* Whether target matches pattern: contains it, or with "=name" has the
 * file name name. */
static int matches(const char *target, const char *pattern) {
  if (pattern == NULL)
    return 0;
  if (pattern[0] != '=')
    return strstr(target, pattern) != NULL;
  const char *slash = strrchr(target, '/');
  return strcmp(slash ? slash + 1 : target, pattern + 1) == 0;
}

static int refuse_rename(const char *target) {
  if (matches(target, setting("TC_SHIM_KILL_RENAME"))) {
    note("SIGKILL-rename", target);
    raise(SIGKILL);
  }
  if (!matches(target, setting("TC_SHIM_FAIL_RENAME")))
    return 0;
  note("EIO-rename", target);
  errno = EIO;
  return -1;
}

int rename(const char *from, const char *to) {
  if (refuse_rename(to) < 0)
    return -1;
  return REAL("rename", rename_fn)(from, to);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to) {
  if (refuse_rename(to) < 0)
    return -1;
  return REAL("renameat", renameat_fn)(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned int flags) {
  if (refuse_rename(to) < 0)
    return -1;
  return REAL("renameat2", renameat2_fn)(from_dir, from, to_dir, to, flags);
}

typedef int (*link_fn)(const char *, const char *);
typedef int (*linkat_fn)(int, const char *, int, const char *, int);

int link(const char *from, const char *to) {
  if (refuse_rename(to) < 0)
    return -1;
  return REAL("link", link_fn)(from, to);
}

int linkat(int from_dir, const char *from, int to_dir, const char *to, int flags) {
  if (refuse_rename(to) < 0)
    return -1;
  return REAL("linkat", linkat_fn)(from_dir, from, to_dir, to, flags);
}
