/* test_fatal_guard: a crash inside tc_fatal_guard_begin/_end (SIGSEGV and
 * abort(), as HDF5 does on some damaged files) ends the process with status
 * 2 and exactly one error line naming what was being read, even where the
 * crashing code wrote to stderr first (as glibc does before it aborts on a
 * corrupted heap); after tc_fatal_guard_end the handler from before is back
 * (the default action, or a sanitizer's), and what the guarded code wrote
 * is passed on. Each case runs in a child process. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tc_fatal_guard.h"

/* Runs crash(signal) in a child with stderr into a pipe; *text gets it.
 * guarded: 0 no guard, 1 guarded, 2 guard ended before the crash; noisy:
 * the child writes a line to stderr first (signal 0: no crash). */
static int run_child(int signal_number, int guarded, int noisy, char *text, size_t size) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0)
    return -1;
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    dup2(pipe_ends[1], STDERR_FILENO);
    close(pipe_ends[0]);
    if (guarded >= 1)
      tc_fatal_guard_begin("test_fatal_guard", "reading the replay file 'x.h5'");
    if (noisy)
      fprintf(stderr, "malloc(): corrupted top size\n");
    if (guarded == 2)
      tc_fatal_guard_end();
    if (signal_number == 0)
      _exit(0);
    if (signal_number == SIGABRT)
      abort();
    raise(signal_number);
    _exit(0);
  }
  close(pipe_ends[1]);
  size_t used = 0;
  ssize_t got;
  while (used + 1 < size && (got = read(pipe_ends[0], text + used, size - 1 - used)) > 0)
    used += (size_t)got;
  text[used] = '\0';
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

int main(void) {
  int failures = 0;
  const int signals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE};
  const char *names[] = {"SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE"};
  for (int i = 0; i < 4; ++i) {
    char text[2048], expected[256];
    /* noisy (glibc's line before its abort): dropped where the guard holds
     * stderr, not in sanitizer builds */
    const int noisy = tc_fatal_guard_holds_stderr() ? i % 2 : 0;
    int status = run_child(signals[i], 1, noisy, text, sizeof text);
    snprintf(expected, sizeof expected,
             "test_fatal_guard: error: reading the replay file 'x.h5' crashed (%s): the file is "
             "damaged or not what it claims to be\n",
             names[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2 || strcmp(text, expected) != 0) {
      fprintf(stderr, "FAIL %s guarded: status %#x, stderr '%s'\n", names[i], status, text);
      ++failures;
    }
    /* After the guard, the handler before it acts again: the default action,
     * or a sanitizer's report (exit 1); never the guard's line and status. */
    status = run_child(signals[i], 2, 0, text, sizeof text);
    if ((WIFEXITED(status) && WEXITSTATUS(status) == 2) || strstr(text, "crashed (") != NULL ||
        !(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0))) {
      fprintf(stderr, "FAIL %s after the guard ended: status %#x, stderr '%.200s'\n", names[i],
              status, text);
      ++failures;
    }
  }
  /* No crash: what the guarded code wrote reaches stderr at the guard's end. */
  char text[2048];
  int status = run_child(0, 2, 1, text, sizeof text);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      strcmp(text, "malloc(): corrupted top size\n") != 0) {
    fprintf(stderr, "FAIL no crash: status %#x, stderr '%.200s'\n", status, text);
    ++failures;
  }
  printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
