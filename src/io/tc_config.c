/* tc_config: the option table and everything generated from it: defaults,
 * value parsing and bounds, --help, the full-deck printout, command-line
 * overrides, cross-key validation, and the collective load. */
#define _POSIX_C_SOURCE 200809L
#include "tc_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tc_file_paths.h"
#include "tc_ini.h"
#include "tc_parallel.h"

/* Enum fields are read and written as int through the table. */
_Static_assert(sizeof(tc_backend_kind) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(tc_variant) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(tc_precision) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(tc_checks_mode) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(tc_tuning_on_error) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(tc_progress_mode) == sizeof(int), "enum fields are stored as int");

/// Largest deck file read (a deck is a page of text; this catches a wrong path).
enum { DECK_MAX_BYTES = 1 << 20 };

/* ---- a growing string, for the deck and help text ---- */

typedef struct {
  char *data;
  size_t length;
  size_t capacity;
  bool failed; ///< an allocation failed; the text is incomplete
} text_buffer;

__attribute__((format(printf, 2, 3))) static void append(text_buffer *buffer,
                                                         const char *fmt, ...) {
  if (buffer->failed)
    return;
  va_list args;
  va_start(args, fmt);
  int needed = vsnprintf(NULL, 0, fmt, args);
  va_end(args);
  if (needed < 0) {
    buffer->failed = true;
    return;
  }
  if (buffer->length + (size_t)needed + 1 > buffer->capacity) {
    size_t capacity = 2 * (buffer->length + (size_t)needed + 1) + 256;
    char *grown = realloc(buffer->data, capacity);
    if (!grown) {
      buffer->failed = true;
      return;
    }
    buffer->data = grown;
    buffer->capacity = capacity;
  }
  va_start(args, fmt);
  vsnprintf(buffer->data + buffer->length, buffer->capacity - buffer->length, fmt, args);
  va_end(args);
  buffer->length += (size_t)needed;
}

/// Hands the text to the caller, or fails (and frees it) if it is incomplete.
static tc_err finish(text_buffer *buffer, char **text) {
  *text = NULL;
  if (buffer->failed || !buffer->data) {
    free(buffer->data);
    TC_FAIL(TC_ERR_MEMORY, "out of memory formatting the deck text");
  }
  *text = buffer->data;
  return TC_SUCCESS;
}

/* ---- the option table ---- */

typedef enum {
  TYPE_INT64,
  TYPE_INT64_TRIPLE,
  TYPE_DOUBLE,
  TYPE_DOUBLE_TRIPLE,
  TYPE_BOOL,
  TYPE_ENUM,
  TYPE_KERNELS,
  TYPE_STRING,
} option_type;

/// Numeric bounds; infinite ends are open-ended.
typedef struct {
  double low, high;
  bool low_open, high_open; ///< the end itself is excluded
} bounds;

/// An enum's values are first..end-1, named by name().
typedef struct {
  int first, end;
  const char *(*name)(int value);
} enum_names;

typedef struct {
  const char *section;
  const char *key;
  option_type type;
  const char *default_text; ///< parsed like any value to give the default
  const char *doc;
  bounds range;             ///< numeric types only
  const enum_names *names;  ///< TYPE_ENUM only
  size_t offset;            ///< of the field in tc_config
} option;

static const char *backend_name(int value) { return tc_backend_name((tc_backend_kind)value); }
static const char *variant_name(int value) { return tc_variant_name((tc_variant)value); }
static const char *precision_name(int value) { return tc_precision_name((tc_precision)value); }
static const char *checks_name(int value) { return tc_checks_mode_name((tc_checks_mode)value); }
static const char *progress_name(int value) {
  return tc_progress_mode_name((tc_progress_mode)value);
}
static const char *exchange_name(int value) { return tc_exchange_mode_name((tc_exchange_mode)value); }
static const char *inputs_name(int value) { return tc_inputs_mode_name((tc_inputs_mode)value); }
static const char *tuning_on_error_name(int value) {
  return tc_tuning_on_error_name((tc_tuning_on_error)value);
}
static const char *layout_name(int value) {
  return value == TC_CONFIG_LAYOUT_AUTO ? "auto" : tc_layout_name((tc_layout)value);
}

static const enum_names backend_names = {0, TC_BACKEND_COUNT, backend_name};
static const enum_names variant_names = {0, TC_VARIANT_COUNT, variant_name};
static const enum_names precision_names = {0, TC_PRECISION_COUNT, precision_name};
static const enum_names checks_names = {0, TC_CHECKS_COUNT, checks_name};
static const enum_names exchange_names = {0, TC_EXCHANGE_COUNT, exchange_name};
static const enum_names inputs_names = {0, TC_INPUTS_COUNT, inputs_name};
static const enum_names tuning_on_error_names = {0, TC_TUNING_ON_ERROR_COUNT,
                                                 tuning_on_error_name};
static const enum_names progress_names = {0, TC_PROGRESS_COUNT, progress_name};
static const enum_names layout_names = {TC_CONFIG_LAYOUT_AUTO, TC_LAYOUT_COUNT, layout_name};

#define ANY {-INFINITY, INFINITY, false, false}
#define AT_LEAST(x) {(x), INFINITY, false, false}
#define ABOVE(x) {(x), INFINITY, true, false}
#define FIELD(name) offsetof(tc_config, name)

