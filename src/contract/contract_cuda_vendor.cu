/* contract_cuda_vendor: the CUDA backend's vendor variant, cuBLAS's
 * strided-batched GEMM (contract_cuda_vendor.h).
 *
 * In layout right each cell's left (L x K) and right (R x K) are row-major
 * with K = P*D1*D2 contiguous, its output (L x R) row-major: in cuBLAS's
 * column-major terms out(c)^T (R x L) = right(c)^T (R x K) * left(c) (K x L),
 * one cublas{D,S}gemmStridedBatched over the cells (beta = 1 adds to the
 * output for sum_into). In layout left no matrix of a cell has a unit-stride
 * dimension (the cell index is fastest), which cuBLAS's GEMMs need, so the
 * variant refuses it (tc_contract_vendor_refusal).
 *
 * Handles: one per GPU, made at the first vendor call on that GPU and kept
 * (cublasCreate costs milliseconds and a device synchronisation); each call
 * binds it to the caller's stream. A mutex guards the table and the
 * set-stream-and-enqueue of a call, so host threads may share a GPU.
 * tc_cuda_vendor_release destroys them (tc_device_destroy calls it through
 * the backend table when the last CUDA device closes).
 *
 * Math: the handles are set to CUBLAS_DEFAULT_MATH, which computes in the
 * working precision or better: double in FP64 (FMA or FP64 tensor-core
 * instructions, both IEEE double), float in FP32 FMA. TF32, BF16x9 and the
 * FP64 fixed-point emulation are separate math modes that are never set. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>

extern "C" {
#include "tc_contract.h"
}
#include "contract_cuda_vendor.h"

namespace {

/// GPUs a process may drive (one handle each).
constexpr int kMaxGpus = 64;

struct handle_table {
  std::mutex mutex;
  cublasHandle_t handles[kMaxGpus] = {};
};

handle_table &table() {
  static handle_table instance;
  return instance;
}

/// The current GPU's handle, made on first use; caller holds the mutex.
tc_err handle_of_current_gpu(cublasHandle_t *handle) {
  int gpu = 0;
  cudaError_t rc = cudaGetDevice(&gpu);
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "cudaGetDevice failed: %s", cudaGetErrorString(rc));
  TC_CHECK(gpu >= 0 && gpu < kMaxGpus, TC_ERR_UNSUPPORTED,
           "the vendor variant keeps handles for GPUs 0 to %d, not GPU %d", kMaxGpus - 1, gpu);
  cublasHandle_t &slot = table().handles[gpu];
  if (slot == nullptr) {
    cublasHandle_t created = nullptr;
    cublasStatus_t status = cublasCreate(&created);
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);
    if (status != CUBLAS_STATUS_SUCCESS) {
      if (created != nullptr)
        (void)cublasDestroy(created);
      TC_FAIL(TC_ERR_CUDA, "cannot set up cuBLAS on GPU %d: %s", gpu,
              cublasGetStatusString(status));
    }
    slot = created;
  }
  *handle = slot;
  return TC_SUCCESS;
}

/// Cells per cuBLAS call: its batch count is an int.
constexpr long long kMaxBatch = 2147483647;

template <typename T, typename Gemm>
cublasStatus_t batched_gemm(Gemm gemm, cublasHandle_t handle, const tc_contraction *s,
                            const void *left, const void *right, void *output) {
  const long long L = s->num_left_fields, R = s->num_right_fields;
  const long long K = tc_contraction_length(s), C = s->num_cells;
  const T one = 1, beta = s->sum_into ? 1 : 0;
  const T *a = static_cast<const T *>(right), *b = static_cast<const T *>(left);
  T *c = static_cast<T *>(output);
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  for (long long first = 0; first < C && status == CUBLAS_STATUS_SUCCESS; first += kMaxBatch) {
    const long long batch = C - first < kMaxBatch ? C - first : kMaxBatch;
    status = gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, (int)L, (int)K, &one,
                  a + first * R * K, (int)K, R * K, b + first * L * K, (int)K, L * K, &beta,
                  c + first * L * R, (int)R, L * R, (int)batch);
  }
  return status;
}

} // namespace

#define TC_STRINGIFY_(x) #x
#define TC_STRINGIFY(x) TC_STRINGIFY_(x)

const char *tc_cuda_vendor_library() {
  return "cuBLAS " TC_STRINGIFY(CUBLAS_VER_MAJOR) "." TC_STRINGIFY(CUBLAS_VER_MINOR) "." TC_STRINGIFY(
      CUBLAS_VER_PATCH);
}

bool tc_cuda_vendor_supports(const tc_contraction *shape) {
  const int64_t int_max = 2147483647;
  return tc_kernel_is_field_field(shape->kernel) && shape->layout == TC_LAYOUT_RIGHT &&
         shape->num_left_fields <= int_max && shape->num_right_fields <= int_max &&
         tc_contraction_length(shape) <= int_max;
}

tc_err tc_cuda_vendor_run(const tc_contraction *shape, const void *left, const void *right,
                          void *output, cudaStream_t stream) {
  TC_CHECK(tc_cuda_vendor_supports(shape), TC_ERR_UNSUPPORTED,
           "cuBLAS runs FieldField kernels in layout right with sizes below 2^31, not %s (%s "
           "layout)",
           tc_kernel_name(shape->kernel), tc_layout_name(shape->layout));
  std::lock_guard<std::mutex> lock(table().mutex);
  cublasHandle_t handle = nullptr;
  TC_CALL(handle_of_current_gpu(&handle));
  cublasStatus_t status = cublasSetStream(handle, stream);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = shape->precision == TC_DOUBLE
                 ? batched_gemm<double>(cublasDgemmStridedBatched, handle, shape, left, right,
                                        output)
                 : batched_gemm<float>(cublasSgemmStridedBatched, handle, shape, left, right,
                                       output);
  TC_CHECK(status == CUBLAS_STATUS_SUCCESS, TC_ERR_CUDA, "cuBLAS batched GEMM for %s failed: %s",
           tc_kernel_name(shape->kernel), cublasGetStatusString(status));
  return TC_SUCCESS;
}

void tc_cuda_vendor_release() {
  std::lock_guard<std::mutex> lock(table().mutex);
  int current = -1;
  const bool restore = cudaGetDevice(&current) == cudaSuccess;
  for (int gpu = 0; gpu < kMaxGpus; ++gpu) {
    cublasHandle_t &slot = table().handles[gpu];
    if (slot == nullptr)
      continue;
    // A handle belongs to the GPU that was current when it was made.
    if (cudaSetDevice(gpu) == cudaSuccess)
      (void)cublasDestroy(slot); // nothing to report to on release
    slot = nullptr;
  }
  if (restore)
    (void)cudaSetDevice(current);
  (void)cudaGetLastError();
}
