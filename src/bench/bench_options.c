/* bench_options: the option table of tcmini-bench, its parser and --help,
 * and the shape presets that turn options into contraction shapes. */
#include "bench_options.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tc_config.h"
#include "tc_host_memory.h"
#include "tc_parallel.h"
#include "tc_physics.h"
#include "tc_replay.h"

/* ---- presets ----------------------------------------------------------- */

typedef struct {
  const char *name;
  int64_t left_fields, right_fields, points;
  int64_t cells; /* 0: from --memory */
  const char *about;
} preset_info;

/* The sweep of the 2015 clinic report on Intrepid contractions: L=R=8,P=8
 * up to L=R=125,P=216; "small" is a quick smoke test with L != R and odd
 * sizes that defeat blocking. */
static const preset_info presets[BENCH_PRESET_COUNT] = {
    [BENCH_PRESET_SMALL] = {"small", 3, 5, 7, 11, "L=3 R=5 P=7, C=11 (smoke test)"},
    [BENCH_PRESET_P8] = {"p8", 8, 8, 8, 0, "L=R=8 P=8"},
    [BENCH_PRESET_P27] = {"p27", 27, 27, 27, 0, "L=R=27 P=27"},
    [BENCH_PRESET_P64] = {"p64", 64, 64, 125, 0, "L=R=64 P=125"},
    [BENCH_PRESET_P125] = {"p125", 125, 125, 216, 0, "L=R=125 P=216"},
};

const char *bench_preset_name(int preset) {
  return preset >= 0 && preset < BENCH_PRESET_COUNT ? presets[preset].name : "custom";
}

/* ---- the option table ---------------------------------------------------- */

typedef enum { OPTION_FLAG, OPTION_INT, OPTION_TEXT } option_type;

typedef struct {
  const char *name;
  const char *metavar;
  option_type type;
  size_t offset; /* of the field in bench_options */
  const char *default_value;
  int64_t minimum; /* OPTION_INT only */
  const char *help;
} option;

#define FIELD(member) offsetof(bench_options, member)