static const option options[] = {
    {"mesh", "cells", TYPE_INT64_TRIPLE, "16 16 16",
     "cells per direction (x y z) of the global box", AT_LEAST(1), NULL, FIELD(cells)},
    {"mesh", "length", TYPE_DOUBLE_TRIPLE, "1 1 1",
     "box extents (x y z): the box is [0,lx] x [0,ly] x [0,lz]", {1e-9, 1e9, false, false}, NULL,
     FIELD(length)},
    {"mesh", "distortion", TYPE_DOUBLE, "0.1",
     "smooth distortion of interior nodes, as a fraction of a cell (0: brick cells)",
     {0, 0.25, false, true}, NULL, FIELD(distortion)},
    {"element", "order", TYPE_INT64, "1", "1 = Q1 (8-node hexahedra), 2 = Q2 (27-node)",
     {1, 2, false, false}, NULL, FIELD(order)},
    {"element", "quadrature", TYPE_INT64, "0",
     "Gauss points per direction; 0 = order + 1 (exact for the mass matrix of brick cells)",
     {0, 10, false, false}, NULL, FIELD(quadrature)},
    {"physics", "kernels", TYPE_KERNELS, "all",
     "contractions to run: all, or Intrepid names separated by commas or spaces", ANY, NULL,
     FIELD(kernels)},
    {"run", "label", TYPE_STRING, "hex",
     "free text naming the run in the report and the results file", ANY, NULL, FIELD(label)},
    {"run", "backend", TYPE_ENUM, "openmp", "where the element computations run", ANY,
     &backend_names, FIELD(backend)},
    {"run", "threads", TYPE_INT64, "0",
     "OpenMP threads per rank; 0 = the runtime's default (OMP_NUM_THREADS)",
     {0, 4096, false, false}, NULL, FIELD(threads)},
    {"run", "layout", TYPE_ENUM, "auto",
     "array layout: right = cell index slowest, left = cell index fastest; "
     "auto = the backends' best (right on all of them)",
     ANY, &layout_names, FIELD(layout)},
    {"run", "variant", TYPE_ENUM, "auto",
     "contraction algorithm; auto = the backend's choice per kernel and shape; vendor = the "
     "vendor library's GEMM (FieldField, layout right: cuBLAS on cuda, libxsmm on openmp; "
     "'cublas' is read as vendor)",
     ANY, &variant_names, FIELD(variant)},
    {"run", "tuning", TYPE_STRING, "none",
     "tuning file with AUTO's variant per shape class, written for this device by "
     "tcmini-bench --tune; none = the backend's built-in rules",
     ANY, NULL, FIELD(tuning)},
    {"run", "tuning_on_error", TYPE_ENUM, "fail",
     "a run.tuning file that is missing, corrupt, for another device or names a variant the "
     "backend does not run: fail = the run stops with its error; rules = one warning, then "
     "the built-in rules",
     ANY, &tuning_on_error_names, FIELD(tuning_on_error)},
    {"run", "precision", TYPE_ENUM, "double", "floating-point type of the contractions", ANY,
     &precision_names, FIELD(precision)},
    {"run", "steps", TYPE_INT64, "2", "assembly steps; phase times are summed over them",
     AT_LEAST(1), NULL, FIELD(steps)},
    {"run", "batch_cells", TYPE_INT64, "0",
     "cells per batch of the assembly loop (the workset); 0 = as many as fit in the device's "
     "budget of batch arrays (on CPUs a quarter of the cache per core beyond L1, times the "
     "threads; on GPUs 1/16 of the memory up to 8 GiB)",
     AT_LEAST(0), NULL, FIELD(batch_cells)},
    {"run", "in_flight", TYPE_INT64, "0",
     "on GPUs, batches the device works on at once, each on a stream of its own with its own "
     "batch arrays (their assembly still in cell order, so results do not change); their "
     "phases are then timed together as the batches phase; 0 = one for the workset the loop "
     "sizes (run.batch_cells = 0), and for a workset set by run.batch_cells enough to fill "
     "the GPU, up to 8; CPU backends run one at a time",
     {0, TC_CONFIG_MAX_IN_FLIGHT, false, false}, NULL, FIELD(in_flight)},
    {"run", "roofline", TYPE_BOOL, "true",
     "measure the devices' copy bandwidth and FMA peak once (about 0.2 s on a CPU) and "
     "report each phase of the loop against them; false: the loop's model without the "
     "fractions", ANY, NULL, FIELD(roofline)},
    {"run", "gpu_sharing", TYPE_BOOL, "false",
     "let several ranks share one GPU when a node has more ranks than GPUs", ANY, NULL,
     FIELD(gpu_sharing)},
    {"run", "memory_check", TYPE_BOOL, "true",
     "refuse, before anything large is allocated, a run whose estimated memory exceeds what "
     "its ranks may use (the node's available memory, the memory cgroup's limit, ulimit -v); "
     "false = run anyway",
     ANY, NULL, FIELD(memory_check)},
    {"run", "progress", TYPE_ENUM, "auto",
     "a \"step k of n\" line on rank 0's stderr while the steps run: on, off, or auto = only "
     "when tcmini runs without an MPI launcher and its stderr is a terminal (a launcher makes "
     "every rank's output look like a terminal, even when it goes to a file)",
     ANY, &progress_names, FIELD(progress)},
    {"run", "exchange", TYPE_ENUM, "auto",
     "where the cuda backend sums shared nodes: host = node vectors copied back and summed "
     "there; device = packed and summed on the GPU, only shared values travel (via host "
     "buffers); gpu-aware = as device, with GPU buffers handed to a CUDA-aware MPI; peer = as "
     "device, the packed values copied GPU to GPU (CUDA IPC), for ranks whose neighbours all "
     "run on their node; auto = peer between the ranks that can map each other's buffers, "
     "device between the others (the CPU backends sum on the host)",
     ANY, &exchange_names, FIELD(exchange)},
    {"run", "inputs", TYPE_ENUM, "auto",
     "how the kernels get their inputs: materialised = built into memory, then contracted "
     "kernel by kernel; fused = built a few points at a time on chip and consumed there, the "
     "elasticity trio (the Tensor kernels) by one fused product and the other six by another; "
     "auto = fused on the cuda backend (materialised where run.variant names a variant or "
     "run.tuning a file, so that the library's variants run), materialised on the CPU "
     "backends (their fused products are a plain reference form, several times slower)",
     ANY, &inputs_names, FIELD(inputs)},
    {"run", "probe", TYPE_BOOL, "false",
     "AUTO times the rule's variant against the vendor library's on the first batch and keeps "
     "the faster; the choice can differ between runs, and so can results in the last bits",
     ANY, NULL, FIELD(probe)},
    {"run", "graph", TYPE_BOOL, "false",
     "on GPUs, the first step records its batches' launches as one CUDA graph (timed as the "
     "record phase) and every step replays it, without the host's cost of tens of launches a "
     "batch; false = each batch launched from the host (as fast wherever the GPU, not the "
     "host, sets a batch's pace: docs/measurements/mini-app-gpu.md)",
     ANY, NULL, FIELD(graph)},
    {"verify", "checks", TYPE_ENUM, "auto",
     "correctness checks (a failed check fails the run); auto = on for boxes of at most "
     "2000000 cells",
     ANY, &checks_names, FIELD(checks)},
    {"verify", "tolerance", TYPE_DOUBLE, "1e-9",
     "relative tolerance of the checks in double precision", {0, 1, true, true}, NULL,
     FIELD(tolerance)},
    {"verify", "tolerance_float", TYPE_DOUBLE, "1e-4",
     "relative tolerance of the checks in float precision (looser: float keeps about 7 "
     "digits, and sums over many cells lose some)",
     {0, 1, true, true}, NULL, FIELD(tolerance_float)},
    {"output", "path", TYPE_STRING, "tcmini.h5",
     "HDF5 results file, with an XDMF file for ParaView beside it; none = no file", ANY, NULL,
     FIELD(path)},
    {"output", "overwrite", TYPE_BOOL, "false",
     "replace existing output files instead of failing", ANY, NULL, FIELD(overwrite)},
    {"output", "element_matrices", TYPE_BOOL, "false",
     "also write every cell's element matrices (large)", ANY, NULL, FIELD(element_matrices)},
    {"output", "report", TYPE_STRING, "tcmini-report.yaml", "YAML run report; none = no report",
     ANY, NULL, FIELD(report)},
};

