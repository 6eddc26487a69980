/* tc_fatal_guard: crashes in a library, while it reads a user's file, made
 * one error line (see tc_fatal_guard.h). While guarded, stderr goes to a
 * temporary file: a crash discards it (glibc prints its own line, e.g.
 * "malloc(): corrupted top size", before it aborts), tc_fatal_guard_end
 * passes it on. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "tc_fatal_guard.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { GUARDED_SIGNALS = 4, MESSAGE_MAX = 1536 };

static const int guarded[GUARDED_SIGNALS] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
static const char *const guarded_names[GUARDED_SIGNALS] = {"SIGSEGV", "SIGBUS", "SIGFPE",
                                                           "SIGABRT"};
static struct sigaction replaced[GUARDED_SIGNALS];
static char message_start[MESSAGE_MAX]; /* "<program>: error: <what> crashed (" */
static volatile sig_atomic_t active;
/* Under a sanitizer stderr is not held: its reports (HDF5's heap overflow
 * on a damaged file, caught before any signal) must reach the user. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TC_GUARD_HOLDS_STDERR 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TC_GUARD_HOLDS_STDERR 0
#endif
#endif
#ifndef TC_GUARD_HOLDS_STDERR
#define TC_GUARD_HOLDS_STDERR 1
#endif

static int real_stderr = STDERR_FILENO; /* where the error line goes */
static FILE *held;                      /* stderr while guarded, or NULL */

/* Only async-signal-safe calls: write and _exit. */
static void on_fatal_signal(int signal_number) {
  const char *name = "a fatal signal";
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    if (guarded[i] == signal_number)
      name = guarded_names[i];
  static const char end[] = "): the file is damaged or not what it claims to be\n";
  ssize_t ignored = write(real_stderr, message_start, strlen(message_start));
  ignored = write(real_stderr, name, strlen(name));
  ignored = write(real_stderr, end, sizeof end - 1);
  (void)ignored;
  _exit(2);
}

void tc_fatal_guard_begin(const char *program, const char *what) {
  snprintf(message_start, sizeof message_start, "%s: error: %s crashed (", program, what);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  /* stderr into a temporary file, where one can be made */
  fflush(stderr);
  real_stderr = TC_GUARD_HOLDS_STDERR ? dup(STDERR_FILENO) : -1;
  held = real_stderr >= 0 ? tmpfile() : NULL;
  if (!held || dup2(fileno(held), STDERR_FILENO) < 0) {
    if (held)
      fclose(held);
    if (real_stderr >= 0)
      close(real_stderr);
    held = NULL;
    real_stderr = STDERR_FILENO;
  }
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    (void)sigaction(guarded[i], &action, &replaced[i]);
  active = 1;
}

bool tc_fatal_guard_holds_stderr(void) { return TC_GUARD_HOLDS_STDERR; }

void tc_fatal_guard_end(void) {
  if (!active)
    return;
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    (void)sigaction(guarded[i], &replaced[i], NULL);
  active = 0;
  if (!held)
    return;
  /* stderr back, and what was written to it while guarded */
  fflush(stderr);
  (void)dup2(real_stderr, STDERR_FILENO);
  close(real_stderr);
  real_stderr = STDERR_FILENO;
  rewind(held);
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, held)) > 0)
    if (fwrite(buffer, 1, got, stderr) != got)
      break;
  fflush(stderr);
  fclose(held);
  held = NULL;
}