static const option options_table[] = {
    {"kernel", "LIST", OPTION_TEXT, FIELD(kernel_text), "all", 0,
     "kernels: all, or Intrepid names (FieldFieldScalar,DataDataTensor,...)"},
    {"preset", "LIST", OPTION_TEXT, FIELD(preset_text), "all", 0,
     "shape presets: all (p8,p27,p64,p125) or names from the list below"},
    {"cells", "C", OPTION_INT, FIELD(cells), "0", 0,
     "cells per case (0: the preset's, or enough for --memory)"},
    {"left", "L", OPTION_INT, FIELD(left_fields), "0", 0,
     "explicit shape instead of presets: left fields L (F for DataField)"},
    {"right", "R", OPTION_INT, FIELD(right_fields), "0", 0,
     "explicit shape: right fields R of FieldField (0: R = L)"},
    {"points", "P", OPTION_INT, FIELD(points), "0", 0,
     "explicit shape: quadrature points P (needed with --left)"},
    {"dim1", "D1", OPTION_INT, FIELD(dim1), "3", 1, "D1 of Vector and Tensor kernels"},
    {"dim2", "D2", OPTION_INT, FIELD(dim2), "3", 1, "D2 of Tensor kernels"},
    {"data-points", "1|P", OPTION_TEXT, FIELD(data_points_text), "P", 0,
     "DataField data points: P, or 1 (one value per cell)"},
    {"memory", "MB", OPTION_INT, FIELD(memory_mb), "256", 1,
     "working set (inputs + output) per case in MB when C is not fixed"},
    {"backend", "LIST", OPTION_TEXT, FIELD(backend_text), "cpu", 0,
     "backends: serial,openmp,cuda; cpu or all: the CPU ones or all compiled in"},
    {"variant", "LIST", OPTION_TEXT, FIELD(variant_text), "auto", 0,
     "variants: auto, all (auto, then each one a backend supports), or names (flat,blocked,"
     "...,vendor)"},
    {"layout", "LIST", OPTION_TEXT, FIELD(layout_text), "right", 0, "layouts: right,left or all"},
    {"precision", "LIST", OPTION_TEXT, FIELD(precision_text), "double", 0,
     "precisions: double,float or all"},
    {"threads", "LIST", OPTION_TEXT, FIELD(threads_text), "0", 0,
     "OpenMP thread counts, e.g. 1,2 (0: the runtime's default)"},
    {"reps", "N", OPTION_INT, FIELD(reps), "10", 1,
     "timed repetitions per row (median, min, max); the rows of a case take turns"},
    {"warmup", "N", OPTION_INT, FIELD(warmup), "2", 0,
     "untimed runs before the timed ones (0 runs 1: the first is the checked one)"},
    {"row-time-limit", "S", OPTION_INT, FIELD(row_time_limit), "0", 0,
     "stop a row's warm-up, and its timed runs, once they took S seconds (0: never);"
     " the table's reps column shows the runs timed"},
    {"sum-into", NULL, OPTION_FLAG, FIELD(sum_into), NULL, 0,
     "add to the output (Intrepid's sumInto) instead of overwriting it"},
    {"shapes", "LIST", OPTION_TEXT, FIELD(shapes_text), NULL, 0,
     "explicit shapes LxRxP,... (each for every --kernel; F = L for DataField) instead of"
     " presets"},
    {"deck", "FILE", OPTION_TEXT, FIELD(deck_path), NULL, 0,
     "the shapes of a tcmini deck's kernels (its element order and quadrature; its layout and"
     " precision unless --layout/--precision are given) instead of presets"},
    {"check-cells", "N", OPTION_INT, FIELD(check_cells), "0", 0,
     "verify N cells spread over each case (first and last included) against the serial"
     " reference; 0: every cell (--sweep and --tune: 16 unless given)"},
    {"no-yardstick", NULL, OPTION_FLAG, FIELD(no_yardstick), NULL, 0,
     "skip the vendor row (cuBLAS on cuda, libxsmm on openmp) timed after each FieldField"
     " case in layout right"},
    {"no-probe", NULL, OPTION_FLAG, FIELD(no_probe), NULL, 0,
     "AUTO by the built-in rules alone: no first-call probe of the rule's variant against the"
     " vendor's (tc_contract_set_probe)"},
    {"tuning", "FILE", OPTION_TEXT, FIELD(tuning_path), NULL, 0,
     "AUTO rows take their variant from this tuning file (written by --tune) where it has"
     " one, else from the built-in rules"},
    {"tuning-on-error", "fail|rules", OPTION_TEXT, FIELD(tuning_on_error_text), "fail", 0,
     "a --tuning file that cannot be used (missing, corrupt, for another device): fail, or"
     " warn and use the built-in rules"},
    {"tune", "FILE", OPTION_TEXT, FIELD(tune_path), NULL, 0,
     "time every variant (vendor included) on the shapes (presets, --shapes, --deck or"
     " --sweep) and write AUTO's best per shape class to this tuning file"},
    {"sweep", "N", OPTION_INT, FIELD(sweep), "0", 0,
     "N random FieldField shapes (L, R in 4-130, P in 1-343, D1, D2 in 1-3; --memory 1024"
     " unless given): AUTO against the vendor row (with --layout left: against AUTO in layout"
     " right), and the distribution of their time ratio"},
    {"seed", "S", OPTION_INT, FIELD(seed), "1", 0, "seed of the --sweep shapes"},
    {"csv", "FILE", OPTION_TEXT, FIELD(csv_path), NULL, 0, "also write the table as CSV"},
    {"replay", "FILE", OPTION_TEXT, FIELD(replay_path), NULL, 0,
     "run the contraction in an HDF5 file: datasets left and right (dims below), attribute"
     " kernel; with --sum-into also dataset output, the output to add to"},
    {"replay-group", "GROUP", OPTION_TEXT, FIELD(replay_group), "/", 0,
     "with --replay: the group of the file that holds the datasets, e.g. /cases/stiffness"},
    {"replay-output", "FILE", OPTION_TEXT, FIELD(replay_output_path), NULL, 0,
     "with --replay: write every row's result (rows/0, rows/1, ... with attributes backend,"
     " threads, layout, variant, precision, verified; output = rows/0); never the input file"},
    {"overwrite", NULL, OPTION_FLAG, FIELD(overwrite), NULL, 0,
     "with --replay-output: replace an existing file"},
    {"no-roofline", NULL, OPTION_FLAG, FIELD(no_roofline), NULL, 0,
     "skip measuring the roofline (no %roof column): quicker checks"},
    {"no-flush", NULL, OPTION_FLAG, FIELD(no_flush), NULL, 0,
     "skip the cache flush before each timed run (times then include warm caches)"},
    {"help", NULL, OPTION_FLAG, FIELD(help), NULL, 0, "print this help and exit"},
    {"version", NULL, OPTION_FLAG, FIELD(version), NULL, 0, "print the version and build facts and exit"},
};

