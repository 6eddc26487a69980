/* tc_cuda_task_launch: several tasks of one kernel in one launch, each task
 * on its own range of thread blocks, or a launch each where they fill the
 * GPU by themselves (tc_cuda::takes_one_launch): the GPU loop's inputs of a
 * batch (src/physics) and its gathers (src/assembly). A launch is a struct
 * with `count` and `tasks[]`, passed to the kernel by value; a task has
 * `first_block` and `blocks`. Include after tc_cuda_call.h and
 * tc_cuda_limits.cuh. */
#ifndef TC_CUDA_TASK_LAUNCH_CUH
#define TC_CUDA_TASK_LAUNCH_CUH

#include <cuda_runtime.h>

namespace tc_cuda {

/// Appends `task` to the launch on the blocks after the `*blocks` taken so
/// far, and counts its blocks.
template <typename Launch, typename Task>
void add_task(Launch &launch, const Task &task, unsigned *blocks) {
  Task &added = launch.tasks[launch.count++];
  added = task;
  added.first_block = *blocks;
  *blocks += task.blocks;
}

/// The task of the launch whose blocks hold this block.
template <typename Launch>
__device__ __forceinline__ int task_of_block(const Launch &launch) {
  int i = 0;
  while (i + 1 < launch.count && blockIdx.x >= launch.tasks[i + 1].first_block)
    ++i;
  return i;
}

/// Launches the tasks (`blocks` in all): launch_all() queues the one kernel
/// that runs them all, launch_each(task) a task's own launch; nothing where
/// there is no task.
template <typename Launch, typename Each, typename All>
tc_err launch_tasks(const Launch &launch, unsigned blocks, Each launch_each, All launch_all) {
  if (launch.count == 0)
    return TC_SUCCESS;
  bool one = true;
  TC_CALL(takes_one_launch(blocks, &one));
  if (!one) {
    for (int i = 0; i < launch.count; ++i)
      TC_CALL(launch_each(launch.tasks[i]));
    return TC_SUCCESS;
  }
  launch_all();
  TC_CUDA_CALL(cudaGetLastError());
  return TC_SUCCESS;
}

} // namespace tc_cuda

#endif