enum { NUM_OPTIONS = sizeof options / sizeof options[0] };

const char *tc_exchange_mode_name(tc_exchange_mode mode) {
  static const char *const names[TC_EXCHANGE_COUNT] = {"host", "device", "gpu-aware", "peer",
                                                                "auto"};
  return (int)mode >= 0 && mode < TC_EXCHANGE_COUNT ? names[mode] : "unknown";
}

const char *tc_inputs_mode_name(tc_inputs_mode mode) {
  static const char *const names[TC_INPUTS_COUNT] = {"auto", "materialised", "fused"};
  return (int)mode >= 0 && mode < TC_INPUTS_COUNT ? names[mode] : "unknown";
}

const char *tc_tuning_on_error_name(tc_tuning_on_error mode) {
  static const char *const names[TC_TUNING_ON_ERROR_COUNT] = {"fail", "rules"};
  return (int)mode >= 0 && mode < TC_TUNING_ON_ERROR_COUNT ? names[mode] : "unknown";
}

bool tc_config_has_tuning(const tc_config *config) {
  return strcmp(config->tuning, "none") != 0;
}

const char *tc_progress_mode_name(tc_progress_mode mode) {
  static const char *const names[TC_PROGRESS_COUNT] = {"auto", "on", "off"};
  return (int)mode >= 0 && mode < TC_PROGRESS_COUNT ? names[mode] : "unknown";
}

const char *tc_checks_mode_name(tc_checks_mode mode) {
  static const char *const names[TC_CHECKS_COUNT] = {"auto", "on", "off"};
  return (int)mode >= 0 && mode < TC_CHECKS_COUNT ? names[mode] : "unknown";
}

static void *field_of(const option *opt, tc_config *config) {
  return (char *)config + opt->offset;
}
static const void *const_field_of(const option *opt, const tc_config *config) {
  return (const char *)config + opt->offset;
}

/* ---- describing and formatting values ---- */

void tc_config_format_double(double value, char text[TC_CONFIG_DOUBLE_CHARS]) {
  int digits = 1;
  for (; digits < 17; digits++) {
    snprintf(text, TC_CONFIG_DOUBLE_CHARS, "%.*g", digits, value);
    if (strtod(text, NULL) == value)
      break;
  }
  /* Whole numbers of up to 15 digits without an exponent: 10, not 1e+01. */
  double magnitude = fabs(value);
  if (magnitude >= 1 && magnitude < 1e15) {
    int integer_digits = (int)floor(log10(magnitude)) + 1;
    if (integer_digits > digits)
      digits = integer_digits;
  }
  snprintf(text, TC_CONFIG_DOUBLE_CHARS, "%.*g", digits, value);
}

static void append_double(text_buffer *buffer, double value) {
  char text[TC_CONFIG_DOUBLE_CHARS];
  tc_config_format_double(value, text);
  append(buffer, "%s", text);
}

static void append_bounds(text_buffer *buffer, bounds range) {
  bool has_low = isfinite(range.low), has_high = isfinite(range.high);
  if (has_low && has_high) {
    append(buffer, " in %c", range.low_open ? '(' : '[');
    append_double(buffer, range.low);
    append(buffer, ", ");
    append_double(buffer, range.high);
    append(buffer, "%c", range.high_open ? ')' : ']');
  } else if (has_low) {
    append(buffer, range.low_open ? " > " : " >= ");
    append_double(buffer, range.low);
  } else if (has_high) {
    append(buffer, range.high_open ? " < " : " <= ");
    append_double(buffer, range.high);
  }
}

static void append_enum_choices(text_buffer *buffer, const enum_names *names) {
  for (int value = names->first; value < names->end; value++)
    append(buffer, "%s%s", value == names->first ? "" : "|", names->name(value));
}

