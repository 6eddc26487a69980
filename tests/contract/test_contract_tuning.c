/* test_contract_tuning: tuning files and the choices made from them: the
 * power-of-two classes, a good file parsed and looked up, every kind of bad
 * file refused with one line naming file and line (missing, unreadable,
 * corrupt, another version, backend or device, bad keys and ranges, unknown
 * variants, variants the backend does not run, overlapping classes), the
 * writer's round trip and its keeping an existing file when it fails,
 * tc_contract_choose's sources, and every variant a tuning file can name on
 * each backend compiled in (the CUDA one when a GPU is present) run through
 * AUTO against the serial reference. Exits 77 when no backend but the
 * serial one is compiled in. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract_test.h"
#include "tc_parallel.h"
#include "tc_tuning.h"

/* A scratch directory for the files of this test. */
static char scratch[256];

static void scratch_path(const char *name, char *path, size_t capacity) {
  snprintf(path, capacity, "%s/%s", scratch, name);
}

static bool write_text(const char *path, const char *text, size_t length) {
  FILE *file = fopen(path, "wb");
  if (file == NULL)
    return test_check(false, "cannot write %s", path);
  const bool ok = fwrite(text, 1, length, file) == length;
  return test_check(fclose(file) == 0 && ok, "cannot write %s", path);
}

static tc_contraction field_field(tc_kernel kernel, int64_t left, int64_t right, int64_t points,
                                  int64_t dim1, int64_t dim2) {
  tc_contraction s = {.kernel = kernel, .num_cells = 5, .num_left_fields = left,
                      .num_right_fields = right, .num_points = points, .dim1 = dim1,
                      .dim2 = dim2, .layout = TC_LAYOUT_RIGHT, .precision = TC_DOUBLE};
  tc_contraction_normalize(&s);
  return s;
}

static void check_classes(void) {
  tc_tuning_entry e;
  /* Q2 elasticity, 3-point rule: 81 x 81, K = 27 * 9 = 243. */
  const tc_contraction q2 = field_field(TC_FIELD_FIELD_TENSOR, 81, 81, 27, 3, 3);
  tc_tuning_class_of(&q2, &e);
  test_check(e.kernel == TC_FIELD_FIELD_TENSOR && e.layout == TC_LAYOUT_RIGHT &&
                 e.precision == TC_DOUBLE && e.variant == TC_VARIANT_AUTO,
             "class of Q2: kernel, layout, precision");
  test_check(e.low[0] == 65 && e.high[0] == 128 && e.low[1] == 65 && e.high[1] == 128 &&
                 e.low[2] == 129 && e.high[2] == 256,
             "class of 81x81x243: %lld-%lld %lld-%lld %lld-%lld", (long long)e.low[0],
             (long long)e.high[0], (long long)e.low[1], (long long)e.high[1],
             (long long)e.low[2], (long long)e.high[2]);
  test_check(tc_tuning_entry_covers(&e, &q2), "a class covers its shape");
  const tc_contraction inside = field_field(TC_FIELD_FIELD_TENSOR, 65, 128, 18, 4, 2); /* K = 144 */
  const tc_contraction outside = field_field(TC_FIELD_FIELD_TENSOR, 64, 100, 27, 3, 3);
  const tc_contraction other_kernel = field_field(TC_FIELD_FIELD_VECTOR, 81, 81, 81, 3, 1);
  test_check(tc_tuning_entry_covers(&e, &inside) && !tc_tuning_entry_covers(&e, &outside) &&
                 !tc_tuning_entry_covers(&e, &other_kernel),
             "class bounds");
  const int64_t values[] = {1, 2, 3, 4, 5, 8, 9, 1000};
  const int64_t lows[] = {1, 2, 3, 3, 5, 5, 9, 513}, highs[] = {1, 2, 4, 4, 8, 8, 16, 1024};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
    const tc_contraction s = field_field(TC_FIELD_FIELD_SCALAR, values[i], 1, 1, 1, 1);
    tc_tuning_class_of(&s, &e);
    test_check(e.low[0] == lows[i] && e.high[0] == highs[i], "bucket of %lld: %lld-%lld",
               (long long)values[i], (long long)e.low[0], (long long)e.high[0]);
  }
  /* DataField with one data value per cell is a class of its own. */
  tc_contraction data = {.kernel = TC_DATA_FIELD_VECTOR, .num_cells = 2, .num_left_fields = 8,
                         .num_points = 27, .num_data_points = 1, .dim1 = 3,
                         .layout = TC_LAYOUT_LEFT, .precision = TC_FLOAT};
  tc_contraction_normalize(&data);
  tc_tuning_class_of(&data, &e);
  test_check(e.one_data_point && e.low[1] == 1 && e.high[1] == 1, "DataField class");
  data.num_data_points = 27;
  test_check(!tc_tuning_entry_covers(&e, &data), "data=1 does not cover data=P");
}

