/* test_deck_parse: tc_config_parse on hand-written decks: good decks give the
 * configuration written by hand here, every error class gives its exact
 * one-line message (with file:line), overrides apply after the file, the
 * printed deck parses back to the same configuration, --help and the
 * printed deck list every key of the deck format, and the shipped
 * inputs/hex.in (the argument) loads with the values it documents. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "deck_test.h"
#include "tc_config.h"

/// The deck keys, written out independently of the option table.
static const char *const all_keys[] = {
    "mesh.cells",          "mesh.length",          "mesh.distortion",  "element.order",
    "element.quadrature",  "physics.kernels",      "run.label",        "run.backend",
    "run.threads",         "run.layout",           "run.variant",      "run.precision",
    "run.tuning",          "run.tuning_on_error",
    "run.steps",           "run.batch_cells",      "run.in_flight",    "run.roofline",
    "run.gpu_sharing",
    "run.exchange",        "run.inputs",           "run.graph",        "run.probe",
    "run.memory_check",
    "run.progress",
    "verify.checks",       "verify.tolerance",
    "verify.tolerance_float", "output.path",       "output.overwrite", "output.element_matrices",
    "output.report",
};
enum { NUM_KEYS = sizeof all_keys / sizeof all_keys[0] };

/// Field-by-field equality (strings compared as strings).
static bool same_config(const tc_config *a, const tc_config *b) {
  bool same = true;
  for (int d = 0; d < 3; d++)
    same = same && a->cells[d] == b->cells[d] && a->length[d] == b->length[d];
  for (int k = 0; k < TC_KERNEL_COUNT; k++)
    same = same && a->kernels[k] == b->kernels[k];
  return same && a->distortion == b->distortion && a->order == b->order &&
         a->quadrature == b->quadrature && strcmp(a->label, b->label) == 0 &&
         a->backend == b->backend && a->threads == b->threads && a->layout == b->layout &&
         a->variant == b->variant && a->precision == b->precision && a->steps == b->steps &&
         a->batch_cells == b->batch_cells && a->in_flight == b->in_flight &&
         a->roofline == b->roofline &&
         a->gpu_sharing == b->gpu_sharing && a->exchange == b->exchange &&
         a->memory_check == b->memory_check && a->progress == b->progress &&
         strcmp(a->tuning, b->tuning) == 0 && a->tuning_on_error == b->tuning_on_error &&
         a->checks == b->checks &&
         a->tolerance == b->tolerance && a->tolerance_float == b->tolerance_float &&
         strcmp(a->path, b->path) == 0 && a->overwrite == b->overwrite &&
         a->element_matrices == b->element_matrices && strcmp(a->report, b->report) == 0;
}

static void test_defaults(void) {
  tc_config config;
  REQUIRE_CALL(tc_config_defaults(&config));
  EXPECT(config.cells[0] == 16 && config.cells[1] == 16 && config.cells[2] == 16, "cells");
  EXPECT(config.length[0] == 1 && config.length[1] == 1 && config.length[2] == 1, "length");
  EXPECT(config.distortion == 0.1, "distortion %g", config.distortion);
  EXPECT(config.order == 1 && config.quadrature == 0, "element");
  EXPECT(tc_config_num_kernels(&config) == TC_KERNEL_COUNT, "kernels");
  EXPECT_STREQ(config.label, "hex");
  EXPECT(config.backend == TC_BACKEND_OPENMP, "backend");
  EXPECT(config.threads == 0 && config.steps == 2 && !config.gpu_sharing, "run");
  EXPECT(config.roofline, "roofline");
  EXPECT(config.exchange == TC_EXCHANGE_AUTO && tc_config_exchange(&config) == TC_EXCHANGE_HOST,
         "exchange");
  EXPECT(config.layout == TC_CONFIG_LAYOUT_AUTO && config.variant == TC_VARIANT_AUTO, "auto");
  EXPECT_STREQ(config.tuning, "none");
  EXPECT(!tc_config_has_tuning(&config) && config.tuning_on_error == TC_TUNING_ON_ERROR_FAIL,
         "tuning");
  EXPECT(config.precision == TC_DOUBLE, "precision");
  EXPECT(config.checks == TC_CHECKS_AUTO && config.tolerance == 1e-9, "verify");
  EXPECT(config.tolerance_float == 1e-4, "tolerance_float");
  EXPECT_STREQ(config.path, "tcmini.h5");
  EXPECT_STREQ(config.report, "tcmini-report.yaml");
  EXPECT(!config.overwrite && !config.element_matrices, "output flags");

  /* The resolvers. */
  EXPECT(tc_config_quadrature(&config) == 2, "Q1 -> 2 points");
  EXPECT(tc_config_layout(&config) == TC_LAYOUT_RIGHT, "auto layout on openmp");
  config.backend = TC_BACKEND_CUDA;
  EXPECT(tc_config_layout(&config) == TC_LAYOUT_RIGHT, "auto layout on cuda");
  EXPECT(tc_config_checks_enabled(&config), "16^3 cells: checks on");
  config.cells[0] = config.cells[1] = config.cells[2] = 126; /* 2000376 cells */
  EXPECT(!tc_config_checks_enabled(&config), "126^3 cells: checks off");
  config.cells[2] = 125; /* 1984500 cells */
  EXPECT(tc_config_checks_enabled(&config), "126x126x125 cells: checks on");
  config.checks = TC_CHECKS_OFF;
  EXPECT(!tc_config_checks_enabled(&config), "checks off");
  EXPECT(tc_config_tolerance(&config) == 1e-9, "double tolerance");
  config.precision = TC_FLOAT;
  EXPECT(tc_config_tolerance(&config) == 1e-4, "float tolerance");
  /* run.inputs = auto: fused on GPUs, unless run.variant names a variant. */
  EXPECT(config.inputs == TC_INPUTS_AUTO && tc_config_inputs(&config) == TC_INPUTS_FUSED,
         "auto inputs on cuda");
  config.variant = TC_VARIANT_FLAT;
  EXPECT(tc_config_inputs(&config) == TC_INPUTS_MATERIALISED, "auto inputs, a variant named");
  config.inputs = TC_INPUTS_FUSED;
  EXPECT(tc_config_inputs(&config) == TC_INPUTS_FUSED, "fused asked for");
  config.inputs = TC_INPUTS_AUTO;
  config.variant = TC_VARIANT_AUTO;
  snprintf(config.tuning, sizeof config.tuning, "tuning.txt");
  EXPECT(tc_config_inputs(&config) == TC_INPUTS_MATERIALISED, "auto inputs, a tuning file");
  snprintf(config.tuning, sizeof config.tuning, "none");
  config.backend = TC_BACKEND_OPENMP;
  EXPECT(tc_config_inputs(&config) == TC_INPUTS_MATERIALISED, "auto inputs on openmp");
}

