/* tc_fatal_guard: one error line instead of a crash while a library reads a
 * file the user named. HDF5 1.10 can crash reading a damaged file (SIGSEGV,
 * or abort() on a heap it corrupted), and Open MPI's handler for such signals
 * then prints a backtrace, which can hang in malloc. Between
 * tc_fatal_guard_begin and tc_fatal_guard_end, SIGSEGV, SIGBUS, SIGFPE and
 * SIGABRT write "<program>: error: <what> crashed (<signal>): the file is
 * damaged" to stderr and end the process at once with status 2 (bad input).
 * What the guarded code writes to stderr meanwhile is held back: dropped on
 * a crash (so that the error is one line), written out by
 * tc_fatal_guard_end; not in a sanitizer build, whose reports must show. */
#ifndef TC_FATAL_GUARD_H
#define TC_FATAL_GUARD_H

#include <stdbool.h>

/// Guards what follows: program and what (e.g. "tcmini-bench", "reading the
/// replay file 'x.h5'") make the message. Not nested. Main thread only;
/// call after MPI has started (Open MPI installs its own handlers there).
void tc_fatal_guard_begin(const char *program, const char *what);

/// Whether the guard holds stderr back (false in sanitizer builds).
bool tc_fatal_guard_holds_stderr(void);

/// Puts back the handlers tc_fatal_guard_begin replaced.
void tc_fatal_guard_end(void);

#endif
