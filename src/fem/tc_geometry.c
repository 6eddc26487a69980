/* tc_geometry: Jacobians, determinants, inverses, measures and physical
 * points of hex cells at reference points, batched over cells. */
#include "tc_geometry.h"

#include "tc_omp.h"

/* A geometry function's arguments, which its threads share. */
typedef struct {
  int64_t num_points;
  int nodes_per_cell;
  const double *node_coords, *ref, *weights, *jacobians, *determinants;
  double *out, *inverses;
} geometry_args;

static tc_err check_counts(int64_t num_cells, int nodes_per_cell, int64_t num_points) {
  TC_CHECK(num_cells >= 0 && num_points >= 0 && nodes_per_cell >= 1, TC_ERR_ARGUMENT,
           "bad geometry batch: %lld cells, %d nodes per cell, %lld points", (long long)num_cells,
           nodes_per_cell, (long long)num_points);
  return TC_SUCCESS;
}

// Fails naming the first cell with a non-positive determinant, if any.
static tc_err check_orientation(int64_t num_cells, int64_t num_points, const double *determinants) {
  for (int64_t c = 0; c < num_cells; ++c)
    for (int64_t p = 0; p < num_points; ++p) {
      double det = determinants[c * num_points + p];
      TC_CHECK(det > 0.0, TC_ERR_ARGUMENT,
               "cell %lld of the batch is inverted or degenerate: det J = %g at point %lld",
               (long long)c, det, (long long)p);
    }
  return TC_SUCCESS;
}

static void jacobian_cells(void *context, int64_t begin, int64_t end) {
  const geometry_args *g = context;
  const int64_t num_points = g->num_points;
  const int nodes_per_cell = g->nodes_per_cell;
  for (int64_t c = begin; c < end; ++c) {
    const double *x = g->node_coords + c * nodes_per_cell * 3;
    for (int64_t p = 0; p < num_points; ++p) {
      double J[3][3] = {{0}};
      for (int a = 0; a < nodes_per_cell; ++a) {
        const double *grad = g->ref + (a * num_points + p) * 3;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            J[i][j] += x[3 * a + i] * grad[j];
      }
      double *out = g->out + (c * num_points + p) * 9;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          out[3 * i + j] = J[i][j];
    }
  }
}

tc_err tc_geometry_jacobians(int64_t num_cells, int nodes_per_cell, const double *node_coords,
                             int64_t num_points, const double *ref_gradients, double *jacobians) {
  TC_CALL(check_counts(num_cells, nodes_per_cell, num_points));
  geometry_args g = {.num_points = num_points, .nodes_per_cell = nodes_per_cell,
                           .node_coords = node_coords, .ref = ref_gradients, .out = jacobians};
  tc_omp_for(num_cells, jacobian_cells, &g);
  return TC_SUCCESS;
}

static void inverse_cells(void *context, int64_t begin, int64_t end) {
  const geometry_args *g = context;
  const int64_t num_points = g->num_points;
  for (int64_t c = begin; c < end; ++c)
    for (int64_t p = 0; p < num_points; ++p) {
      const int64_t cp = c * num_points + p;
      const double *J = g->jacobians + cp * 9;
      // Cofactors of row 0 give the determinant; the adjugate divided by it the inverse.
      const double c00 = J[4] * J[8] - J[5] * J[7];
      const double c01 = J[5] * J[6] - J[3] * J[8];
      const double c02 = J[3] * J[7] - J[4] * J[6];
      const double det = J[0] * c00 + J[1] * c01 + J[2] * c02;
      g->out[cp] = det;
      if (!g->inverses || !(det > 0.0))
        continue;
      const double r = 1.0 / det;
      double *inv = g->inverses + cp * 9;
      inv[0] = c00 * r;
      inv[1] = (J[2] * J[7] - J[1] * J[8]) * r;
      inv[2] = (J[1] * J[5] - J[2] * J[4]) * r;
      inv[3] = c01 * r;
      inv[4] = (J[0] * J[8] - J[2] * J[6]) * r;
      inv[5] = (J[2] * J[3] - J[0] * J[5]) * r;
      inv[6] = c02 * r;
      inv[7] = (J[1] * J[6] - J[0] * J[7]) * r;
      inv[8] = (J[0] * J[4] - J[1] * J[3]) * r;
    }
}

tc_err tc_geometry_invert_jacobians(int64_t num_cells, int64_t num_points, const double *jacobians,
                                    double *determinants, double *inverses) {
  TC_CALL(check_counts(num_cells, 1, num_points));
  geometry_args g = {.num_points = num_points, .jacobians = jacobians,
                           .out = determinants, .inverses = inverses};
  tc_omp_for(num_cells, inverse_cells, &g);
  return check_orientation(num_cells, num_points, determinants);
}

static void measure_cells(void *context, int64_t begin, int64_t end) {
  const geometry_args *g = context;
  const int64_t num_points = g->num_points;
  for (int64_t c = begin; c < end; ++c)
    for (int64_t p = 0; p < num_points; ++p)
      g->out[c * num_points + p] = g->weights[p] * g->determinants[c * num_points + p];
}

tc_err tc_geometry_measures(int64_t num_cells, int64_t num_points, const double *determinants,
                            const double *weights, double *measures) {
  TC_CALL(check_counts(num_cells, 1, num_points));
  TC_CALL(check_orientation(num_cells, num_points, determinants));
  geometry_args g = {.num_points = num_points, .determinants = determinants,
                           .weights = weights, .out = measures};
  tc_omp_for(num_cells, measure_cells, &g);
  return TC_SUCCESS;
}

static void point_cells(void *context, int64_t begin, int64_t end) {
  const geometry_args *g = context;
  const int64_t num_points = g->num_points;
  const int nodes_per_cell = g->nodes_per_cell;
  for (int64_t c = begin; c < end; ++c) {
    const double *x = g->node_coords + c * nodes_per_cell * 3;
    for (int64_t p = 0; p < num_points; ++p) {
      double sum[3] = {0.0, 0.0, 0.0};
      for (int a = 0; a < nodes_per_cell; ++a)
        for (int i = 0; i < 3; ++i)
          sum[i] += x[3 * a + i] * g->ref[a * num_points + p];
      for (int i = 0; i < 3; ++i)
        g->out[(c * num_points + p) * 3 + i] = sum[i];
    }
  }
}

tc_err tc_geometry_physical_points(int64_t num_cells, int nodes_per_cell,
                                   const double *node_coords, int64_t num_points,
                                   const double *ref_values, double *points) {
  TC_CALL(check_counts(num_cells, nodes_per_cell, num_points));
  geometry_args g = {.num_points = num_points, .nodes_per_cell = nodes_per_cell,
                           .node_coords = node_coords, .ref = ref_values, .out = points};
  tc_omp_for(num_cells, point_cells, &g);
  return TC_SUCCESS;
}