static void test_good_deck(void) {
  const char *deck =
      "\xEF\xBB\xBF# a deck with every kind of value and layout of line (and a byte-order "
      "mark)\r\n"
      "\n"
      "  [mesh]   ; comment after a header\n"
      "cells = 3, 4,5\n"
      "\tlength=2 0.5 1e-1   # trailing comment\n"
      "distortion = 0\n"
      "[ element ]\n"
      "order = 2\n"
      "quadrature = 4\n"
      "[physics]\n"
      "kernels = fieldfieldvector, ContractDataDataTensor DataFieldScalar\n"
      "[run]\n"
      "label = \"weak # scaling; run 1 \"\n"
      "backend = SERIAL\n"
      "threads = 3\n"
      "layout = left\n"
      "variant = reference\n"
      "precision = float\n"
      "steps = +7\n"
      "roofline = no\n"
      "gpu_sharing = yes\n"
      "[verify]\n"
      "checks = Off\n"
      "tolerance = 2.5e-12\n"
      "tolerance_float = 0.001\n"
      "[output]\n"
      "path = results/out.h5\n"
      "overwrite = on\n"
      "element_matrices = 1\n"
      "report = none\n";
  tc_config config;
  REQUIRE_CALL(tc_config_parse("good.in", deck, 0, NULL, &config));
  EXPECT(config.cells[0] == 3 && config.cells[1] == 4 && config.cells[2] == 5, "cells");
  EXPECT(config.length[0] == 2 && config.length[1] == 0.5 && config.length[2] == 1e-1, "length");
  EXPECT(config.distortion == 0 && config.order == 2 && config.quadrature == 4, "mesh/element");
  EXPECT(tc_config_quadrature(&config) == 4, "explicit quadrature");
  for (int k = 0; k < TC_KERNEL_COUNT; k++)
    EXPECT(config.kernels[k] == (k == TC_FIELD_FIELD_VECTOR || k == TC_DATA_DATA_TENSOR ||
                                 k == TC_DATA_FIELD_SCALAR),
           "kernel %d", k);
  EXPECT_STREQ(config.label, "weak # scaling; run 1 ");
  EXPECT(config.backend == TC_BACKEND_SERIAL && config.threads == 3, "backend");
  EXPECT(config.layout == TC_LAYOUT_LEFT && config.variant == TC_VARIANT_REFERENCE, "layout");
  EXPECT(config.precision == TC_FLOAT && config.steps == 7 && config.gpu_sharing, "run");
  EXPECT(!config.roofline, "roofline off");
  EXPECT(config.checks == TC_CHECKS_OFF && config.tolerance == 2.5e-12, "verify");
  EXPECT(config.tolerance_float == 0.001, "tolerance_float");
  EXPECT_STREQ(config.path, "results/out.h5");
  EXPECT_STREQ(config.report, "none");
  EXPECT(config.overwrite && config.element_matrices, "output flags");

  /* Keys left out keep their defaults; an empty deck is the defaults. */
  tc_config defaults, partial;
  char *fallback[1];
  int num_fallback = deck_test_fallback(fallback);
  REQUIRE_CALL(tc_config_defaults(&defaults));
  if (num_fallback)
    defaults.backend = TC_BACKEND_SERIAL;
  REQUIRE_CALL(tc_config_parse("empty.in", "", num_fallback, fallback, &config));
  EXPECT(same_config(&config, &defaults), "empty deck != defaults");
  REQUIRE_CALL(tc_config_parse("partial.in", "[run]\nsteps = 5\n", num_fallback, fallback,
                               &partial));
  defaults.steps = 5;
  EXPECT(same_config(&partial, &defaults), "partial deck");
}

