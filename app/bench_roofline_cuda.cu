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

tc_err cuda_failure(cudaError_t status, const char *what) {
  return tc_error_raise(TC_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s", what,
                        cudaGetErrorString(status));
}

#define ROOFLINE_CUDA_CALL(expression)                                                             \
  do {                                                                                             \
    cudaError_t status_ = (expression);                                                            \
    if (status_ != cudaSuccess) {                                                                  \
      err = cuda_failure(status_, #expression);                                                    \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

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

} // namespace

extern "C" tc_err bench_roofline_measure_cuda(size_t array_bytes, bench_roofline *roofline) {
  tc_err err = TC_SUCCESS;
  double2 *a = nullptr, *b = nullptr, *c = nullptr;
  double *sink_double = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  const size_t n = array_bytes / sizeof(double2);
  int device = 0, processors = 0, blocks_per_processor = 0;
  double copy_kernel_seconds = 0, copy_memcpy_seconds = 0, triad_seconds = 0, fma_seconds[2] = {0, 0};
  *roofline = bench_roofline{};
  ROOFLINE_CUDA_CALL(cudaGetDevice(&device));
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device));
  ROOFLINE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_processor,
                                                                   fma_kernel<double>, kThreads, 0));
  ROOFLINE_CUDA_CALL(cudaMalloc(&a, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaMalloc(&b, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaMalloc(&c, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaMalloc(&sink_double, sizeof(double)));
  ROOFLINE_CUDA_CALL(cudaMemset(a, 0, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaMemset(b, 0, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaMemset(c, 0, n * sizeof(double2)));
  ROOFLINE_CUDA_CALL(cudaEventCreate(&start));
  ROOFLINE_CUDA_CALL(cudaEventCreate(&stop));
  {
    const int stream_blocks = processors * 8;
    ROOFLINE_CUDA_CALL(best_seconds(start, stop, [&] { copy_kernel<<<stream_blocks, kThreads>>>(a, c, n); },
                                    &copy_kernel_seconds));
    ROOFLINE_CUDA_CALL(best_seconds(start, stop,
                                    [&] { cudaMemcpyAsync(c, a, n * sizeof(double2), cudaMemcpyDeviceToDevice); },
                                    &copy_memcpy_seconds));
    ROOFLINE_CUDA_CALL(best_seconds(
        start, stop, [&] { triad_kernel<<<stream_blocks, kThreads>>>(a, b, c, 3.0, n); }, &triad_seconds));
    const int fma_blocks = processors * std::max(blocks_per_processor, 1) * 4;
    ROOFLINE_CUDA_CALL(best_seconds(
        start, stop, [&] { fma_kernel<double><<<fma_blocks, kThreads>>>(1.0000001, 1e-7, sink_double); },
        &fma_seconds[TC_DOUBLE]));
    ROOFLINE_CUDA_CALL(best_seconds(
        start, stop,
        [&] { fma_kernel<float><<<fma_blocks, kThreads>>>(1.0001f, 1e-4f, reinterpret_cast<float *>(sink_double)); },
        &fma_seconds[TC_FLOAT]));
    const double bytes = (double)(n * sizeof(double2));
    const double flops = 2.0 * kFmaChains * kFmaIterations * (double)fma_blocks * kThreads;
    roofline->threads = 0;
    roofline->copy_bytes_per_second = 2.0 * bytes / std::min(copy_kernel_seconds, copy_memcpy_seconds);
    roofline->triad_bytes_per_second = 3.0 * bytes / triad_seconds;
    roofline->fma_flops_per_second[TC_DOUBLE] = flops / fma_seconds[TC_DOUBLE];
    roofline->fma_flops_per_second[TC_FLOAT] = flops / fma_seconds[TC_FLOAT];
  }
done:
  if (start != nullptr)
    cudaEventDestroy(start);
  if (stop != nullptr)
    cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(sink_double);
  return err;
}
