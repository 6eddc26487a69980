/* tc_tuning: the tuning file (tc_tuning.h): classes of shapes and their
 * buckets, the reader with its one-line errors, the lookup, and the writer
 * (a temporary file renamed over the target, so a failed write destroys
 * nothing). */
#define _POSIX_C_SOURCE 200809L
#include "tc_tuning.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_contract_backend.h"

/// A tuning file is a page or two of text; this catches a wrong path.
enum { TUNING_MAX_BYTES = 1 << 20, TUNING_MAX_ENTRIES = 4096, LINE_MAX_CHARS = 1024 };

struct tc_tuning {
  tc_backend_kind backend;
  char device[256];
  char origin[512];
  int count;
  tc_tuning_entry *entries;
  int *lines; ///< the line of each entry, for messages
};

/* ---- classes ------------------------------------------------------------- */

/* The power-of-two bucket of value >= 1: [1,1], [2,2], [3,4], [5,8], ... */
static void bucket_of(int64_t value, int64_t *low, int64_t *high) {
  if (value <= 1) {
    *low = *high = 1;
    return;
  }
  int64_t top = 2;
  while (top < value && top <= INT64_MAX / 2)
    top *= 2;
  *low = top / 2 + 1;
  *high = top;
}

/* The sizes a class is keyed on, of a normalized shape. */
static void class_sizes(const tc_contraction *shape, int64_t sizes[TC_TUNING_SIZES]) {
  sizes[TC_TUNING_ROWS] = tc_kernel_is_data_data(shape->kernel) ? 1 : shape->num_left_fields;
  sizes[TC_TUNING_COLS] = tc_kernel_is_field_field(shape->kernel) ? shape->num_right_fields : 1;
  sizes[TC_TUNING_LENGTH] = tc_contraction_length(shape);
}

static bool one_data_point(const tc_contraction *shape) {
  return tc_kernel_is_data_field(shape->kernel) && shape->num_data_points == 1;
}

void tc_tuning_class_of(const tc_contraction *shape, tc_tuning_entry *entry) {
  tc_contraction copy = *shape;
  tc_contraction_normalize(&copy);
  memset(entry, 0, sizeof *entry);
  entry->kernel = copy.kernel;
  entry->layout = copy.layout;
  entry->precision = copy.precision;
  entry->one_data_point = one_data_point(&copy);
  int64_t sizes[TC_TUNING_SIZES];
  class_sizes(&copy, sizes);
  for (int s = 0; s < TC_TUNING_SIZES; ++s)
    bucket_of(sizes[s], &entry->low[s], &entry->high[s]);
  entry->variant = TC_VARIANT_AUTO;
}

static bool same_family(const tc_tuning_entry *a, const tc_tuning_entry *b) {
  return a->kernel == b->kernel && a->layout == b->layout && a->precision == b->precision &&
         a->one_data_point == b->one_data_point;
}

bool tc_tuning_entry_covers(const tc_tuning_entry *entry, const tc_contraction *shape) {
  if (entry->kernel != shape->kernel || entry->layout != shape->layout ||
      entry->precision != shape->precision || entry->one_data_point != one_data_point(shape))
    return false;
  int64_t sizes[TC_TUNING_SIZES];
  class_sizes(shape, sizes);
  for (int s = 0; s < TC_TUNING_SIZES; ++s)
    if (sizes[s] < entry->low[s] || sizes[s] > entry->high[s])
      return false;
  return true;
}

static bool overlap(const tc_tuning_entry *a, const tc_tuning_entry *b) {
  if (!same_family(a, b))
    return false;
  for (int s = 0; s < TC_TUNING_SIZES; ++s)
    if (a->high[s] < b->low[s] || b->high[s] < a->low[s])
      return false;
  return true;
}

/* ---- keys ----------------------------------------------------------------- */

/* The size keys of a kernel family, by TC_TUNING_* index ("" where unused). */
static const char *size_key(tc_kernel kernel, int size) {
  static const char *const field_field[TC_TUNING_SIZES] = {"L", "R", "K"};
  static const char *const data_field[TC_TUNING_SIZES] = {"F", "", "K"};
  static const char *const data_data[TC_TUNING_SIZES] = {"", "", "K"};
  return tc_kernel_is_field_field(kernel) ? field_field[size]
         : tc_kernel_is_data_field(kernel) ? data_field[size]
                                           : data_data[size];
}

