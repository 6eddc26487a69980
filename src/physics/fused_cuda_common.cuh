/* fused_cuda_common: what the GPU fused products share (see
 * tc_physics_fused_cuda.cu and tc_physics_fused_diffusion_cuda.cu): a basis
 * function's physical gradient from an inverse Jacobian, a cell's geometry
 * parked in shared memory, and where an entry of the elasticity's stacked
 * product goes among the trio's outputs. Private to the physics module. */
#ifndef TC_FUSED_CUDA_COMMON_CUH
#define TC_FUSED_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_physics_fused.h"
}

namespace tc_fused {

/// J^{-T} grad_ref phi_a at point q (HGRADtransformGRAD), as tc_physics_cuda's
/// physical_gradient, from the cell's inverse Jacobian at q (in shared memory
/// or registers) and phi_a's reference gradient there.
__device__ inline void basis_gradient(const double *inverse, const double *ref,
                                      double out[3]) {
  for (int i = 0; i < 3; ++i)
    out[i] =
        inverse[0 * 3 + i] * ref[0] + inverse[1 * 3 + i] * ref[1] + inverse[2 * 3 + i] * ref[2];
}

/// Parks cell c's geometry in shared memory, the block's `threads` threads
/// striding over it: the inverse Jacobians [q][9], the measures [q] and the
/// node coordinates [a][3] (the batch holds them cell-fastest). The block
/// and pair forms take a cell a block.
__device__ inline void park_cell_geometry(const tc_geometry_cuda_batch &g, int64_t c,
                                          int threads, double *inverses, double *measures,
                                          double *coords) {
  const int P = (int)g.num_points, F = g.num_fields;
  for (int i = threadIdx.x; i < P * 10 + F * 3; i += threads) {
    if (i < P * 9)
      inverses[i] = g.inverses[(int64_t)i * g.stride + c];
    else if (i < P * 10)
      measures[i - P * 9] = g.measures[(int64_t)(i - P * 9) * g.stride + c];
    else
      coords[i - P * 10] = g.node_coords[(int64_t)(i - P * 10) * g.stride + c];
  }
}

/// Where entry (l, r) of cell c's stacked product (side N + 1, N = 3F)
/// goes among the trio's outputs: the block l, r < N is FieldFieldTensor,
/// the row l = N DataFieldTensor and the corner DataDataTensor
/// (tc_physics_fused.h); NULL for the column r = N above the corner, for
/// padding past N and for an output that is NULL. Layout left puts the cell
/// index fastest.
template <typename Real>
__device__ __forceinline__ Real *product_entry(Real *stiffness, Real *internal_force,
                                               Real *stress_strain, bool left, int64_t c,
                                               int64_t C, int N, int l, int r) {
  if (l < N && r < N)
    return stiffness ? stiffness + (left ? c + C * (l + (int64_t)N * r) : (c * N + l) * N + r)
                     : nullptr;
  if (l == N && r < N)
    return internal_force ? internal_force + (left ? c + C * r : c * N + r) : nullptr;
  if (l == N && r == N)
    return stress_strain ? stress_strain + c : nullptr;
  return nullptr;
}

} // namespace tc_fused

#endif
