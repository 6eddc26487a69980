/* tc_cuda_limits: the current GPU's limits that launch shapes depend on
 * (multiprocessors, threads and shared memory), read once per process: the
 * contraction library's launchers (contract_cuda_kernels.cuh) and the GPU
 * loop's input builders and fused elasticity (src/physics), which reach it
 * through tc_contract's include path. */
#ifndef TC_CUDA_LIMITS_CUH
#define TC_CUDA_LIMITS_CUH

#include <cuda_runtime.h>

extern "C" {
#include "tc_error.h"
}

namespace tc_cuda {

struct device_limits {
  int sms, threads_per_sm, shared_per_block_optin, shared_per_sm;
};

/// The current GPU's limits, asked once per process (a rank drives one GPU).
inline tc_err current_device_limits(device_limits *limits) {
  static device_limits known = {};
  if (known.sms == 0) {
    device_limits read = {};
    int device = 0;
    cudaError_t rc = cudaGetDevice(&device);
    const struct {
      int *value;
      cudaDeviceAttr attribute;
    } wanted[] = {
        {&read.sms, cudaDevAttrMultiProcessorCount},
        {&read.threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor},
        {&read.shared_per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin},
        {&read.shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor},
    };
    for (const auto &w : wanted)
      if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(w.value, w.attribute, device);
    TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "cannot read the GPU's launch limits: %s",
             cudaGetErrorString(rc));
    known = read;
  }
  *limits = known;
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
