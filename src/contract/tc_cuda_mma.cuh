/* tc_cuda_mma: the FP64 tensor-core product (DMMA, PTX mma.sync m16n8k16
 * f64, sm_90) that the CUDA kernels share: the contraction library's
 * FieldField tiles (contract_cuda_mma.cuh) and the fused elasticity's
 * tensor-core forms (src/physics/fused_cuda_block.cuh and
 * fused_cuda_pair.cuh), which reach it through tc_contract's include
 * path. */
#ifndef TC_CUDA_MMA_CUH
#define TC_CUDA_MMA_CUH

#include <cuda_runtime.h>

namespace tc_cuda {

/// d += a b for one 16 x 8 x 16 product on the FP64 tensor cores (DMMA; an
/// sm_90 shape, measured faster than the sm_80 m8n8k4 here: docs/cuda.md).
/// Lane l (g = l/4, t = l%4) holds the A entries of rows g and g+8 and the B
/// entries of column g at the k slots t, t+4, t+8, t+12, and D(g, 2t+{0,1}),
/// D(g+8, 2t+{0,1}). A sum does not depend on the order of its terms, so any
/// one-to-one relabelling of k that A and B share is allowed: the callers put
/// physical k = 4t+v in slot t+4v, so that each lane reads 4 adjacent words.
/// a[h][v]: row g+8h, k 4t+v; b[v]: column g, k 4t+v; d: {D(g,2t), D(g,2t+1),
/// D(g+8,2t), D(g+8,2t+1)}.
__device__ __forceinline__ void mma_16x8x16(double (&d)[4], const double2 (&a)[2][2],
                                            const double2 (&b)[2]) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0][0].x), "d"(a[1][0].x), "d"(a[0][0].y), "d"(a[1][0].y),
                 "d"(a[0][1].x), "d"(a[1][1].x), "d"(a[0][1].y), "d"(a[1][1].y),
                 "d"(b[0].x), "d"(b[0].y), "d"(b[1].x), "d"(b[1].y));
#else
  // Only sm_90 code has this shape; contract_cuda.cu runs the kernel only
  // when its binary is sm_90 (hopper_code).
  (void)a;
  (void)b;
  d[0] = d[1] = d[2] = d[3] = __longlong_as_double(0x7ff8000000000000ll);
#endif
}

} // namespace tc_cuda

#endif
