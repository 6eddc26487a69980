/* tc_quadrature: Gauss-Legendre rules, 1-D on [-1,1] and the tensor-product
 * rule on the reference hexahedron [-1,1]^3 (Intrepid's CubatureDirect/
 * CubatureTensor for the hex). */
#ifndef TC_QUADRATURE_H
#define TC_QUADRATURE_H

#include <stdint.h>

#include "tc_error.h"

/// Largest number of 1-D Gauss points supported (rules exact to degree 2n-1).
#define TC_QUADRATURE_MAX_POINTS_1D 64

/// The fewest 1-D Gauss points whose rule integrates every polynomial of
/// degree <= degree exactly: n = degree/2 + 1 (integer division). For the hex
/// rule this is the degree in each coordinate separately. TC_ERR_ARGUMENT for
/// a negative degree or one that needs more than TC_QUADRATURE_MAX_POINTS_1D.
tc_err tc_quadrature_points_for_degree(int degree, int *points_1d);

/// The n-point Gauss-Legendre rule on [-1,1]: points ascending (roots of the
/// Legendre polynomial P_n, found by Newton's method to round-off) and their
/// weights (summing to 2). points and weights have room for n entries.
/// TC_ERR_ARGUMENT unless 1 <= n <= TC_QUADRATURE_MAX_POINTS_1D.
tc_err tc_gauss_legendre(int n, double *points, double *weights);

/// A tensor-product Gauss rule on the reference hex [-1,1]^3.
typedef struct tc_quadrature tc_quadrature;

/// Builds the rule with points_1d^3 points. Point q = qx + n*(qy + n*qz) sits
/// at (g[qx], g[qy], g[qz]) with weight w[qx]*w[qy]*w[qz], (g, w) the 1-D
/// rule. TC_ERR_ARGUMENT for a bad points_1d (see tc_gauss_legendre).
tc_err tc_quadrature_create(int points_1d, tc_quadrature **quadrature);

/// Releases the rule and sets *quadrature to NULL. NULL is fine.
void tc_quadrature_destroy(tc_quadrature **quadrature);

/// Gauss points per direction (n).
int tc_quadrature_points_1d(const tc_quadrature *quadrature);
/// Number of points P = n^3.
int64_t tc_quadrature_num_points(const tc_quadrature *quadrature);
/// Reference coordinates, [P][3] (row-major: point, then x, y, z).
const double *tc_quadrature_points(const tc_quadrature *quadrature);
/// Weights, [P]; they sum to 8, the volume of the reference hex.
const double *tc_quadrature_weights(const tc_quadrature *quadrature);

#endif
