/* tc_quadrature: Gauss-Legendre points and weights by Newton's method on the
 * Legendre three-term recurrence, and the tensor-product hex rule built from
 * them. */
#include "tc_quadrature.h"

#include <math.h>
#include <stdlib.h>

struct tc_quadrature {
  int points_1d;
  int64_t num_points;
  double *points;  // [P][3]
  double *weights; // [P]
};

tc_err tc_quadrature_points_for_degree(int degree, int *points_1d) {
  TC_CHECK(degree >= 0, TC_ERR_ARGUMENT, "quadrature degree %d is negative", degree);
  TC_CHECK(degree / 2 + 1 <= TC_QUADRATURE_MAX_POINTS_1D, TC_ERR_ARGUMENT,
           "quadrature degree %d needs %d Gauss points per direction; at most %d are supported",
           degree, degree / 2 + 1, TC_QUADRATURE_MAX_POINTS_1D);
  *points_1d = degree / 2 + 1;
  return TC_SUCCESS;
}

// P_n(x) and P_n'(x) by the recurrence (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}.
// Only called with |x| < 1, where the derivative formula is defined.
static void legendre(int n, double x, double *value, double *derivative) {
  double p_prev = 1.0, p = x;
  for (int k = 1; k < n; ++k) {
    double p_next = ((2 * k + 1) * x * p - k * p_prev) / (k + 1);
    p_prev = p;
    p = p_next;
  }
  *value = p;
  *derivative = n * (x * p - p_prev) / (x * x - 1.0);
}

tc_err tc_gauss_legendre(int n, double *points, double *weights) {
  TC_CHECK(n >= 1 && n <= TC_QUADRATURE_MAX_POINTS_1D, TC_ERR_ARGUMENT,
           "%d Gauss points asked for; 1 to %d are supported", n, TC_QUADRATURE_MAX_POINTS_1D);
  const double pi = 3.14159265358979323846;
  const double tolerance = 1e-15;
  const int max_iterations = 100;
  // Roots come in pairs +-x; find the non-negative one of each pair (the
  // root i of n, counted from the largest, lies near cos(pi (i+3/4)/(n+1/2))).
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double x = (2 * i + 1 == n) ? 0.0 : cos(pi * (i + 0.75) / (n + 0.5));
    double value, derivative;
    if (2 * i + 1 != n) {
      int iteration = 0;
      double step;
      do {
        legendre(n, x, &value, &derivative);
        step = value / derivative;
        x -= step;
      } while (fabs(step) > tolerance && ++iteration < max_iterations);
      TC_CHECK(fabs(step) <= tolerance, TC_ERR_INTERNAL,
               "Newton's method did not converge for Gauss root %d of %d (last step %g)", i, n, step);
    }
    legendre(n, x, &value, &derivative);
    double weight = 2.0 / ((1.0 - x * x) * derivative * derivative);
    points[n - 1 - i] = x;
    points[i] = -x;
    weights[n - 1 - i] = weight;
    weights[i] = weight;
  }
  return TC_SUCCESS;
}

tc_err tc_quadrature_create(int points_1d, tc_quadrature **quadrature) {
  *quadrature = NULL;
  double gauss_points[TC_QUADRATURE_MAX_POINTS_1D], gauss_weights[TC_QUADRATURE_MAX_POINTS_1D];
  TC_CALL(tc_gauss_legendre(points_1d, gauss_points, gauss_weights));
  tc_quadrature *rule;
  TC_CALLOC(rule, 1);
  const int n = points_1d;
  rule->points_1d = n;
  rule->num_points = (int64_t)n * n * n;
  rule->points = calloc((size_t)rule->num_points * 3, sizeof *rule->points);
  rule->weights = calloc((size_t)rule->num_points, sizeof *rule->weights);
  if (!rule->points || !rule->weights) {
    tc_quadrature_destroy(&rule);
    TC_FAIL(TC_ERR_MEMORY, "out of memory for a hex rule of %d^3 points", n);
  }
  for (int qz = 0; qz < n; ++qz)
    for (int qy = 0; qy < n; ++qy)
      for (int qx = 0; qx < n; ++qx) {
        int64_t q = qx + (int64_t)n * (qy + (int64_t)n * qz);
        rule->points[3 * q + 0] = gauss_points[qx];
        rule->points[3 * q + 1] = gauss_points[qy];
        rule->points[3 * q + 2] = gauss_points[qz];
        rule->weights[q] = gauss_weights[qx] * gauss_weights[qy] * gauss_weights[qz];
      }
  *quadrature = rule;
  return TC_SUCCESS;
}

void tc_quadrature_destroy(tc_quadrature **quadrature) {
  if (!quadrature || !*quadrature)
    return;
  free((*quadrature)->points);
  free((*quadrature)->weights);
  free(*quadrature);
  *quadrature = NULL;
}

int tc_quadrature_points_1d(const tc_quadrature *quadrature) { return quadrature->points_1d; }
int64_t tc_quadrature_num_points(const tc_quadrature *quadrature) { return quadrature->num_points; }
const double *tc_quadrature_points(const tc_quadrature *quadrature) { return quadrature->points; }
const double *tc_quadrature_weights(const tc_quadrature *quadrature) { return quadrature->weights; }