/* A shape of the class at its low or high corner (one cell), with the
 * contracted length K split as P * D1*D2 = P * dims (dims must divide K and
 * suit the kernel's tensor rank). False when that split does not exist. */
static bool corner_shape(const tc_tuning_entry *e, bool high, int64_t dim1, int64_t dim2,
                         tc_contraction *shape) {
  const int64_t *sizes = high ? e->high : e->low;
  const int rank = tc_kernel_tensor_rank(e->kernel);
  if ((rank < 1 && dim1 != 1) || (rank < 2 && dim2 != 1) ||
      sizes[TC_TUNING_LENGTH] % (dim1 * dim2) != 0)
    return false;
  *shape = (tc_contraction){.kernel = e->kernel, .num_cells = 1, .layout = e->layout,
                            .precision = e->precision, .dim1 = dim1, .dim2 = dim2,
                            .num_points = sizes[TC_TUNING_LENGTH] / (dim1 * dim2)};
  if (tc_kernel_is_field_field(e->kernel)) {
    shape->num_left_fields = sizes[TC_TUNING_ROWS];
    shape->num_right_fields = sizes[TC_TUNING_COLS];
  } else if (tc_kernel_is_data_field(e->kernel)) {
    shape->num_left_fields = sizes[TC_TUNING_ROWS];
    shape->num_data_points = e->one_data_point ? 1 : shape->num_points;
  }
  tc_contraction_normalize(shape);
  return true;
}

/* Whether the backend runs the entry's variant at a corner of its class, for
 * some split of K into points and tensor dimensions (D1*D2 of 1, 2, 3, 4 or
 * 9: a variant may need a team of D1*D2 threads). */
static bool runs_at_corner(const tc_tuning_entry *e, const tc_contract_backend *backend,
                           bool high, tc_contraction *tried) {
  static const int64_t splits[][2] = {{1, 1}, {2, 1}, {3, 1}, {2, 2}, {3, 3}};
  bool any = false;
  for (size_t i = 0; i < sizeof splits / sizeof splits[0]; ++i) {
    tc_contraction shape;
    if (!corner_shape(e, high, splits[i][0], splits[i][1], &shape))
      continue;
    if (!any)
      *tried = shape;
    any = true;
    if (backend->supports(&shape, e->variant))
      return true;
  }
  return false;
}

/* Why the entry is not valid for backend, written to why; false if it is. */
static bool entry_invalid(const tc_tuning_entry *e, const tc_contract_backend *backend,
                          char *why, size_t capacity) {
  if (e->kernel < 0 || e->kernel >= TC_KERNEL_COUNT || e->layout < 0 ||
      e->layout >= TC_LAYOUT_COUNT || e->precision < 0 || e->precision >= TC_PRECISION_COUNT) {
    snprintf(why, capacity, "unknown kernel, layout or precision");
    return true;
  }
  if (e->variant <= TC_VARIANT_AUTO || e->variant >= TC_VARIANT_COUNT) {
    snprintf(why, capacity, "an entry must name a variant other than auto");
    return true;
  }
  for (int s = 0; s < TC_TUNING_SIZES; ++s) {
    const char *key = size_key(e->kernel, s);
    if (e->low[s] < 1 || e->high[s] < e->low[s] || (key[0] == '\0' && e->high[s] != 1)) {
      snprintf(why, capacity, "bad range %lld-%lld of %s", (long long)e->low[s],
               (long long)e->high[s], key[0] ? key : "an unused size");
      return true;
    }
  }
  tc_contraction low, high;
  corner_shape(e, false, 1, 1, &low);
  corner_shape(e, true, 1, 1, &high);
  if (tc_contraction_validate(&low) != TC_SUCCESS || tc_contraction_validate(&high) != TC_SUCCESS) {
    snprintf(why, capacity, "the class's sizes are out of range: %s", tc_error_message());
    tc_error_clear();
    return true;
  }
  /* Named for the class, the variant must run at one end of it at least; a
   * shape inside that it does not run on gets the backend's rules. */
  if (!runs_at_corner(e, backend, false, &low) && !runs_at_corner(e, backend, true, &high)) {
    const char *refusal =
        e->variant == TC_VARIANT_VENDOR ? tc_contract_vendor_refusal(backend, &low) : NULL;
    snprintf(why, capacity,
             "the %s backend does not run variant '%s' on %s (%s layout, %s) at either end of "
             "this class%s%s",
             tc_backend_name(backend->kind), tc_variant_name(e->variant),
             tc_kernel_name(e->kernel), tc_layout_name(e->layout),
             tc_precision_name(e->precision), refusal ? ": " : "", refusal ? refusal : "");
    return true;
  }
  return false;
}

