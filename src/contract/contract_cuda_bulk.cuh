/* contract_cuda_bulk: staging a contiguous run of a global array into shared
 * memory with the Hopper bulk copy engine (TMA, PTX cp.async.bulk, sm_90)
 * and a shared-memory barrier (mbarrier) per ring stage, for the kernels whose
 * inputs are runs of whole cells (layout right). One thread issues a run's
 * copy, so many kilobytes per block are in flight without holding registers.
 * Private to src/contract/contract_cuda.cu. */
#ifndef TC_CONTRACT_CUDA_BULK_CUH
#define TC_CONTRACT_CUDA_BULK_CUH

#include <stdint.h>

namespace tc_cuda {

/// Whether this is device code for a GPU with the bulk copy engine.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TC_BULK_COPY 1
#else
#define TC_BULK_COPY 0
#endif

/// Most ring stages (barriers) of a kernel that uses these.
constexpr int kMaxBulkStages = 8;

/// Words [start, end) of an array of `total` words at `array`, as the bulk
/// engine can move them: it needs 16-byte aligned addresses and sizes. The
/// buffer's first word stands for word `origin`, the one at the 16-byte
/// boundary at or below `start` (the run then sits `shift` words into the
/// buffer); the engine copies [copy_first, copy_stop), the 16-byte pieces that
/// lie inside the array (rounded outwards where that stays inside it), and
/// threads copy the words left at either end (finish_run). A buffer of
/// end - start + bulk_slack<T> words holds the run.
/// Words a run's shared buffer needs beyond the run: the 16-byte alignment
/// of the copy's start and end.
template <typename T>
constexpr int64_t bulk_slack = 2 * 16 / sizeof(T);

template <typename T>
struct bulk_run {
  int64_t origin, copy_first, copy_stop, start, end;
  uint32_t bytes;
  int shift;
};

/// Words from the 16-byte boundary at or below word `start` of `array` to
/// that word: where a run from `start` sits in its buffer (bulk_run::shift).
template <typename T>
__device__ __forceinline__ int run_shift(const T *array, int64_t start) {
  constexpr int64_t E = 16 / sizeof(T);
  const int64_t base = (int64_t)(((uintptr_t)array % 16) / sizeof(T));
  return (int)((start + base) % E);
}

template <typename T>
__device__ __forceinline__ bulk_run<T> plan_run(const T *array, int64_t start, int64_t end,
                                                int64_t total) {
  constexpr int64_t E = 16 / sizeof(T);
  // Words from the 16-byte boundary at or below the array's base to the base.
  const int64_t base = (int64_t)(((uintptr_t)array % 16) / sizeof(T));
  bulk_run<T> r;
  r.start = start;
  r.end = end;
  r.origin = start - run_shift(array, start);
  r.copy_first = r.origin >= 0 ? r.origin : r.origin + E;
  r.copy_stop = (end + base + E - 1) / E * E - base;
  if (r.copy_stop > total)
    r.copy_stop = (end + base) / E * E - base;
  if (r.copy_stop < r.copy_first)
    r.copy_stop = r.copy_first;
  r.bytes = (uint32_t)((r.copy_stop - r.copy_first) * (int64_t)sizeof(T));
  r.shift = (int)(start - r.origin);
  return r;
}

__device__ __forceinline__ uint32_t shared_address(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

/// One thread: sets up `count` barriers, each completed by `arrivals`
/// arrivals and its copies' bytes. The caller then synchronizes the block.
__device__ __forceinline__ void bulk_init(uint64_t *barriers, int count, int arrivals = 1) {
#if TC_BULK_COPY
  for (int s = 0; s < count; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barriers + s)),
                 "r"(arrivals)
                 : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#else
  (void)barriers;
  (void)count;
  (void)arrivals;
#endif
}

/// One thread: announces `bytes` of copies on `barrier` (its one arrival),
/// after the block has finished reading the buffers they overwrite.
__device__ __forceinline__ void bulk_expect(uint64_t *barrier, uint32_t bytes) {
#if TC_BULK_COPY
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   shared_address(barrier)),
               "r"(bytes)
               : "memory");
#else
  (void)barrier;
  (void)bytes;
#endif
}

/// One arrival on `barrier`; what this thread wrote to shared memory before
/// it is seen by the threads that wait for the phase to end.
__device__ __forceinline__ void bulk_arrive(uint64_t *barrier) {
#if TC_BULK_COPY
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier))
               : "memory");
#else
  (void)barrier;
#endif
}

/// One thread: starts the bulk copy of a planned run into `buffer` (16-byte
/// aligned shared memory), completing on `barrier`.
template <typename T>
__device__ __forceinline__ void bulk_copy(T *buffer, const T *array, const bulk_run<T> &r,
                                          uint64_t *barrier) {
#if TC_BULK_COPY
  if (r.bytes > 0)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(shared_address(buffer + (r.copy_first - r.origin))),
                 "l"(array + r.copy_first), "r"(r.bytes), "r"(shared_address(barrier))
                 : "memory");
#else
  (void)buffer;
  (void)array;
  (void)r;
  (void)barrier;
#endif
}

/// Every thread: waits until the barrier's phase of parity `parity` is over.
__device__ __forceinline__ void bulk_wait(uint64_t *barrier, uint32_t parity) {
#if TC_BULK_COPY
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(shared_address(barrier)), "r"(parity)
                 : "memory");
#else
  (void)barrier;
  (void)parity;
#endif
}

/// Copies the words of a run the engine did not (at the ends of the array
/// only), words first, first + stride, ... of each end; returns whether there
/// were any. By one thread alone (first 0, stride 1) before it arrives on the
/// run's barrier, or by every thread of the block (the overload below).
template <typename T>
__device__ __forceinline__ bool finish_run(T *buffer, const T *array, const bulk_run<T> &r,
                                           int first, int stride) {
  const int64_t head_end = min(r.copy_first, r.end), tail_start = max(r.copy_stop, r.start);
  for (int64_t w = r.start + first; w < head_end; w += stride)
    buffer[w - r.origin] = array[w];
  for (int64_t w = tail_start + first; w < r.end; w += stride)
    buffer[w - r.origin] = array[w];
  return r.start < head_end || tail_start < r.end;
}

/// Every thread, after bulk_wait and before the block synchronizes: its share
/// of finish_run; the answer is the same in every thread.
template <typename T>
__device__ __forceinline__ bool finish_run(T *buffer, const T *array, const bulk_run<T> &r) {
  return finish_run(buffer, array, r, (int)threadIdx.x, (int)blockDim.x);
}

} // namespace tc_cuda

#endif