enum { OPTION_COUNT = sizeof options_table / sizeof options_table[0] };
_Static_assert(OPTION_COUNT <= 64, "bench_options.given has 64 bits");

static int option_index(const char *name) {
  for (int i = 0; i < OPTION_COUNT; ++i)
    if (strcmp(options_table[i].name, name) == 0)
      return i;
  return -1;
}

static bool given(const bench_options *options, const char *name) {
  int index = option_index(name);
  return index >= 0 && (options->given >> index & 1u);
}

static tc_err parse_int(const char *text, int64_t *value) {
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(text, &end, 10);
  TC_CHECK(end != text && *end == '\0' && errno == 0, TC_ERR_INPUT,
           "expected an integer, got '%s'", text);
  *value = parsed;
  return TC_SUCCESS;
}

static tc_err set_option(const option *o, const char *value, bench_options *options) {
  char *field = (char *)options + o->offset;
  switch (o->type) {
  case OPTION_FLAG:
    *(bool *)field = true;
    return TC_SUCCESS;
  case OPTION_INT: {
    int64_t parsed = 0;
    TC_CALL(parse_int(value, &parsed));
    TC_CHECK(parsed >= o->minimum, TC_ERR_INPUT, "must be >= %lld, got %lld",
             (long long)o->minimum, (long long)parsed);
    *(int64_t *)field = parsed;
    return TC_SUCCESS;
  }
  case OPTION_TEXT:
    TC_CHECK(value[0] != '\0', TC_ERR_INPUT, "needs a non-empty value");
    *(const char **)field = value;
    return TC_SUCCESS;
  }
  TC_FAIL(TC_ERR_INTERNAL, "bad option type");
}

/* Prefixes the recorded error with the option it concerns. */
static tc_err blame_option(const char *name, tc_err code) {
  char message[512];
  snprintf(message, sizeof message, "--%s: %s", name, tc_error_message());
  tc_error_adopt(code, message, tc_error_origin());
  return code;
}

/* ---- lists ----------------------------------------------------------------- */

typedef tc_err (*name_lookup)(const char *token, int *value);

static tc_err lookup_kernel(const char *token, int *value) {
  tc_kernel kernel;
  TC_CALL(tc_kernel_from_name(token, &kernel));
  *value = (int)kernel;
  return TC_SUCCESS;
}
static tc_err lookup_backend(const char *token, int *value) {
  tc_backend_kind backend;
  TC_CALL(tc_backend_from_name(token, &backend));
  *value = (int)backend;
  return TC_SUCCESS;
}
static tc_err lookup_variant(const char *token, int *value) {
  tc_variant variant;
  TC_CALL(tc_variant_from_name(token, &variant));
  *value = (int)variant;
  return TC_SUCCESS;
}
static tc_err lookup_layout(const char *token, int *value) {
  tc_layout layout;
  TC_CALL(tc_layout_from_name(token, &layout));
  *value = (int)layout;
  return TC_SUCCESS;
}
static tc_err lookup_precision(const char *token, int *value) {
  tc_precision precision;
  TC_CALL(tc_precision_from_name(token, &precision));
  *value = (int)precision;
  return TC_SUCCESS;
}
static tc_err lookup_preset(const char *token, int *value) {
  for (int i = 0; i < BENCH_PRESET_COUNT; ++i)
    if (strcmp(token, presets[i].name) == 0) {
      *value = i;
      return TC_SUCCESS;
    }
  TC_FAIL(TC_ERR_INPUT, "unknown preset '%s' (expected small, p8, p27, p64, p125 or all)", token);
}
static tc_err lookup_thread_count(const char *token, int *value) {
  int64_t count = 0;
  TC_CALL(parse_int(token, &count));
  TC_CHECK(count >= 0 && count <= 4096, TC_ERR_INPUT, "thread count %lld out of range 0..4096",
           (long long)count);
  *value = (int)count;
  return TC_SUCCESS;
}

