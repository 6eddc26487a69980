/* tc_physics_fused_diffusion_cuda: the scalar problem's six kernels with
 * their inputs built on chip, on the GPU (see tc_physics_fused.h). A block
 * of 128 threads takes G = 128 / F cells at a time, thread t the row of
 * basis function a = t / G of cell t % G. Per chunk of kChunk points the
 * block forms, per (cell, point), the physical gradients of every basis
 * function, u_h and grad u_h in shared memory (the materialised builder's
 * expressions, in double, cell index fastest so that a warp's reads of one
 * function's values are consecutive words; in float also rounded once);
 * then each thread adds its row's products (mass and stiffness against
 * every function, and its load and flux load) into registers in the run's
 * precision, as the materialised contractions sum, and thread a = 0 the
 * cell's two integrals. Only the geometry is read and only the outputs
 * written. */
#include <cuda_runtime.h>

#include <cstdint>

extern "C" {
#include "tc_cuda_call.h"
#include "tc_physics_fused.h"
}

#include "fused_cuda_common.cuh"
#include "tc_cuda_limits.cuh"

namespace {

constexpr int kThreads = 128;
constexpr int kChunk = 8; ///< points formed at a time

template <int F, typename Real>
__global__ void __launch_bounds__(kThreads)
    fused_diffusion_kernel(tc_geometry_cuda_batch g, tc_physics_fields f, bool left,
                           Real *__restrict__ mass, Real *__restrict__ stiffness,
                           Real *__restrict__ load, Real *__restrict__ flux_load,
                           Real *__restrict__ u2, Real *__restrict__ grad_u2) {
  constexpr int G = kThreads / F;
  constexpr bool kSingle = sizeof(Real) < sizeof(double);
  __shared__ double gradients[F * kChunk * 3 * G]; // [(a, q, d)][cell]
  __shared__ double measures[kChunk * G], values_u[kChunk * G], gradients_u[kChunk * 3 * G];
  __shared__ double nodal_u[F * G];    // [a][cell]
  __shared__ double values[F * kChunk]; // [a][q]: phi_a at the chunk's points
  /* The products' right operands in the run's precision: in float a
   * rounded copy, in double the values themselves. */
  __shared__ Real rounded_gradients[kSingle ? F * kChunk * 3 * G : 1];
  __shared__ Real rounded_values[kSingle ? F * kChunk : 1];
  const Real *operand_gradients, *operand_values;
  if constexpr (kSingle) {
    operand_gradients = rounded_gradients;
    operand_values = rounded_values;
  } else {
    operand_gradients = gradients;
    operand_values = values;
  }
  const int cell = threadIdx.x % G, a = threadIdx.x / G;
  const int64_t C = g.cells, P = g.num_points, S = g.stride;
  for (int64_t c0 = (int64_t)blockIdx.x * G; c0 < C; c0 += (int64_t)gridDim.x * G) {
    const int64_t c = c0 + cell;
    const bool mine = a < F && c < C;
    __syncthreads(); // the previous group's last chunk is consumed
    if (mine) {
      double x[3];
      for (int i = 0; i < 3; ++i)
        x[i] = g.node_coords[(int64_t)(a * 3 + i) * S + c];
      nodal_u[a * G + cell] = tc_physics_field_u(&f, x);
    }
    Real row_mass[F], row_stiffness[F], row_load = 0, row_flux = 0, sum_u2 = 0, sum_grad_u2 = 0;
#pragma unroll
    for (int b = 0; b < F; ++b)
      row_mass[b] = row_stiffness[b] = 0;
    for (int64_t q0 = 0; q0 < P; q0 += kChunk) {
      const int n = P - q0 < kChunk ? (int)(P - q0) : kChunk;
      __syncthreads(); // nodal u written; the chunk before consumed
      for (int i = threadIdx.x; i < F * kChunk; i += blockDim.x)
        if (i % kChunk < n) {
          values[i] = g.ref_values[(i / kChunk) * P + q0 + i % kChunk];
          if constexpr (kSingle)
            rounded_values[i] = (Real)values[i];
        }
      for (int item = threadIdx.x; item < G * kChunk; item += blockDim.x) {
        const int pc = item % G, qq = item / G;
        const int64_t cc = c0 + pc, q = q0 + qq;
        if (qq >= n || cc >= C)
          continue;
        double inverse[9];
        for (int k = 0; k < 9; ++k)
          inverse[k] = g.inverses[(q * 9 + k) * S + cc];
        double uh = 0.0, guh[3] = {0.0, 0.0, 0.0};
        for (int b = 0; b < F; ++b) {
          const double *r = g.ref_gradients + (b * P + q) * 3;
          const double ub = nodal_u[b * G + pc];
          uh += ub * g.ref_values[b * P + q];
          double grad[3];
          tc_fused::basis_gradient(inverse, r, grad);
          for (int i = 0; i < 3; ++i) {
            gradients[((b * kChunk + qq) * 3 + i) * G + pc] = grad[i];
            if constexpr (kSingle)
              rounded_gradients[((b * kChunk + qq) * 3 + i) * G + pc] = (Real)grad[i];
            guh[i] += ub * grad[i];
          }
        }
        measures[qq * G + pc] = g.measures[q * S + cc];
        values_u[qq * G + pc] = uh;
        for (int i = 0; i < 3; ++i)
          gradients_u[(qq * 3 + i) * G + pc] = guh[i];
      }
      __syncthreads();
      if (!mine)
        continue;
      for (int qq = 0; qq < n; ++qq) {
        const double dV = measures[qq * G + cell];
        const Real weighted_phi = (Real)(dV * values[a * kChunk + qq]);
        Real weighted_grad[3];
        for (int i = 0; i < 3; ++i)
          weighted_grad[i] = (Real)(dV * gradients[((a * kChunk + qq) * 3 + i) * G + cell]);
#pragma unroll
        for (int b = 0; b < F; ++b) {
          row_mass[b] += weighted_phi * operand_values[b * kChunk + qq];
          Real sum = row_stiffness[b];
          for (int i = 0; i < 3; ++i)
            sum += weighted_grad[i] * operand_gradients[((b * kChunk + qq) * 3 + i) * G + cell];
          row_stiffness[b] = sum;
        }
        const double uh = values_u[qq * G + cell];
        const Real weighted_uh = (Real)(dV * uh);
        row_load += weighted_uh * operand_values[a * kChunk + qq];
        for (int i = 0; i < 3; ++i)
          row_flux += (Real)f.g[i] * weighted_grad[i];
        if (a == 0) {
          sum_u2 += weighted_uh * (Real)uh;
          for (int i = 0; i < 3; ++i) {
            const double guh = gradients_u[(qq * 3 + i) * G + cell];
            sum_grad_u2 += (Real)(dV * guh) * (Real)guh;
          }
        }
      }
    }
    if (!mine)
      continue;
#pragma unroll
    for (int b = 0; b < F; ++b) {
      const int64_t at = left ? c + C * (a + (int64_t)F * b) : (c * F + a) * F + b;
      if (mass)
        mass[at] = (Real)row_mass[b];
      if (stiffness)
        stiffness[at] = (Real)row_stiffness[b];
    }
    const int64_t at = left ? c + C * a : c * F + a;
    if (load)
      load[at] = (Real)row_load;
    if (flux_load)
      flux_load[at] = (Real)row_flux;
    if (a == 0 && u2)
      u2[c] = (Real)sum_u2;
    if (a == 0 && grad_u2)
      grad_u2[c] = (Real)sum_grad_u2;
  }
}

template <int F, typename Real>
tc_err launch(const tc_geometry_cuda_batch &g, const tc_physics_fields &f, bool left,
              const tc_physics_fused_diffusion_outputs *out, cudaStream_t stream) {
  constexpr int G = kThreads / F;
  const int64_t groups = (g.cells + G - 1) / G;
  unsigned blocks = 0;
  TC_CALL(tc_cuda::resident_wave(fused_diffusion_kernel<F, Real>, kThreads, 0, groups,
                                 "fused diffusion kernel", &blocks));
  fused_diffusion_kernel<F, Real><<<blocks, kThreads, 0, stream>>>(
      g, f, left, (Real *)out->mass, (Real *)out->stiffness, (Real *)out->load,
      (Real *)out->flux_load, (Real *)out->u2, (Real *)out->grad_u2);
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_physics_cuda_fused_diffusion(const tc_geometry_cuda_batch *batch,
                                                  const tc_physics_fields *fields,
                                                  tc_layout layout, tc_precision precision,
                                                  const tc_physics_fused_diffusion_outputs *outputs,
                                                  void *stream) {
  const int F = batch->num_fields;
  TC_CHECK(F == 8 || F == 27, TC_ERR_UNSUPPORTED,
           "the fused diffusion kernels take Q1 and Q2 elements (8 or 27 nodes, got %d)", F);
  TC_CHECK(batch->cells >= 0 && batch->cells <= batch->stride, TC_ERR_ARGUMENT,
           "fused diffusion of %lld cells in a batch of %lld", (long long)batch->cells,
           (long long)batch->stride);
  if (batch->cells == 0)
    return TC_SUCCESS;
  const bool left = layout == TC_LAYOUT_LEFT;
  cudaStream_t s = (cudaStream_t)stream;
  if (precision == TC_DOUBLE)
    return F == 8 ? launch<8, double>(*batch, *fields, left, outputs, s)
                  : launch<27, double>(*batch, *fields, left, outputs, s);
  return F == 8 ? launch<8, float>(*batch, *fields, left, outputs, s)
                : launch<27, float>(*batch, *fields, left, outputs, s);
}
