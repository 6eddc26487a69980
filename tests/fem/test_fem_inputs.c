/* test_fem_inputs: the contraction inputs of a batch from tc_physics_builder
 * (every input in one pass), in both layouts and precisions, against
 * references formed here input by input: the values and gradients from the
 * HGRAD transforms of src/fem (tc_hgrad_values, tc_hgrad_gradients), the
 * others from the formulas of tc_physics_fields.h written out as loops over
 * those gradients, placed into the layout and precision by
 * tc_fem_array_export. The builder must match them bit for bit (it evaluates
 * the same expressions in the same order), match itself when built one input
 * at a time (tc_physics_build_input) or for a subset, and refuse bad sizes.
 * Geometry and basis are arbitrary numbers, not a mesh: the builder only
 * applies formulas. */
#include "fem_test.h"
#include "tc_fem_array.h"
#include "tc_function_space.h"
#include "tc_physics_builder.h"

enum { C = 5, F = 8, P = 4 };

/* Deterministic numbers in [low, high). */
static double next(uint64_t *state, double low, double high) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return low + (high - low) * (double)(*state >> 11) / 9007199254740992.0;
}

typedef struct {
  double measures[C * P], ref_values[F * P], ref_gradients[F * P * 3];
  double inverses[C * P * 9], node_coords[C * F * 3];
  double gradients[C * F * P * 3]; /* tc_hgrad_gradients, layout right, double */
} batch_data;

static void fill(batch_data *d) {
  uint64_t state = 12345;
  for (int i = 0; i < C * P; ++i)
    d->measures[i] = next(&state, 0.1, 1.0);
  for (int i = 0; i < F * P; ++i)
    d->ref_values[i] = next(&state, -1.0, 1.0);
  for (int i = 0; i < F * P * 3; ++i)
    d->ref_gradients[i] = next(&state, -1.0, 1.0);
  for (int i = 0; i < C * P * 9; ++i)
    d->inverses[i] = next(&state, -2.0, 2.0);
  for (int i = 0; i < C * F * 3; ++i)
    d->node_coords[i] = next(&state, 0.0, 1.0);
}

/* d filled, the batch over its arrays, and d's gradients formed (a failure
 * counted, the batch still valid). */
static void prepare(batch_data *d, tc_physics_batch *batch) {
  fill(d);
  *batch = (tc_physics_batch){.num_cells = C,
                              .num_fields = F,
                              .num_points = P,
                              .measures = d->measures,
                              .ref_values = d->ref_values,
                              .ref_gradients = d->ref_gradients,
                              .inverse_jacobians = d->inverses,
                              .node_coords = d->node_coords};
  REQUIRE_CALL(tc_hgrad_gradients(C, F, P, d->ref_gradients, d->inverses, NULL, TC_LAYOUT_RIGHT,
                                  TC_DOUBLE, d->gradients));
}

