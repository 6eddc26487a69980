/* tc_cuda_limits: the current GPU's limits that launch shapes depend on
 * (multiprocessors, threads and shared memory), read once per process, the
 * resident wave of a kernel (asked once per kernel and launch shape), and
 * the rule for one launch of several tasks: the contraction library's
 * launchers (contract_cuda_kernels.cuh) and the GPU loop's input builders,
 * fused elasticity (src/physics) and gathers (src/assembly), which reach
 * it through tc_contract's include path. */
#ifndef TC_CUDA_LIMITS_CUH
#define TC_CUDA_LIMITS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

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

/// Blocks of `kernel` (threads, dynamic shared bytes) that fit on the whole
/// GPU at once, after raising its dynamic shared-memory limit; 0 if none fit.
/// Asked once per (kernel, threads, bytes) and process: a rank drives one GPU.
/// The limit is a kernel's, not a launch's, so it only ever grows (to the most
/// any remembered launch of the kernel asked for): set lower, a remembered
/// larger launch would fail.
template <typename Kernel>
inline tc_err resident_blocks(Kernel kernel, int threads, size_t shared, int64_t *blocks) {
  struct entry {
    const void *kernel;
    int threads;
    size_t shared;
    int64_t blocks;
  };
  static entry known[64];
  static int count = 0;
  const void *key = reinterpret_cast<const void *>(kernel);
  for (int n = 0; n < count; ++n)
    if (known[n].kernel == key && known[n].threads == threads && known[n].shared == shared) {
      *blocks = known[n].blocks;
      return TC_SUCCESS;
    }
  device_limits limits = {};
  TC_CALL(current_device_limits(&limits));
  size_t limit = shared;
  for (int n = 0; n < count; ++n)
    if (known[n].kernel == key)
      limit = std::max(limit, known[n].shared);
  int per_sm = 0;
  cudaError_t rc =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)limit);
  if (rc == cudaSuccess)
    rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared);
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "cannot size a kernel of %d threads and %zu bytes of "
           "shared memory: %s", threads, shared, cudaGetErrorString(rc));
  *blocks = (int64_t)limits.sms * per_sm;
  if (count < 64)
    known[count++] = {key, threads, shared, *blocks};
  return TC_SUCCESS;
}

/// Grid of one resident wave of `kernel` blocks striding over `tasks` tasks:
/// as many blocks as fit on the GPU at once, never more than the tasks (and
/// at least one); an error naming `what` when not even one block fits.
template <typename Kernel>
inline tc_err resident_wave(Kernel kernel, int threads, size_t shared, int64_t tasks,
                            const char *what, unsigned *blocks) {
  int64_t resident = 0;
  TC_CALL(resident_blocks(kernel, threads, shared, &resident));
  TC_CHECK(resident > 0, TC_ERR_CUDA, "the %s (%d threads, %zu bytes of shared memory) does not "
           "fit on this GPU", what, threads, shared);
  *blocks = (unsigned)(tasks < 1 ? 1 : tasks < resident ? tasks : resident);
  return TC_SUCCESS;
}

/// Whether tasks of `blocks` thread blocks in all, each on blocks of its
/// own, take one launch of a kernel holding every task's code (the GPU
/// loop's inputs and gathers of a batch) rather than a launch each: while
/// they are at most 16 blocks a multiprocessor, where each task is a wave
/// or less and launched one after another they take the sum of their
/// latencies. The combined kernel has the registers of its largest task,
/// which costs where the tasks fill the GPU by themselves. Measured on an
/// H200 (docs/measurements/mini-app-gpu.md) with the inputs: Q1 cells with
/// 27 points, four batches in flight, 11.9 M cells/s in one launch against
/// 10.4 M in batches of 1,024 cells (about 10 blocks a multiprocessor),
/// 14.7 M against 15.4 M in batches of 4,096 (about 40).
inline tc_err takes_one_launch(int64_t blocks, bool *one) {
  constexpr int64_t kOneLaunchBlocksPerSM = 16;
  device_limits limits = {};
  TC_CALL(current_device_limits(&limits));
  *one = blocks <= kOneLaunchBlocksPerSM * limits.sms;
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