/// What a value of this option must look like, e.g. "3 integers >= 1".
static void append_expectation(text_buffer *buffer, const option *opt) {
  switch (opt->type) {
  case TYPE_INT64: append(buffer, "an integer"); break;
  case TYPE_INT64_TRIPLE: append(buffer, "3 integers"); break;
  case TYPE_DOUBLE: append(buffer, "a number"); break;
  case TYPE_DOUBLE_TRIPLE: append(buffer, "3 numbers"); break;
  case TYPE_BOOL: append(buffer, "true or false (also on/off, yes/no, 1/0)"); break;
  case TYPE_ENUM:
    append(buffer, "one of ");
    append_enum_choices(buffer, opt->names);
    break;
  case TYPE_KERNELS:
    append(buffer, "all, or a list of ");
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      append(buffer, "%s%s", k ? "|" : "", tc_kernel_name((tc_kernel)k));
    break;
  case TYPE_STRING:
    append(buffer, "a non-empty UTF-8 string of at most %d bytes, without '\"' or control "
                   "characters",
           TC_CONFIG_STRING_MAX - 1);
    break;
  }
  if (opt->type == TYPE_INT64 || opt->type == TYPE_INT64_TRIPLE || opt->type == TYPE_DOUBLE ||
      opt->type == TYPE_DOUBLE_TRIPLE)
    append_bounds(buffer, opt->range);
}

/// Appends the option's value in config as deck text that parses back to it.
static void append_value(text_buffer *buffer, const option *opt, const tc_config *config) {
  const void *field = const_field_of(opt, config);
  switch (opt->type) {
  case TYPE_INT64: append(buffer, "%" PRId64, *(const int64_t *)field); break;
  case TYPE_INT64_TRIPLE: {
    const int64_t *values = field;
    append(buffer, "%" PRId64 " %" PRId64 " %" PRId64, values[0], values[1], values[2]);
    break;
  }
  case TYPE_DOUBLE: append_double(buffer, *(const double *)field); break;
  case TYPE_DOUBLE_TRIPLE:
    for (int i = 0; i < 3; i++) {
      append(buffer, i ? " " : "");
      append_double(buffer, ((const double *)field)[i]);
    }
    break;
  case TYPE_BOOL: append(buffer, *(const bool *)field ? "true" : "false"); break;
  case TYPE_ENUM: {
    int value;
    memcpy(&value, field, sizeof value);
    append(buffer, "%s", opt->names->name(value));
    break;
  }
  case TYPE_KERNELS: {
    const bool *selected = field;
    int count = 0;
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      count += selected[k];
    if (count == TC_KERNEL_COUNT) {
      append(buffer, "all");
      break;
    }
    const char *separator = "";
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      if (selected[k]) {
        append(buffer, "%s%s", separator, tc_kernel_name((tc_kernel)k));
        separator = ", ";
      }
    break;
  }
  case TYPE_STRING: append(buffer, "\"%s\"", (const char *)field); break;
  }
}

/* ---- parsing values ---- */

static bool parse_int64(const char *text, int64_t *value) {
  char *end;
  errno = 0;
  long long parsed = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE)
    return false;
  *value = (int64_t)parsed;
  return true;
}

static bool parse_double(const char *text, double *value) {
  char *end;
  errno = 0;
  double parsed = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(parsed))
    return false;
  *value = parsed;
  return true;
}

static bool in_bounds(double value, bounds range) {
  if (value < range.low || (range.low_open && value == range.low))
    return false;
  return !(value > range.high || (range.high_open && value == range.high));
}

static bool parse_bool(const char *text, bool *value) {
  static const char *const yes[] = {"true", "on", "yes", "1"};
  static const char *const no[] = {"false", "off", "no", "0"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(text, yes[i]) == 0) {
      *value = true;
      return true;
    }
    if (strcasecmp(text, no[i]) == 0) {
      *value = false;
      return true;
    }
  }
  return false;
}

enum { MAX_TOKENS = 16 };

/// Splits copy (modified in place) at commas and whitespace; returns the
/// number of tokens, MAX_TOKENS + 1 when there are more, or -1 when a comma
/// separates nothing ("4,,4,4", a leading or trailing comma).
static int split(char *copy, char *tokens[MAX_TOKENS]) {
  int count = 0;
  char *p = copy;
  while (*p) {
    int commas = 0;
    while (*p && (isspace((unsigned char)*p) || *p == ',')) {
      commas += *p == ',';
      *p++ = '\0';
    }
    if (commas > (count > 0 && *p ? 1 : 0))
      return -1;
    if (!*p)
      break;
    if (count == MAX_TOKENS)
      return MAX_TOKENS + 1;
    tokens[count++] = p;
    while (*p && !isspace((unsigned char)*p) && *p != ',')
      p++;
  }
  return count;
}

static bool parse_numbers(const option *opt, const char *text, int wanted, void *field) {
  char copy[TC_CONFIG_STRING_MAX];
  if (strlen(text) >= sizeof copy)
    return false;
  strcpy(copy, text);
  char *tokens[MAX_TOKENS];
  if (split(copy, tokens) != wanted)
    return false;
  for (int i = 0; i < wanted; i++) {
    if (opt->type == TYPE_INT64 || opt->type == TYPE_INT64_TRIPLE) {
      int64_t value;
      if (!parse_int64(tokens[i], &value) || !in_bounds((double)value, opt->range))
        return false;
      ((int64_t *)field)[i] = value;
    } else {
      double value;
      if (!parse_double(tokens[i], &value) || !in_bounds(value, opt->range))
        return false;
      ((double *)field)[i] = value;
    }
  }
  return true;
}

