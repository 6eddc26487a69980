/* test_fem_function_space: HGRAD values and gradients, plain and weighted by
 * the measures, hold the same logical values in layouts right and left
 * (offsets computed here independently), float output is the double output
 * rounded, the weighted arrays are measure times the plain ones; and
 * tc_fem_array_export places a rank-5 array the same way (and where
 * tc_contract's tc_layout_offset says). */
#include "fem_test.h"
#include "tc_basis.h"
#include "tc_fem_array.h"
#include "tc_function_space.h"
#include "tc_geometry.h"
#include "tc_quadrature.h"

enum { C = FEM_TEST_NUM_CELLS, F = 27, ORDER = 2, POINTS_1D = 2, P = POINTS_1D * POINTS_1D * POINTS_1D };

// Offset of logical (c,f,p,i) in a (C,F,P[,3]) array: right = row-major,
// left = column-major.
static int64_t offset(tc_layout layout, int rank, int c, int f, int p, int i) {
  if (layout == TC_LAYOUT_LEFT)
    return c + (int64_t)C * (f + (int64_t)F * (p + (int64_t)P * i));
  return rank == 3 ? ((int64_t)c * F + f) * P + p : (((int64_t)c * F + f) * P + p) * 3 + i;
}

static const char *const layout_name[TC_LAYOUT_COUNT] = {"right", "left"};
static const char *const precision_name[TC_PRECISION_COUNT] = {"double", "float"};

static double element(const void *array, tc_precision precision, int64_t at) {
  return precision == TC_FLOAT ? ((const float *)array)[at] : ((const double *)array)[at];
}

// The four transformed arrays of one layout and precision.
typedef struct {
  void *values, *weighted_values, *gradients, *weighted_gradients;
} outputs;

static tc_err transform(const double *ref_values, const double *ref_gradients,
                        const double *inverses, const double *measures, tc_layout layout,
                        tc_precision precision, outputs *out) {
  TC_CALL(tc_hgrad_values(C, F, P, ref_values, NULL, layout, precision, out->values));
  TC_CALL(tc_hgrad_values(C, F, P, ref_values, measures, layout, precision, out->weighted_values));
  TC_CALL(tc_hgrad_gradients(C, F, P, ref_gradients, inverses, NULL, layout, precision, out->gradients));
  TC_CALL(tc_hgrad_gradients(C, F, P, ref_gradients, inverses, measures, layout, precision,
                             out->weighted_gradients));
  return TC_SUCCESS;
}

