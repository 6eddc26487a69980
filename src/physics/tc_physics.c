/* tc_physics: the kernel-to-array table of the assembly loop, the
 * manufactured fields with their exact integrals, and the shapes of the
 * contraction inputs (see tc_physics.h). */
#include "tc_physics.h"

/* u = 1 + 0.5x + 0.25y - 0.75z; w = (0.01,0.02,0.03) + W x with a W that has
 * both symmetric (straining) and skew (rotating) parts; lambda, mu of a
 * material with Poisson ratio 1/3. Arbitrary but fixed: the checks compare
 * against exact integrals of these. */
static const tc_physics_fields default_fields = {
    .u0 = 1.0,
    .g = {0.5, 0.25, -0.75},
    .w0 = {0.01, 0.02, 0.03},
    .W = {{0.10, 0.20, 0.00}, {-0.05, 0.30, 0.10}, {0.00, 0.15, -0.20}},
    .lambda = 1.0,
    .mu = 0.5,
};

const tc_physics_fields *tc_physics_default_fields(void) { return &default_fields; }

static const struct {
  tc_physics_input left, right;
  const char *role;
  int components;
} kernel_table[TC_KERNEL_COUNT] = {
    [TC_FIELD_FIELD_SCALAR] = {TC_INPUT_WEIGHTED_VALUES, TC_INPUT_VALUES, "mass matrix", 1},
    [TC_FIELD_FIELD_VECTOR] = {TC_INPUT_WEIGHTED_GRADIENTS, TC_INPUT_GRADIENTS,
                               "diffusion stiffness", 1},
    [TC_FIELD_FIELD_TENSOR] = {TC_INPUT_WEIGHTED_STRESSES, TC_INPUT_STRAINS,
                               "elasticity stiffness", 3},
    [TC_DATA_FIELD_SCALAR] = {TC_INPUT_WEIGHTED_FIELD_U, TC_INPUT_VALUES, "load of source u_h", 1},
    [TC_DATA_FIELD_VECTOR] = {TC_INPUT_GRADIENT_U_CELL, TC_INPUT_WEIGHTED_GRADIENTS,
                              "flux load of grad u (one value per cell)", 1},
    [TC_DATA_FIELD_TENSOR] = {TC_INPUT_WEIGHTED_STRESS_W, TC_INPUT_STRAINS,
                              "internal force of w_h", 3},
    [TC_DATA_DATA_SCALAR] = {TC_INPUT_WEIGHTED_FIELD_U, TC_INPUT_FIELD_U, "integral of u^2", 0},
    [TC_DATA_DATA_VECTOR] = {TC_INPUT_WEIGHTED_GRADIENT_U, TC_INPUT_GRADIENT_U,
                             "integral of |grad u|^2", 0},
    [TC_DATA_DATA_TENSOR] = {TC_INPUT_WEIGHTED_STRESS_W, TC_INPUT_STRAIN_W,
                             "integral of sigma(w):eps(w)", 0},
};

tc_physics_input tc_physics_left_input(tc_kernel kernel) { return kernel_table[kernel].left; }
tc_physics_input tc_physics_right_input(tc_kernel kernel) { return kernel_table[kernel].right; }
const char *tc_physics_kernel_role(tc_kernel kernel) { return kernel_table[kernel].role; }
int tc_physics_kernel_components(tc_kernel kernel) { return kernel_table[kernel].components; }
bool tc_physics_kernel_elastic(tc_kernel kernel) {
  return kernel == TC_FIELD_FIELD_TENSOR || kernel == TC_DATA_FIELD_TENSOR ||
         kernel == TC_DATA_DATA_TENSOR;
}

tc_contraction tc_physics_contraction(tc_kernel kernel, int64_t num_cells, int64_t num_fields,
                                      int64_t num_points, tc_layout layout,
                                      tc_precision precision) {
  int components = kernel_table[kernel].components;
  int64_t fields = (components == 3 ? 3 : 1) * num_fields;
  int rank = tc_kernel_tensor_rank(kernel);
  tc_contraction shape = {
      .kernel = kernel,
      .num_cells = num_cells,
      .num_left_fields = tc_kernel_is_data_data(kernel) ? 1 : fields,
      .num_right_fields = tc_kernel_is_field_field(kernel) ? fields : 1,
      .num_points = num_points,
      .num_data_points = kernel == TC_DATA_FIELD_VECTOR ? 1
                         : tc_kernel_is_data_field(kernel) ? num_points
                                                           : 1,
      .dim1 = rank >= 1 ? 3 : 1,
      .dim2 = rank >= 2 ? 3 : 1,
      .layout = layout,
      .precision = precision,
      .sum_into = false,
  };
  return shape;
}

