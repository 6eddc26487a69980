/* tc_signals: the SIGINT/SIGTERM handler and its poll (see tc_signals.h). */
#define _GNU_SOURCE /* prctl */
#include "tc_signals.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

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

/* A rank started by Open MPI's launcher (its parent: mpirun, or the
 * launcher's daemon on other nodes) asks for SIGTERM when that parent dies.
 * When mpirun is killed outright (SIGKILL: a scheduler, the out-of-memory
 * killer), its ranks then still get to delete their temporary files, instead
 * of being torn down without a word. Not for other parents: a rank started
 * by a shell or a wrapper script stays independent of it. */
static tc_err follow_launcher(void) {
  if (getenv("OMPI_COMM_WORLD_SIZE") == NULL)
    return TC_SUCCESS;
  pid_t parent = getppid();
  TC_CHECK(prctl(PR_SET_PDEATHSIG, SIGTERM) == 0, TC_ERR_INTERNAL,
           "cannot ask for a signal when the launcher dies: %s", strerror(errno));
  if (getppid() != parent) /* it died before the request */
    raise(SIGTERM);
  return TC_SUCCESS;
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
  return follow_launcher();
}

tc_err tc_signals_check(void) {
  const int signal_number = received;
  if (signal_number == 0)
    return TC_SUCCESS;
  TC_FAIL(TC_ERR_INTERRUPTED, "interrupted by %s: the run stopped early",
          signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal");
}

/* The set tc_signals_hold blocks. */
static tc_err held_set(sigset_t *set) {
  TC_CHECK(sigemptyset(set) == 0 && sigaddset(set, SIGINT) == 0 && sigaddset(set, SIGTERM) == 0,
           TC_ERR_INTERNAL, "cannot make a signal set: %s", strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_signals_hold(void) {
  sigset_t set;
  TC_CALL(held_set(&set));
  TC_CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0, TC_ERR_INTERNAL,
           "cannot hold signals back: %s", strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_signals_release(void) {
  sigset_t set;
  TC_CALL(held_set(&set));
  TC_CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0, TC_ERR_INTERNAL,
           "cannot release held signals: %s", strerror(errno));
  return TC_SUCCESS;
}
