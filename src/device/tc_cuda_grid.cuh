/* tc_cuda_grid: the launch shape of the assembly loop's CUDA kernels (GPU
 * loop and GPU exchange): blocks of kThreads threads, grids capped at
 * kMaxBlocks, kernels striding over their items (grid-stride loops), and
 * TC_LAUNCH, which queues a kernel over n items and checks the launch. */
#ifndef TC_CUDA_GRID_CUH
#define TC_CUDA_GRID_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace tc_cuda_grid {

constexpr int kThreads = 256;
/// Grids stop growing here; kernels stride over the rest.
constexpr int64_t kMaxBlocks = 1 << 20;

inline unsigned grid_blocks(int64_t items) {
  return (unsigned)std::min<int64_t>((items + kThreads - 1) / kThreads, kMaxBlocks);
}

/// Index of this thread's first item and the stride to its next.
__device__ inline int64_t first_item() { return blockIdx.x * (int64_t)blockDim.x + threadIdx.x; }
__device__ inline int64_t item_stride() { return (int64_t)gridDim.x * blockDim.x; }

/// The same for work on `blocks` blocks of a launch shared with other work,
/// this block being its `block`-th.
__device__ inline int64_t first_item(int64_t block) { return block * blockDim.x + threadIdx.x; }
__device__ inline int64_t item_stride(int64_t blocks) { return blocks * blockDim.x; }

} // namespace tc_cuda_grid

/// Launches a kernel over n work items (nothing for n == 0) on stream and
/// fails with TC_ERR_CUDA if the launch did (needs tc_cuda_call.h).
#define TC_LAUNCH(kernel, n, stream, ...)                                                    \
  do {                                                                                       \
    const int64_t tc_items_ = (n);                                                           \
    if (tc_items_ > 0) {                                                                     \
      kernel<<<tc_cuda_grid::grid_blocks(tc_items_), tc_cuda_grid::kThreads, 0, (stream)>>>( \
          __VA_ARGS__);                                                                      \
      TC_CUDA_CALL(cudaGetLastError());                                                      \
    }                                                                                        \
  } while (0)

#endif