/* A good file for the OpenMP backend, on a device named "Test CPU". */
static const char good_openmp[] =
    "# comment line\n"
    "\n"
    "tcmini-tuning 1   # trailing comment\n"
    "backend openmp\n"
    "device Test CPU\n"
    "kernel=FieldFieldTensor layout=right precision=double L=65-128 R=65-128 K=129-256 "
    "variant=flat  # 1 shape\n"
    "kernel=FieldFieldTensor layout=right precision=double L=65-128 R=65-128 K=257-512 "
    "variant=blocked\n"
    "kernel=DataFieldVector layout=left precision=float F=8 K=17-32 data=1 variant=flat\n"
    "kernel=DataDataScalar layout=right precision=double K=1-1000000 variant=flat\n";

static void check_good_file(void) {
  tc_tuning *t = NULL;
  tc_error_clear();
  if (!test_ok(tc_tuning_parse("good.txt", good_openmp, TC_BACKEND_OPENMP, "Test CPU", &t),
               "good tuning file"))
    return;
  test_check(tc_tuning_count(t) == 4 && tc_tuning_backend(t) == TC_BACKEND_OPENMP &&
                 strcmp(tc_tuning_device(t), "Test CPU") == 0 &&
                 strcmp(tc_tuning_origin(t), "good.txt") == 0,
             "good file: %d entries", tc_tuning_count(t));
  tc_variant v = TC_VARIANT_AUTO;
  const tc_contraction q2 = field_field(TC_FIELD_FIELD_TENSOR, 81, 81, 27, 3, 3);
  test_check(tc_tuning_lookup(t, &q2, &v) && v == TC_VARIANT_FLAT, "lookup of Q2: %s",
             tc_variant_name(v));
  const tc_contraction q2_5 = field_field(TC_FIELD_FIELD_TENSOR, 81, 81, 42, 3, 3); /* K = 378 */
  test_check(tc_tuning_lookup(t, &q2_5, &v) && v == TC_VARIANT_BLOCKED, "lookup of K = 378");
  const tc_contraction small = field_field(TC_FIELD_FIELD_TENSOR, 8, 8, 8, 3, 3);
  test_check(!tc_tuning_lookup(t, &small, &v), "no entry for 8x8");
  tc_contraction data = {.kernel = TC_DATA_FIELD_VECTOR, .num_cells = 3, .num_left_fields = 8,
                         .num_points = 9, .num_data_points = 1, .dim1 = 3,
                         .layout = TC_LAYOUT_LEFT, .precision = TC_FLOAT};
  tc_contraction_normalize(&data);
  test_check(tc_tuning_lookup(t, &data, &v) && v == TC_VARIANT_FLAT, "lookup of DataField");
  tc_tuning_destroy(&t);
  test_check(t == NULL, "destroy sets NULL");
  tc_tuning_destroy(&t);
  /* Without a device to check against (NULL), the file's is accepted. */
  test_ok(tc_tuning_parse("good.txt", good_openmp, TC_BACKEND_OPENMP, NULL, &t), "no device");
  tc_tuning_destroy(&t);
}

