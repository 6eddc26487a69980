/* fem_test: the checking macros and test cells shared by the tests of
 * src/fem: an affine map (rotation x shear x scaling, inverse known in closed
 * form) and a curved Q2 map whose volume is known analytically. */
#ifndef FEM_TEST_H
#define FEM_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"

static int fem_test_failures;

/// Failures past this many are counted but not printed.
#define FEM_TEST_MAX_PRINTED 20

/// Counts a failure and says where, unless cond holds.
#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond) && ++fem_test_failures <= FEM_TEST_MAX_PRINTED) {              \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/// |a - b| <= tol, else a failure naming what was compared.
#define EXPECT_NEAR(a, b, tol, ...)                                            \
  do {                                                                         \
    double fem_a_ = (a), fem_b_ = (b);                                         \
    if (!(fabs(fem_a_ - fem_b_) <= (tol)) &&                                   \
        ++fem_test_failures <= FEM_TEST_MAX_PRINTED) {                         \
      fprintf(stderr, "%s:%d: FAILED |%.17g - %.17g| = %.3g > %.3g: ", __FILE__, \
              __LINE__, fem_a_, fem_b_, fabs(fem_a_ - fem_b_), (double)(tol)); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/// A call that must succeed; on failure the test function gives up.
#define REQUIRE_CALL(expr)                                                     \
  do {                                                                         \
    tc_err fem_err_ = (expr);                                                  \
    if (fem_err_ != TC_SUCCESS) {                                              \
      fprintf(stderr, "%s:%d: FAILED %s: %s\n", __FILE__, __LINE__, #expr,     \
              tc_error_message());                                             \
      ++fem_test_failures;                                                     \
      tc_error_clear();                                                        \
      return;                                                                  \
    }                                                                          \
  } while (0)

/// A call that must fail with code and a message containing text.
#define EXPECT_FAILURE(expr, code, text)                                       \
  do {                                                                         \
    tc_error_clear();                                                          \
    tc_err fem_err_ = (expr);                                                  \
    EXPECT(fem_err_ == (code) && strstr(tc_error_message(), (text)) != NULL,    \
           "%s gave \"%s\" (%s), expected %s with \"%s\"", #expr,              \
           tc_error_message(), tc_err_name(fem_err_), tc_err_name(code), text); \
    tc_error_clear();                                                          \
  } while (0)

/// Prints the verdict; the exit status of a test program.
static inline int fem_test_finish(const char *name) {
  if (fem_test_failures)
    fprintf(stderr, "%s: %d check(s) FAILED\n", name, fem_test_failures);
  else
    printf("%s: all checks passed\n", name);
  return fem_test_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

/// Uniform pseudo-random number in [lo, hi) (fixed sequence, seeded by *state).
static inline double fem_test_random(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (double)(*state >> 11) * 0x1.0p-53;
}

/// An affine map x = A xi + b with A = R S D: R a rotation by angle about the
/// axis (1,2,2)/3, S unit upper triangular (shear), D = diag(scale). Gives A,
/// its inverse D^-1 S^-1 R^T and its determinant prod(scale), all formed
/// without inverting a matrix numerically.
typedef struct {
  double A[3][3], inverse[3][3], det, b[3];
} fem_test_affine;

static inline void fem_test_matmul(const double X[3][3], const double Y[3][3], double Z[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Z[i][j] = 0.0;
      for (int k = 0; k < 3; ++k)
        Z[i][j] += X[i][k] * Y[k][j];
    }
}

static inline fem_test_affine fem_test_affine_map(double angle, const double shear[3],
                                                  const double scale[3], const double shift[3]) {
  const double u[3] = {1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};
  const double c = cos(angle), s = sin(angle);
  double R[3][3], Rt[3][3];
  // Rodrigues: R = c I + s [u]x + (1-c) u u^T.
  const double cross[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      R[i][j] = (i == j ? c : 0.0) + s * cross[i][j] + (1.0 - c) * u[i] * u[j];
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Rt[i][j] = R[j][i];
  const double S[3][3] = {{1, shear[0], shear[1]}, {0, 1, shear[2]}, {0, 0, 1}};
  const double S_inv[3][3] = {
      {1, -shear[0], shear[0] * shear[2] - shear[1]}, {0, 1, -shear[2]}, {0, 0, 1}};
  const double D[3][3] = {{scale[0], 0, 0}, {0, scale[1], 0}, {0, 0, scale[2]}};
  const double D_inv[3][3] = {{1 / scale[0], 0, 0}, {0, 1 / scale[1], 0}, {0, 0, 1 / scale[2]}};
  fem_test_affine map;
  double RS[3][3], DS[3][3];
  fem_test_matmul(R, S, RS);
  fem_test_matmul(RS, D, map.A);
  fem_test_matmul(D_inv, S_inv, DS);
  fem_test_matmul(DS, Rt, map.inverse);
  map.det = scale[0] * scale[1] * scale[2];
  for (int i = 0; i < 3; ++i)
    map.b[i] = shift[i];
  return map;
}

/// x = A y + b.
static inline void fem_test_apply(const fem_test_affine *map, const double y[3], double x[3]) {
  for (int i = 0; i < 3; ++i)
    x[i] = map->b[i] + map->A[i][0] * y[0] + map->A[i][1] * y[1] + map->A[i][2] * y[2];
}

/// A test cell: x(xi) = A y(xi) + b, with y the identity (affine cell) or a
/// curved map whose components lie in Q_order, so that a cell of that order
/// reproduces it exactly from its nodes:
///   order 2: y = (xi, eta + s xi^2, zeta (1 + t eta^2)),  det J_y = 1 + t eta^2,
///            volume det(A) (8 + 8t/3);
///   order 1: y = (xi, eta + s xi, zeta (1 + t xi eta)),   det J_y = 1 + t xi eta,
///            volume 8 det(A).
/// J_y is lower triangular in both, which gives the determinants and volumes.
typedef struct {
  fem_test_affine map;
  int curved; ///< 0: affine cell
  double s, t;
} fem_test_cell;

/// The physical point x and Jacobian dx/dxi of the cell at xi.
static inline void fem_test_cell_map(const fem_test_cell *cell, int order, const double xi[3],
                                     double x[3], double J[3][3]) {
  double y[3] = {xi[0], xi[1], xi[2]};
  double Jy[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  if (cell->curved && order == 2) {
    y[1] = xi[1] + cell->s * xi[0] * xi[0];
    y[2] = xi[2] * (1.0 + cell->t * xi[1] * xi[1]);
    Jy[1][0] = 2 * cell->s * xi[0];
    Jy[2][1] = 2 * cell->t * xi[1] * xi[2];
    Jy[2][2] = 1.0 + cell->t * xi[1] * xi[1];
  } else if (cell->curved) {
    y[1] = xi[1] + cell->s * xi[0];
    y[2] = xi[2] * (1.0 + cell->t * xi[0] * xi[1]);
    Jy[1][0] = cell->s;
    Jy[2][0] = cell->t * xi[1] * xi[2];
    Jy[2][1] = cell->t * xi[0] * xi[2];
    Jy[2][2] = 1.0 + cell->t * xi[0] * xi[1];
  }
  fem_test_apply(&cell->map, y, x);
  fem_test_matmul(cell->map.A, Jy, J);
}

/// det J of the cell at xi, from the closed forms above.
static inline double fem_test_cell_det(const fem_test_cell *cell, int order, const double xi[3]) {
  if (!cell->curved)
    return cell->map.det;
  return cell->map.det * (order == 2 ? 1.0 + cell->t * xi[1] * xi[1] : 1.0 + cell->t * xi[0] * xi[1]);
}

/// The cell's volume, from the closed forms above.
static inline double fem_test_cell_volume(const fem_test_cell *cell, int order) {
  return cell->map.det * (cell->curved && order == 2 ? 8.0 + 8.0 * cell->t / 3.0 : 8.0);
}

enum { FEM_TEST_NUM_CELLS = 3 };

/// Three cells: an affine one, a curved one and a second affine one (scaled,
/// sheared, rotated differently), and their nodes (C,Nn,3) for the order,
/// placed at the reference nodes ref_nodes (Nn,3) mapped by each cell.
static inline void fem_test_cells(int order, int nodes_per_cell, const double *ref_nodes,
                                  fem_test_cell cells[FEM_TEST_NUM_CELLS], double *node_coords) {
  const double shear0[3] = {0.3, -0.2, 0.4}, scale0[3] = {2.0, 0.5, 1.5}, shift0[3] = {1, -2, 3};
  const double shear1[3] = {-0.1, 0.25, 0.0}, scale1[3] = {0.7, 1.2, 0.9}, shift1[3] = {-4, 0.5, 2};
  const double shear2[3] = {0.0, 0.5, -0.3}, scale2[3] = {3.0, 0.25, 1.0}, shift2[3] = {0, 0, -1};
  cells[0] = (fem_test_cell){fem_test_affine_map(0.7, shear0, scale0, shift0), 0, 0, 0};
  cells[1] = (fem_test_cell){fem_test_affine_map(-1.1, shear1, scale1, shift1), 1, 0.25, 0.3};
  cells[2] = (fem_test_cell){fem_test_affine_map(2.3, shear2, scale2, shift2), 0, 0, 0};
  for (int c = 0; c < FEM_TEST_NUM_CELLS; ++c)
    for (int a = 0; a < nodes_per_cell; ++a) {
      double J[3][3];
      fem_test_cell_map(&cells[c], order, ref_nodes + 3 * a, node_coords + (c * nodes_per_cell + a) * 3, J);
    }
}

#endif