/* The vendor variant under both its names, and the tuning keys. */
static void test_vendor_and_tuning(void) {
  tc_config config;
  char *cublas[] = {"run.variant=cublas"};
  REQUIRE_CALL(tc_config_parse("v.in", "[run]\nvariant = vendor\n", 0, NULL, &config));
  EXPECT(config.variant == TC_VARIANT_VENDOR, "vendor");
  REQUIRE_CALL(tc_config_parse("v.in", NULL, 1, cublas, &config));
  EXPECT(config.variant == TC_VARIANT_VENDOR, "cublas is read as vendor");
  char *deck = NULL;
  REQUIRE_CALL(tc_config_deck_string(&config, &deck));
  EXPECT(deck && strstr(deck, "\nvariant = vendor\n"), "printed as vendor");
  free(deck);
  REQUIRE_CALL(tc_config_parse("v.in",
                               "[run]\nbackend = openmp\ntuning = tuned/h100.txt\n"
                               "tuning_on_error = rules\n",
                               0, NULL, &config));
  EXPECT_STREQ(config.tuning, "tuned/h100.txt");
  EXPECT(tc_config_has_tuning(&config) && config.tuning_on_error == TC_TUNING_ON_ERROR_RULES,
         "tuning keys");
}

static void test_overrides(void) {
  char *overrides[] = {"mesh.cells=32,32,32", "run.backend=serial", " run.steps = 9 ",
                       "output.path=\"my results.h5\"", "RUN.Steps=11"};
  tc_config config;
  REQUIRE_CALL(tc_config_parse("o.in", "[run]\nsteps = 3\nbackend = openmp\n", 5, overrides,
                               &config));
  EXPECT(config.cells[0] == 32 && config.cells[1] == 32 && config.cells[2] == 32, "cells");
  EXPECT(config.backend == TC_BACKEND_SERIAL, "override beats file");
  EXPECT(config.steps == 11, "the later override wins: %lld", (long long)config.steps);
  EXPECT_STREQ(config.path, "my results.h5");
  REQUIRE_CALL(tc_config_parse(NULL, NULL, 1, overrides + 1, &config));
  EXPECT(config.backend == TC_BACKEND_SERIAL && config.cells[0] == 16, "no deck");
}

typedef struct {
  const char *deck;      ///< text of "inputs/hex.in", or NULL
  const char *override;  ///< one override, or NULL
  const char *message;   ///< the exact expected message
} error_case;