/* Splits a comma list and looks each name up; "all" (when all_count > 0)
 * stands for the values 0..all_count-1. Repeated values are dropped. */
static tc_err parse_list(const char *text, name_lookup lookup, int all_count, int capacity,
                         int values[], int *count) {
  *count = 0;
  if (all_count > 0 && strcmp(text, "all") == 0) {
    for (int i = 0; i < all_count && i < capacity; ++i)
      values[(*count)++] = i;
    return TC_SUCCESS;
  }
  char token[128];
  const char *start = text;
  for (;;) {
    size_t length = strcspn(start, ",");
    TC_CHECK(length > 0 && length < sizeof token, TC_ERR_INPUT, "bad list '%s'", text);
    memcpy(token, start, length);
    token[length] = '\0';
    int value = 0;
    TC_CALL(lookup(token, &value));
    bool seen = false;
    for (int i = 0; i < *count; ++i)
      seen = seen || values[i] == value;
    if (!seen) {
      TC_CHECK(*count < capacity, TC_ERR_INPUT, "too many entries in '%s'", text);
      values[(*count)++] = value;
    }
    if (start[length] == '\0')
      return TC_SUCCESS;
    start += length + 1;
  }
}

/* Parses one list option into an enum array through an int scratch list. */
#define PARSE_LIST(name, text, lookup, all_count, array, count, type)          \
  do {                                                                         \
    int parsed_[64];                                                           \
    tc_err list_err_ = parse_list((text), (lookup), (all_count),               \
                                  (int)(sizeof(array) / sizeof((array)[0])),   \
                                  parsed_, &(count));                          \
    if (list_err_ != TC_SUCCESS)                                               \
      return blame_option((name), list_err_);                                  \
    for (int i_ = 0; i_ < (count); ++i_)                                       \
      (array)[i_] = (type)parsed_[i_];                                         \
  } while (0)

static tc_err parse_lists(bench_options *o) {
  PARSE_LIST("kernel", o->kernel_text, lookup_kernel, TC_KERNEL_COUNT, o->kernels, o->num_kernels,
             tc_kernel);
  o->kernel_named = given(o, "kernel");
  o->precision_named = given(o, "precision");
  bool all_backends = strcmp(o->backend_text, "all") == 0;
  if (all_backends || strcmp(o->backend_text, "cpu") == 0) {
    o->num_backends = 0;
    for (int b = 0; b < TC_BACKEND_COUNT; ++b)
      if (tc_contract_backend_get((tc_backend_kind)b) != NULL &&
          (all_backends || b != TC_BACKEND_CUDA))
        o->backends[o->num_backends++] = (tc_backend_kind)b;
  } else {
    PARSE_LIST("backend", o->backend_text, lookup_backend, 0, o->backends, o->num_backends,
               tc_backend_kind);
  }
  o->all_variants = strcmp(o->variant_text, "all") == 0;
  if (!o->all_variants)
    PARSE_LIST("variant", o->variant_text, lookup_variant, 0, o->variants, o->num_variants,
               tc_variant);
  PARSE_LIST("layout", o->layout_text, lookup_layout, TC_LAYOUT_COUNT, o->layouts, o->num_layouts,
             tc_layout);
  PARSE_LIST("precision", o->precision_text, lookup_precision, TC_PRECISION_COUNT, o->precisions,
             o->num_precisions, tc_precision);
  PARSE_LIST("threads", o->threads_text, lookup_thread_count, 0, o->thread_counts,
             o->num_thread_counts, int);
  if (strcmp(o->preset_text, "all") == 0) {
    o->num_presets = 0;
    for (int p = BENCH_PRESET_P8; p < BENCH_PRESET_COUNT; ++p)
      o->presets[o->num_presets++] = (bench_preset)p;
  } else {
    PARSE_LIST("preset", o->preset_text, lookup_preset, 0, o->presets, o->num_presets,
               bench_preset);
  }
  return TC_SUCCESS;
}