static bool parse_enum(const enum_names *names, const char *text, int *value) {
  for (int v = names->first; v < names->end; v++)
    if (strcasecmp(text, names->name(v)) == 0) {
      *value = v;
      return true;
    }
  /* The variant's other name ("cublas" for vendor), as tc_variant_from_name reads it. */
  if (names == &variant_names) {
    tc_variant variant;
    if (tc_variant_from_name(text, &variant) == TC_SUCCESS) {
      *value = (int)variant;
      return true;
    }
    tc_error_clear(); /* the caller reports the whole value instead */
  }
  return false;
}

static bool parse_kernels(const char *text, bool selected[TC_KERNEL_COUNT]) {
  char copy[TC_CONFIG_STRING_MAX];
  if (strlen(text) >= sizeof copy)
    return false;
  strcpy(copy, text);
  char *tokens[MAX_TOKENS];
  int count = split(copy, tokens);
  if (count < 1 || count > MAX_TOKENS)
    return false;
  bool chosen[TC_KERNEL_COUNT] = {false};
  if (count == 1 && strcasecmp(tokens[0], "all") == 0) {
    for (int k = 0; k < TC_KERNEL_COUNT; k++)
      chosen[k] = true;
  } else {
    for (int i = 0; i < count; i++) {
      tc_kernel kernel;
      if (tc_kernel_from_name(tokens[i], &kernel) != TC_SUCCESS) {
        tc_error_clear(); /* the caller reports the whole value instead */
        return false;
      }
      chosen[kernel] = true;
    }
  }
  memcpy(selected, chosen, sizeof chosen);
  return true;
}

/// True if text is well-formed UTF-8 (so the report's YAML stays valid).
static bool valid_utf8(const unsigned char *text) {
  while (*text) {
    int continuation = *text < 0x80 ? 0 : (*text >> 5) == 0x6 ? 1 : (*text >> 4) == 0xe ? 2
                                                     : (*text >> 3) == 0x1e ? 3 : -1;
    if (continuation < 0)
      return false;
    text++;
    for (int i = 0; i < continuation; i++, text++)
      if ((*text & 0xc0) != 0x80)
        return false;
  }
  return true;
}

static bool parse_string(const char *text, char *field) {
  size_t length = strlen(text);
  if (length == 0 || length >= TC_CONFIG_STRING_MAX || !valid_utf8((const unsigned char *)text))
    return false;
  for (size_t i = 0; i < length; i++)
    if (text[i] == '"' || iscntrl((unsigned char)text[i]))
      return false;
  memcpy(field, text, length + 1);
  return true;
}

/// Parses text into the option's field of config; where ("file:line" or
/// "command line: '...'") starts the error message.
static tc_err set_value(const option *opt, const char *where, const char *text,
                        tc_config *config) {
  void *field = field_of(opt, config);
  bool parsed = false;
  switch (opt->type) {
  case TYPE_INT64: parsed = parse_numbers(opt, text, 1, field); break;
  case TYPE_INT64_TRIPLE: parsed = parse_numbers(opt, text, 3, field); break;
  case TYPE_DOUBLE: parsed = parse_numbers(opt, text, 1, field); break;
  case TYPE_DOUBLE_TRIPLE: parsed = parse_numbers(opt, text, 3, field); break;
  case TYPE_BOOL: parsed = parse_bool(text, field); break;
  case TYPE_ENUM: {
    int value;
    parsed = parse_enum(opt->names, text, &value);
    if (parsed)
      memcpy(field, &value, sizeof value);
    break;
  }
  case TYPE_KERNELS: parsed = parse_kernels(text, field); break;
  case TYPE_STRING: parsed = parse_string(text, field); break;
  }
  if (parsed)
    return TC_SUCCESS;
  text_buffer expected = {0};
  append_expectation(&expected, opt);
  tc_err err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                              "%s: [%s] %s: expected %s, got '%s'", where, opt->section,
                              opt->key, expected.failed ? "a valid value" : expected.data,
                              text);
  free(expected.data);
  return err;
}

/* ---- applying a deck and overrides ---- */

enum { WHERE_MAX = TC_CONFIG_STRING_MAX + 64 };

/// Where each option got its value, for messages from cross-key checks.
typedef struct {
  char where[NUM_OPTIONS][WHERE_MAX];
  int file_line[NUM_OPTIONS]; ///< line that set it in the deck, 0 if none
} provenance;

static bool section_exists(const char *section) {
  for (int i = 0; i < NUM_OPTIONS; i++)
    if (strcasecmp(options[i].section, section) == 0)
      return true;
  return false;
}

static int find_option(const char *section, const char *key) {
  for (int i = 0; i < NUM_OPTIONS; i++)
    if (strcasecmp(options[i].section, section) == 0 && strcasecmp(options[i].key, key) == 0)
      return i;
  return -1;
}

static tc_err apply_deck(const char *origin, const char *text, tc_config *config,
                         provenance *from) {
  tc_ini *ini;
  TC_CALL(tc_ini_parse(origin, text, &ini));
  tc_err err = TC_SUCCESS;
  for (int64_t i = 0; i < tc_ini_count(ini) && err == TC_SUCCESS; i++) {
    const tc_ini_entry *entry = tc_ini_entry_at(ini, i);
    char where[WHERE_MAX];
    snprintf(where, sizeof where, "%s:%d", origin, entry->line);
    if (!entry->key) {
      if (!section_exists(entry->section))
        err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: unknown section [%s]", where, entry->section);
      continue;
    }
    int index = find_option(entry->section, entry->key);
    if (index < 0)
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s: unknown key '%s' in [%s]", where, entry->key, entry->section);
    else if (from->file_line[index] != 0)
      err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s: duplicate key '%s' in [%s] (first set at line %d)", where,
                           entry->key, entry->section, from->file_line[index]);
    else {
      err = set_value(&options[index], where, entry->value, config);
      from->file_line[index] = entry->line;
      snprintf(from->where[index], WHERE_MAX, "%s", where);
    }
  }
  tc_ini_destroy(&ini);
  return err;
}