static void test_layouts_and_precisions(void) {
  tc_quadrature *rule = NULL;
  REQUIRE_CALL(tc_quadrature_create(POINTS_1D, &rule));
  const double *xi = tc_quadrature_points(rule);
  static double ref_nodes[F * 3], node_coords[C * F * 3], ref_values[F * P], ref_gradients[F * P * 3];
  static double jacobians[C * P * 9], determinants[C * P], inverses[C * P * 9], measures[C * P];
  fem_test_cell cells[C];
  REQUIRE_CALL(tc_basis_nodes(ORDER, ref_nodes));
  fem_test_cells(ORDER, F, ref_nodes, cells, node_coords);
  REQUIRE_CALL(tc_basis_values(ORDER, P, xi, ref_values));
  REQUIRE_CALL(tc_basis_gradients(ORDER, P, xi, ref_gradients));
  REQUIRE_CALL(tc_geometry_jacobians(C, F, node_coords, P, ref_gradients, jacobians));
  REQUIRE_CALL(tc_geometry_invert_jacobians(C, P, jacobians, determinants, inverses));
  REQUIRE_CALL(tc_geometry_measures(C, P, determinants, tc_quadrature_weights(rule), measures));
  tc_quadrature_destroy(&rule);

  // [layout][precision]; storage sized for double, also holds float.
  static double storage[TC_LAYOUT_COUNT][TC_PRECISION_COUNT][4][C * F * P * 3];
  outputs out[TC_LAYOUT_COUNT][TC_PRECISION_COUNT];
  for (int l = 0; l < TC_LAYOUT_COUNT; ++l)
    for (int q = 0; q < TC_PRECISION_COUNT; ++q) {
      out[l][q] = (outputs){storage[l][q][0], storage[l][q][1], storage[l][q][2], storage[l][q][3]};
      REQUIRE_CALL(transform(ref_values, ref_gradients, inverses, measures, (tc_layout)l,
                             (tc_precision)q, &out[l][q]));
    }

  for (int c = 0; c < C; ++c)
    for (int f = 0; f < F; ++f)
      for (int p = 0; p < P; ++p) {
        const double m = measures[c * P + p];
        const int64_t at = offset(TC_LAYOUT_RIGHT, 3, c, f, p, 0);
        const double value = element(out[TC_LAYOUT_RIGHT][TC_DOUBLE].values, TC_DOUBLE, at);
        const double weighted = element(out[TC_LAYOUT_RIGHT][TC_DOUBLE].weighted_values, TC_DOUBLE, at);
        EXPECT(value == ref_values[f * P + p], "value (%d,%d,%d) is not the reference value", c, f, p);
        EXPECT_NEAR(weighted, m * value, 1e-15 * fabs(m * value), "weighted value (%d,%d,%d)", c, f, p);
        for (int i = 0; i < 3; ++i) {
          const int64_t at4 = offset(TC_LAYOUT_RIGHT, 4, c, f, p, i);
          const double gradient = element(out[TC_LAYOUT_RIGHT][TC_DOUBLE].gradients, TC_DOUBLE, at4);
          const double weighted_gradient =
              element(out[TC_LAYOUT_RIGHT][TC_DOUBLE].weighted_gradients, TC_DOUBLE, at4);
          EXPECT_NEAR(weighted_gradient, m * gradient, 1e-15 * fabs(m * gradient),
                      "weighted gradient (%d,%d,%d,%d)", c, f, p, i);
        }
        // Every layout and precision holds the same logical values: identical
        // in double, the double value rounded to float in float.
        for (int l = 0; l < TC_LAYOUT_COUNT; ++l)
          for (int q = 0; q < TC_PRECISION_COUNT; ++q) {
            const outputs *o = &out[l][q], *ref = &out[TC_LAYOUT_RIGHT][TC_DOUBLE];
            const tc_precision precision = (tc_precision)q;
#define SAME(expected) (precision == TC_FLOAT ? (double)(float)(expected) : (expected))
            const int64_t mine = offset((tc_layout)l, 3, c, f, p, 0);
            EXPECT(element(o->values, precision, mine) == SAME(element(ref->values, TC_DOUBLE, at)),
                   "%s %s value (%d,%d,%d)", layout_name[l], precision_name[q], c, f, p);
            EXPECT(element(o->weighted_values, precision, mine) ==
                       SAME(element(ref->weighted_values, TC_DOUBLE, at)),
                   "%s %s weighted value (%d,%d,%d)", layout_name[l], precision_name[q], c, f, p);
            for (int i = 0; i < 3; ++i) {
              const int64_t mine4 = offset((tc_layout)l, 4, c, f, p, i), at4 = offset(TC_LAYOUT_RIGHT, 4, c, f, p, i);
              EXPECT(element(o->gradients, precision, mine4) == SAME(element(ref->gradients, TC_DOUBLE, at4)),
                     "%s %s gradient (%d,%d,%d,%d)", layout_name[l], precision_name[q], c, f, p, i);
              EXPECT(element(o->weighted_gradients, precision, mine4) ==
                         SAME(element(ref->weighted_gradients, TC_DOUBLE, at4)),
                     "%s %s weighted gradient (%d,%d,%d,%d)", layout_name[l], precision_name[q], c, f, p, i);
            }
#undef SAME
          }
      }

  EXPECT_FAILURE(tc_hgrad_values(C, F, P, ref_values, NULL, TC_LAYOUT_COUNT, TC_DOUBLE, storage[0][0][0]),
                 TC_ERR_ARGUMENT, "unknown layout");
  EXPECT_FAILURE(tc_hgrad_gradients(C, F, P, ref_gradients, inverses, NULL, TC_LAYOUT_LEFT,
                                    TC_PRECISION_COUNT, storage[0][0][0]),
                 TC_ERR_ARGUMENT, "unknown precision");
  EXPECT_FAILURE(tc_hgrad_values(C, 0, P, ref_values, NULL, TC_LAYOUT_LEFT, TC_DOUBLE, storage[0][0][0]),
                 TC_ERR_ARGUMENT, "0 fields");
}

