/* tc_basis: tensor-product Lagrange bases on the hex, built from the 1-D
 * Lagrange polynomials on equally spaced nodes of [-1,1]. */
#include "tc_basis.h"

#include <stdbool.h>
#include <stddef.h>

enum { MAX_ORDER = 2, MAX_NODES_1D = MAX_ORDER + 1 };

static bool order_is_valid(int order) { return order >= 1 && order <= MAX_ORDER; }

int tc_basis_num_fields(int order) {
  return order_is_valid(order) ? (order + 1) * (order + 1) * (order + 1) : 0;
}

// 1-D node i of the order: -1 + 2i/order.
static double node_1d(int order, int i) { return -1.0 + 2.0 * i / order; }

// The order+1 1-D Lagrange polynomials l_i and their derivatives at x:
// l_i(x) = prod_{j!=i} (x - t_j)/(t_i - t_j),
// l_i'(x) = sum_{k!=i} 1/(t_i - t_k) prod_{j!=i,k} (x - t_j)/(t_i - t_j).
static void lagrange_1d(int order, double x, double value[MAX_NODES_1D],
                        double derivative[MAX_NODES_1D]) {
  for (int i = 0; i <= order; ++i) {
    const double ti = node_1d(order, i);
    double product = 1.0, sum = 0.0;
    for (int k = 0; k <= order; ++k) {
      if (k == i)
        continue;
      double term = 1.0 / (ti - node_1d(order, k));
      for (int j = 0; j <= order; ++j)
        if (j != i && j != k)
          term *= (x - node_1d(order, j)) / (ti - node_1d(order, j));
      sum += term;
      product *= (x - node_1d(order, k)) / (ti - node_1d(order, k));
    }
    value[i] = product;
    derivative[i] = sum;
  }
}

static tc_err check_arguments(int order, int64_t num_points) {
  TC_CHECK(order_is_valid(order), TC_ERR_ARGUMENT, "basis order %d: only 1 (Q1) and 2 (Q2) exist",
           order);
  TC_CHECK(num_points >= 0, TC_ERR_ARGUMENT, "negative number of points %lld",
           (long long)num_points);
  return TC_SUCCESS;
}

tc_err tc_basis_nodes(int order, double *nodes) {
  TC_CALL(check_arguments(order, 0));
  const int n = order + 1;
  for (int c = 0; c < n; ++c)
    for (int b = 0; b < n; ++b)
      for (int a = 0; a < n; ++a) {
        int f = a + n * (b + n * c);
        nodes[3 * f + 0] = node_1d(order, a);
        nodes[3 * f + 1] = node_1d(order, b);
        nodes[3 * f + 2] = node_1d(order, c);
      }
  return TC_SUCCESS;
}

// Tabulates values (when values != NULL) and gradients (when gradients != NULL).
static tc_err tabulate(int order, int64_t num_points, const double *points, double *values,
                       double *gradients) {
  TC_CALL(check_arguments(order, num_points));
  const int n = order + 1;
  for (int64_t p = 0; p < num_points; ++p) {
    double value[3][MAX_NODES_1D], derivative[3][MAX_NODES_1D];
    for (int d = 0; d < 3; ++d)
      lagrange_1d(order, points[3 * p + d], value[d], derivative[d]);
    for (int c = 0; c < n; ++c)
      for (int b = 0; b < n; ++b)
        for (int a = 0; a < n; ++a) {
          int64_t fp = (a + n * (b + n * c)) * num_points + p;
          if (values)
            values[fp] = value[0][a] * value[1][b] * value[2][c];
          if (gradients) {
            gradients[3 * fp + 0] = derivative[0][a] * value[1][b] * value[2][c];
            gradients[3 * fp + 1] = value[0][a] * derivative[1][b] * value[2][c];
            gradients[3 * fp + 2] = value[0][a] * value[1][b] * derivative[2][c];
          }
        }
  }
  return TC_SUCCESS;
}

tc_err tc_basis_values(int order, int64_t num_points, const double *points, double *values) {
  return tabulate(order, num_points, points, values, NULL);
}

tc_err tc_basis_gradients(int order, int64_t num_points, const double *points, double *gradients) {
  return tabulate(order, num_points, points, NULL, gradients);
}