bool tc_tuning_entry_check(tc_backend_kind backend, const tc_tuning_entry *entry, char *why,
                           size_t capacity) {
  const tc_contract_backend *table = tc_contract_backend_get(backend);
  if (table == NULL) {
    snprintf(why, capacity, "the %s backend is not compiled into this build",
             tc_backend_name(backend));
    return false;
  }
  return !entry_invalid(entry, table, why, capacity);
}

/* ---- reading ---------------------------------------------------------------- */

/* Raises TC_ERR_INPUT "origin:line: message". */
__attribute__((format(printf, 3, 4))) static tc_err
parse_error(const char *origin, int line, const char *fmt, ...) {
  char message[768];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  tc_error_clear();
  if (line > 0)
    return tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__, "%s:%d: %s", origin, line,
                          message);
  return tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__, "%s: %s", origin, message);
}

/* Cuts a line at '#' and trims blanks on both ends, in place. */
static char *trim_line(char *line) {
  char *hash = strchr(line, '#');
  if (hash)
    *hash = '\0';
  while (isspace((unsigned char)*line))
    ++line;
  size_t length = strlen(line);
  while (length > 0 && isspace((unsigned char)line[length - 1]))
    line[--length] = '\0';
  return line;
}

static bool parse_count(const char *text, int64_t *value) {
  if (!isdigit((unsigned char)*text))
    return false;
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || parsed < 1)
    return false;
  *value = parsed;
  return true;
}

/* "low-high" or "n". */
static bool parse_range(const char *text, int64_t *low, int64_t *high) {
  char copy[64];
  if (strlen(text) >= sizeof copy)
    return false;
  strcpy(copy, text);
  char *dash = strchr(copy, '-');
  if (dash == NULL) {
    if (!parse_count(copy, low))
      return false;
    *high = *low;
    return true;
  }
  *dash = '\0';
  return parse_count(copy, low) && parse_count(dash + 1, high) && *low <= *high;
}

