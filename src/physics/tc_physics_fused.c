/* tc_physics_fused: the elasticity trio with its inputs built on chip, on
 * the host (see tc_physics_fused.h): one cell per thread at a time; for each
 * quadrature point the rows of A and B (9 values each) are built into the
 * thread's scratch and the products added into the cell's accumulators. */
#include "tc_physics_fused.h"

#include <stdlib.h>

#include "tc_fem_array.h"
#include "tc_omp.h"

/* Rows of A (weighted stresses) and B (strains) at point q of cell c: rows
 * 3a+i of the basis, then row 3F of w_h; 9 values a row. */
static void point_rows(const tc_physics_batch *b, const tc_physics_fields *f, int64_t c,
                       int64_t q, tc_precision precision, double *A, double *B) {
  const int64_t F = b->num_fields, P = b->num_points;
  const double dV = b->measures[c * P + q];
  double H[9] = {0};
  for (int64_t a = 0; a < F; ++a) {
    const double *grad = b->gradients + ((c * F + a) * P + q) * 3;
    double w[3];
    tc_physics_field_w(f, b->node_coords + (c * F + a) * 3, w);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        H[3 * i + j] += w[i] * grad[j];
    for (int i = 0; i < 3; ++i) {
      double eps[9], sigma[9];
      tc_physics_basis_strain(i, grad, eps);
      tc_physics_stress_of_strain(f, eps, sigma);
      double *a_row = A + (a * 3 + i) * 9, *b_row = B + (a * 3 + i) * 9;
      for (int k = 0; k < 9; ++k) {
        a_row[k] = tc_fem_rounded(dV * sigma[k], precision);
        b_row[k] = tc_fem_rounded(eps[k], precision);
      }
    }
  }
  double eps[9], sigma[9];
  tc_physics_symmetric_part(H, eps);
  tc_physics_stress_of_strain(f, eps, sigma);
  for (int k = 0; k < 9; ++k) {
    A[3 * F * 9 + k] = tc_fem_rounded(dV * sigma[k], precision);
    B[3 * F * 9 + k] = tc_fem_rounded(eps[k], precision);
  }
}

/* What the threads of tc_physics_fused_elasticity share. */
typedef struct {
  const tc_physics_batch *batch;
  const tc_physics_fields *fields;
  tc_precision precision;
  bool left;
  const tc_physics_fused_outputs *outputs;
  double *scratch; /* per thread, per_thread doubles: the sums and one point's rows */
  int64_t per_thread;
} fused_team;

/* One thread's cells of tc_physics_fused_elasticity. */
static void fused_share(void *context, int thread, int threads) {
  const fused_team *t = context;
  const tc_physics_batch *b = t->batch;
  const tc_physics_fused_outputs *outputs = t->outputs;
  const tc_precision precision = t->precision;
  const bool left = t->left;
  const int64_t C = b->num_cells, N = 3 * b->num_fields, rows = N + 1;
  double *acc = t->scratch + (int64_t)thread * t->per_thread, *A = acc + rows * rows,
         *B = A + rows * 9;
  int64_t begin, end;
  tc_omp_share(C, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c) {
    for (int64_t e = 0; e < rows * rows; ++e)
      acc[e] = 0.0;
    for (int64_t q = 0; q < b->num_points; ++q) {
      point_rows(b, t->fields, c, q, precision, A, B);
      for (int64_t l = 0; l < rows; ++l)
        for (int64_t r = 0; r < rows; ++r) {
          double sum = acc[l * rows + r];
          for (int k = 0; k < 9; ++k)
            sum += A[l * 9 + k] * B[r * 9 + k];
          acc[l * rows + r] = sum;
        }
    }
    if (outputs->stiffness)
      for (int64_t l = 0; l < N; ++l)
        for (int64_t r = 0; r < N; ++r)
          tc_fem_store(outputs->stiffness, precision,
                       left ? c + C * (l + N * r) : (c * N + l) * N + r, acc[l * rows + r]);
    if (outputs->internal_force)
      for (int64_t r = 0; r < N; ++r)
        tc_fem_store(outputs->internal_force, precision, left ? c + C * r : c * N + r,
                     acc[N * rows + r]);
    if (outputs->stress_strain)
      tc_fem_store(outputs->stress_strain, precision, c, acc[N * rows + N]);
  }
}

tc_err tc_physics_fused_elasticity(const tc_physics_batch *batch, const tc_physics_fields *fields,
                                   tc_layout layout, tc_precision precision,
                                   const tc_physics_fused_outputs *outputs, const char **form) {
  if (form)
    *form = "host: a thread a cell, its rows of A and B a point at a time, summed in double";
  const int64_t rows = 3 * batch->num_fields + 1;
  const int threads = tc_omp_threads();
  fused_team team = {.batch = batch, .fields = fields, .precision = precision,
                     .left = layout == TC_LAYOUT_LEFT, .outputs = outputs,
                     .per_thread = rows * rows + 2 * rows * 9};
  team.scratch = malloc((size_t)(team.per_thread * threads) * sizeof *team.scratch);
  TC_CHECK(team.scratch != NULL, TC_ERR_MEMORY, "out of memory in the fused elasticity");
  tc_omp_team(threads, fused_share, &team);
  free(team.scratch);
  return TC_SUCCESS;
}
