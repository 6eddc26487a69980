/* tc_physics: the finite-element problem the assembly loop forms with the
 * nine contractions: which arrays feed which kernel (mass, diffusion and
 * elasticity stiffness, three load vectors, three cell integrals) and the
 * manufactured fields they use. The CPU builder of those arrays is
 * tc_physics_builder, its GPU twin tc_physics_cuda. */
#ifndef TC_PHYSICS_H
#define TC_PHYSICS_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_contract.h"
#include "tc_physics_fields.h"

/// The arrays the contractions read, per batch of C cells. F = fields of the
/// scalar element, 3F of the vector (elasticity) element, field (a,i) = 3a+i.
typedef enum {
  TC_INPUT_VALUES,                ///< (C,F,P)        phi_a(x_q)
  TC_INPUT_WEIGHTED_VALUES,       ///< (C,F,P)        dV_q phi_a(x_q)
  TC_INPUT_GRADIENTS,             ///< (C,F,P,3)      grad phi_a(x_q)
  TC_INPUT_WEIGHTED_GRADIENTS,    ///< (C,F,P,3)      dV_q grad phi_a(x_q)
  TC_INPUT_STRAINS,               ///< (C,3F,P,3,3)   eps(phi_a e_i) = sym(e_i (x) grad phi_a)
  TC_INPUT_WEIGHTED_STRESSES,     ///< (C,3F,P,3,3)   dV_q sigma(phi_a e_i) = dV_q (lambda tr eps I + 2 mu eps)
  TC_INPUT_FIELD_U,               ///< (C,P)          u_h(x_q), u_h the nodal interpolant of u
  TC_INPUT_WEIGHTED_FIELD_U,      ///< (C,P)          dV_q u_h(x_q)
  TC_INPUT_GRADIENT_U_CELL,       ///< (C,1,3)        grad u, one value per cell (DataField data with P = 1)
  TC_INPUT_GRADIENT_U,            ///< (C,P,3)        grad u_h(x_q)
  TC_INPUT_WEIGHTED_GRADIENT_U,   ///< (C,P,3)        dV_q grad u_h(x_q)
  TC_INPUT_STRAIN_W,              ///< (C,P,3,3)      eps(w_h)(x_q), w_h the interpolant of w
  TC_INPUT_WEIGHTED_STRESS_W,     ///< (C,P,3,3)      dV_q sigma(w_h)(x_q)
  TC_INPUT_COUNT
} tc_physics_input;


/// The fields tcmini uses (documented values; see tc_physics.c).
const tc_physics_fields *tc_physics_default_fields(void);

/// The left and right inputs of a kernel, and what it forms.
tc_physics_input tc_physics_left_input(tc_kernel kernel);
tc_physics_input tc_physics_right_input(tc_kernel kernel);
/// "mass matrix", "diffusion stiffness", ... (for the report).
const char *tc_physics_kernel_role(tc_kernel kernel);
/// True for the elasticity trio (FieldFieldTensor, DataFieldTensor,
/// DataDataTensor), the kernels of rank-2 (tensor) data. tc_physics_fused
/// runs every kernel with its inputs built on chip: these three in one
/// product, the scalar problem's six in another (the fused diffusion kernels).
bool tc_physics_kernel_elastic(tc_kernel kernel);
/// Components per node of the kernel's assembled result: 1 (scalar element)
/// or 3 (elasticity); 0 for DataData kernels (cell integrals).
int tc_physics_kernel_components(tc_kernel kernel);

/// The contraction a kernel runs on a batch of num_cells cells with F scalar
/// fields and P points.
tc_contraction tc_physics_contraction(tc_kernel kernel, int64_t num_cells, int64_t num_fields,
                                      int64_t num_points, tc_layout layout,
                                      tc_precision precision);

/// Element count of an input array for a batch.
int64_t tc_physics_input_count(tc_physics_input input, int64_t num_cells, int64_t num_fields,
                               int64_t num_points);

/// Logical extents of an input array for a batch, cell index first (the
/// shapes listed with tc_physics_input); returns the logical rank.
int tc_physics_input_dims(tc_physics_input input, int64_t num_cells, int64_t num_fields,
                          int64_t num_points, int64_t dims[5]);

/// Geometry and basis of one batch, host memory, double, row-major.
typedef struct {
  int64_t num_cells, num_fields, num_points;
  const double *measures;          ///< (C,P) weighted measures dV_q
  const double *ref_values;        ///< (F,P) reference basis values
  const double *ref_gradients;     ///< (F,P,3) reference basis gradients
  const double *inverse_jacobians; ///< (C,P,3,3)
  const double *gradients;         ///< (C,F,P,3) physical basis gradients (the fused path
                                   ///< reads them; tc_physics_builder forms its own)
  const double *node_coords;       ///< (C,F,3) node coordinates per cell
} tc_physics_batch;

/// Nodal values of u (one per node) and w (three per node) at node coordinates
/// coords [num_nodes][3].
void tc_physics_nodal_u(const tc_physics_fields *fields, int64_t num_nodes, const double *coords,
                        double *u);
void tc_physics_nodal_w(const tc_physics_fields *fields, int64_t num_nodes, const double *coords,
                        double *w);

/// Exact integrals over the box [0,L]^3: of u, u^2, |grad u|^2 and
/// sigma(w):eps(w).
double tc_physics_exact_integral_u(const tc_physics_fields *fields, const double length[3]);
double tc_physics_exact_integral_u2(const tc_physics_fields *fields, const double length[3]);
double tc_physics_exact_integral_grad_u2(const tc_physics_fields *fields, const double length[3]);
double tc_physics_exact_integral_stress_strain(const tc_physics_fields *fields,
                                               const double length[3]);

#endif