/* The reference of one input, row-major double, (C, ...). */
static void reference(tc_physics_input input, const batch_data *d, const tc_physics_fields *f,
                      double *out) {
  const int64_t per_cell = tc_physics_input_count(input, 1, F, P);
  for (int c = 0; c < C; ++c) {
    const double *dV = d->measures + c * P, *x = d->node_coords + c * F * 3;
    const double *grad = d->gradients + c * F * P * 3;
    double *o = out + c * per_cell;
    switch (input) {
    case TC_INPUT_STRAINS:
    case TC_INPUT_WEIGHTED_STRESSES:
      for (int a = 0; a < F; ++a)
        for (int i = 0; i < 3; ++i)
          for (int q = 0; q < P; ++q) {
            double eps[9], sigma[9];
            tc_physics_basis_strain(i, grad + (a * P + q) * 3, eps);
            tc_physics_stress_of_strain(f, eps, sigma);
            for (int k = 0; k < 9; ++k)
              o[((a * 3 + i) * P + q) * 9 + k] =
                  input == TC_INPUT_STRAINS ? eps[k] : dV[q] * sigma[k];
          }
      break;
    case TC_INPUT_FIELD_U:
    case TC_INPUT_WEIGHTED_FIELD_U:
      for (int q = 0; q < P; ++q) {
        double u = 0.0;
        for (int a = 0; a < F; ++a)
          u += tc_physics_field_u(f, x + 3 * a) * d->ref_values[a * P + q];
        o[q] = input == TC_INPUT_FIELD_U ? u : dV[q] * u;
      }
      break;
    case TC_INPUT_GRADIENT_U_CELL:
      for (int k = 0; k < 3; ++k)
        o[k] = f->g[k];
      break;
    case TC_INPUT_GRADIENT_U:
    case TC_INPUT_WEIGHTED_GRADIENT_U:
      for (int q = 0; q < P; ++q)
        for (int k = 0; k < 3; ++k) {
          double sum = 0.0;
          for (int a = 0; a < F; ++a)
            sum += tc_physics_field_u(f, x + 3 * a) * grad[(a * P + q) * 3 + k];
          o[q * 3 + k] = input == TC_INPUT_GRADIENT_U ? sum : dV[q] * sum;
        }
      break;
    case TC_INPUT_STRAIN_W:
    case TC_INPUT_WEIGHTED_STRESS_W:
      for (int q = 0; q < P; ++q) {
        double H[9] = {0}, eps[9], sigma[9];
        for (int a = 0; a < F; ++a) {
          double w[3];
          tc_physics_field_w(f, x + 3 * a, w);
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              H[3 * i + j] += w[i] * grad[(a * P + q) * 3 + j];
        }
        tc_physics_symmetric_part(H, eps);
        tc_physics_stress_of_strain(f, eps, sigma);
        for (int k = 0; k < 9; ++k)
          o[q * 9 + k] = input == TC_INPUT_STRAIN_W ? eps[k] : dV[q] * sigma[k];
      }
      break;
    default:
      break;
    }
  }
}

/* The expected array of one input in layout and precision. */
static tc_err expected_input(tc_physics_input input, const batch_data *d,
                             const tc_physics_fields *f, tc_layout layout,
                             tc_precision precision, void *out) {
  switch (input) {
  case TC_INPUT_VALUES:
  case TC_INPUT_WEIGHTED_VALUES:
    return tc_hgrad_values(C, F, P, d->ref_values,
                           input == TC_INPUT_VALUES ? NULL : d->measures, layout, precision, out);
  case TC_INPUT_GRADIENTS:
  case TC_INPUT_WEIGHTED_GRADIENTS:
    return tc_hgrad_gradients(C, F, P, d->ref_gradients, d->inverses,
                              input == TC_INPUT_GRADIENTS ? NULL : d->measures, layout,
                              precision, out);
  default: {
    int64_t dims[5];
    const int rank = tc_physics_input_dims(input, C, F, P, dims);
    double *values = calloc((size_t)tc_physics_input_count(input, C, F, P), sizeof *values);
    TC_CHECK(values, TC_ERR_MEMORY, "out of memory");
    reference(input, d, f, values);
    tc_err err = tc_fem_array_export(rank, dims, values, layout, precision, out);
    free(values);
    return err;
  }
  }
}

static size_t input_bytes(tc_physics_input input, tc_precision precision) {
  return (size_t)(tc_physics_input_count(input, C, F, P) * tc_precision_size(precision));
}

