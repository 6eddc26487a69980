/* test_fem_quadrature: Gauss-Legendre rules against hand values, their
 * exactness up to degree 2n-1 and their known error at degree 2n (1-D and on
 * the hex), weight sums, point order, and the degree -> points function. */
#include "fem_test.h"
#include "tc_quadrature.h"

enum { MAX_N = 10 };

// Integral of x^k over [-1,1].
static double monomial_integral(int k) { return k % 2 ? 0.0 : 2.0 / (k + 1); }

static double factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i)
    f *= i;
  return f;
}

// The Gauss error for x^(2n): integral - rule = 2^(2n+1) (n!)^4 / ((2n+1) ((2n)!)^2)
// (the remainder f^(2n)(c) 2^(2n+1) (n!)^4 / ((2n+1) ((2n)!)^3) with f^(2n) = (2n)!).
static double gauss_error_2n(int n) {
  double nf = factorial(n), n2f = factorial(2 * n);
  return pow(2.0, 2 * n + 1) * nf * nf * nf * nf / ((2 * n + 1) * n2f * n2f);
}

static void test_hand_values(void) {
  double x[4], w[4];
  REQUIRE_CALL(tc_gauss_legendre(1, x, w));
  EXPECT(x[0] == 0.0 && w[0] == 2.0, "n=1: %g %g", x[0], w[0]);
  REQUIRE_CALL(tc_gauss_legendre(2, x, w));
  EXPECT_NEAR(x[1], 1.0 / sqrt(3.0), 1e-15, "n=2 point");
  EXPECT_NEAR(x[0], -1.0 / sqrt(3.0), 1e-15, "n=2 point");
  EXPECT_NEAR(w[0], 1.0, 1e-15, "n=2 weight");
  REQUIRE_CALL(tc_gauss_legendre(3, x, w));
  EXPECT(x[1] == 0.0, "n=3 middle point %g", x[1]);
  EXPECT_NEAR(x[2], sqrt(0.6), 1e-15, "n=3 point");
  EXPECT_NEAR(w[1], 8.0 / 9.0, 1e-15, "n=3 weight");
  EXPECT_NEAR(w[2], 5.0 / 9.0, 1e-15, "n=3 weight");
  REQUIRE_CALL(tc_gauss_legendre(4, x, w));
  const double inner = sqrt(3.0 / 7.0 - 2.0 / 7.0 * sqrt(1.2)), outer = sqrt(3.0 / 7.0 + 2.0 / 7.0 * sqrt(1.2));
  EXPECT_NEAR(x[2], inner, 1e-15, "n=4 inner point");
  EXPECT_NEAR(x[3], outer, 1e-15, "n=4 outer point");
  EXPECT_NEAR(w[2], (18.0 + sqrt(30.0)) / 36.0, 1e-15, "n=4 inner weight");
  EXPECT_NEAR(w[3], (18.0 - sqrt(30.0)) / 36.0, 1e-15, "n=4 outer weight");
}

static void test_rules_1d(void) {
  for (int n = 1; n <= TC_QUADRATURE_MAX_POINTS_1D; ++n) {
    double x[TC_QUADRATURE_MAX_POINTS_1D], w[TC_QUADRATURE_MAX_POINTS_1D];
    REQUIRE_CALL(tc_gauss_legendre(n, x, w));
    double weight_sum = 0.0;
    for (int i = 0; i < n; ++i) {
      weight_sum += w[i];
      EXPECT(x[i] > -1.0 && x[i] < 1.0 && w[i] > 0.0, "n=%d point %d: %g weight %g", n, i, x[i], w[i]);
      EXPECT(i == 0 || x[i] > x[i - 1], "n=%d points not ascending at %d", n, i);
      EXPECT(x[i] == -x[n - 1 - i] && w[i] == w[n - 1 - i], "n=%d rule not symmetric at %d", n, i);
    }
    EXPECT_NEAR(weight_sum, 2.0, 4e-15, "n=%d weight sum", n);
    // Exact through degree 2n-1 (checked up to n = MAX_N, where x^k stays well scaled).
    for (int k = 0; n <= MAX_N && k <= 2 * n; ++k) {
      double sum = 0.0;
      for (int i = 0; i < n; ++i)
        sum += w[i] * pow(x[i], k);
      if (k < 2 * n)
        EXPECT_NEAR(sum, monomial_integral(k), 2e-15, "n=%d, x^%d", n, k);
      else // degree 2n: not exact, and wrong by exactly the known remainder.
        EXPECT_NEAR(monomial_integral(k) - sum, gauss_error_2n(n), 1e-9 * gauss_error_2n(n),
                    "n=%d, error for x^%d", n, k);
    }
  }
}

