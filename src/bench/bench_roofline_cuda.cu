/* bench_roofline_cuda: the GPU's ceilings for tcmini-bench, measured on the
 * current device: device-memory copy and triad bandwidth (a vectorised
 * grid-stride kernel, and cudaMemcpy for copy; the better of the two) and
 * the FMA peak of the vector units in double and float (independent FMA
 * chains in registers on every thread). Tensor cores are not in this peak:
 * a kernel that uses them may pass 100 % of it. */
#include <cuda_runtime.h>

#include <algorithm>

extern "C" {
#include "bench_roofline_cuda.h"
#include "tc_cuda_call.h"
}

namespace {

constexpr int kPasses = 10;           // timed passes per figure (best kept), after one warm-up
constexpr int kFmaChains = 8;         // independent accumulators per thread
constexpr int kFmaIterations = 4096;  // loop trips per thread
constexpr int kThreads = 256;

__global__ void copy_kernel(const double2 *__restrict__ a, double2 *__restrict__ c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    c[i] = a[i];
}

__global__ void triad_kernel(double2 *__restrict__ a, const double2 *__restrict__ b,
                             const double2 *__restrict__ c, double scalar, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const double2 x = b[i], y = c[i];
    a[i] = make_double2(x.x + scalar * y.x, x.y + scalar * y.y);
  }
}

/* Each thread runs kFmaChains independent chains x = x*m + a; the result is
 * written only if it is the impossible value 0, so the loop cannot be
 * dropped and memory traffic is nil. */
template <typename T>
__global__ void fma_kernel(T multiplier, T addend, T *sink) {
  T x[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c)
    x[c] = (T)(threadIdx.x + c);
  for (int i = 0; i < kFmaIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c)
      x[c] = fma(x[c], multiplier, addend);
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c)
    sum += x[c];
  if (sum == (T)0)
    *sink = sum;
}

/* The device buffers and events of one measurement. */
struct roofline_buffers {
  double2 *a = nullptr, *b = nullptr, *c = nullptr;
  double *sink = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

/* Best time in seconds of kPasses runs of launch (after one warm-up). */
template <typename Launch>
cudaError_t best_seconds(cudaEvent_t start, cudaEvent_t stop, Launch launch, double *seconds) {
  *seconds = 1e30;
  for (int pass = 0; pass <= kPasses; ++pass) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaError_t status = cudaEventSynchronize(stop);
    if (status == cudaSuccess)
      status = cudaGetLastError();
    if (status != cudaSuccess)
      return status;
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (pass > 0)
      *seconds = std::min(*seconds, 1e-3 * ms);
  }
  return cudaSuccess;
}

/* Allocates into m (the caller releases it, also on failure) and measures. */
tc_err measure(roofline_buffers &m, size_t n, bench_roofline *roofline) {
  int device = 0, processors = 0, blocks_per_processor = 0;
  TC_CUDA_CALL(cudaGetDevice(&device));
  TC_CUDA_CALL(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device));
  TC_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_processor,
                                                             fma_kernel<double>, kThreads, 0));
  for (double2 **array : {&m.a, &m.b, &m.c}) {
    TC_CUDA_CALL(cudaMalloc(array, n * sizeof(double2)));
    TC_CUDA_CALL(cudaMemset(*array, 0, n * sizeof(double2)));
  }
  TC_CUDA_CALL(cudaMalloc(&m.sink, sizeof(double)));
  TC_CUDA_CALL(cudaEventCreate(&m.start));
  TC_CUDA_CALL(cudaEventCreate(&m.stop));
  double2 *a = m.a, *b = m.b, *c = m.c;
  double copy_kernel_seconds = 0, copy_memcpy_seconds = 0, triad_seconds = 0, fma_seconds[2] = {0, 0};
  const int stream_blocks = processors * 8;
  TC_CUDA_CALL(best_seconds(m.start, m.stop,
                            [&] { copy_kernel<<<stream_blocks, kThreads>>>(a, c, n); },
                            &copy_kernel_seconds));
  TC_CUDA_CALL(best_seconds(
      m.start, m.stop, [&] { cudaMemcpyAsync(c, a, n * sizeof(double2), cudaMemcpyDeviceToDevice); },
      &copy_memcpy_seconds));
  TC_CUDA_CALL(best_seconds(m.start, m.stop,
                            [&] { triad_kernel<<<stream_blocks, kThreads>>>(a, b, c, 3.0, n); },
                            &triad_seconds));
  const int fma_blocks = processors * std::max(blocks_per_processor, 1) * 4;
  double *sink = m.sink;
  TC_CUDA_CALL(best_seconds(
      m.start, m.stop, [&] { fma_kernel<double><<<fma_blocks, kThreads>>>(1.0000001, 1e-7, sink); },
      &fma_seconds[TC_DOUBLE]));
  TC_CUDA_CALL(best_seconds(
      m.start, m.stop,
      [&] { fma_kernel<float><<<fma_blocks, kThreads>>>(1.0001f, 1e-4f, reinterpret_cast<float *>(sink)); },
      &fma_seconds[TC_FLOAT]));
  const double bytes = (double)(n * sizeof(double2));
  const double flops = 2.0 * kFmaChains * kFmaIterations * (double)fma_blocks * kThreads;
  roofline->threads = 0;
  roofline->copy_bytes_per_second = 2.0 * bytes / std::min(copy_kernel_seconds, copy_memcpy_seconds);
  roofline->triad_bytes_per_second = 3.0 * bytes / triad_seconds;
  roofline->fma_flops_per_second[TC_DOUBLE] = flops / fma_seconds[TC_DOUBLE];
  roofline->fma_flops_per_second[TC_FLOAT] = flops / fma_seconds[TC_FLOAT];
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err bench_roofline_measure_cuda(size_t array_bytes, bench_roofline *roofline) {
  *roofline = bench_roofline{};
  roofline_buffers m;
  const tc_err err = measure(m, array_bytes / sizeof(double2), roofline);
  // Release has no error path; a fault shows at the next synchronisation.
  if (m.start != nullptr)
    (void)cudaEventDestroy(m.start);
  if (m.stop != nullptr)
    (void)cudaEventDestroy(m.stop);
  (void)cudaFree(m.a);
  (void)cudaFree(m.b);
  (void)cudaFree(m.c);
  (void)cudaFree(m.sink);
  return err;
}