int tc_physics_input_dims(tc_physics_input input, int64_t num_cells, int64_t num_fields,
                          int64_t num_points, int64_t dims[5]) {
  dims[0] = num_cells;
  switch (input) {
  case TC_INPUT_VALUES:
  case TC_INPUT_WEIGHTED_VALUES:
    dims[1] = num_fields, dims[2] = num_points;
    return 3;
  case TC_INPUT_GRADIENTS:
  case TC_INPUT_WEIGHTED_GRADIENTS:
    dims[1] = num_fields, dims[2] = num_points, dims[3] = 3;
    return 4;
  case TC_INPUT_STRAINS:
  case TC_INPUT_WEIGHTED_STRESSES:
    dims[1] = 3 * num_fields, dims[2] = num_points, dims[3] = 3, dims[4] = 3;
    return 5;
  case TC_INPUT_FIELD_U:
  case TC_INPUT_WEIGHTED_FIELD_U:
    dims[1] = num_points;
    return 2;
  case TC_INPUT_GRADIENT_U_CELL:
    dims[1] = 1, dims[2] = 3;
    return 3;
  case TC_INPUT_GRADIENT_U:
  case TC_INPUT_WEIGHTED_GRADIENT_U:
    dims[1] = num_points, dims[2] = 3;
    return 3;
  case TC_INPUT_STRAIN_W:
  case TC_INPUT_WEIGHTED_STRESS_W:
  default:
    dims[1] = num_points, dims[2] = 3, dims[3] = 3;
    return 4;
  }
}

int64_t tc_physics_input_count(tc_physics_input input, int64_t num_cells, int64_t num_fields,
                               int64_t num_points) {
  int64_t dims[5];
  int rank = tc_physics_input_dims(input, num_cells, num_fields, num_points, dims);
  int64_t count = 1;
  for (int k = 0; k < rank; ++k)
    count *= dims[k];
  return count;
}

void tc_physics_nodal_u(const tc_physics_fields *fields, int64_t num_nodes, const double *coords,
                        double *u) {
  for (int64_t n = 0; n < num_nodes; ++n)
    u[n] = tc_physics_field_u(fields, coords + 3 * n);
}

void tc_physics_nodal_w(const tc_physics_fields *fields, int64_t num_nodes, const double *coords,
                        double *w) {
  for (int64_t n = 0; n < num_nodes; ++n)
    tc_physics_field_w(fields, coords + 3 * n, w + 3 * n);
}

/* Over [0,L]^3: mean of x_i is L_i/2, of x_i^2 is L_i^2/3, of x_i x_j is
 * L_i L_j / 4 (i != j). */
double tc_physics_exact_integral_u(const tc_physics_fields *f, const double L[3]) {
  double volume = L[0] * L[1] * L[2];
  return volume * (f->u0 + 0.5 * (f->g[0] * L[0] + f->g[1] * L[1] + f->g[2] * L[2]));
}

double tc_physics_exact_integral_u2(const tc_physics_fields *f, const double L[3]) {
  double volume = L[0] * L[1] * L[2];
  double mean = f->u0 * f->u0;
  for (int i = 0; i < 3; ++i) {
    mean += f->u0 * f->g[i] * L[i] + f->g[i] * f->g[i] * L[i] * L[i] / 3.0;
    for (int j = i + 1; j < 3; ++j)
      mean += 2.0 * f->g[i] * f->g[j] * L[i] * L[j] / 4.0;
  }
  return volume * mean;
}

double tc_physics_exact_integral_grad_u2(const tc_physics_fields *f, const double L[3]) {
  return L[0] * L[1] * L[2] * (f->g[0] * f->g[0] + f->g[1] * f->g[1] + f->g[2] * f->g[2]);
}

double tc_physics_exact_integral_stress_strain(const tc_physics_fields *f, const double L[3]) {
  double H[9], eps[9], sigma[9], product = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      H[3 * i + j] = f->W[i][j];
  tc_physics_symmetric_part(H, eps);
  tc_physics_stress_of_strain(f, eps, sigma);
  for (int k = 0; k < 9; ++k)
    product += sigma[k] * eps[k];
  return L[0] * L[1] * L[2] * product;
}