typedef struct {
  const char *text;    ///< the file (after the header when with_header)
  bool with_header;    ///< prepend a good header for openmp on "Test CPU"
  const char *message; ///< expected in the one-line message
} bad_case;

static void check_bad_texts(void) {
  const bad_case cases[] = {
      {"", false, "bad.txt: not a tcmini tuning file (empty)"},
      {"\x7f" "ELF\x01\x02", false, "bad.txt:1: not a tcmini tuning file (control characters)"},
      {"kernel=FieldFieldScalar\n", false,
       "bad.txt:1: not a tcmini tuning file (its first line must be 'tcmini-tuning 1')"},
      {"tcmini-tuning 2\n", false, "bad.txt:1: tuning format version '2'; this build reads version 1"},
      {"tcmini-tuning 1\n", false, "bad.txt: no 'backend NAME' line"},
      {"tcmini-tuning 1\ndevice x\n", false, "bad.txt:2: expected 'backend NAME' after the first line"},
      {"tcmini-tuning 1\nbackend opencl\n", false, "bad.txt:2: unknown backend 'opencl'"},
      {"tcmini-tuning 1\nbackend serial\ndevice Test CPU\n", false,
       "bad.txt:2: the file tunes the serial backend, and this run uses the openmp backend"},
      {"tcmini-tuning 1\nbackend openmp\n", false, "bad.txt: no 'device NAME' line"},
      {"tcmini-tuning 1\nbackend openmp\ndevice NVIDIA H100 80GB HBM3\n", false,
       "bad.txt:3: the file was tuned on 'NVIDIA H100 80GB HBM3', and this run's device is "
       "'Test CPU'"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 variant=tilling\n", true,
       "bad.txt:4: unknown variant 'tilling'"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 variant=tiling\n", true,
       "bad.txt:4: the openmp backend does not run variant 'tiling' on FieldFieldScalar"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 variant=auto\n", true,
       "bad.txt:4: an entry must name a variant other than auto"},
      {"kernel=FieldFieldScalar layout=left precision=double L=70000 R=70000 K=8 "
       "variant=vendor\n",
       true,
       "bad.txt:4: the openmp backend does not run variant 'vendor' on FieldFieldScalar (left "
       "layout, double) at either end of this class: "},
      {"kernel=DataDataScalar layout=right precision=double K=8 variant=vendor\n", true,
       "bad.txt:4: the openmp backend does not run variant 'vendor' on DataDataScalar"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8\n", true,
       "bad.txt:4: no variant= on the line"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 K=8 variant=flat\n", true,
       "bad.txt:4: no R= on the line (FieldFieldScalar needs it)"},
      {"kernel=FieldFieldScalar layout=right L=8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: no precision= on the line"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 K=9 variant=flat\n", true,
       "bad.txt:4: key 'K' given twice"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 P=8 variant=flat\n", true,
       "bad.txt:4: unknown key 'P'"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 variant flat\n", true,
       "bad.txt:4: expected key=value, got 'variant'"},
      {"kernel=FieldFieldScalar layout=right precision=double L=9-8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: L=9-8: expected a range low-high"},
      {"kernel=FieldFieldScalar layout=right precision=double L=0-8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: L=0-8: expected a range low-high"},
      {"kernel=FieldFieldScalar layout=right precision=double L=x R=8 K=8 variant=flat\n", true,
       "bad.txt:4: L=x: expected a range"},
      {"kernel=FieldFieldScalar layout=right precision=double F=8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: FieldFieldScalar has no size F"},
      {"kernel=DataDataScalar layout=right precision=double L=8 K=8 variant=flat\n", true,
       "bad.txt:4: DataDataScalar has no size L"},
      {"kernel=DataFieldScalar layout=right precision=double F=8 K=8 variant=flat\n", true,
       "bad.txt:4: DataFieldScalar needs data=P (a value per point) or data=1 (one per cell)"},
      {"kernel=FieldFieldScalar layout=right precision=double L=8 R=8 K=8 data=1 variant=flat\n",
       true, "bad.txt:4: data= is for DataField kernels only"},
      {"kernel=FieldFieldScala layout=right precision=double L=8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: unknown kernel 'FieldFieldScala'"},
      {"kernel=FieldFieldScalar layout=up precision=double L=8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: unknown layout 'up'"},
      {"kernel=FieldFieldScalar layout=right precision=half L=8 R=8 K=8 variant=flat\n", true,
       "bad.txt:4: unknown precision 'half'"},
      {"kernel=FieldFieldScalar layout=right precision=double L=5-8 R=5-8 K=5-8 variant=flat\n"
       "# another class\n"
       "kernel=FieldFieldScalar layout=right precision=double L=8-9 R=1-100 K=8 variant=blocked\n",
       true,
       "bad.txt:6: its class overlaps the class of line 4 (FieldFieldScalar, right layout, "
       "double)"},
  };
  const char header[] = "tcmini-tuning 1\nbackend openmp\ndevice Test CPU\n";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[2048];
    snprintf(text, sizeof text, "%s%s", cases[i].with_header ? header : "", cases[i].text);
    tc_tuning *t = NULL;
    tc_error_clear();
    const tc_err err = tc_tuning_parse("bad.txt", text, TC_BACKEND_OPENMP, "Test CPU", &t);
    test_check(err == TC_ERR_INPUT && t == NULL, "bad case %zu accepted (code %d)", i, (int)err);
    test_check(strstr(tc_error_message(), cases[i].message) == tc_error_message() &&
                   strchr(tc_error_message(), '\n') == NULL,
               "bad case %zu: message '%s', expected it to start with '%s'", i,
               tc_error_message(), cases[i].message);
  }
  /* Overlaps are per kernel, layout and precision: these two are fine. */
  const char separate[] =
      "tcmini-tuning 1\nbackend openmp\ndevice Test CPU\n"
      "kernel=FieldFieldScalar layout=right precision=double L=5-8 R=5-8 K=5-8 variant=flat\n"
      "kernel=FieldFieldScalar layout=right precision=float L=5-8 R=5-8 K=5-8 variant=flat\n"
      "kernel=FieldFieldScalar layout=right precision=double L=9-16 R=5-8 K=5-8 variant=flat\n";
  tc_tuning *t = NULL;
  tc_error_clear();
  test_ok(tc_tuning_parse("separate.txt", separate, TC_BACKEND_OPENMP, "Test CPU", &t),
          "classes that do not overlap");
  tc_tuning_destroy(&t);
  tc_error_clear();
}