/* The keys of an entry line, each at most once. */
enum { KEY_KERNEL, KEY_LAYOUT, KEY_PRECISION, KEY_L, KEY_R, KEY_F, KEY_K, KEY_DATA, KEY_VARIANT,
       KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {"kernel", "layout", "precision", "L", "R",
                                                 "F",      "K",      "data",      "variant"};

/* Parses one entry line (trimmed, non-empty) into *e. */
static tc_err parse_entry(const char *origin, int line, char *text, tc_tuning_entry *e) {
  const char *values[KEY_COUNT] = {NULL};
  char *save = NULL;
  for (char *token = strtok_r(text, " \t", &save); token != NULL;
       token = strtok_r(NULL, " \t", &save)) {
    char *equals = strchr(token, '=');
    if (equals == NULL || equals == token || equals[1] == '\0')
      return parse_error(origin, line, "expected key=value, got '%s'", token);
    *equals = '\0';
    int key = -1;
    for (int k = 0; k < KEY_COUNT; ++k)
      if (strcmp(token, key_names[k]) == 0)
        key = k;
    if (key < 0)
      return parse_error(origin, line,
                         "unknown key '%s' (expected kernel, layout, precision, L, R, F, K, "
                         "data, variant)",
                         token);
    if (values[key] != NULL)
      return parse_error(origin, line, "key '%s' given twice", token);
    values[key] = equals + 1;
  }
  for (int k = KEY_KERNEL; k <= KEY_PRECISION; ++k)
    if (values[k] == NULL)
      return parse_error(origin, line, "no %s= on the line", key_names[k]);
  if (values[KEY_VARIANT] == NULL)
    return parse_error(origin, line, "no variant= on the line");
  memset(e, 0, sizeof *e);
  if (tc_kernel_from_name(values[KEY_KERNEL], &e->kernel) != TC_SUCCESS)
    return parse_error(origin, line, "unknown kernel '%s'", values[KEY_KERNEL]);
  if (tc_layout_from_name(values[KEY_LAYOUT], &e->layout) != TC_SUCCESS)
    return parse_error(origin, line, "unknown layout '%s' (expected right or left)",
                       values[KEY_LAYOUT]);
  if (tc_precision_from_name(values[KEY_PRECISION], &e->precision) != TC_SUCCESS)
    return parse_error(origin, line, "unknown precision '%s' (expected double or float)",
                       values[KEY_PRECISION]);
  if (tc_variant_from_name(values[KEY_VARIANT], &e->variant) != TC_SUCCESS)
    return parse_error(origin, line, "unknown variant '%s'", values[KEY_VARIANT]);
  /* The size keys the family needs, and no others. */
  const int size_keys[TC_TUNING_SIZES][2] = {{KEY_L, KEY_F}, {KEY_R, -1}, {KEY_K, -1}};
  for (int s = 0; s < TC_TUNING_SIZES; ++s) {
    const char *name = size_key(e->kernel, s);
    const char *value = NULL;
    for (int i = 0; i < 2; ++i) {
      const int key = size_keys[s][i];
      if (key < 0 || values[key] == NULL)
        continue;
      if (strcmp(key_names[key], name) != 0)
        return parse_error(origin, line, "%s has no size %s", tc_kernel_name(e->kernel),
                           key_names[key]);
      value = values[key];
    }
    if (name[0] == '\0') {
      e->low[s] = e->high[s] = 1;
      continue;
    }
    if (value == NULL)
      return parse_error(origin, line, "no %s= on the line (%s needs it)", name,
                         tc_kernel_name(e->kernel));
    if (!parse_range(value, &e->low[s], &e->high[s]))
      return parse_error(origin, line,
                         "%s=%s: expected a range low-high of whole numbers 1 <= low <= high, "
                         "or one number",
                         name, value);
  }
  if (tc_kernel_is_data_field(e->kernel)) {
    const char *data = values[KEY_DATA];
    if (data == NULL || (strcmp(data, "P") != 0 && strcmp(data, "1") != 0))
      return parse_error(origin, line, "%s needs data=P (a value per point) or data=1 (one per "
                         "cell)%s%s%s",
                         tc_kernel_name(e->kernel), data ? ", got '" : "", data ? data : "",
                         data ? "'" : "");
    e->one_data_point = strcmp(data, "1") == 0;
  } else if (values[KEY_DATA] != NULL) {
    return parse_error(origin, line, "data= is for DataField kernels only");
  }
  return TC_SUCCESS;
}

/* The value after a header word ("backend cuda"): the rest of the line. */
static const char *header_value(char *line, const char *word) {
  const size_t length = strlen(word);
  if (strncmp(line, word, length) != 0 || !isspace((unsigned char)line[length]))
    return NULL;
  const char *value = line + length;
  while (isspace((unsigned char)*value))
    ++value;
  return value;
}

static tc_err parse_text(tc_tuning *t, const char *text, tc_backend_kind backend,
                         const char *device) {
  const char *origin = t->origin;
  const tc_contract_backend *table = tc_contract_backend_get(backend);
  TC_CHECK(table != NULL, TC_ERR_UNSUPPORTED, "%s: the %s backend is not compiled into this build",
           origin, tc_backend_name(backend));
  int capacity = 0, line_number = 0, header = 0; /* header lines read: 0..3 */
  char line_text[LINE_MAX_CHARS + 2];
  for (const char *p = text; *p != '\0';) {
    const char *end = strchr(p, '\n');
    size_t length = end ? (size_t)(end - p) : strlen(p);
    ++line_number;
    if (length > LINE_MAX_CHARS)
      return parse_error(origin, line_number, "line longer than %d characters", LINE_MAX_CHARS);
    memcpy(line_text, p, length);
    line_text[length] = '\0';
    p += length + (end ? 1 : 0);
    for (size_t i = 0; i < length; ++i)
      if (line_text[i] != '\t' && line_text[i] != '\r' && iscntrl((unsigned char)line_text[i]))
        return parse_error(origin, line_number, "not a tcmini tuning file (control characters)");
    char *line = trim_line(line_text);
    if (*line == '\0')
      continue;
    if (header == 0) {
      const char *version = header_value(line, "tcmini-tuning");
      if (version == NULL)
        return parse_error(origin, line_number,
                           "not a tcmini tuning file (its first line must be 'tcmini-tuning %d')",
                           TC_TUNING_FORMAT);
      if (strcmp(version, "1") != 0)
        return parse_error(origin, line_number,
                           "tuning format version '%s'; this build reads version %d", version,
                           TC_TUNING_FORMAT);
      ++header;
      continue;
    }
    if (header == 1) {
      const char *name = header_value(line, "backend");
      if (name == NULL)
        return parse_error(origin, line_number, "expected 'backend NAME' after the first line");
      tc_backend_kind file_backend;
      if (tc_backend_from_name(name, &file_backend) != TC_SUCCESS)
        return parse_error(origin, line_number, "unknown backend '%s'", name);
      if (file_backend != backend)
        return parse_error(origin, line_number,
                           "the file tunes the %s backend, and this run uses the %s backend",
                           tc_backend_name(file_backend), tc_backend_name(backend));
      t->backend = backend;
      ++header;
      continue;
    }
    if (header == 2) {
      const char *name = header_value(line, "device");
      if (name == NULL || *name == '\0')
        return parse_error(origin, line_number, "expected 'device NAME' after the backend line");
      if (strlen(name) >= sizeof t->device)
        return parse_error(origin, line_number, "device name longer than %zu characters",
                           sizeof t->device - 1);
      if (device != NULL && strcmp(name, device) != 0)
        return parse_error(origin, line_number,
                           "the file was tuned on '%s', and this run's device is '%s' (tune "
                           "this device with tcmini-bench --tune)",
                           name, device);
      snprintf(t->device, sizeof t->device, "%s", name);
      ++header;
      continue;
    }
    if (t->count == TUNING_MAX_ENTRIES)
      return parse_error(origin, line_number, "more than %d entries", TUNING_MAX_ENTRIES);
    if (t->count == capacity) {
      capacity = capacity ? 2 * capacity : 32;
      tc_tuning_entry *entries = realloc(t->entries, (size_t)capacity * sizeof *entries);
      int *lines = entries ? realloc(t->lines, (size_t)capacity * sizeof *lines) : NULL;
      if (entries)
        t->entries = entries;
      TC_CHECK(entries && lines, TC_ERR_MEMORY, "out of memory reading tuning file %s", origin);
      t->lines = lines;
    }
    tc_tuning_entry *e = &t->entries[t->count];
    TC_CALL(parse_entry(origin, line_number, line, e));
    char why[512];
    if (entry_invalid(e, table, why, sizeof why))
      return parse_error(origin, line_number, "%s", why);
    for (int i = 0; i < t->count; ++i)
      if (overlap(&t->entries[i], e))
        return parse_error(origin, line_number,
                           "its class overlaps the class of line %d (%s, %s layout, %s): a "
                           "shape may fall in one class only",
                           t->lines[i], tc_kernel_name(e->kernel), tc_layout_name(e->layout),
                           tc_precision_name(e->precision));
    t->lines[t->count++] = line_number;
  }
  if (header < 3)
    return parse_error(origin, 0, "%s",
                       header == 0 ? "not a tcmini tuning file (empty)"
                       : header == 1 ? "no 'backend NAME' line"
                                     : "no 'device NAME' line");
  return TC_SUCCESS;
}

tc_err tc_tuning_parse(const char *origin, const char *text, tc_backend_kind backend,
                       const char *device, tc_tuning **tuning) {
  *tuning = NULL;
  TC_CHECK(text != NULL, TC_ERR_ARGUMENT, "no tuning text given");
  tc_tuning *t;
  TC_CALLOC(t, 1);
  snprintf(t->origin, sizeof t->origin, "%s", origin ? origin : "tuning");
  t->backend = backend;
  tc_err err = parse_text(t, text, backend, device);
  if (err != TC_SUCCESS) {
    tc_tuning_destroy(&t);
    return err;
  }
  *tuning = t;
  return TC_SUCCESS;
}

tc_err tc_tuning_read_text(const char *path, char **text) {
  *text = NULL;
  TC_CHECK(path != NULL, TC_ERR_ARGUMENT, "no tuning file given");
  FILE *file = fopen(path, "rb");
  TC_CHECK(file != NULL, TC_ERR_IO, "cannot open tuning file '%s': %s", path, strerror(errno));
  char *buffer = malloc(TUNING_MAX_BYTES + 1);
  if (buffer == NULL) {
    fclose(file);
    TC_FAIL(TC_ERR_MEMORY, "out of memory reading tuning file '%s'", path);
  }
  const size_t got = fread(buffer, 1, TUNING_MAX_BYTES + 1, file);
  const int read_errno = ferror(file) ? errno : 0;
  fclose(file);
  tc_err err = TC_SUCCESS;
  if (read_errno != 0)
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__,
                         "cannot read tuning file '%s': %s", path, strerror(read_errno));
  else if (got > TUNING_MAX_BYTES)
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "%s: larger than %d bytes: not a tcmini tuning file", path,
                         TUNING_MAX_BYTES);
  else if (memchr(buffer, '\0', got) != NULL)
    err = tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                         "%s: not a tcmini tuning file (it holds NUL bytes)", path);
  if (err != TC_SUCCESS) {
    free(buffer);
    return err;
  }
  buffer[got] = '\0';
  *text = buffer;
  return TC_SUCCESS;
}

