/* tc_cuda_call: TC_CUDA_CALL, the one way a CUDA runtime error becomes a
 * tc_err (TC_ERR_CUDA with the call and CUDA's message), for the plain-C
 * and the CUDA C++ files of the CUDA backend. C++ files include it inside
 * extern "C" { }, like the other tcmini headers. */
#ifndef TC_CUDA_CALL_H
#define TC_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "tc_error.h"

/// Fails the current function with TC_ERR_CUDA naming the call and the reason.
#define TC_CUDA_CALL(expr)                                                                   \
  do {                                                                                       \
    cudaError_t tc_cuda_rc_ = (expr);                                                        \
    if (tc_cuda_rc_ != cudaSuccess)                                                          \
      TC_FAIL(TC_ERR_CUDA, "%s failed: %s", #expr, cudaGetErrorString(tc_cuda_rc_));         \
  } while (0)

#endif