static void check_bad_files(void) {
  char path[512];
  tc_tuning *t = NULL;
  tc_error_clear();
  scratch_path("missing.txt", path, sizeof path);
  test_check(tc_tuning_load(path, TC_BACKEND_OPENMP, "Test CPU", &t) == TC_ERR_IO && t == NULL &&
                 strstr(tc_error_message(), "cannot open tuning file") != NULL &&
                 strstr(tc_error_message(), "No such file") != NULL,
             "missing file: '%s'", tc_error_message());
  tc_error_clear();
  test_check(tc_tuning_load(scratch, TC_BACKEND_OPENMP, "Test CPU", &t) == TC_ERR_IO &&
                 strstr(tc_error_message(), "cannot read tuning file") != NULL,
             "a directory: '%s'", tc_error_message());
  tc_error_clear();
  scratch_path("nul.txt", path, sizeof path);
  if (write_text(path, "tcmini-tuning 1\n\0\n", 18))
    test_check(tc_tuning_load(path, TC_BACKEND_OPENMP, "Test CPU", &t) == TC_ERR_INPUT &&
                   strstr(tc_error_message(), "not a tcmini tuning file (it holds NUL bytes)"),
               "NUL bytes: '%s'", tc_error_message());
  tc_error_clear();
  scratch_path("big.txt", path, sizeof path);
  char *big = malloc((1 << 20) + 2);
  if (test_check(big != NULL, "memory")) {
    memset(big, '#', (1 << 20) + 1);
    if (write_text(path, big, (1 << 20) + 1))
      test_check(tc_tuning_load(path, TC_BACKEND_OPENMP, "Test CPU", &t) == TC_ERR_INPUT &&
                     strstr(tc_error_message(), "larger than 1048576 bytes"),
                 "over 1 MiB: '%s'", tc_error_message());
    free(big);
  }
  tc_error_clear();
  scratch_path("good.txt", path, sizeof path);
  if (write_text(path, good_openmp, strlen(good_openmp))) {
    test_ok(tc_tuning_load(path, TC_BACKEND_OPENMP, "Test CPU", &t), "good file from disk");
    test_check(t != NULL && strcmp(tc_tuning_origin(t), path) == 0, "origin is the path");
    tc_tuning_destroy(&t);
  }
  tc_error_clear();
}

