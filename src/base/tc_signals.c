/* tc_signals: the SIGINT/SIGTERM handler and its poll (see tc_signals.h). */
#define _POSIX_C_SOURCE 200809L
#include "tc_signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "tc_fault.h"

static volatile sig_atomic_t received; /* the signal number, 0 if none */

/* Async-signal-safe: records the signal (also for tc_fault_check, which then
 * stops the write of the results file) and unlinks temporary files. The
 * handler is reset to the default action on delivery (SA_RESETHAND). */
static void on_signal(int signal_number) {
  const int saved_errno = errno;
  received = signal_number;
  tc_fault_signal_received(signal_number);
  errno = saved_errno;
}

tc_err tc_signals_install(void) {
  static const int handled[] = {SIGINT, SIGTERM};
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESETHAND;
  TC_CHECK(sigemptyset(&action.sa_mask) == 0, TC_ERR_INTERNAL, "sigemptyset failed: %s",
           strerror(errno));
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; ++i)
    TC_CHECK(sigaddset(&action.sa_mask, handled[i]) == 0, TC_ERR_INTERNAL,
             "sigaddset failed: %s", strerror(errno));
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; ++i)
    TC_CHECK(sigaction(handled[i], &action, NULL) == 0, TC_ERR_INTERNAL,
             "cannot install the handler of signal %d: %s", handled[i], strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_signals_check(void) {
  const int signal_number = received;
  if (signal_number == 0)
    return TC_SUCCESS;
  TC_FAIL(TC_ERR_INTERRUPTED, "interrupted by %s: the run stopped early",
          signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal");
}