tc_err tc_tuning_load(const char *path, tc_backend_kind backend, const char *device,
                      tc_tuning **tuning) {
  *tuning = NULL;
  char *text = NULL;
  TC_CALL(tc_tuning_read_text(path, &text));
  tc_err err = tc_tuning_parse(path, text, backend, device, tuning);
  free(text);
  return err;
}

void tc_tuning_destroy(tc_tuning **tuning) {
  if (*tuning == NULL)
    return;
  free((*tuning)->entries);
  free((*tuning)->lines);
  free(*tuning);
  *tuning = NULL;
}

tc_backend_kind tc_tuning_backend(const tc_tuning *tuning) { return tuning->backend; }
const char *tc_tuning_device(const tc_tuning *tuning) { return tuning->device; }
const char *tc_tuning_origin(const tc_tuning *tuning) { return tuning->origin; }
int tc_tuning_count(const tc_tuning *tuning) { return tuning->count; }

const tc_tuning_entry *tc_tuning_entry_at(const tc_tuning *tuning, int index) {
  return index >= 0 && index < tuning->count ? &tuning->entries[index] : NULL;
}

bool tc_tuning_lookup(const tc_tuning *tuning, const tc_contraction *shape, tc_variant *variant) {
  for (int i = 0; i < tuning->count; ++i)
    if (tc_tuning_entry_covers(&tuning->entries[i], shape)) {
      *variant = tuning->entries[i].variant;
      return true;
    }
  return false;
}