static bool same_entry(const tc_tuning_entry *a, const tc_tuning_entry *b) {
  return a->kernel == b->kernel && a->layout == b->layout && a->precision == b->precision &&
         a->one_data_point == b->one_data_point && a->variant == b->variant &&
         memcmp(a->low, b->low, sizeof a->low) == 0 && memcmp(a->high, b->high, sizeof a->high) == 0;
}

static void check_writer(void) {
  tc_tuning_entry entries[3];
  const tc_contraction q2 = field_field(TC_FIELD_FIELD_TENSOR, 81, 81, 27, 3, 3);
  tc_tuning_class_of(&q2, &entries[0]);
  entries[0].variant = TC_VARIANT_FLAT;
  snprintf(entries[0].note, sizeof entries[0].note, "1 shape: flat 1.00");
  tc_contraction data = {.kernel = TC_DATA_FIELD_SCALAR, .num_cells = 1, .num_left_fields = 27,
                         .num_points = 27, .num_data_points = 27, .layout = TC_LAYOUT_LEFT,
                         .precision = TC_FLOAT};
  tc_contraction_normalize(&data);
  tc_tuning_class_of(&data, &entries[1]);
  entries[1].variant = TC_VARIANT_BLOCKED;
  tc_contraction dd = {.kernel = TC_DATA_DATA_TENSOR, .num_cells = 1, .num_points = 8,
                       .dim1 = 3, .dim2 = 3, .layout = TC_LAYOUT_RIGHT, .precision = TC_DOUBLE};
  tc_contraction_normalize(&dd);
  tc_tuning_class_of(&dd, &entries[2]);
  entries[2].variant = TC_VARIANT_FLAT;
  char path[512];
  scratch_path("written.txt", path, sizeof path);
  tc_error_clear();
  if (!test_ok(tc_tuning_write(path, TC_BACKEND_OPENMP, "Test CPU", "line one\nline two", entries,
                               3),
               "write"))
    return;
  tc_tuning *t = NULL;
  if (test_ok(tc_tuning_load(path, TC_BACKEND_OPENMP, "Test CPU", &t), "read back")) {
    test_check(tc_tuning_count(t) == 3, "3 entries back, got %d", tc_tuning_count(t));
    for (int i = 0; i < 3 && i < tc_tuning_count(t); ++i)
      test_check(same_entry(tc_tuning_entry_at(t, i), &entries[i]), "entry %d round trip", i);
  }
  tc_tuning_destroy(&t);
  /* A write that fails leaves the existing file as it was. */
  struct stat before, after;
  test_check(stat(path, &before) == 0, "stat");
  tc_tuning_entry bad = entries[0];
  bad.variant = TC_VARIANT_TILING; /* not an OpenMP variant */
  tc_error_clear();
  test_check(tc_tuning_write(path, TC_BACKEND_OPENMP, "Test CPU", NULL, &bad, 1) ==
                     TC_ERR_ARGUMENT &&
                 strstr(tc_error_message(), "does not run variant 'tiling'") != NULL,
             "an entry the backend cannot run is refused: '%s'", tc_error_message());
  tc_error_clear();
  test_check(tc_tuning_write(path, TC_BACKEND_OPENMP, "Test\nCPU", NULL, entries, 1) ==
                 TC_ERR_ARGUMENT,
             "a device name of two lines is refused");
  tc_tuning_entry overlapping[2] = {entries[0], entries[0]};
  overlapping[1].variant = TC_VARIANT_BLOCKED;
  tc_error_clear();
  test_check(tc_tuning_write(path, TC_BACKEND_OPENMP, "Test CPU", NULL, overlapping, 2) ==
                 TC_ERR_ARGUMENT,
             "overlapping entries are refused");
  test_check(stat(path, &after) == 0 && after.st_size == before.st_size &&
                 after.st_mtime == before.st_mtime,
             "the existing file was changed by a failed write");
  char unwritable[600];
  scratch_path("no/such/dir/t.txt", unwritable, sizeof unwritable);
  tc_error_clear();
  test_check(tc_tuning_write(unwritable, TC_BACKEND_OPENMP, "Test CPU", NULL, entries, 1) ==
                 TC_ERR_IO,
             "an unwritable path fails with TC_ERR_IO");
  tc_error_clear();
}