/* Appends one listed shape (kernel and sizes; C, layout and precision are
 * set per case). */
static tc_err add_listed_shape(bench_options *o, const tc_contraction *shape) {
  TC_CHECK(o->num_shapes < BENCH_MAX_SHAPES, TC_ERR_INPUT, "more than %d shapes",
           BENCH_MAX_SHAPES);
  o->shapes[o->num_shapes++] = *shape;
  return TC_SUCCESS;
}

static void shape_sizes(const bench_options *o, tc_kernel kernel, int64_t left_fields,
                        int64_t right_fields, int64_t points, tc_contraction *shape);

/* One "LxRxP" of --shapes: three whole numbers >= 1 that fit in int64
 * (strtoll reports the ones that do not), separated by 'x'. */
static bool parse_shape_sizes(const char *item, long long sizes[3]) {
  const char *at = item;
  for (int i = 0; i < 3; ++i) {
    if (!isdigit((unsigned char)*at))
      return false;
    char *end = NULL;
    errno = 0;
    sizes[i] = strtoll(at, &end, 10);
    if (errno != 0 || sizes[i] < 1)
      return false;
    at = end;
    if (i < 2 && *at++ != 'x')
      return false;
  }
  return *at == '\0';
}

/* --shapes LxRxP,...: each shape for every kernel of --kernel. */
static tc_err parse_shapes(bench_options *o) {
  char item[64];
  for (const char *start = o->shapes_text;;) {
    const size_t length = strcspn(start, ",");
    TC_CHECK(length > 0 && length < sizeof item, TC_ERR_INPUT, "bad list '%s'", o->shapes_text);
    memcpy(item, start, length);
    item[length] = '\0';
    long long sizes[3];
    TC_CHECK(parse_shape_sizes(item, sizes), TC_ERR_INPUT,
             "expected LxRxP with whole numbers >= 1 that fit in 64 bits (e.g. 81x81x27), got '%s'",
             item);
    for (int k = 0; k < o->num_kernels; ++k) {
      tc_contraction shape;
      shape_sizes(o, o->kernels[k], sizes[0], sizes[1], sizes[2], &shape);
      tc_contraction_normalize(&shape);
      TC_CALL(add_listed_shape(o, &shape));
    }
    if (start[length] == '\0')
      return TC_SUCCESS;
    start += length + 1;
  }
}

/* --deck FILE: the contraction of every kernel the deck selects, with its
 * element's fields and points; its layout and precision unless given. */
static tc_err parse_deck(bench_options *o) {
  tc_config config;
  TC_CALL(tc_config_load(MPI_COMM_SELF, o->deck_path, 0, NULL, &config));
  const int64_t fields = (config.order + 1) * (config.order + 1) * (config.order + 1);
  const int64_t q = tc_config_quadrature(&config);
  const tc_layout layout = tc_config_layout(&config);
  if (!given(o, "layout")) {
    o->num_layouts = 1;
    o->layouts[0] = layout;
  }
  if (!given(o, "precision")) {
    o->num_precisions = 1;
    o->precisions[0] = config.precision;
  }
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (config.kernels[k]) {
      tc_contraction shape = tc_physics_contraction((tc_kernel)k, 1, fields, q * q * q,
                                                    TC_LAYOUT_RIGHT, TC_DOUBLE);
      shape.sum_into = o->sum_into;
      TC_CALL(add_listed_shape(o, &shape));
    }
  return TC_SUCCESS;
}

