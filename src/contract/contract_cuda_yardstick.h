/* contract_cuda_yardstick: the vendor yardstick for the FieldField kernels, a
 * cuBLAS strided-batched GEMM on the same arrays (layout right only: there
 * each cell's matrices are contiguous). For benchmarks; not a variant. */
#ifndef TC_CONTRACT_CUDA_YARDSTICK_H
#define TC_CONTRACT_CUDA_YARDSTICK_H

#include <stdbool.h>

#include "tc_build.h"
#include "tc_contract.h"

typedef struct tc_cuda_yardstick tc_cuda_yardstick;

#if TCMINI_HAVE_CUDA
/// A cuBLAS handle bound to stream (cudaStream_t; NULL for the default) on
/// the current GPU. TC_ERR_CUDA with cuBLAS's status when it cannot be made.
tc_err tc_cuda_yardstick_create(void *stream, tc_cuda_yardstick **yardstick);

/// Releases the handle and sets *yardstick to NULL. NULL is fine.
void tc_cuda_yardstick_destroy(tc_cuda_yardstick **yardstick);

/// True if the yardstick computes this shape: a FieldField kernel in layout
/// right without sum_into.
bool tc_cuda_yardstick_supports(const tc_contraction *shape);

/// out(c) = left(c) * right(c)^T for every cell, (L x K) times (K x R) with
/// K = P*D1*D2, as one cublas{D,S}gemmStridedBatched call. Asynchronous.
tc_err tc_cuda_yardstick_run(tc_cuda_yardstick *yardstick, const tc_contraction *shape,
                             const void *left, const void *right, void *output);

#else /* no CUDA backend in this build: nothing to compare with */

static inline tc_err tc_cuda_yardstick_create(void *stream, tc_cuda_yardstick **yardstick) {
  (void)stream;
  *yardstick = NULL;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "cuBLAS is not in this build (configure with -DTCMINI_ENABLE_CUDA=ON)");
}
static inline void tc_cuda_yardstick_destroy(tc_cuda_yardstick **yardstick) { *yardstick = NULL; }
static inline bool tc_cuda_yardstick_supports(const tc_contraction *shape) {
  (void)shape;
  return false;
}
static inline tc_err tc_cuda_yardstick_run(tc_cuda_yardstick *yardstick,
                                           const tc_contraction *shape, const void *left,
                                           const void *right, void *output) {
  (void)yardstick, (void)shape, (void)left, (void)right, (void)output;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "cuBLAS is not in this build (configure with -DTCMINI_ENABLE_CUDA=ON)");
}

#endif

#endif