static void check_choose(void) {
  const tc_contract_backend *openmp = tc_contract_backend_get(TC_BACKEND_OPENMP);
  const tc_contract_backend *serial = tc_contract_backend_get(TC_BACKEND_SERIAL);
  tc_tuning *t = NULL;
  tc_error_clear();
  if (!test_ok(tc_tuning_parse("good.txt", good_openmp, TC_BACKEND_OPENMP, NULL, &t), "parse"))
    return;
  const tc_contraction q2 = field_field(TC_FIELD_FIELD_TENSOR, 81, 81, 27, 3, 3);
  const tc_contraction small = field_field(TC_FIELD_FIELD_TENSOR, 8, 8, 8, 3, 3);
  tc_variant v = TC_VARIANT_COUNT;
  tc_choice c = TC_CHOICE_COUNT;
  test_check(tc_contract_choose(openmp, t, &q2, TC_VARIANT_AUTO, &v, &c) == TC_SUCCESS &&
                 v == TC_VARIANT_FLAT && c == TC_CHOICE_TUNING,
             "AUTO in a class: the tuning's variant (%s, %s)", tc_variant_name(v),
             tc_choice_name(c));
  tc_variant rule = TC_VARIANT_COUNT;
  test_check(tc_contract_resolve(openmp, &small, TC_VARIANT_AUTO, &rule) == TC_SUCCESS &&
                 tc_contract_choose(openmp, t, &small, TC_VARIANT_AUTO, &v, &c) == TC_SUCCESS &&
                 v == rule && c == TC_CHOICE_RULE,
             "AUTO outside the classes: the rules");
  test_check(tc_contract_choose(openmp, t, &q2, TC_VARIANT_BLOCKED, &v, &c) == TC_SUCCESS &&
                 v == TC_VARIANT_BLOCKED && c == TC_CHOICE_ASKED,
             "a named variant is asked for");
  test_check(tc_contract_choose(openmp, NULL, &q2, TC_VARIANT_AUTO, &v, &c) == TC_SUCCESS &&
                 c == TC_CHOICE_RULE,
             "no tuning: the rules");
  tc_error_clear();
  test_check(tc_contract_choose(serial, t, &q2, TC_VARIANT_AUTO, &v, &c) == TC_ERR_ARGUMENT &&
                 strstr(tc_error_message(), "of the openmp backend given to the serial") != NULL,
             "another backend's tuning is refused: '%s'", tc_error_message());
  tc_error_clear();
  test_check(strcmp(tc_choice_name(TC_CHOICE_TUNING), "tuning") == 0 &&
                 strcmp(tc_choice_name(TC_CHOICE_RULE), "rule") == 0 &&
                 strcmp(tc_choice_name(TC_CHOICE_ASKED), "asked") == 0,
             "choice names");
  tc_tuning_destroy(&t);
}

