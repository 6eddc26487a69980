/* test_fem_basis: the Q1 and Q2 Lagrange bases: node positions and order,
 * the Kronecker property, partition of unity, the closed-form Q1 functions,
 * reproduction of every Q2 monomial, and gradients against central finite
 * differences. */
#include "fem_test.h"
#include "tc_basis.h"

enum { MAX_F = 27, NUM_RANDOM = 40 };

static void random_points(int64_t count, double *points) {
  uint64_t state = 2015;
  for (int64_t i = 0; i < 3 * count; ++i)
    points[i] = fem_test_random(&state, -1.0, 1.0);
}

static void test_nodes_and_kronecker(int order) {
  const int F = tc_basis_num_fields(order), n = order + 1;
  EXPECT(F == n * n * n, "order %d has %d fields", order, F);
  double nodes[MAX_F * 3], values[MAX_F * MAX_F];
  REQUIRE_CALL(tc_basis_nodes(order, nodes));
  for (int c = 0; c < n; ++c)
    for (int b = 0; b < n; ++b)
      for (int a = 0; a < n; ++a) {
        int f = a + n * (b + n * c);
        // Q1: 1-D nodes -1, 1; Q2: -1, 0, 1.
        double t[3] = {order == 1 ? 2 * a - 1 : a - 1, order == 1 ? 2 * b - 1 : b - 1,
                       order == 1 ? 2 * c - 1 : c - 1};
        EXPECT(nodes[3 * f] == t[0] && nodes[3 * f + 1] == t[1] && nodes[3 * f + 2] == t[2],
               "order %d node %d at (%g,%g,%g)", order, f, nodes[3 * f], nodes[3 * f + 1], nodes[3 * f + 2]);
      }
  REQUIRE_CALL(tc_basis_values(order, F, nodes, values));
  for (int f = 0; f < F; ++f)
    for (int p = 0; p < F; ++p)
      EXPECT_NEAR(values[f * F + p], f == p ? 1.0 : 0.0, 1e-15, "order %d: phi_%d at node %d", order, f, p);
}

static void test_partition_of_unity(int order) {
  const int F = tc_basis_num_fields(order);
  double points[NUM_RANDOM * 3], values[MAX_F * NUM_RANDOM], gradients[MAX_F * NUM_RANDOM * 3];
  random_points(NUM_RANDOM, points);
  REQUIRE_CALL(tc_basis_values(order, NUM_RANDOM, points, values));
  REQUIRE_CALL(tc_basis_gradients(order, NUM_RANDOM, points, gradients));
  for (int p = 0; p < NUM_RANDOM; ++p) {
    double sum = 0.0, gradient_sum[3] = {0, 0, 0};
    for (int f = 0; f < F; ++f) {
      sum += values[f * NUM_RANDOM + p];
      for (int d = 0; d < 3; ++d)
        gradient_sum[d] += gradients[(f * NUM_RANDOM + p) * 3 + d];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14, "order %d: sum of values at point %d", order, p);
    for (int d = 0; d < 3; ++d)
      EXPECT_NEAR(gradient_sum[d], 0.0, 1e-13, "order %d: sum of d/dxi_%d at point %d", order, d, p);
  }
}

// Q1 in closed form: phi(x) = (1 + sx x)(1 + sy y)(1 + sz z) / 8, s the node's signs.
static void test_q1_closed_form(void) {
  double points[NUM_RANDOM * 3], values[8 * NUM_RANDOM], gradients[8 * NUM_RANDOM * 3];
  random_points(NUM_RANDOM, points);
  REQUIRE_CALL(tc_basis_values(1, NUM_RANDOM, points, values));
  REQUIRE_CALL(tc_basis_gradients(1, NUM_RANDOM, points, gradients));
  for (int f = 0; f < 8; ++f) {
    const double s[3] = {f & 1 ? 1 : -1, f & 2 ? 1 : -1, f & 4 ? 1 : -1};
    for (int p = 0; p < NUM_RANDOM; ++p) {
      const double *x = points + 3 * p;
      double l[3];
      for (int d = 0; d < 3; ++d)
        l[d] = 1.0 + s[d] * x[d];
      EXPECT_NEAR(values[f * NUM_RANDOM + p], l[0] * l[1] * l[2] / 8, 1e-15, "Q1 phi_%d", f);
      const double g[3] = {s[0] * l[1] * l[2] / 8, l[0] * s[1] * l[2] / 8, l[0] * l[1] * s[2] / 8};
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(gradients[(f * NUM_RANDOM + p) * 3 + d], g[d], 1e-15, "Q1 dphi_%d/dxi_%d", f, d);
    }
  }
}