static void test_errors(void) {
  const error_case cases[] = {
      /* unknown key, unknown section, duplicate key, syntax */
      {"[mesh]\ncells = 2 2 2\n\n# c\nnxx = 3\n", NULL,
       "inputs/hex.in:5: unknown key 'nxx' in [mesh]"},
      {"[meshh]\ncells = 2 2 2\n", NULL, "inputs/hex.in:1: unknown section [meshh]"},
      {"[mesh]\ncells = 2 2 2\n# no keys below\n[physicss]\n", NULL,
       "inputs/hex.in:4: unknown section [physicss]"},
      {"[mesh]\ncells = 2 2 2\n[run]\n[mesh]\ncells = 3 3 3\n", NULL,
       "inputs/hex.in:5: duplicate key 'cells' in [mesh] (first set at line 2)"},
      {"[mesh]\ncells 16 16 16  # no equals\n", NULL,
       "inputs/hex.in:2: expected 'key = value', got 'cells 16 16 16'"},
      {"[mesh\ncells = 2 2 2\n", NULL, "inputs/hex.in:1: expected '[section]', got '[mesh'"},
      {"[mesh] x\n", NULL, "inputs/hex.in:1: expected '[section]', got '[mesh] x'"},
      {"[]\n", NULL, "inputs/hex.in:1: empty section name '[]'"},
      {"cells = 2 2 2\n", NULL, "inputs/hex.in:1: key 'cells' comes before any [section]"},
      {"[mesh]\n = 2\n", NULL, "inputs/hex.in:2: missing key before '='"},
      {"[run]\nlabel = \"open\n", NULL,
       "inputs/hex.in:2: [run] label: unterminated quote or text after the closing quote in "
       "'\"open'"},
      /* bad values: the brief's example at line 7, then each type */
      {"# 1\n# 2\n# 3\n# 4\n# 5\n[mesh]\n  cells = 16 0 16\n", NULL,
       "inputs/hex.in:7: [mesh] cells: expected 3 integers >= 1, got '16 0 16'"},
      {"[mesh]\ncells = 16 16\n", NULL,
       "inputs/hex.in:2: [mesh] cells: expected 3 integers >= 1, got '16 16'"},
      {"[mesh]\ncells = 16 16 16 16\n", NULL,
       "inputs/hex.in:2: [mesh] cells: expected 3 integers >= 1, got '16 16 16 16'"},
      {"[mesh]\ncells = 4,,4,4\n", NULL,
       "inputs/hex.in:2: [mesh] cells: expected 3 integers >= 1, got '4,,4,4'"},
      {"[mesh]\ncells = 4,4,4,\n", NULL,
       "inputs/hex.in:2: [mesh] cells: expected 3 integers >= 1, got '4,4,4,'"},
      {"[physics]\nkernels = ,FieldFieldScalar\n", NULL,
       "inputs/hex.in:2: [physics] kernels: expected all, or a list of "
       "FieldFieldScalar|FieldFieldVector|FieldFieldTensor|DataFieldScalar|DataFieldVector|"
       "DataFieldTensor|DataDataScalar|DataDataVector|DataDataTensor, got ',FieldFieldScalar'"},
      {"[mesh]\ncells = 16 16 1.5\n", NULL,
       "inputs/hex.in:2: [mesh] cells: expected 3 integers >= 1, got '16 16 1.5'"},
      {"[run]\nsteps = 2x\n", NULL,
       "inputs/hex.in:2: [run] steps: expected an integer >= 1, got '2x'"},
      {"[run]\nsteps = 9223372036854775808\n", NULL,
       "inputs/hex.in:2: [run] steps: expected an integer >= 1, got '9223372036854775808'"},
      {"[run]\nsteps =\n", NULL, "inputs/hex.in:2: [run] steps: expected an integer >= 1, got ''"},
      {"[mesh]\nlength = 1 0 1\n", NULL,
       "inputs/hex.in:2: [mesh] length: expected 3 numbers in [1e-09, 1000000000], got '1 0 1'"},
      {"[mesh]\nlength = 1e200 1 1\n", NULL,
       "inputs/hex.in:2: [mesh] length: expected 3 numbers in [1e-09, 1000000000], got '1e200 1 1'"},
      {"[mesh]\ndistortion = 0.25\n", NULL,
       "inputs/hex.in:2: [mesh] distortion: expected a number in [0, 0.25), got '0.25'"},
      {"[mesh]\ndistortion = 0.1.2\n", NULL,
       "inputs/hex.in:2: [mesh] distortion: expected a number in [0, 0.25), got '0.1.2'"},
      {"[mesh]\ndistortion = nan\n", NULL,
       "inputs/hex.in:2: [mesh] distortion: expected a number in [0, 0.25), got 'nan'"},
      {"[mesh]\nlength = 1 1 1e999\n", NULL,
       "inputs/hex.in:2: [mesh] length: expected 3 numbers in [1e-09, 1000000000], got '1 1 1e999'"},
      {"[element]\norder = 3\n", NULL,
       "inputs/hex.in:2: [element] order: expected an integer in [1, 2], got '3'"},
      {"[element]\nquadrature = 11\n", NULL,
       "inputs/hex.in:2: [element] quadrature: expected an integer in [0, 10], got '11'"},
      {"[verify]\ntolerance = 0\n", NULL,
       "inputs/hex.in:2: [verify] tolerance: expected a number in (0, 1), got '0'"},
      {"[run]\nbackend = gpu\n", NULL,
       "inputs/hex.in:2: [run] backend: expected one of serial|openmp|cuda, got 'gpu'"},
      {"[run]\nlayout = diagonal\n", NULL,
       "inputs/hex.in:2: [run] layout: expected one of auto|right|left, got 'diagonal'"},
      {"[run]\ntuning_on_error = warn\n", NULL,
       "inputs/hex.in:2: [run] tuning_on_error: expected one of fail|rules, got 'warn'"},
      {"[run]\nbackend = serial\ntuning = t.txt\n", NULL,
       "inputs/hex.in:3: [run] tuning: the serial backend runs the reference only and takes no "
       "tuning file (use run.backend = openmp or cuda, or run.tuning = none)"},
      {"[output]\noverwrite = maybe\n", NULL,
       "inputs/hex.in:2: [output] overwrite: expected true or false (also on/off, yes/no, "
       "1/0), got 'maybe'"},
      {"[physics]\nkernels = FieldFieldScalr\n", NULL,
       "inputs/hex.in:2: [physics] kernels: expected all, or a list of "
       "FieldFieldScalar|FieldFieldVector|FieldFieldTensor|DataFieldScalar|DataFieldVector|"
       "DataFieldTensor|DataDataScalar|DataDataVector|DataDataTensor, got 'FieldFieldScalr'"},
      {"[physics]\nkernels = all, FieldFieldScalar\n", NULL,
       "inputs/hex.in:2: [physics] kernels: expected all, or a list of "
       "FieldFieldScalar|FieldFieldVector|FieldFieldTensor|DataFieldScalar|DataFieldVector|"
       "DataFieldTensor|DataDataScalar|DataDataVector|DataDataTensor, got 'all, "
       "FieldFieldScalar'"},
      {"[output]\npath = \"\"\n", NULL,
       "inputs/hex.in:2: [output] path: expected a non-empty UTF-8 string of at most 1023 "
       "bytes, without '\"' or control characters, got ''"},
      {"[run]\nlabel = caf\xc3\n", NULL,
       "inputs/hex.in:2: [run] label: expected a non-empty UTF-8 string of at most 1023 "
       "bytes, without '\"' or control characters, got 'caf\xc3'"},
      {"[run]\nlabel = a\x01" "b\n", NULL,
       "inputs/hex.in:2: [run] label: expected a non-empty UTF-8 string of at most 1023 "
       "bytes, without '\"' or control characters, got 'a\\x01b'"},
      {"[run]\nlabel = a\tb\n", NULL,
       "inputs/hex.in:2: [run] label: expected a non-empty UTF-8 string of at most 1023 "
       "bytes, without '\"' or control characters, got 'a\\tb'"},
      /* impossible sizes: 1e18 cells fit in int64, their coordinate bytes do not */
      {"[mesh]\ncells = 1000000 1000000 1000000\n", NULL,
       "inputs/hex.in:2: [mesh] cells: 1000000 x 1000000 x 1000000 cells of order 1 are too "
       "many: their cell, node or byte counts overflow int64"},
      {"[mesh]\ncells = 4294967296 4294967296 1\n", NULL,
       "inputs/hex.in:2: [mesh] cells: 4294967296 x 4294967296 x 1 cells of order 1 are too "
       "many: their cell, node or byte counts overflow int64"},
      /* command-line overrides */
      {NULL, "mesh.cels=3", "command line: 'mesh.cels=3': unknown key 'cels' in [mesh]"},
      {NULL, "mesj.cells=3", "command line: 'mesj.cells=3': unknown section [mesj]"},
      {NULL, "cells=3", "command line: 'cells=3': expected section.key=value"},
      {NULL, "mesh.cells", "command line: 'mesh.cells': expected section.key=value"},
      {NULL, "mesh.cells=1,2",
       "command line: 'mesh.cells=1,2': [mesh] cells: expected 3 integers >= 1, got '1,2'"},
      {"[mesh]\ncells = 2 2 2\n", "mesh.cells=3000000000,3000000000,3",
       "command line: 'mesh.cells=3000000000,3000000000,3': [mesh] cells: 3000000000 x "
       "3000000000 x 3 cells of order 1 are too many: their cell, node or byte counts "
       "overflow int64"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_config config;
    char *override = (char *)cases[i].override;
    tc_error_clear();
    tc_err err = tc_config_parse("inputs/hex.in", cases[i].deck, override ? 1 : 0, &override,
                                 &config);
    EXPECT(err == TC_ERR_INPUT, "case %zu: code %d (%s)", i, (int)err, tc_error_message());
    EXPECT_STREQ(tc_error_message(), cases[i].message);
  }
  tc_error_clear();

  /* A backend left out of this build is refused by name. */
  for (int b = 0; b < TC_BACKEND_COUNT; b++) {
    if (tc_contract_backend_get((tc_backend_kind)b))
      continue;
    char deck[64], expected[256];
    snprintf(deck, sizeof deck, "[run]\nbackend = %s\n", tc_backend_name((tc_backend_kind)b));
    snprintf(expected, sizeof expected,
             "inputs/hex.in:2: [run] backend: '%s' is not compiled into this build (available: ",
             tc_backend_name((tc_backend_kind)b));
    tc_config config;
    EXPECT(tc_config_parse("inputs/hex.in", deck, 0, NULL, &config) == TC_ERR_INPUT,
           "backend %d", b);
    EXPECT(strncmp(tc_error_message(), expected, strlen(expected)) == 0, "got '%s'",
           tc_error_message());
    tc_error_clear();
  }
}

/// Counts the "key = value" lines of a deck text.
static int count_entries(const char *deck) {
  int count = 0;
  for (const char *line = deck; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (*line && *line != '#' && *line != '[' && *line != '\n' && strstr(line, " = ") &&
        strstr(line, " = ") < (strchr(line, '\n') ? strchr(line, '\n') : line + strlen(line)))
      count++;
  return count;
}

static void test_format_double(void) {
  const struct {
    double value;
    const char *text;
  } cases[] = {{10, "10"},
               {0.1, "0.1"},
               {1e-9, "1e-09"},
               {1.5e6, "1500000"},
               {1e20, "1e+20"},
               {0.30000000000000004, "0.30000000000000004"},
               {-2.5, "-2.5"},
               {123456789012345.0, "123456789012345"},
               {0, "0"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[TC_CONFIG_DOUBLE_CHARS];
    tc_config_format_double(cases[i].value, text);
    EXPECT_STREQ(text, cases[i].text);
  }
}

static void test_round_trip(void) {
  tc_config defaults, unusual, parsed;
  char *fallback[1];
  REQUIRE_CALL(tc_config_defaults(&defaults));
  if (deck_test_fallback(fallback))
    defaults.backend = TC_BACKEND_SERIAL;
  REQUIRE_CALL(tc_config_parse(
      "unusual.in",
      "[mesh]\ncells = 7 1 123456\nlength = 0.1 3.3333333333333335 1e-7\n"
      "distortion = 0.24999999999999997\n[element]\norder = 2\nquadrature = 10\n"
      "[physics]\nkernels = DataDataScalar FieldFieldTensor\n"
      "[run]\nlabel = \"  #; odd label ' with spaces, caf\xc3\xa9\"\n"
      "backend = serial\nlayout = right\nmemory_check = false\nprogress = on\n"
      "variant = tiling\nprecision = float\nsteps = 123456789012\nthreads = 4096\n"
      "[verify]\nchecks = on\ntolerance = 0.30000000000000004\n"
      "[output]\npath = \"/tmp/dir with space/x;y#z.h5\"\noverwrite = true\n",
      0, NULL, &unusual));
  const tc_config *configs[] = {&defaults, &unusual};
  for (int i = 0; i < 2; i++) {
    char *deck = NULL, *again = NULL;
    REQUIRE_CALL(tc_config_deck_string(configs[i], &deck));
    tc_err err = tc_config_parse("printed.in", deck, 0, NULL, &parsed);
    EXPECT(err == TC_SUCCESS, "printed deck %d does not parse: %s\n%s", i, tc_error_message(),
           deck);
    EXPECT(same_config(&parsed, configs[i]), "deck %d does not round-trip:\n%s", i, deck);
    if (err == TC_SUCCESS && tc_config_deck_string(&parsed, &again) == TC_SUCCESS)
      EXPECT_STREQ(again, deck);
    EXPECT(count_entries(deck) == NUM_KEYS, "deck %d has %d entries, want %d", i,
           count_entries(deck), NUM_KEYS);
    free(deck);
    free(again);
    tc_error_clear();
  }

  /* tc_config_print_deck writes the same text. */
  FILE *file = tmpfile();
  EXPECT(file, "tmpfile");
  if (!file)
    return;
  char *deck = NULL;
  REQUIRE_CALL(tc_config_deck_string(&unusual, &deck));
  REQUIRE_CALL(tc_config_print_deck(file, &unusual));
  long size = ftell(file);
  rewind(file);
  char *printed = calloc((size_t)size + 1, 1);
  EXPECT(printed && fread(printed, 1, (size_t)size, file) == (size_t)size, "read back");
  EXPECT(printed && strcmp(printed, deck) == 0, "print_deck differs from deck_string");
  free(printed);
  free(deck);
  fclose(file);
}

static void test_help(void) {
  FILE *file = tmpfile();
  EXPECT(file, "tmpfile");
  if (!file)
    return;
  REQUIRE_CALL(tc_config_print_help(file));
  long size = ftell(file);
  rewind(file);
  char *help = calloc((size_t)size + 1, 1);
  EXPECT(help && fread(help, 1, (size_t)size, file) == (size_t)size, "read back");
  fclose(file);
  tc_config defaults;
  char *deck = NULL;
  REQUIRE_CALL(tc_config_defaults(&defaults));
  REQUIRE_CALL(tc_config_deck_string(&defaults, &deck));
  for (int i = 0; help && i < NUM_KEYS; i++) {
    char entry[96], deck_key[96];
    snprintf(entry, sizeof entry, "  %s = ", all_keys[i]);
    EXPECT(strstr(help, entry), "help lacks %s", all_keys[i]);
    snprintf(deck_key, sizeof deck_key, "\n%s = ", strchr(all_keys[i], '.') + 1);
    EXPECT(strstr(deck, deck_key), "printed deck lacks %s", all_keys[i]);
  }
  EXPECT(help && strstr(help, "one of serial|openmp|cuda"), "help shows enum choices");
  EXPECT(help && strstr(help, "  mesh.cells = 16 16 16\n      3 integers >= 1\n"),
         "help shows type and default:\n%s", help);
  free(help);
  free(deck);
}

/// The shipped default deck (inputs/hex.in) loads and says what it says.
static void test_shipped_deck(const char *path) {
  tc_config config;
  char *fallback[1];
  int num_fallback = deck_test_fallback(fallback);
  REQUIRE_CALL(tc_config_load(MPI_COMM_WORLD, path, num_fallback, fallback, &config));
  EXPECT(config.cells[0] == 24 && config.cells[1] == 24 && config.cells[2] == 24, "cells");
  EXPECT(config.order == 1 && tc_config_num_kernels(&config) == TC_KERNEL_COUNT, "element");
  EXPECT(config.steps == 2 && config.checks == TC_CHECKS_ON, "steps, checks");
  EXPECT(config.backend == (num_fallback ? TC_BACKEND_SERIAL : TC_BACKEND_OPENMP), "backend");
  EXPECT(config.threads == 1, "threads");
  EXPECT_STREQ(config.path, "tcmini.h5");
  EXPECT_STREQ(config.report, "tcmini-report.yaml");
  EXPECT(!config.overwrite, "hex.in keeps the default: an earlier result is never replaced");
}

int main(int argc, char **argv) {
  deck_test_init(&argc, &argv);
  if (argc != 2) {
    fprintf(stderr, "usage: test_deck_parse inputs/hex.in\n");
    return EXIT_FAILURE;
  }
  test_shipped_deck(argv[1]);
  test_defaults();
  test_good_deck();
  test_vendor_and_tuning();
  test_overrides();
  test_errors();
  test_format_double();
  test_round_trip();
  test_help();
  return deck_test_finish("test_deck_parse");
}