/* Rules that involve several options. */
static tc_err check_combinations(bench_options *o) {
  bool explicit_shape = given(o, "left") || given(o, "right") || given(o, "points");
  if (explicit_shape) {
    TC_CHECK(o->left_fields >= 1 && o->points >= 1, TC_ERR_INPUT,
             "an explicit shape needs --left L >= 1 and --points P >= 1");
    TC_CHECK(!given(o, "preset"), TC_ERR_INPUT, "--preset cannot be combined with --left/--right/--points");
    if (o->right_fields == 0)
      o->right_fields = o->left_fields;
    o->num_presets = 0;
  }
  TC_CHECK(strcmp(o->data_points_text, "P") == 0 || strcmp(o->data_points_text, "1") == 0,
           TC_ERR_INPUT, "--data-points: expected 1 or P, got '%s'", o->data_points_text);
  o->one_data_point = strcmp(o->data_points_text, "1") == 0;
  if (o->replay_path != NULL) {
    TC_CHECK(!explicit_shape && !given(o, "preset") && !given(o, "cells") &&
                 !given(o, "data-points") && !given(o, "dim1") && !given(o, "dim2"),
             TC_ERR_INPUT,
             "--replay takes the shape from the file: drop --preset/--left/--right/--points/"
             "--cells/--data-points/--dim1/--dim2");
    TC_CHECK(!o->kernel_named || o->num_kernels == 1, TC_ERR_INPUT,
             "--replay runs one kernel: give --kernel one name or none");
    TC_CHECK(!o->precision_named || o->num_precisions == 1, TC_ERR_INPUT,
             "--replay runs in the file's precision: give --precision one name or none");
  }
  TC_CHECK(o->replay_output_path == NULL || o->replay_path != NULL, TC_ERR_INPUT,
           "--replay-output needs --replay");
  TC_CHECK(!given(o, "replay-group") || o->replay_path != NULL, TC_ERR_INPUT,
           "--replay-group needs --replay");
  TC_CHECK(!o->overwrite || o->replay_output_path != NULL, TC_ERR_INPUT,
           "--overwrite needs --replay-output");
  TC_CHECK(o->all_variants || o->num_variants > 0, TC_ERR_INPUT, "--variant: empty list");
  TC_CHECK(strcmp(o->tuning_on_error_text, "fail") == 0 ||
               strcmp(o->tuning_on_error_text, "rules") == 0,
           TC_ERR_INPUT, "--tuning-on-error: expected fail or rules, got '%s'",
           o->tuning_on_error_text);
  o->tuning_fallback = strcmp(o->tuning_on_error_text, "rules") == 0;
  TC_CHECK(!given(o, "tuning-on-error") || o->tuning_path != NULL, TC_ERR_INPUT,
           "--tuning-on-error needs --tuning");
  const int sources = (explicit_shape || given(o, "preset")) + (o->shapes_text != NULL) +
                      (o->deck_path != NULL) + (o->sweep > 0) + (o->replay_path != NULL);
  TC_CHECK(sources <= 1, TC_ERR_INPUT,
           "give the shapes one way: --preset, --left/--right/--points, --shapes, --deck, "
           "--sweep or --replay");
  if (o->sweep > 0) {
    TC_CHECK(!o->kernel_named, TC_ERR_INPUT,
             "--sweep draws FieldField kernels itself: drop --kernel");
    TC_CHECK(!given(o, "cells"), TC_ERR_INPUT,
             "--sweep sizes each case with --memory: drop --cells");
    TC_CHECK(!given(o, "variant"), TC_ERR_INPUT,
             "--sweep times auto against its reference: drop --variant");
    TC_CHECK(!o->no_yardstick || !bench_options_has_layout(o, TC_LAYOUT_RIGHT), TC_ERR_INPUT,
             "--sweep compares layout right with the vendor row: drop --no-yardstick");
    if (!given(o, "memory"))
      o->memory_mb = 1024;
  }
  const int64_t machine_mb = tc_host_memory_bytes() / (1024 * 1024); /* 0: not known */
  TC_CHECK(machine_mb <= 0 || o->memory_mb <= machine_mb, TC_ERR_INPUT,
           "--memory %lld MB is more than this machine's memory (%lld MB)",
           (long long)o->memory_mb, (long long)machine_mb);
  if ((o->sweep > 0 || o->tune_path != NULL) && !given(o, "check-cells"))
    o->check_cells = 16;
  TC_CHECK(o->tune_path == NULL || o->replay_path == NULL, TC_ERR_INPUT,
           "--tune cannot be combined with --replay");
  TC_CHECK(o->tune_path == NULL || o->tuning_path == NULL, TC_ERR_INPUT,
           "--tune measures every variant itself: drop --tuning");
  TC_CHECK(o->tune_path == NULL || !given(o, "variant"), TC_ERR_INPUT,
           "--tune times every variant the backend runs: drop --variant");
  if (o->tune_path != NULL)
    o->all_variants = true;
  if (o->shapes_text != NULL) {
    tc_err err = parse_shapes(o);
    if (err != TC_SUCCESS)
      return blame_option("shapes", err);
  }
  if (o->deck_path != NULL) {
    TC_CHECK(!o->kernel_named, TC_ERR_INPUT,
             "--deck takes the kernels from the deck's physics.kernels: drop --kernel");
    tc_err err = parse_deck(o);
    if (err != TC_SUCCESS)
      return blame_option("deck", err);
  }
  if (o->shapes_text != NULL || o->deck_path != NULL)
    o->num_presets = 0;
  return TC_SUCCESS;
}

