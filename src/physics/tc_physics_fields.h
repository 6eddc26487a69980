/* tc_physics_fields: the manufactured fields and the material law of the
 * assembly loop's problem, written once as inline functions that host (C)
 * and device (CUDA) code both call, so that the CPU builders (tc_physics.c)
 * and their GPU twins (tc_physics_cuda.cu) cannot drift apart. */
#ifndef TC_PHYSICS_FIELDS_H
#define TC_PHYSICS_FIELDS_H

#include "tc_host_device.h"

/// The manufactured fields and material: u(x) = u0 + g.x (scalar),
/// w(x) = w0 + W x (displacement), Lame parameters lambda and mu. Linear
/// fields are reproduced exactly by Q1 and Q2 elements, so the checks know
/// the exact answers.
typedef struct {
  double u0, g[3];
  double w0[3], W[3][3];
  double lambda, mu;
} tc_physics_fields;

/// u(x).
static inline TC_HOST_DEVICE double tc_physics_field_u(const tc_physics_fields *f,
                                                       const double x[3]) {
  return f->u0 + f->g[0] * x[0] + f->g[1] * x[1] + f->g[2] * x[2];
}

/// w(x), three components.
static inline TC_HOST_DEVICE void tc_physics_field_w(const tc_physics_fields *f,
                                                     const double x[3], double w[3]) {
  for (int i = 0; i < 3; ++i)
    w[i] = f->w0[i] + f->W[i][0] * x[0] + f->W[i][1] * x[1] + f->W[i][2] * x[2];
}

/// sigma = lambda tr(eps) I + 2 mu eps, both row-major 3 x 3.
static inline TC_HOST_DEVICE void tc_physics_stress_of_strain(const tc_physics_fields *f,
                                                              const double eps[9],
                                                              double sigma[9]) {
  const double trace = eps[0] + eps[4] + eps[8];
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k)
      sigma[3 * j + k] = (j == k ? f->lambda * trace : 0.0) + 2.0 * f->mu * eps[3 * j + k];
}

/// eps(phi e_i) = sym(e_i (x) grad phi) for the basis gradient grad, row-major.
static inline TC_HOST_DEVICE void tc_physics_basis_strain(int i, const double grad[3],
                                                          double eps[9]) {
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k)
      eps[3 * j + k] = 0.5 * ((i == j ? grad[k] : 0.0) + (i == k ? grad[j] : 0.0));
}

/// eps = sym(H) for a displacement gradient H, row-major.
static inline TC_HOST_DEVICE void tc_physics_symmetric_part(const double H[9], double eps[9]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      eps[3 * i + j] = 0.5 * (H[3 * i + j] + H[3 * j + i]);
}

#endif
