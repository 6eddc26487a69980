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

#ifdef __cplusplus
}
#endif

#endif