static tc_err apply_override(const char *argument, tc_config *config, provenance *from) {
  char where[WHERE_MAX];
  snprintf(where, sizeof where, "command line: '%s'", argument);
  char copy[WHERE_MAX];
  TC_CHECK(strlen(argument) < sizeof copy, TC_ERR_INPUT, "%s: too long", where);
  strcpy(copy, argument);
  char *equals = strchr(copy, '=');
  char *dot = equals ? memchr(copy, '.', (size_t)(equals - copy)) : NULL;
  TC_CHECK(dot, TC_ERR_INPUT, "%s: expected section.key=value", where);
  *equals = '\0';
  *dot = '\0';
  char *section = tc_ini_unquote(copy), *key = tc_ini_unquote(dot + 1);
  char *value = tc_ini_unquote(equals + 1);
  TC_CHECK(section && key && section[0] && key[0], TC_ERR_INPUT,
           "%s: expected section.key=value", where);
  TC_CHECK(section_exists(section), TC_ERR_INPUT, "%s: unknown section [%s]", where, section);
  int index = find_option(section, key);
  TC_CHECK(index >= 0, TC_ERR_INPUT, "%s: unknown key '%s' in [%s]", where, key, section);
  TC_CHECK(value, TC_ERR_INPUT, "%s: [%s] %s: unterminated quote or text after the closing "
           "quote", where, options[index].section, options[index].key);
  TC_CALL(set_value(&options[index], where, value, config));
  snprintf(from->where[index], WHERE_MAX, "%s", where);
  return TC_SUCCESS;
}

/* ---- cross-key validation ---- */

static int option_index(size_t offset) {
  for (int i = 0; i < NUM_OPTIONS; i++)
    if (options[i].offset == offset)
      return i;
  return -1;
}

/// product *= factor, false when it overflows int64.
static bool multiply(int64_t *product, int64_t factor) {
  return !__builtin_mul_overflow(*product, factor, product);
}

static tc_err validate(const tc_config *config, const provenance *from) {
  const char *cells_from = from->where[option_index(FIELD(cells))];
  /* The box's cells, nodes and its largest arrays must be countable in int64
   * bytes: coordinates (3 doubles per node) and element matrices (one
   * nodes_per_cell^2 block of doubles per cell). */
  int64_t num_cells = 1, num_nodes = 1;
  int64_t nodes_per_cell = (config->order + 1) * (config->order + 1) * (config->order + 1);
  bool fits = true;
  for (int d = 0; d < 3; d++) {
    fits = fits && multiply(&num_cells, config->cells[d]);
    int64_t nodes_along = config->order;
    fits = fits && multiply(&nodes_along, config->cells[d]) &&
           !__builtin_add_overflow(nodes_along, 1, &nodes_along) &&
           multiply(&num_nodes, nodes_along);
  }
  int64_t coordinate_bytes = num_nodes, matrix_bytes = num_cells;
  fits = fits && multiply(&coordinate_bytes, 3 * (int64_t)sizeof(double)) &&
         multiply(&matrix_bytes, nodes_per_cell * nodes_per_cell * (int64_t)sizeof(double));
  TC_CHECK(fits, TC_ERR_INPUT,
           "%s: [mesh] cells: %" PRId64 " x %" PRId64 " x %" PRId64 " cells of order %" PRId64
           " are too many: their cell, node or byte counts overflow int64",
           cells_from, config->cells[0], config->cells[1], config->cells[2], config->order);

  if (!tc_contract_backend_get(config->backend)) {
    text_buffer available = {0};
    for (int b = 0; b < TC_BACKEND_COUNT; b++)
      if (tc_contract_backend_get((tc_backend_kind)b))
        append(&available, "%s%s", available.length ? ", " : "",
               tc_backend_name((tc_backend_kind)b));
    tc_err err = tc_error_raise(
        TC_ERR_INPUT, __FILE__, __LINE__, __func__,
        "%s: [run] backend: '%s' is not compiled into this build (available: %s)",
        from->where[option_index(FIELD(backend))], tc_backend_name(config->backend),
        available.data && !available.failed ? available.data : "none");
    free(available.data);
    return err;
  }
  TC_CHECK(!tc_config_has_tuning(config) || config->backend != TC_BACKEND_SERIAL, TC_ERR_INPUT,
           "%s: [run] tuning: the serial backend runs the reference only and takes no tuning "
           "file (use run.backend = openmp or cuda, or run.tuning = none)",
           from->where[option_index(FIELD(tuning))]);
  const char *exchange_from = from->where[option_index(FIELD(exchange))];
  TC_CHECK(config->exchange == TC_EXCHANGE_HOST || config->exchange == TC_EXCHANGE_AUTO ||
               config->backend == TC_BACKEND_CUDA,
           TC_ERR_INPUT,
           "%s: [run] exchange: '%s' sums on the GPU and needs run.backend = cuda (got %s)",
           exchange_from, tc_exchange_mode_name(config->exchange),
           tc_backend_name(config->backend));
  TC_CHECK(config->exchange != TC_EXCHANGE_GPU_AWARE || tc_parallel_cuda_aware(), TC_ERR_INPUT,
           "%s: [run] exchange: 'gpu-aware' needs a CUDA-aware MPI, and this MPI library is not "
           "one (MPIX_Query_cuda_support); use run.exchange = device",
           exchange_from);
  return TC_SUCCESS;
}

/* ---- public entry points ---- */

tc_err tc_config_defaults(tc_config *config) {
  memset(config, 0, sizeof *config);
  for (int i = 0; i < NUM_OPTIONS; i++)
    TC_CALL(set_value(&options[i], "option table default", options[i].default_text, config));
  return TC_SUCCESS;
}

