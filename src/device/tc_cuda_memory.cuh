/* tc_cuda_memory: device memory for the assembly loop's CUDA code (GPU loop
 * and GPU exchange): typed allocation with a named TC_ERR_MEMORY failure,
 * upload of host arrays, release. Include after tc_cuda_call.h. */
#ifndef TC_CUDA_MEMORY_CUH
#define TC_CUDA_MEMORY_CUH

#include <cuda_runtime.h>

#include <cstdint>

namespace tc_cuda_memory {

/// *ptr = count elements of device memory (nullptr for count <= 0);
/// TC_ERR_MEMORY naming `what` and the size when cudaMalloc fails.
template <typename T> tc_err device_alloc(T **ptr, int64_t count, const char *what) {
  *ptr = nullptr;
  if (count <= 0)
    return TC_SUCCESS;
  const size_t bytes = (size_t)count * sizeof(T);
  cudaError_t rc = cudaMalloc((void **)ptr, bytes);
  if (rc != cudaSuccess) {
    *ptr = nullptr;
    (void)cudaGetLastError(); // clears the error, which is reported here
    TC_FAIL(TC_ERR_MEMORY, "cudaMalloc of %zu bytes for %s failed: %s", bytes, what,
            cudaGetErrorString(rc));
  }
  return TC_SUCCESS;
}

/// Allocates a device copy of count host elements and queues the copy on stream.
template <typename T>
tc_err upload(T **ptr, const T *host, int64_t count, const char *what, cudaStream_t stream) {
  TC_CALL(device_alloc(ptr, count, what));
  if (count > 0)
    TC_CUDA_CALL(cudaMemcpyAsync(*ptr, host, (size_t)count * sizeof(T), cudaMemcpyHostToDevice,
                                 stream));
  return TC_SUCCESS;
}

/// Releases *ptr and sets it to nullptr.
template <typename T> void device_free(T **ptr) {
  (void)cudaFree(*ptr); // release has no error path; a fault shows at the next sync
  *ptr = nullptr;
}

} // namespace tc_cuda_memory

#endif