// A batch of many cells (several thread blocks in layout left, the last one
// partial): weighted gradients agree between the layouts.
static void test_many_cells(void) {
  enum { MANY = 37 };
  tc_quadrature *rule = NULL;
  REQUIRE_CALL(tc_quadrature_create(POINTS_1D, &rule));
  static double ref_nodes[F * 3], three_cells[C * F * 3], node_coords[MANY * F * 3];
  static double ref_gradients[F * P * 3], jacobians[MANY * P * 9], determinants[MANY * P];
  static double inverses[MANY * P * 9], measures[MANY * P], right[MANY * F * P * 3], left[MANY * F * P * 3];
  fem_test_cell cells[C];
  REQUIRE_CALL(tc_basis_nodes(ORDER, ref_nodes));
  fem_test_cells(ORDER, F, ref_nodes, cells, three_cells);
  for (int c = 0; c < MANY; ++c) // the three cells over and over, each copy moved along x
    for (int a = 0; a < F; ++a)
      for (int i = 0; i < 3; ++i)
        node_coords[(c * F + a) * 3 + i] = three_cells[((c % C) * F + a) * 3 + i] + (i == 0 ? c : 0.0);
  REQUIRE_CALL(tc_basis_gradients(ORDER, P, tc_quadrature_points(rule), ref_gradients));
  REQUIRE_CALL(tc_geometry_jacobians(MANY, F, node_coords, P, ref_gradients, jacobians));
  REQUIRE_CALL(tc_geometry_invert_jacobians(MANY, P, jacobians, determinants, inverses));
  REQUIRE_CALL(tc_geometry_measures(MANY, P, determinants, tc_quadrature_weights(rule), measures));
  tc_quadrature_destroy(&rule);
  REQUIRE_CALL(tc_hgrad_gradients(MANY, F, P, ref_gradients, inverses, measures, TC_LAYOUT_RIGHT,
                                  TC_DOUBLE, right));
  REQUIRE_CALL(tc_hgrad_gradients(MANY, F, P, ref_gradients, inverses, measures, TC_LAYOUT_LEFT,
                                  TC_DOUBLE, left));
  for (int c = 0; c < MANY; ++c)
    for (int f = 0; f < F; ++f)
      for (int p = 0; p < P; ++p)
        for (int i = 0; i < 3; ++i) {
          const double r = right[(((int64_t)c * F + f) * P + p) * 3 + i];
          const double l = left[c + (int64_t)MANY * (f + (int64_t)F * (p + (int64_t)P * i))];
          const double copied = right[((((int64_t)c % C) * F + f) * P + p) * 3 + i];
          EXPECT(r == l, "weighted gradient (%d,%d,%d,%d): right %g, left %g", c, f, p, i, r, l);
          EXPECT_NEAR(r, copied, 1e-12, "weighted gradient (%d,%d,%d,%d) of a moved copy", c, f, p, i);
        }
}

// A (2,3,4,2,3) array numbered 0,1,2,... in row-major order, exported to
// each layout and precision, lands where the layout's definition says.
static void test_export(void) {
  enum { N0 = 2, N1 = 3, N2 = 4, N3 = 2, N4 = 3, COUNT = N0 * N1 * N2 * N3 * N4 };
  const int64_t dims[5] = {N0, N1, N2, N3, N4};
  double values[COUNT], as_double[COUNT];
  float as_float[COUNT];
  for (int e = 0; e < COUNT; ++e)
    values[e] = e + 0.1;
  for (int l = 0; l < TC_LAYOUT_COUNT; ++l) {
    REQUIRE_CALL(tc_fem_array_export(5, dims, values, (tc_layout)l, TC_DOUBLE, as_double));
    REQUIRE_CALL(tc_fem_array_export(5, dims, values, (tc_layout)l, TC_FLOAT, as_float));
    for (int a = 0; a < N0; ++a)
      for (int b = 0; b < N1; ++b)
        for (int c = 0; c < N2; ++c)
          for (int d = 0; d < N3; ++d)
            for (int e = 0; e < N4; ++e) {
              int64_t row_major = (((a * N1 + b) * N2 + c) * N3 + d) * N4 + e;
              int64_t column_major = a + N0 * (b + N1 * (c + N2 * (d + N3 * e)));
              int64_t at = l == TC_LAYOUT_LEFT ? column_major : row_major;
              const int64_t index[5] = {a, b, c, d, e};
              EXPECT(tc_layout_offset((tc_layout)l, 5, dims, index) == at,
                     "tc_layout_offset disagrees with the %s layout", layout_name[l]);
              EXPECT(as_double[at] == values[row_major] && as_float[at] == (float)values[row_major],
                     "%s export of (%d,%d,%d,%d,%d)", layout_name[l], a, b, c, d, e);
            }
  }
  EXPECT_FAILURE(tc_fem_array_export(6, dims, values, TC_LAYOUT_RIGHT, TC_DOUBLE, as_double),
                 TC_ERR_ARGUMENT, "rank 6");
}

int main(void) {
  test_layouts_and_precisions();
  test_many_cells();
  test_export();
  return fem_test_finish("test_fem_function_space");
}