tc_err tc_config_parse(const char *origin, const char *text, int num_overrides,
                       char **overrides, tc_config *config) {
  TC_CALL(tc_config_defaults(config));
  provenance *from;
  TC_CALLOC(from, 1);
  for (int i = 0; i < NUM_OPTIONS; i++)
    snprintf(from->where[i], WHERE_MAX, "default");
  /* a UTF-8 byte-order mark, which some editors put first, is not text */
  if (text && strncmp(text, "\xEF\xBB\xBF", 3) == 0)
    text += 3;
  tc_err err = text ? apply_deck(origin ? origin : "deck", text, config, from) : TC_SUCCESS;
  for (int i = 0; i < num_overrides && err == TC_SUCCESS; i++)
    err = apply_override(overrides[i], config, from);
  if (err == TC_SUCCESS)
    err = validate(config, from);
  free(from);
  return err;
}

/// Reads a whole deck file into a NUL-terminated string (rank 0's part of
/// tc_config_load).
static tc_err read_deck(const char *path, char **text, int64_t *length) {
  *text = NULL;
  FILE *file = fopen(path, "rb");
  TC_CHECK(file, TC_ERR_IO, "cannot open deck '%s': %s", path, strerror(errno));
  char *buffer = malloc(DECK_MAX_BYTES + 1);
  if (!buffer) {
    fclose(file);
    TC_FAIL(TC_ERR_MEMORY, "out of memory reading deck '%s'", path);
  }
  size_t got = fread(buffer, 1, DECK_MAX_BYTES + 1, file);
  int read_errno = ferror(file) ? errno : 0;
  fclose(file);
  tc_err err = TC_SUCCESS;
  if (read_errno != 0)
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__, "cannot read deck '%s': %s",
                         path, strerror(read_errno));
  else if (got > DECK_MAX_BYTES)
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "deck '%s' is larger than %d bytes: is it a deck?", path,
                         DECK_MAX_BYTES);
  else if (memchr(buffer, '\0', got))
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "deck '%s' contains a NUL byte: is it a text file?", path);
  if (err != TC_SUCCESS) {
    free(buffer);
    return err;
  }
  buffer[got] = '\0';
  *text = buffer;
  *length = (int64_t)got;
  return TC_SUCCESS;
}

/// Agrees on err over comm. The deck is the same text on every rank, so
/// when rank 0's error is the one agreed on it speaks for all: drop the
/// "rank 0: " prefix that tc_parallel_agree adds, so that a deck error reads
/// the same as in a serial run.
static tc_err agree_on_deck(MPI_Comm comm, tc_err err) {
  err = tc_parallel_agree(comm, err);
  const char *prefix = "rank 0: ";
  if (err != TC_SUCCESS && strncmp(tc_error_message(), prefix, strlen(prefix)) == 0) {
    char message[1024], origin[256];
    snprintf(message, sizeof message, "%s", tc_error_message() + strlen(prefix));
    snprintf(origin, sizeof origin, "%s", tc_error_origin());
    tc_error_adopt(err, message, origin);
  }
  return err;
}

/// Rank 0's check that the files a run writes are distinct from each other
/// and from the deck it reads (part of tc_config_load): a report written
/// over the results file, its XDMF companion or the pair a run whose checks
/// fail writes instead (tc_file_failed_name), or any of them over the deck,
/// would replace one output with another, or the input with an output.
static tc_err check_file_names(const tc_config *config, const char *deck) {
  const bool results = strcmp(config->path, "none") != 0;
  const bool report = strcmp(config->report, "none") != 0;
  enum { NAME_BYTES = TC_CONFIG_STRING_MAX + 32 };
  char xdmf[NAME_BYTES] = "", failed[NAME_BYTES] = "", failed_xdmf[NAME_BYTES] = "";
  if (results) {
    (void)tc_file_xdmf_companion(config->path, xdmf, sizeof xdmf);
    (void)tc_file_failed_name(config->path, failed, sizeof failed);
    (void)tc_file_xdmf_companion(failed, failed_xdmf, sizeof failed_xdmf);
  }
  if (report && results) {
    TC_CHECK(!tc_file_same(config->report, config->path), TC_ERR_INPUT,
             "[output] report: '%s' is the results file of output.path; choose another "
             "output.report",
             config->report);
    TC_CHECK(!tc_file_same(config->report, xdmf), TC_ERR_INPUT,
             "[output] report: '%s' is the XDMF file written beside output.path '%s'; choose "
             "another output.report",
             config->report, config->path);
    TC_CHECK(!tc_file_same(config->report, failed) && !tc_file_same(config->report, failed_xdmf),
             TC_ERR_INPUT,
             "[output] report: '%s' is where a run whose checks fail writes its results instead "
             "of output.path '%s'; choose another output.report",
             config->report, config->path);
  }
  if (deck == NULL)
    return TC_SUCCESS;
  TC_CHECK(!report || !tc_file_same(config->report, deck), TC_ERR_INPUT,
           "[output] report: '%s' is the input deck; choose another output.report",
           config->report);
  TC_CHECK(!results || (!tc_file_same(config->path, deck) && !tc_file_same(xdmf, deck)),
           TC_ERR_INPUT,
           "[output] path: '%s' (or its XDMF file '%s') is the input deck; choose another "
           "output.path",
           config->path, xdmf);
  TC_CHECK(!results || (!tc_file_same(failed, deck) && !tc_file_same(failed_xdmf, deck)),
           TC_ERR_INPUT,
           "[output] path: a run whose checks fail writes its results to '%s' instead of "
           "'%s', and that is the input deck; choose another output.path",
           failed, config->path);
  return TC_SUCCESS;
}

