/* tc_signals: SIGINT and SIGTERM stop a run promptly and leave no partial
 * results. The handler records the signal and deletes the temporary files
 * registered with tc_fault_track_temporary (tc_fault_signal_received); the
 * driver polls tc_signals_check between steps and agrees on it like any other
 * failure, and the fault points (tc_fault_check) stop a results-file write. */
#ifndef TC_SIGNALS_H
#define TC_SIGNALS_H

#include "tc_error.h"

/// Installs the handlers for SIGINT and SIGTERM. A second signal of either
/// kind gets the default action (the process ends at once). Call once,
/// after MPI has started. Not collective.
tc_err tc_signals_install(void);

/// TC_ERR_INTERRUPTED, with a message naming the signal, once SIGINT or
/// SIGTERM has arrived; TC_SUCCESS before. Not collective: pass the result
/// to tc_parallel_agree so that every rank stops at the same point.
tc_err tc_signals_check(void);

/// Holds SIGINT and SIGTERM back (blocks them) until tc_signals_release,
/// for a few steps that must not be stopped half-way (the renames that
/// publish the results files); a signal that arrives meanwhile is delivered
/// at the release. Not nested. Not collective.
tc_err tc_signals_hold(void);

/// Delivers the signals held back since tc_signals_hold. Not collective.
tc_err tc_signals_release(void);

#endif