/* Random inputs in +-[0.5, 1.5) (xorshift64*). */
static void fill(tc_precision precision, void *array, int64_t count, uint64_t *state) {
  for (int64_t i = 0; i < count; ++i) {
    *state ^= *state >> 12, *state ^= *state << 25, *state ^= *state >> 27;
    const uint64_t bits = *state * 2685821657736338717ull;
    const double magnitude = 0.5 + (double)(bits >> 11) / 9007199254740992.0;
    const double value = bits & 1 ? -magnitude : magnitude;
    if (precision == TC_FLOAT)
      ((float *)array)[i] = (float)value;
    else
      ((double *)array)[i] = value;
  }
}

static double element(tc_precision precision, const void *array, int64_t i) {
  return precision == TC_FLOAT ? ((const float *)array)[i] : ((const double *)array)[i];
}

/* The shapes every tunable variant is run on: each kernel, layout and
 * precision at sizes off the tile sizes. */
static tc_contraction tuned_shape(tc_kernel kernel, tc_layout layout, tc_precision precision) {
  tc_contraction s = {.kernel = kernel, .num_cells = 37, .num_left_fields = 9,
                      .num_right_fields = 13, .num_points = 6, .num_data_points = 6,
                      .dim1 = 3, .dim2 = 2, .layout = layout, .precision = precision};
  if (!tc_kernel_is_field_field(kernel))
    s.num_right_fields = 1;
  if (tc_kernel_is_data_data(kernel))
    s.num_left_fields = 1;
  if (!tc_kernel_is_data_field(kernel))
    s.num_data_points = 1;
  if (tc_kernel_tensor_rank(kernel) < 2)
    s.dim2 = 1;
  if (tc_kernel_tensor_rank(kernel) < 1)
    s.dim1 = 1;
  return s;
}

/* Every variant a tuning file of the backend can name for a shape's class:
 * the file written, read back, AUTO resolved through it, run on the device
 * and compared with the serial reference. Returns the runs made. */