tc_err tc_config_load(MPI_Comm comm, const char *path, int num_overrides, char **overrides,
                      tc_config *config) {
  char *text = NULL;
  int64_t length = 0;
  tc_err err = TC_SUCCESS;
  if (path && tc_rank(comm) == 0)
    err = read_deck(path, &text, &length);
  TC_CALL(agree_on_deck(comm, err));
  if (path) {
    TC_CALL(tc_broadcast(comm, &length, sizeof length, 0));
    if (tc_rank(comm) != 0) {
      text = malloc((size_t)length + 1);
      err = text ? TC_SUCCESS
                 : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                  "out of memory receiving a %" PRId64 "-byte deck", length);
    }
    err = agree_on_deck(comm, err);
    if (err == TC_SUCCESS)
      err = tc_broadcast(comm, text, length + 1, 0);
    if (err != TC_SUCCESS) {
      free(text);
      return err;
    }
  }
  err = tc_config_parse(path, text, num_overrides, overrides, config);
  free(text);
  if (err == TC_SUCCESS && tc_rank(comm) == 0)
    err = check_file_names(config, path);
  return agree_on_deck(comm, err);
}

tc_err tc_config_print_help(FILE *stream) {
  text_buffer help = {0};
  append(&help, "Input deck keys, each with its default, the values it takes and its meaning.\n"
                "Set them in the deck ([section], then key = value; '#' or "
                "';' start a comment),\nor after the deck on the command line as "
                "section.key=value (e.g. mesh.cells=32,32,32 run.backend=serial).\n");
  for (int i = 0; i < NUM_OPTIONS; i++) {
    const option *opt = &options[i];
    if (i == 0 || strcmp(opt->section, options[i - 1].section) != 0)
      append(&help, "\n[%s]\n", opt->section);
    append(&help, "  %s.%s = %s\n      ", opt->section, opt->key, opt->default_text);
    append_expectation(&help, opt);
    append(&help, "\n      %s\n", opt->doc);
  }
  char *text;
  TC_CALL(finish(&help, &text));
  int written = fputs(text, stream);
  free(text);
  TC_CHECK(written >= 0, TC_ERR_IO, "cannot write the help text: %s", strerror(errno));
  return TC_SUCCESS;
}

tc_err tc_config_deck_string(const tc_config *config, char **text) {
  text_buffer deck = {0};
  append(&deck, "# tcmini input deck: every key, after comments giving its meaning, the "
                "values it takes\n# and its default.\n");
  for (int i = 0; i < NUM_OPTIONS; i++) {
    const option *opt = &options[i];
    if (i == 0 || strcmp(opt->section, options[i - 1].section) != 0)
      append(&deck, "\n[%s]\n", opt->section);
    append(&deck, "# %s\n# ", opt->doc);
    append_expectation(&deck, opt);
    append(&deck, "; default %s\n%s = ", opt->default_text, opt->key);
    append_value(&deck, opt, config);
    append(&deck, "\n");
  }
  return finish(&deck, text);
}

tc_err tc_config_print_deck(FILE *stream, const tc_config *config) {
  char *text;
  TC_CALL(tc_config_deck_string(config, &text));
  int written = fputs(text, stream);
  free(text);
  TC_CHECK(written >= 0, TC_ERR_IO, "cannot write the deck: %s", strerror(errno));
  return TC_SUCCESS;
}

tc_inputs_mode tc_config_inputs(const tc_config *config) {
  if (config->inputs != TC_INPUTS_AUTO)
    return config->inputs;
  // On an H100 the fused elasticity made the whole loop 2.2x (Q1, 128^3)
  // and 1.4-1.9x (Q2, 32^3, 5 points) faster than the materialised inputs,
  // and on an H200 fusing the other six kernels too 1.45x more
  // (docs/measurements/mini-app-gpu.md); the CPU's fused products have not
  // been made fast. A variant the deck names, or a tuning file's, runs only
  // on materialised inputs: the fused products are no variant of the library.
  const bool library_asked = config->variant != TC_VARIANT_AUTO || tc_config_has_tuning(config);
  return config->backend == TC_BACKEND_CUDA && !library_asked ? TC_INPUTS_FUSED
                                                              : TC_INPUTS_MATERIALISED;
}

tc_exchange_mode tc_config_exchange(const tc_config *config) {
  if (config->exchange != TC_EXCHANGE_AUTO)
    return config->exchange;
  // On 4 H100s, weak scaling at 96^3 cells a GPU: 0.94-0.96 with the device
  // exchange, 0.64 with the host's, whose node vectors come back whole every
  // step; the peer copies take the messages off the host
  // (docs/measurements/scaling.md). Whether they can run is known only once
  // the ranks have tried to map each other's buffers.
  return config->backend == TC_BACKEND_CUDA ? TC_EXCHANGE_AUTO : TC_EXCHANGE_HOST;
}

tc_layout tc_config_layout(const tc_config *config) {
  if (config->layout != TC_CONFIG_LAYOUT_AUTO)
    return (tc_layout)config->layout;
  // Right on every backend. On an H200 the CUDA loop runs 1.2-1.45x faster
  // in layout right than in left, Q1 (64^3, 128^3) and Q2
  // (docs/measurements/mini-app-gpu.md); it ran left until its inputs were
  // built in tiles.
  return TC_LAYOUT_RIGHT;
}

int tc_config_quadrature(const tc_config *config) {
  return (int)(config->quadrature ? config->quadrature : config->order + 1);
}

bool tc_config_checks_enabled(const tc_config *config) {
  if (config->checks != TC_CHECKS_AUTO)
    return config->checks == TC_CHECKS_ON;
  int64_t num_cells = config->cells[0] * config->cells[1] * config->cells[2];
  return num_cells <= TC_CHECKS_AUTO_MAX_CELLS;
}

double tc_config_tolerance(const tc_config *config) {
  return config->precision == TC_FLOAT ? config->tolerance_float : config->tolerance;
}

int tc_config_num_kernels(const tc_config *config) {
  int count = 0;
  for (int k = 0; k < TC_KERNEL_COUNT; k++)
    count += config->kernels[k];
  return count;
}