// Interpolating x^i y^j z^k (each exponent <= order) at the nodes gives it
// back, with its gradient, everywhere.
static void test_reproduction(int order) {
  const int F = tc_basis_num_fields(order);
  double nodes[MAX_F * 3], points[NUM_RANDOM * 3];
  double values[MAX_F * NUM_RANDOM], gradients[MAX_F * NUM_RANDOM * 3];
  REQUIRE_CALL(tc_basis_nodes(order, nodes));
  random_points(NUM_RANDOM, points);
  REQUIRE_CALL(tc_basis_values(order, NUM_RANDOM, points, values));
  REQUIRE_CALL(tc_basis_gradients(order, NUM_RANDOM, points, gradients));
  for (int e = 0; e < F; ++e) {
    const int n = order + 1, exponent[3] = {e % n, (e / n) % n, e / (n * n)};
    for (int p = 0; p < NUM_RANDOM; ++p) {
      const double *x = points + 3 * p;
      double u = 0.0, grad_u[3] = {0, 0, 0}, exact = 1.0, exact_grad[3] = {1, 1, 1};
      for (int f = 0; f < F; ++f) {
        double nodal = pow(nodes[3 * f], exponent[0]) * pow(nodes[3 * f + 1], exponent[1]) *
                       pow(nodes[3 * f + 2], exponent[2]);
        u += nodal * values[f * NUM_RANDOM + p];
        for (int d = 0; d < 3; ++d)
          grad_u[d] += nodal * gradients[(f * NUM_RANDOM + p) * 3 + d];
      }
      for (int d = 0; d < 3; ++d) {
        exact *= pow(x[d], exponent[d]);
        for (int k = 0; k < 3; ++k)
          exact_grad[k] *= k == d ? (exponent[d] ? exponent[d] * pow(x[d], exponent[d] - 1) : 0.0)
                                  : pow(x[d], exponent[d]);
      }
      EXPECT_NEAR(u, exact, 1e-14, "order %d, x^%d y^%d z^%d", order, exponent[0], exponent[1], exponent[2]);
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(grad_u[d], exact_grad[d], 1e-13, "order %d, d/dxi_%d of x^%d y^%d z^%d", order, d,
                    exponent[0], exponent[1], exponent[2]);
    }
  }
}

// Central differences: each basis function has degree <= 2 per variable, so
// they are exact up to round-off (about 1e-16 / h).
static void test_finite_differences(int order) {
  const int F = tc_basis_num_fields(order);
  const double h = 1e-5;
  double points[NUM_RANDOM * 3], gradients[MAX_F * NUM_RANDOM * 3];
  random_points(NUM_RANDOM, points);
  REQUIRE_CALL(tc_basis_gradients(order, NUM_RANDOM, points, gradients));
  for (int d = 0; d < 3; ++d) {
    double plus[NUM_RANDOM * 3], minus[NUM_RANDOM * 3];
    double value_plus[MAX_F * NUM_RANDOM], value_minus[MAX_F * NUM_RANDOM];
    memcpy(plus, points, sizeof plus);
    memcpy(minus, points, sizeof minus);
    for (int p = 0; p < NUM_RANDOM; ++p) {
      plus[3 * p + d] += h;
      minus[3 * p + d] -= h;
    }
    REQUIRE_CALL(tc_basis_values(order, NUM_RANDOM, plus, value_plus));
    REQUIRE_CALL(tc_basis_values(order, NUM_RANDOM, minus, value_minus));
    for (int f = 0; f < F; ++f)
      for (int p = 0; p < NUM_RANDOM; ++p)
        EXPECT_NEAR(gradients[(f * NUM_RANDOM + p) * 3 + d],
                    (value_plus[f * NUM_RANDOM + p] - value_minus[f * NUM_RANDOM + p]) / (2 * h), 1e-9,
                    "order %d: d phi_%d / d xi_%d at point %d", order, f, d, p);
  }
}

static void test_bad_arguments(void) {
  double buffer[MAX_F * 3] = {0};
  EXPECT(tc_basis_num_fields(0) == 0 && tc_basis_num_fields(3) == 0, "orders 0 and 3 have fields");
  EXPECT_FAILURE(tc_basis_nodes(3, buffer), TC_ERR_ARGUMENT, "order 3");
  EXPECT_FAILURE(tc_basis_values(0, 1, buffer, buffer), TC_ERR_ARGUMENT, "order 0");
  EXPECT_FAILURE(tc_basis_gradients(1, -1, buffer, buffer), TC_ERR_ARGUMENT, "negative");
}

int main(void) {
  for (int order = 1; order <= 2; ++order) {
    test_nodes_and_kronecker(order);
    test_partition_of_unity(order);
    test_reproduction(order);
    test_finite_differences(order);
  }
  test_q1_closed_form();
  test_bad_arguments();
  return fem_test_finish("test_fem_basis");
}
