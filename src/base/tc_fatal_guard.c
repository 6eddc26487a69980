/* tc_fatal_guard: crashes in a library, while it reads a user's file, made
 * one error line (see tc_fatal_guard.h). */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "tc_fatal_guard.h"

#include <signal.h>
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

/* Only async-signal-safe calls: write and _exit. */
static void on_fatal_signal(int signal_number) {
  const char *name = "a fatal signal";
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    if (guarded[i] == signal_number)
      name = guarded_names[i];
  static const char end[] = "): the file is damaged or not what it claims to be\n";
  ssize_t ignored = write(STDERR_FILENO, message_start, strlen(message_start));
  ignored = write(STDERR_FILENO, name, strlen(name));
  ignored = write(STDERR_FILENO, end, sizeof end - 1);
  (void)ignored;
  _exit(2);
}

void tc_fatal_guard_begin(const char *program, const char *what) {
  snprintf(message_start, sizeof message_start, "%s: error: %s crashed (", program, what);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    (void)sigaction(guarded[i], &action, &replaced[i]);
  active = 1;
}

void tc_fatal_guard_end(void) {
  if (!active)
    return;
  for (int i = 0; i < GUARDED_SIGNALS; ++i)
    (void)sigaction(guarded[i], &replaced[i], NULL);
  active = 0;
}