/* ---- writing ---------------------------------------------------------------- */

typedef struct {
  char *data;
  size_t length, capacity;
  bool failed;
} text_buffer;

__attribute__((format(printf, 2, 3))) static void append(text_buffer *b, const char *fmt, ...) {
  if (b->failed)
    return;
  va_list args;
  va_start(args, fmt);
  const int needed = vsnprintf(NULL, 0, fmt, args);
  va_end(args);
  if (needed < 0 || b->length + (size_t)needed + 1 > TUNING_MAX_BYTES) {
    b->failed = true;
    return;
  }
  if (b->length + (size_t)needed + 1 > b->capacity) {
    const size_t capacity = 2 * (b->length + (size_t)needed + 1) + 256;
    char *grown = realloc(b->data, capacity);
    if (grown == NULL) {
      b->failed = true;
      return;
    }
    b->data = grown;
    b->capacity = capacity;
  }
  va_start(args, fmt);
  vsnprintf(b->data + b->length, b->capacity - b->length, fmt, args);
  va_end(args);
  b->length += (size_t)needed;
}

static void append_range(text_buffer *b, const char *key, int64_t low, int64_t high) {
  if (low == high)
    append(b, " %s=%lld", key, (long long)low);
  else
    append(b, " %s=%lld-%lld", key, (long long)low, (long long)high);
}

/* Appends text after "# " on each of its lines (newlines inside end a line). */
static void append_comment(text_buffer *b, const char *text) {
  for (const char *p = text; *p != '\0';) {
    const char *end = strchr(p, '\n');
    const size_t length = end ? (size_t)(end - p) : strlen(p);
    append(b, "# %.*s\n", (int)length, p);
    p += length + (end ? 1 : 0);
  }
}