static void test_hex_rules(void) {
  for (int n = 1; n <= MAX_N; ++n) {
    tc_quadrature *rule = NULL;
    REQUIRE_CALL(tc_quadrature_create(n, &rule));
    double g[MAX_N], gw[MAX_N];
    REQUIRE_CALL(tc_gauss_legendre(n, g, gw));
    const int64_t P = tc_quadrature_num_points(rule);
    const double *points = tc_quadrature_points(rule), *weights = tc_quadrature_weights(rule);
    EXPECT(tc_quadrature_points_1d(rule) == n && P == (int64_t)n * n * n, "n=%d: P=%lld", n, (long long)P);
    double weight_sum = 0.0;
    for (int qz = 0; qz < n; ++qz)
      for (int qy = 0; qy < n; ++qy)
        for (int qx = 0; qx < n; ++qx) {
          int64_t q = qx + n * (qy + n * qz);
          EXPECT(points[3 * q] == g[qx] && points[3 * q + 1] == g[qy] && points[3 * q + 2] == g[qz],
                 "n=%d point %lld out of tensor order", n, (long long)q);
          weight_sum += weights[q];
        }
    EXPECT_NEAR(weight_sum, 8.0, 1e-14 * n, "n=%d hex weight sum", n);
    // x^a y^b z^c for every a, b, c <= 2n: exact unless some exponent is 2n;
    // x^2n alone misses by 4 times the 1-D remainder.
    static double power[3][MAX_N * MAX_N * MAX_N][2 * MAX_N + 1];
    for (int64_t q = 0; q < P; ++q)
      for (int d = 0; d < 3; ++d)
        for (int k = 0; k <= 2 * n; ++k)
          power[d][q][k] = k ? power[d][q][k - 1] * points[3 * q + d] : 1.0;
    for (int a = 0; a <= 2 * n; ++a)
      for (int b = 0; b <= 2 * n; ++b)
        for (int c = 0; c <= 2 * n; ++c) {
          double sum = 0.0;
          for (int64_t q = 0; q < P; ++q)
            sum += weights[q] * power[0][q][a] * power[1][q][b] * power[2][q][c];
          double exact = monomial_integral(a) * monomial_integral(b) * monomial_integral(c);
          if (a < 2 * n && b < 2 * n && c < 2 * n)
            EXPECT_NEAR(sum, exact, 1e-14 * n, "n=%d, x^%d y^%d z^%d", n, a, b, c); // round-off grows with n^3 terms
          else if (a + b + c == 2 * n)
            EXPECT_NEAR(exact - sum, 4.0 * gauss_error_2n(n), 1e-9 * gauss_error_2n(n),
                        "n=%d, error for x^%d y^%d z^%d", n, a, b, c);
        }
    tc_quadrature_destroy(&rule);
    EXPECT(rule == NULL, "destroy leaves the handle");
  }
}

static void test_degree_helper(void) {
  const int degree[] = {0, 1, 2, 3, 4, 5, 18, 19, 126, 127};
  const int expected[] = {1, 1, 2, 2, 3, 3, 10, 10, 64, 64};
  for (size_t i = 0; i < sizeof degree / sizeof degree[0]; ++i) {
    int n = 0;
    REQUIRE_CALL(tc_quadrature_points_for_degree(degree[i], &n));
    EXPECT(n == expected[i], "degree %d gives %d points, expected %d", degree[i], n, expected[i]);
  }
  int n;
  EXPECT_FAILURE(tc_quadrature_points_for_degree(-1, &n), TC_ERR_ARGUMENT, "negative");
  EXPECT_FAILURE(tc_quadrature_points_for_degree(128, &n), TC_ERR_ARGUMENT, "65 Gauss points");
  double x[1], w[1];
  EXPECT_FAILURE(tc_gauss_legendre(0, x, w), TC_ERR_ARGUMENT, "0 Gauss points");
  tc_quadrature *rule = (tc_quadrature *)x;
  EXPECT_FAILURE(tc_quadrature_create(TC_QUADRATURE_MAX_POINTS_1D + 1, &rule), TC_ERR_ARGUMENT,
                 "65 Gauss points");
  EXPECT(rule == NULL, "a failed create leaves a handle");
}

int main(void) {
  test_hand_values();
  test_rules_1d();
  test_hex_rules();
  test_degree_helper();
  return fem_test_finish("test_fem_quadrature");
}