tc_err bench_options_parse(int argc, char **argv, bench_options *options) {
  memset(options, 0, sizeof *options);
  for (int i = 0; i < OPTION_COUNT; ++i)
    if (options_table[i].default_value != NULL)
      TC_CALL(set_option(&options_table[i], options_table[i].default_value, options));

  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    TC_CHECK(strncmp(arg, "--", 2) == 0 && arg[2] != '\0', TC_ERR_INPUT,
             "unexpected argument '%s' (options start with --; see --help)", arg);
    char name[64];
    const char *equals = strchr(arg + 2, '=');
    size_t length = equals ? (size_t)(equals - arg - 2) : strlen(arg + 2);
    TC_CHECK(length < sizeof name, TC_ERR_INPUT, "unknown option '%s' (see --help)", arg);
    memcpy(name, arg + 2, length);
    name[length] = '\0';
    int index = option_index(name);
    TC_CHECK(index >= 0, TC_ERR_INPUT, "unknown option '--%s' (see --help)", name);
    const option *o = &options_table[index];
    const char *value = NULL;
    if (o->type == OPTION_FLAG) {
      TC_CHECK(equals == NULL, TC_ERR_INPUT, "--%s takes no value", name);
    } else if (equals != NULL) {
      value = equals + 1;
    } else {
      TC_CHECK(a + 1 < argc, TC_ERR_INPUT, "--%s needs a value (%s)", name, o->metavar);
      value = argv[++a];
    }
    tc_err err = set_option(o, value, options);
    if (err != TC_SUCCESS)
      return blame_option(name, err);
    options->given |= UINT64_C(1) << index;
  }
  if (options->help || options->version)
    return TC_SUCCESS;
  TC_CALL(parse_lists(options));
  return check_combinations(options);
}

void bench_options_print_help(FILE *stream) {
  fprintf(stream,
          "usage: tcmini-bench [options]\n"
          "Times the nine Intrepid contractions on the chosen backends, checks every\n"
          "result against the serial reference, and compares with the machine's\n"
          "measured roofline. Exit code: 0 all rows verified, 1 a failed row or a run-time\n"
          "error, 2 a bad option, a backend not compiled in or without its GPU, or a bad\n"
          "replay file.\n\n"
          "options:\n");
  for (int i = 0; i < OPTION_COUNT; ++i) {
    const option *o = &options_table[i];
    char left[48];
    snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    fprintf(stream, "  %-22s %s", left, o->help);
    if (o->default_value != NULL)
      fprintf(stream, " [%s]", o->default_value);
    fprintf(stream, "\n");
  }
  fprintf(stream, "\npresets (D1=3 for Vector, D1=D2=3 for Tensor kernels; F = L for DataField):\n");
  for (int p = 0; p < BENCH_PRESET_COUNT; ++p)
    fprintf(stream, "  %-6s %s\n", presets[p].name, presets[p].about);
  fprintf(stream, "\nreplay files (--replay): datasets 'left' and 'right', 64- or 32-bit floats (the\n"
                  "run's precision), row-major in the logical order of the letters C cells, L/R/F\n"
                  "fields, P points, D1/D2 tensor dimensions; the result is 'output':\n");
  fprintf(stream, "  %-17s %-32s %-21s %s\n", "kernel", "left", "right", "output");
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    char left[64], right[64], output[16];
    tc_replay_dims_text((tc_kernel)k, TC_REPLAY_LEFT, left, sizeof left);
    tc_replay_dims_text((tc_kernel)k, TC_REPLAY_RIGHT, right, sizeof right);
    tc_replay_dims_text((tc_kernel)k, TC_REPLAY_OUTPUT, output, sizeof output);
    fprintf(stream, "  %-17s %-32s %-21s %s\n", tc_kernel_name((tc_kernel)k), left, right,
            output);
  }
  fprintf(stream, "\nkernels:");
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    fprintf(stream, " %s", tc_kernel_name((tc_kernel)k));
  fprintf(stream, "\nvariants:");
  for (int v = 0; v < TC_VARIANT_COUNT; ++v)
    fprintf(stream, " %s", tc_variant_name((tc_variant)v));
  fprintf(stream, "\n");
}

