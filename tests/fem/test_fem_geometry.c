/* test_fem_geometry: Jacobians, determinants, inverses, measures and
 * physical points of affine and curved Q1/Q2 cells against their closed
 * forms; cell volumes; physical gradients that reproduce linear functions;
 * inverted and degenerate cells rejected by name. */
#include "fem_test.h"
#include "tc_basis.h"
#include "tc_function_space.h"
#include "tc_geometry.h"
#include "tc_quadrature.h"

enum { C = FEM_TEST_NUM_CELLS, MAX_F = 27, POINTS_1D = 3, P = POINTS_1D * POINTS_1D * POINTS_1D };

typedef struct {
  int F;
  fem_test_cell cells[C];
  double ref_nodes[MAX_F * 3], node_coords[C * MAX_F * 3];
  double ref_values[MAX_F * P], ref_gradients[MAX_F * P * 3];
  double jacobians[C * P * 9], determinants[C * P], inverses[C * P * 9], measures[C * P];
  double points[C * P * 3];
} batch;

static tc_err build(int order, const tc_quadrature *rule, batch *b) {
  b->F = tc_basis_num_fields(order);
  const double *xi = tc_quadrature_points(rule);
  TC_CALL(tc_basis_nodes(order, b->ref_nodes));
  fem_test_cells(order, b->F, b->ref_nodes, b->cells, b->node_coords);
  TC_CALL(tc_basis_values(order, P, xi, b->ref_values));
  TC_CALL(tc_basis_gradients(order, P, xi, b->ref_gradients));
  TC_CALL(tc_geometry_jacobians(C, b->F, b->node_coords, P, b->ref_gradients, b->jacobians));
  TC_CALL(tc_geometry_invert_jacobians(C, P, b->jacobians, b->determinants, b->inverses));
  TC_CALL(tc_geometry_measures(C, P, b->determinants, tc_quadrature_weights(rule), b->measures));
  TC_CALL(tc_geometry_physical_points(C, b->F, b->node_coords, P, b->ref_values, b->points));
  return TC_SUCCESS;
}

static void test_cells(int order, const tc_quadrature *rule) {
  static batch b;
  REQUIRE_CALL(build(order, rule, &b));
  const double *xi = tc_quadrature_points(rule), *weights = tc_quadrature_weights(rule);
  for (int c = 0; c < C; ++c) {
    const fem_test_cell *cell = &b.cells[c];
    double volume = 0.0;
    for (int p = 0; p < P; ++p) {
      const int cp = c * P + p;
      double x[3], J[3][3];
      fem_test_cell_map(cell, order, xi + 3 * p, x, J);
      const double det = fem_test_cell_det(cell, order, xi + 3 * p);
      const double *inv = b.inverses + cp * 9;
      EXPECT_NEAR(b.determinants[cp], det, 1e-13, "order %d cell %d point %d det J", order, c, p);
      EXPECT_NEAR(b.measures[cp], weights[p] * det, 1e-13, "order %d cell %d point %d measure", order, c, p);
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(b.points[cp * 3 + i], x[i], 1e-13, "order %d cell %d point %d x_%d", order, c, p, i);
        for (int j = 0; j < 3; ++j) {
          EXPECT_NEAR(b.jacobians[cp * 9 + 3 * i + j], J[i][j], 1e-13, "order %d cell %d point %d J_%d%d",
                      order, c, p, i, j);
          double product = 0.0; // (J^-1 J)_ij
          for (int k = 0; k < 3; ++k)
            product += inv[3 * i + k] * J[k][j];
          EXPECT_NEAR(product, i == j ? 1.0 : 0.0, 1e-13, "order %d cell %d point %d (J^-1 J)_%d%d",
                      order, c, p, i, j);
          if (!cell->curved)
            EXPECT_NEAR(inv[3 * i + j], cell->map.inverse[i][j], 1e-13,
                        "order %d affine cell %d point %d J^-1_%d%d", order, c, p, i, j);
        }
      }
      volume += b.measures[cp];
    }
    const double exact = fem_test_cell_volume(cell, order);
    EXPECT_NEAR(volume, exact, 1e-13 * exact, "order %d cell %d volume", order, c);
  }

  // Physical gradients reproduce a linear u(x) = g.x + u0 from its nodal
  // values, on affine and curved cells alike (u(x(xi)) lies in Q_order).
  static double gradients[C * MAX_F * P * 3], weighted_values[C * MAX_F * P];
  REQUIRE_CALL(tc_hgrad_gradients(C, b.F, P, b.ref_gradients, b.inverses, NULL, TC_LAYOUT_RIGHT,
                                  TC_DOUBLE, gradients));
  REQUIRE_CALL(tc_hgrad_values(C, b.F, P, b.ref_values, b.measures, TC_LAYOUT_RIGHT, TC_DOUBLE,
                               weighted_values));
  const double g[3] = {0.7, -1.3, 2.1}, u0 = 0.4;
  for (int c = 0; c < C; ++c) {
    double weighted_sum = 0.0;
    for (int p = 0; p < P; ++p) {
      double grad_u[3] = {0, 0, 0};
      for (int a = 0; a < b.F; ++a) {
        const double *X = b.node_coords + (c * b.F + a) * 3;
        const double u = u0 + g[0] * X[0] + g[1] * X[1] + g[2] * X[2];
        for (int i = 0; i < 3; ++i)
          grad_u[i] += u * gradients[((c * b.F + a) * P + p) * 3 + i];
        weighted_sum += weighted_values[(c * b.F + a) * P + p];
      }
      for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(grad_u[i], g[i], 1e-12, "order %d cell %d point %d: d u / d x_%d", order, c, p, i);
    }
    const double exact = fem_test_cell_volume(&b.cells[c], order);
    EXPECT_NEAR(weighted_sum, exact, 1e-13 * exact, "order %d cell %d: sum of weighted values", order, c);
  }
}

