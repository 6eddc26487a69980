/* contract_cuda_tasks: dynamic hand-out of tasks to the blocks of a
 * persistent kernel (one resident wave): a block takes its next task from a
 * device counter when it has room for it, so blocks that the memory system
 * serves faster take more tasks, and no block is left with a last task after
 * the others are done. Counters come from a small pool, one per launch; the
 * last block of a launch to finish puts its counter back to zero. Private to
 * src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_TASKS_CUH
#define TC_CONTRACT_CUDA_TASKS_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "contract_cuda_kernels.cuh"

namespace tc_cuda {

/// Counters in the pool. Launches take them in turn, so a launch still
/// running while this many more are queued on other streams would share its
/// counter; launches on one stream never overlap.
constexpr int kTaskCounters = 64;

/// Per counter: the next task to hand out, and the blocks that are done.
__device__ unsigned long long task_counters[kTaskCounters][2];

/// The counter of the next launch on the current GPU (zero, as every launch
/// leaves it).
inline tc_err next_task_counter(unsigned long long **counter) {
  static unsigned launches = 0;
  void *pool = nullptr;
  const cudaError_t rc = cudaGetSymbolAddress(&pool, task_counters);
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "cannot find the task counters on the GPU: %s",
           cudaGetErrorString(rc));
  *counter = static_cast<unsigned long long *>(pool) + 2 * (launches++ % kTaskCounters);
  return TC_SUCCESS;
}

/// One thread of a block: the block's next task (tasks past the last mean
/// there are none left).
__device__ __forceinline__ int64_t take_task(unsigned long long *counter) {
  return (int64_t)atomicAdd(counter, 1ull);
}

/// One thread of each block, after the block's last take_task: the last
/// block of the launch to get here zeros the counter for the next launch.
__device__ __forceinline__ void finish_tasks(unsigned long long *counter) {
  __threadfence();
  if (atomicAdd(counter + 1, 1ull) == gridDim.x - 1ull) {
    counter[0] = 0;
    counter[1] = 0;
    __threadfence();
  }
}

} // namespace tc_cuda

#endif