tc_err tc_tuning_format(tc_backend_kind backend, const char *device, const char *comment,
                        const tc_tuning_entry *entries, int count, char **text) {
  *text = NULL;
  const tc_contract_backend *table = tc_contract_backend_get(backend);
  TC_CHECK(table != NULL, TC_ERR_UNSUPPORTED, "the %s backend is not compiled into this build",
           tc_backend_name(backend));
  TC_CHECK(device != NULL && device[0] != '\0' && strchr(device, '\n') == NULL &&
               strchr(device, '#') == NULL,
           TC_ERR_ARGUMENT, "a tuning file needs a one-line device name without '#'");
  TC_CHECK(count >= 0 && count <= TUNING_MAX_ENTRIES, TC_ERR_ARGUMENT,
           "%d tuning entries (at most %d)", count, TUNING_MAX_ENTRIES);
  for (int i = 0; i < count; ++i) {
    char why[512];
    TC_CHECK(!entry_invalid(&entries[i], table, why, sizeof why), TC_ERR_ARGUMENT,
             "tuning entry %d: %s", i, why);
    for (int j = 0; j < i; ++j)
      TC_CHECK(!overlap(&entries[j], &entries[i]), TC_ERR_ARGUMENT,
               "tuning entries %d and %d overlap", j, i);
  }
  text_buffer b = {0};
  append(&b, "# tcmini tuning file: AUTO's variant per shape class (docs/tuning.md)\n");
  if (comment != NULL)
    append_comment(&b, comment);
  append(&b, "tcmini-tuning %d\nbackend %s\ndevice %s\n", TC_TUNING_FORMAT,
         tc_backend_name(backend), device);
  for (int i = 0; i < count; ++i) {
    const tc_tuning_entry *e = &entries[i];
    append(&b, "kernel=%s layout=%s precision=%s", tc_kernel_name(e->kernel),
           tc_layout_name(e->layout), tc_precision_name(e->precision));
    for (int s = 0; s < TC_TUNING_SIZES; ++s) {
      const char *key = size_key(e->kernel, s);
      if (key[0] != '\0')
        append_range(&b, key, e->low[s], e->high[s]);
    }
    if (tc_kernel_is_data_field(e->kernel))
      append(&b, " data=%s", e->one_data_point ? "1" : "P");
    append(&b, " variant=%s", tc_variant_name(e->variant));
    if (e->note[0] != '\0' && strchr(e->note, '\n') == NULL)
      append(&b, "  # %s", e->note);
    append(&b, "\n");
  }
  if (b.failed || b.data == NULL) {
    free(b.data);
    TC_FAIL(TC_ERR_MEMORY, "out of memory (or over %d bytes) formatting a tuning file",
            TUNING_MAX_BYTES);
  }
  *text = b.data;
  return TC_SUCCESS;
}

tc_err tc_tuning_write(const char *path, tc_backend_kind backend, const char *device,
                       const char *comment, const tc_tuning_entry *entries, int count) {
  TC_CHECK(path != NULL && path[0] != '\0', TC_ERR_ARGUMENT, "no tuning file name given");
  char *text = NULL;
  TC_CALL(tc_tuning_format(backend, device, comment, entries, count, &text));
  char temporary[4096];
  const int n = snprintf(temporary, sizeof temporary, "%s.tmp.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof temporary) {
    free(text);
    TC_FAIL(TC_ERR_ARGUMENT, "tuning file name too long: '%s'", path);
  }
  FILE *file = fopen(temporary, "w");
  if (file == NULL) {
    const int open_errno = errno;
    free(text);
    TC_FAIL(TC_ERR_IO, "cannot write tuning file '%s': %s", temporary, strerror(open_errno));
  }
  const size_t length = strlen(text);
  bool ok = fwrite(text, 1, length, file) == length;
  ok = fflush(file) == 0 && ok;
  ok = fsync(fileno(file)) == 0 && ok;
  const int write_errno = errno;
  ok = fclose(file) == 0 && ok;
  free(text);
  if (!ok) {
    remove(temporary);
    TC_FAIL(TC_ERR_IO, "cannot write tuning file '%s': %s", temporary, strerror(write_errno));
  }
  if (rename(temporary, path) != 0) {
    const int rename_errno = errno;
    remove(temporary);
    TC_FAIL(TC_ERR_IO, "cannot move '%s' to '%s': %s", temporary, path, strerror(rename_errno));
  }
  return TC_SUCCESS;
}
