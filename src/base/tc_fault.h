/* tc_fault: test-only fault injection at named points of a run; and the
 * registry of temporary files that a fatal signal must not leave behind,
 * with the signal's record that makes those points stop the run.
 * Injection is driven by the environment variable TCMINI_FAULT, read once;
 * when it is unset a check costs one branch. See docs/hardening.md. */
#ifndef TC_FAULT_H
#define TC_FAULT_H

#include <stdbool.h>

#include "tc_error.h"

/// Most temporary files registered at once (tc_fault_track_temporary).
enum { TC_FAULT_MAX_TEMPORARIES = 4, TC_FAULT_PATH_MAX = 4096 };

/// Fails with the point's error code and a message naming the point and the
/// TCMINI_FAULT setting when TCMINI_FAULT names this point for this process's
/// rank in MPI_COMM_WORLD and this is the chosen arrival at it; TC_SUCCESS
/// otherwise. TCMINI_FAULT is a comma-separated list of
/// point[:rank=R][:at=N][:mark=FILE][:stop] (no rank: every rank; at: fail
/// on the N-th arrival, default 1, only once; mark: on that arrival create
/// FILE, relative to the working directory and without ':' or ',', instead of
/// failing, so that a test can wait for a run to get that far; stop: on that
/// arrival stop the process with SIGSTOP instead of failing, until a test
/// sends it SIGCONT).
/// Points and the codes they fail with: "alloc" (TC_ERR_MEMORY, the loop's
/// allocations), "step" (TC_ERR_INTERNAL, the start of an assembly step),
/// "io" (TC_ERR_IO, after a dataset of the results file is written),
/// "publish" (TC_ERR_IO, when both results files are complete, before they
/// are published), "peer_map" (TC_ERR_CUDA, where the GPU exchange would
/// share this rank's buffers with its neighbours: its pairs then send
/// messages through host buffers, or run.exchange = peer stops). A
/// malformed TCMINI_FAULT fails every check with TC_ERR_ARGUMENT, and after a
/// tc_fault_signal_received every check fails with TC_ERR_INTERRUPTED. Main
/// thread only; not collective.
tc_err tc_fault_check(const char *point);

/// Whether TCMINI_FAULT asks for the results at point to be made wrong, for
/// this process's rank: the points "wrong_<Kernel>" (e.g.
/// wrong_FieldFieldVector) make that contraction a deliberately wrong
/// kernel, so that the tests can show the checks catch one. Unlike
/// tc_fault_check, it holds on every arrival (at= is not used). False when
/// TCMINI_FAULT is unset or malformed (tc_fault_check reports that). Main
/// thread only; not collective.
bool tc_fault_wrong(const char *point);

/// Tells fault injection this process's rank in MPI_COMM_WORLD, which a
/// fault's rank= is compared with (tc_parallel_init calls it; 0 until then).
void tc_fault_set_rank(int rank);

/// Registers a temporary file that tc_fault_signal_received must delete
/// (a file being written under a temporary name). Fails with TC_ERR_ARGUMENT
/// when path is too long or TC_FAULT_MAX_TEMPORARIES are registered already.
/// Main thread only; not collective.
tc_err tc_fault_track_temporary(const char *path);

/// Forgets a registered temporary file (after it was renamed or removed).
/// Unknown paths are ignored. Main thread only; not collective.
void tc_fault_untrack_temporary(const char *path);

/// Records a fatal signal (SIGINT, SIGTERM) and deletes every registered
/// temporary file (unlink, errors ignored). From then on every
/// tc_fault_check fails with TC_ERR_INTERRUPTED naming the signal, so that
/// a long phase (the results file's datasets) stops at its next fault point.
/// Async-signal-safe: meant for a signal handler (src/base/tc_signals).
void tc_fault_signal_received(int signal_number);

#endif
