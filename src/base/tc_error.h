/* tc_error: error codes as values, and the macros that record where an error
 * arose (PETSc's PetscCall/PetscCheck pattern). Only app/ decides to exit. */
#ifndef TC_ERROR_H
#define TC_ERROR_H

/// Every tcmini function that can fail returns one of these.
typedef enum {
  TC_SUCCESS = 0,
  TC_ERR_ARGUMENT,    ///< a caller passed an impossible argument
  TC_ERR_SHAPE,       ///< contraction or array shapes do not agree
  TC_ERR_MEMORY,      ///< an allocation failed or would be impossibly large
  TC_ERR_INPUT,       ///< the input deck or command line is wrong
  TC_ERR_IO,          ///< a file could not be read or written
  TC_ERR_MPI,         ///< an MPI call failed
  TC_ERR_CUDA,        ///< a CUDA runtime or library call failed
  TC_ERR_HDF5,        ///< an HDF5 call failed
  TC_ERR_UNSUPPORTED, ///< the backend/variant/feature is not available in this build or on this shape
  TC_ERR_NO_DEVICE,   ///< a GPU was asked for and none is usable
  TC_ERR_VERIFY,      ///< a correctness check failed
  TC_ERR_INTERRUPTED, ///< the run was stopped by a signal
  TC_ERR_INTERNAL,    ///< a bug in tcmini
  TC_ERR_COUNT
} tc_err;

/// Short name of an error code, e.g. "input error".
const char *tc_err_name(tc_err code);

/// Records an error (message formatted like printf) raised at file:line in
/// func, and returns code. The first error since the last tc_error_clear()
/// is kept: it names the cause; callers up the stack only add nothing.
/// Thread-local, not collective.
tc_err tc_error_raise(tc_err code, const char *file, int line, const char *func,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/// The message of the recorded error ("" if none).
const char *tc_error_message(void);

/// Where the recorded error was raised, "file:line (function)" ("" if none).
const char *tc_error_origin(void);

/// The recorded error code (TC_SUCCESS if none).
tc_err tc_error_code(void);

/// Forgets the recorded error.
void tc_error_clear(void);

/// Replaces the recorded message and code (used when an error travels from
/// another rank; see tc_parallel_agree).
void tc_error_adopt(tc_err code, const char *message, const char *origin);

/// Where err is from, records it as to instead (the message and origin
/// kept) and returns to; else returns err. E.g. a file the user named that
/// cannot be read (TC_ERR_IO) is bad input (TC_ERR_INPUT). Not collective.
tc_err tc_error_recode(tc_err err, tc_err from, tc_err to);

/// Fails the current function with code and a message unless cond holds.
#define TC_CHECK(cond, code, ...)                                              \
  do {                                                                         \
    if (!(cond))                                                               \
      return tc_error_raise((code), __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)

/// Fails the current function unconditionally.
#define TC_FAIL(code, ...) return tc_error_raise((code), __FILE__, __LINE__, __func__, __VA_ARGS__)

/// Calls a tc_err-returning expression and passes a failure up.
#define TC_CALL(expr)                                                          \
  do {                                                                         \
    tc_err tc_call_err_ = (expr);                                              \
    if (tc_call_err_ != TC_SUCCESS)                                            \
      return tc_call_err_;                                                     \
  } while (0)

/// Records TC_ERR_MEMORY for an allocation of bytes that failed, with a
/// message in the user's terms (the size, and what to do about it), and
/// returns TC_ERR_MEMORY. Not collective.
tc_err tc_error_out_of_memory(double bytes, const char *file, int line, const char *func);

/// Allocates count objects of *ptr's type with calloc, failing with
/// TC_ERR_MEMORY (tc_error_out_of_memory) when it cannot.
#define TC_CALLOC(ptr, count)                                                  \
  do {                                                                         \
    size_t tc_count_ = (size_t)(count);                                        \
    (ptr) = tc_count_ ? calloc(tc_count_, sizeof(*(ptr))) : NULL;              \
    if (tc_count_ != 0 && (ptr) == NULL)                                       \
      return tc_error_out_of_memory((double)tc_count_ * (double)sizeof(*(ptr)), \
                                    __FILE__, __LINE__, __func__);             \
  } while (0)

#endif
