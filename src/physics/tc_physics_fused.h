/* tc_physics_fused: the elasticity trio with its inputs built on chip.
 * FieldFieldTensor (elasticity stiffness), DataFieldTensor (internal force
 * of w_h) and DataDataTensor (integral of sigma(w_h):eps(w_h)) read four
 * inputs that exist only to be contracted: the weighted stresses and strains
 * of the basis (3F x P x 3 x 3 values a cell each, the bulk of the loop's
 * memory traffic) and of w_h. Stacked, they are one product
 *   out(l, r) = sum_{q, d1, d2} A(l, q, d1, d2) B(r, q, d1, d2),
 *   A = [dV sigma(phi_a e_i) ; dV sigma(w_h)],  B = [eps(phi_b e_j) ; eps(w_h)],
 * whose block l, r < 3F is FieldFieldTensor, row 3F (r < 3F) DataFieldTensor
 * and entry (3F, 3F) DataDataTensor. Here A and B are built a few quadrature
 * points at a time, from the geometry, in fast memory next to the product
 * (a thread's cache on CPUs, shared memory on GPUs) and never stored: the
 * same contractions as the materialised path (run.inputs = materialised), to
 * rounding, without the round trip of their inputs through memory. Each value
 * is computed in double and rounded once to the run's precision, as the
 * materialised builders do; the products are summed in that precision
 * (double on CPUs), in an order of their own. */
#ifndef TC_PHYSICS_FUSED_H
#define TC_PHYSICS_FUSED_H

#include "tc_build.h"
#include "tc_geometry_cuda.h"
#include "tc_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The elasticity trio's outputs of one batch, each in the layout and
/// precision given and shaped as the materialised contraction's output
/// (tc_physics_contraction): FieldFieldTensor (C,3F,3F), DataFieldTensor
/// (C,3F), DataDataTensor (C). NULL skips one.
typedef struct {
  void *stiffness;      ///< FieldFieldTensor
  void *internal_force; ///< DataFieldTensor
  void *stress_strain;  ///< DataDataTensor
} tc_physics_fused_outputs;

/// The trio on the host, OpenMP threads over cells (batch: the host
/// geometry, with its physical gradients). Not collective. Where form is
/// not NULL it gets the form that ran, in words (a static string, for the
/// report), as from the GPU's.
tc_err tc_physics_fused_elasticity(const tc_physics_batch *batch, const tc_physics_fields *fields,
                                   tc_layout layout, tc_precision precision,
                                   const tc_physics_fused_outputs *outputs, const char **form);

#if TCMINI_HAVE_CUDA
/// The trio on the GPU, from the device geometry of a batch (device
/// outputs). Asynchronous on stream (cudaStream_t). TC_ERR_UNSUPPORTED for
/// elements of more than 42 nodes. Where form is not NULL it gets the form
/// of the product that ran (tc_physics_fused_cuda.cu lists them), in words.
tc_err tc_physics_cuda_fused_elasticity(const tc_geometry_cuda_batch *batch,
                                        const tc_physics_fields *fields, tc_layout layout,
                                        tc_precision precision,
                                        const tc_physics_fused_outputs *outputs, void *stream,
                                        const char **form);
#else
static inline tc_err tc_physics_cuda_fused_elasticity(const tc_geometry_cuda_batch *batch,
                                                      const tc_physics_fields *fields,
                                                      tc_layout layout, tc_precision precision,
                                                      const tc_physics_fused_outputs *outputs,
                                                      void *stream, const char **form) {
  (void)batch, (void)fields, (void)layout, (void)precision, (void)outputs, (void)stream;
  (void)form;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the GPU fused elasticity is not in this build (configure with "
                        "-DTCMINI_ENABLE_CUDA=ON)");
}
#endif

/// The scalar problem's six kernels, whose inputs (basis values and
/// gradients, u_h and grad u_h, weighted by dV or not) are built on chip the
/// same way: out(a, b) sums A(a, q, d) B(b, q, d) over the points q (and
/// d < 3 for the gradients) for the mass matrix (FieldFieldScalar, A = dV
/// phi, B = phi) and the diffusion stiffness (FieldFieldVector, A = dV grad
/// phi, B = grad phi); the loads (DataFieldScalar: dV u_h against phi;
/// DataFieldVector: grad u against dV grad phi) and the integrals of u^2 and
/// |grad u|^2 (DataDataScalar, DataDataVector) read the same values. Each
/// value is the materialised builder's expression in double, rounded once to
/// the run's precision; the products are summed over ascending points (then
/// d) in that precision on GPUs, in double on CPUs (and each output rounded
/// once). Outputs (NULL skips one) shaped as the materialised
/// contractions': (C,F,F), (C,F), (C).
typedef struct {
  void *mass;      ///< FieldFieldScalar
  void *stiffness; ///< FieldFieldVector
  void *load;      ///< DataFieldScalar
  void *flux_load; ///< DataFieldVector
  void *u2;        ///< DataDataScalar
  void *grad_u2;   ///< DataDataVector
} tc_physics_fused_diffusion_outputs;

/// The six on the host, OpenMP threads over cells (batch: the host
/// geometry, with its physical gradients). Not collective.
tc_err tc_physics_fused_diffusion(const tc_physics_batch *batch, const tc_physics_fields *fields,
                                  tc_layout layout, tc_precision precision,
                                  const tc_physics_fused_diffusion_outputs *outputs);

#if TCMINI_HAVE_CUDA
/// The six on the GPU, from the device geometry of a batch (device
/// outputs), Q1 and Q2 elements (8 or 27 nodes; TC_ERR_UNSUPPORTED
/// otherwise). Asynchronous on stream (cudaStream_t).
tc_err tc_physics_cuda_fused_diffusion(const tc_geometry_cuda_batch *batch,
                                       const tc_physics_fields *fields, tc_layout layout,
                                       tc_precision precision,
                                       const tc_physics_fused_diffusion_outputs *outputs,
                                       void *stream);
#else
static inline tc_err tc_physics_cuda_fused_diffusion(
    const tc_geometry_cuda_batch *batch, const tc_physics_fields *fields, tc_layout layout,
    tc_precision precision, const tc_physics_fused_diffusion_outputs *outputs, void *stream) {
  (void)batch, (void)fields, (void)layout, (void)precision, (void)outputs, (void)stream;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the GPU fused diffusion kernels are not in this build (configure with "
                        "-DTCMINI_ENABLE_CUDA=ON)");
}
#endif

#ifdef __cplusplus
}
#endif

#endif