// A cell mirrored in x (det J < 0) or collapsed to a point (det J = 0) in the
// middle of a batch is reported by its index; the cells before it are fine.
static void test_invalid_cells(const tc_quadrature *rule) {
  static batch b;
  REQUIRE_CALL(build(2, rule, &b));
  const double *weights = tc_quadrature_weights(rule);
  for (int a = 0; a < b.F; ++a)
    b.node_coords[(1 * b.F + a) * 3] *= -1.0;
  REQUIRE_CALL(tc_geometry_jacobians(C, b.F, b.node_coords, P, b.ref_gradients, b.jacobians));
  EXPECT_FAILURE(tc_geometry_invert_jacobians(C, P, b.jacobians, b.determinants, b.inverses),
                 TC_ERR_ARGUMENT, "cell 1 of the batch is inverted");
  EXPECT(b.determinants[P] < 0.0, "mirrored cell has det J = %g", b.determinants[P]);
  EXPECT_FAILURE(tc_geometry_measures(C, P, b.determinants, weights, b.measures), TC_ERR_ARGUMENT,
                 "cell 1 of the batch is inverted");
  for (int a = 0; a < b.F; ++a) // flatten cell 2 into the plane z = 0: a zero row of J
    b.node_coords[(2 * b.F + a) * 3 + 2] = 0.0;
  REQUIRE_CALL(tc_geometry_jacobians(C, b.F, b.node_coords, P, b.ref_gradients, b.jacobians));
  EXPECT_FAILURE(tc_geometry_invert_jacobians(1, P, b.jacobians + 2 * P * 9, b.determinants, NULL),
                 TC_ERR_ARGUMENT, "cell 0 of the batch is inverted or degenerate");
  EXPECT(b.determinants[0] == 0.0, "flat cell has det J = %g", b.determinants[0]);
  EXPECT_FAILURE(tc_geometry_jacobians(-1, b.F, b.node_coords, P, b.ref_gradients, b.jacobians),
                 TC_ERR_ARGUMENT, "-1 cells");
  EXPECT_FAILURE(tc_geometry_physical_points(C, 0, b.node_coords, P, b.ref_values, b.points),
                 TC_ERR_ARGUMENT, "0 nodes per cell");
}

int main(void) {
  tc_quadrature *rule = NULL;
  if (tc_quadrature_create(POINTS_1D, &rule) != TC_SUCCESS) {
    fprintf(stderr, "test_fem_geometry: %s\n", tc_error_message());
    return EXIT_FAILURE;
  }
  test_cells(1, rule);
  test_cells(2, rule);
  test_invalid_cells(rule);
  tc_quadrature_destroy(&rule);
  return fem_test_finish("test_fem_geometry");
}