/* ---- shapes ---------------------------------------------------------------- */

/* Fills the kernel's sizes from L, R, P and the options; C stays 0. */
static void shape_sizes(const bench_options *o, tc_kernel kernel, int64_t left_fields,
                        int64_t right_fields, int64_t points, tc_contraction *shape) {
  memset(shape, 0, sizeof *shape);
  shape->kernel = kernel;
  shape->num_points = points;
  if (tc_kernel_is_field_field(kernel)) {
    shape->num_left_fields = left_fields;
    shape->num_right_fields = right_fields;
  } else if (tc_kernel_is_data_field(kernel)) {
    shape->num_left_fields = left_fields;
    shape->num_data_points = o->one_data_point ? 1 : points;
  }
  int tensor_rank = tc_kernel_tensor_rank(kernel);
  shape->dim1 = tensor_rank >= 1 ? o->dim1 : 1;
  shape->dim2 = tensor_rank == 2 ? o->dim2 : 1;
  shape->layout = TC_LAYOUT_RIGHT;
  shape->sum_into = o->sum_into;
}

bool bench_options_has_layout(const bench_options *options, tc_layout layout) {
  for (int l = 0; l < options->num_layouts; ++l)
    if (options->layouts[l] == layout)
      return true;
  return false;
}

int64_t bench_cells_for_memory(const tc_contraction *shape, int64_t memory_mb) {
  tc_contraction one = *shape;
  one.num_cells = 1;
  tc_contraction_normalize(&one);
  int64_t per_cell = (tc_contraction_left_count(&one) + tc_contraction_right_count(&one) +
                      tc_contraction_output_count(&one)) *
                     tc_precision_size(one.precision);
  int64_t cells = memory_mb * 1024 * 1024 / per_cell;
  return cells > 0 ? cells : 1;
}

tc_err bench_options_listed_shape(const bench_options *options, int index,
                                  tc_precision precision, tc_contraction *shape) {
  TC_CHECK(index >= 0 && index < options->num_shapes, TC_ERR_ARGUMENT, "no listed shape %d",
           index);
  *shape = options->shapes[index];
  shape->precision = precision;
  shape->layout = TC_LAYOUT_RIGHT;
  shape->sum_into = options->sum_into;
  shape->num_cells = options->cells > 0 ? options->cells
                                        : bench_cells_for_memory(shape, options->memory_mb);
  tc_contraction_normalize(shape);
  return tc_contraction_validate(shape);
}

tc_err bench_options_shapes(const bench_options *options, tc_kernel kernel, tc_precision precision,
                            tc_contraction shapes[BENCH_PRESET_COUNT],
                            int preset_of[BENCH_PRESET_COUNT], int *count) {
  *count = options->num_presets > 0 ? options->num_presets : 1;
  for (int i = 0; i < *count; ++i) {
    tc_contraction *shape = &shapes[i];
    int64_t fixed_cells = options->cells;
    if (options->num_presets > 0) {
      const preset_info *p = &presets[options->presets[i]];
      preset_of[i] = (int)options->presets[i];
      shape_sizes(options, kernel, p->left_fields, p->right_fields, p->points, shape);
      if (fixed_cells == 0)
        fixed_cells = p->cells;
    } else {
      preset_of[i] = -1;
      shape_sizes(options, kernel, options->left_fields, options->right_fields, options->points,
                  shape);
    }
    shape->precision = precision;
    shape->num_cells =
        fixed_cells > 0 ? fixed_cells : bench_cells_for_memory(shape, options->memory_mb);
    tc_contraction_normalize(shape);
    TC_CALL(tc_contraction_validate(shape));
  }
  return TC_SUCCESS;
}
