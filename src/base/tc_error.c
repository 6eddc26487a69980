/* tc_error: the thread-local record of the first error raised, and the names
 * of the error codes. */
#include "tc_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { TC_MESSAGE_MAX = 1024, TC_ORIGIN_MAX = 256 };

static _Thread_local tc_err recorded_code = TC_SUCCESS;
static _Thread_local char recorded_message[TC_MESSAGE_MAX];
static _Thread_local char recorded_origin[TC_ORIGIN_MAX];

const char *tc_err_name(tc_err code) {
  static const char *const names[TC_ERR_COUNT] = {
      [TC_SUCCESS] = "success",
      [TC_ERR_ARGUMENT] = "bad argument",
      [TC_ERR_SHAPE] = "shape mismatch",
      [TC_ERR_MEMORY] = "out of memory",
      [TC_ERR_INPUT] = "input error",
      [TC_ERR_IO] = "I/O error",
      [TC_ERR_MPI] = "MPI error",
      [TC_ERR_CUDA] = "CUDA error",
      [TC_ERR_HDF5] = "HDF5 error",
      [TC_ERR_UNSUPPORTED] = "unsupported",
      [TC_ERR_NO_DEVICE] = "no device",
      [TC_ERR_VERIFY] = "verification failed",
      [TC_ERR_INTERRUPTED] = "interrupted",
      [TC_ERR_INTERNAL] = "internal error",
  };
  if ((int)code < 0 || code >= TC_ERR_COUNT)
    return "unknown error";
  return names[code];
}

/* Control bytes in a message (a deck value or a file name quoted in it)
 * are written as escapes ("\t", "\x01"), so that an error stays one line
 * of plain text. */
static void escape_control_bytes(char *message, size_t size) {
  char escaped[TC_MESSAGE_MAX];
  size_t used = 0;
  for (const unsigned char *c = (const unsigned char *)message; *c && used + 5 < sizeof escaped;
       c++) {
    if (*c >= 0x20 && *c != 0x7f)
      escaped[used++] = (char)*c;
    else if (*c == '\t' || *c == '\n' || *c == '\r') {
      escaped[used++] = '\\';
      escaped[used++] = *c == '\t' ? 't' : *c == '\n' ? 'n' : 'r';
    } else
      used += (size_t)snprintf(escaped + used, sizeof escaped - used, "\\x%02x", *c);
  }
  escaped[used] = '\0';
  snprintf(message, size, "%s", escaped);
}

tc_err tc_error_raise(tc_err code, const char *file, int line, const char *func,
                      const char *fmt, ...) {
  if (recorded_code != TC_SUCCESS)
    return code;
  recorded_code = code;
  va_list args;
  va_start(args, fmt);
  vsnprintf(recorded_message, sizeof recorded_message, fmt, args);
  va_end(args);
  escape_control_bytes(recorded_message, sizeof recorded_message);
  const char *base = strrchr(file, '/');
  snprintf(recorded_origin, sizeof recorded_origin, "%s:%d (%s)",
           base ? base + 1 : file, line, func);
  return code;
}

const char *tc_error_message(void) { return recorded_message; }
const char *tc_error_origin(void) { return recorded_origin; }
tc_err tc_error_code(void) { return recorded_code; }

void tc_error_clear(void) {
  recorded_code = TC_SUCCESS;
  recorded_message[0] = '\0';
  recorded_origin[0] = '\0';
}

void tc_error_adopt(tc_err code, const char *message, const char *origin) {
  recorded_code = code;
  snprintf(recorded_message, sizeof recorded_message, "%s", message);
  snprintf(recorded_origin, sizeof recorded_origin, "%s", origin);
}

tc_err tc_error_recode(tc_err err, tc_err from, tc_err to) {
  if (err != from)
    return err;
  recorded_code = to;
  return to;
}

tc_err tc_error_out_of_memory(double bytes, const char *file, int line, const char *func) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double size = bytes;
  while (size >= 1024.0 && unit < 6) {
    size /= 1024.0;
    unit++;
  }
  return tc_error_raise(TC_ERR_MEMORY, file, line, func,
                        "out of memory: %.4g %s more could not be allocated (use fewer cells per "
                        "rank: more ranks or nodes, or a smaller mesh)",
                        size, units[unit]);
}