static void test_all_inputs(void) {
  static batch_data d;
  tc_physics_batch batch;
  prepare(&d, &batch);
  const tc_physics_fields *f = tc_physics_default_fields();
  bool all[TC_INPUT_COUNT];
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    all[i] = true;
  for (int layout = 0; layout < TC_LAYOUT_COUNT; ++layout)
    for (int precision = 0; precision < TC_PRECISION_COUNT; ++precision) {
      void *built[TC_INPUT_COUNT], *alone = NULL, *expected = NULL;
      size_t largest = 0;
      for (int i = 0; i < TC_INPUT_COUNT; ++i) {
        built[i] = malloc(input_bytes(i, precision));
        memset(built[i], 0xff, input_bytes(i, precision)); /* NaN: every entry must be written */
        largest = input_bytes(i, precision) > largest ? input_bytes(i, precision) : largest;
      }
      alone = malloc(largest);
      expected = malloc(largest);
      tc_physics_builder *builder = NULL;
      tc_err err = tc_physics_builder_create(all, F, P, layout, precision, f, &builder);
      EXPECT(err == TC_SUCCESS, "create: %s", tc_error_message());
      if (err == TC_SUCCESS)
        err = tc_physics_build_inputs(builder, &batch, built);
      EXPECT(err == TC_SUCCESS, "build: %s", tc_error_message());
      for (int i = 0; err == TC_SUCCESS && i < TC_INPUT_COUNT; ++i) {
        const size_t bytes = input_bytes(i, precision);
        EXPECT(expected_input(i, &d, f, layout, precision, expected) == TC_SUCCESS, "reference");
        EXPECT(memcmp(built[i], expected, bytes) == 0,
               "input %d, layout %s, %s: not bitwise the reference", i,
               tc_layout_name(layout), tc_precision_name(precision));
        EXPECT(tc_physics_build_input(i, &batch, f, layout, precision, alone) == TC_SUCCESS,
               "alone");
        EXPECT(memcmp(built[i], alone, bytes) == 0, "input %d, layout %s, %s: alone differs",
               i, tc_layout_name(layout), tc_precision_name(precision));
      }
      tc_physics_builder_destroy(&builder);
      EXPECT(builder == NULL, "destroy sets NULL");
      for (int i = 0; i < TC_INPUT_COUNT; ++i)
        free(built[i]);
      free(alone);
      free(expected);
    }
}

/* The elasticity pair alone, the others left untouched. */
static void test_subset(void) {
  static batch_data d;
  static double strains[C * 3 * F * P * 9], stresses[C * 3 * F * P * 9], untouched[8];
  tc_physics_batch batch;
  prepare(&d, &batch);
  bool needed[TC_INPUT_COUNT] = {false};
  needed[TC_INPUT_STRAINS] = needed[TC_INPUT_WEIGHTED_STRESSES] = true;
  void *outputs[TC_INPUT_COUNT] = {NULL};
  outputs[TC_INPUT_STRAINS] = strains;
  outputs[TC_INPUT_WEIGHTED_STRESSES] = stresses;
  outputs[TC_INPUT_VALUES] = untouched;
  tc_physics_builder *builder = NULL;
  REQUIRE_CALL(tc_physics_builder_create(needed, F, P, TC_LAYOUT_RIGHT, TC_DOUBLE,
                                         tc_physics_default_fields(), &builder));
  tc_err err = tc_physics_build_inputs(builder, &batch, outputs);
  tc_physics_builder_destroy(&builder);
  REQUIRE_CALL(err);
  static double expected[C * 3 * F * P * 9];
  reference(TC_INPUT_STRAINS, &d, tc_physics_default_fields(), expected);
  EXPECT(memcmp(strains, expected, sizeof strains) == 0, "strains alone");
  reference(TC_INPUT_WEIGHTED_STRESSES, &d, tc_physics_default_fields(), expected);
  EXPECT(memcmp(stresses, expected, sizeof stresses) == 0, "stresses alone");
  for (int i = 0; i < 8; ++i)
    EXPECT(untouched[i] == 0.0, "an input not needed was written");
}

static void test_bad_sizes(void) {
  bool needed[TC_INPUT_COUNT] = {false};
  needed[TC_INPUT_VALUES] = true;
  tc_physics_builder *builder = NULL;
  EXPECT_FAILURE(tc_physics_builder_create(needed, 0, P, TC_LAYOUT_RIGHT, TC_DOUBLE,
                                           tc_physics_default_fields(), &builder),
                 TC_ERR_ARGUMENT, "input builder for 0 fields");
  REQUIRE_CALL(tc_physics_builder_create(needed, F, P, TC_LAYOUT_RIGHT, TC_DOUBLE,
                                         tc_physics_default_fields(), &builder));
  static batch_data d;
  tc_physics_batch other;
  prepare(&d, &other);
  other.num_fields = F + 1; /* not the builder's */
  void *outputs[TC_INPUT_COUNT] = {NULL};
  EXPECT_FAILURE(tc_physics_build_inputs(builder, &other, outputs), TC_ERR_ARGUMENT,
                 "for a builder of 8 fields");
  tc_physics_builder_destroy(&builder);
}

int main(void) {
  test_all_inputs();
  test_subset();
  test_bad_sizes();
  return fem_test_finish("test_fem_inputs");
}