static int check_tuned_variants(tc_device *device, tc_backend_kind kind) {
  const tc_contract_backend *backend = tc_device_contract_backend(device);
  const tc_contract_backend *serial = tc_contract_backend_get(TC_BACKEND_SERIAL);
  const char *model = tc_device_model(device);
  uint64_t state = 0x5eed5eedull + (uint64_t)kind;
  int runs = 0;
  char path[512];
  scratch_path("tuned.txt", path, sizeof path);
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    for (int l = 0; l < TC_LAYOUT_COUNT; ++l)
      for (int p = 0; p < TC_PRECISION_COUNT; ++p) {
        const tc_contraction shape = tuned_shape(k, l, p);
        const tc_precision precision = shape.precision;
        const size_t size = (size_t)tc_precision_size(precision);
        const int64_t nl = tc_contraction_left_count(&shape);
        const int64_t nr = tc_contraction_right_count(&shape);
        const int64_t no = tc_contraction_output_count(&shape);
        void *left = malloc((size_t)nl * size), *right = malloc((size_t)nr * size);
        void *expected = calloc((size_t)no, size), *got = malloc((size_t)no * size);
        if (!test_check(left && right && expected && got, "memory")) {
          free(left), free(right), free(expected), free(got);
          return runs;
        }
        fill(precision, left, nl, &state);
        fill(precision, right, nr, &state);
        test_ok(tc_contract(serial, &shape, TC_VARIANT_REFERENCE, left, right, expected, NULL),
                "reference");
        for (int v = TC_VARIANT_AUTO + 1; v < TC_VARIANT_COUNT; ++v) {
          tc_tuning_entry entry;
          tc_tuning_class_of(&shape, &entry);
          entry.variant = (tc_variant)v;
          char why[512];
          if (!tc_tuning_entry_check(kind, &entry, why, sizeof why))
            continue; /* a file cannot name it here */
          tc_tuning *t = NULL;
          tc_error_clear();
          if (!test_ok(tc_tuning_write(path, kind, model, NULL, &entry, 1), "write") ||
              !test_ok(tc_tuning_load(path, kind, model, &t), "load"))
            continue;
          tc_variant chosen = TC_VARIANT_COUNT;
          tc_choice source = TC_CHOICE_COUNT;
          test_ok(tc_contract_choose(backend, t, &shape, TC_VARIANT_AUTO, &chosen, &source),
                  "choose");
          const bool runs_here = tc_contract_supports(backend, &shape, (tc_variant)v);
          test_check(runs_here ? (int)chosen == v && source == TC_CHOICE_TUNING
                               : source == TC_CHOICE_RULE,
                     "%s %s %s: a tuning naming %s gave %s (%s)", tc_kernel_name(k),
                     tc_layout_name(l), tc_precision_name(p), tc_variant_name(v),
                     tc_variant_name(chosen), tc_choice_name(source));
          tc_tuning_destroy(&t);
          for (int64_t i = 0; i < no; ++i)
            if (precision == TC_FLOAT)
              ((float *)got)[i] = NAN;
            else
              ((double *)got)[i] = NAN;
          if (!test_ok(test_run_on_device(device, &shape, chosen, left, right, got), "run"))
            continue;
          ++runs;
          /* |terms| <= 1.5^2: the sum of |terms| is at most 2.25 K. */
          const double eps = precision == TC_FLOAT ? FLT_EPSILON : DBL_EPSILON;
          const double length = (double)tc_contraction_length(&shape);
          const double bound = 2.0 * (length + 2.0) * eps * 2.25 * length;
          int reported = 0;
          for (int64_t i = 0; i < no && reported < 3; ++i) {
            const double want = element(precision, expected, i);
            const double have = element(precision, got, i);
            if (!test_check(fabs(have - want) <= bound,
                            "%s %s %s tuned to %s: output[%lld] = %.9g, expected %.9g",
                            tc_kernel_name(k), tc_layout_name(l), tc_precision_name(p),
                            tc_variant_name(chosen), (long long)i, have, want))
              ++reported;
          }
        }
        free(left), free(right), free(expected), free(got);
      }
  return runs;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI initialisation failed: %s\n", tc_error_message());
    return 1;
  }
  snprintf(scratch, sizeof scratch, "%s/tc_tuning_test.%ld", argc > 1 ? argv[1] : ".",
           (long)getpid());
  if (mkdir(scratch, 0700) != 0) {
    fprintf(stderr, "cannot make %s\n", scratch);
    tc_parallel_finalize();
    return 1;
  }
  int tested = 0;
  if (tc_contract_backend_get(TC_BACKEND_OPENMP) != NULL) {
    check_classes();
    check_good_file();
    check_bad_texts();
    check_bad_files();
    check_writer();
    check_choose();
  }
  for (int kind = TC_BACKEND_OPENMP; kind < TC_BACKEND_COUNT; ++kind) {
    tc_device *device = NULL;
    if (!test_open_device(kind, &device))
      continue;
    const int runs = check_tuned_variants(device, kind);
    printf("%s (%s, vendor %s): %d tuned choices run against the serial reference\n",
           tc_backend_name(kind), tc_device_model(device),
           tc_contract_vendor_library(tc_device_contract_backend(device))
               ? tc_contract_vendor_library(tc_device_contract_backend(device))
               : "none",
           runs);
    tc_device_destroy(&device);
    ++tested;
  }
  /* Leave nothing behind. */
  const char *names[] = {"good.txt", "nul.txt", "big.txt", "written.txt", "tuned.txt"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char path[512];
    scratch_path(names[i], path, sizeof path);
    remove(path);
  }
  rmdir(scratch);
  printf("tuning: %d failure(s)\n", test_failures);
  tc_parallel_finalize();
  if (tested == 0 && test_failures == 0)
    return TC_TEST_SKIP;
  return test_failures == 0 ? 0 : 1;
}
