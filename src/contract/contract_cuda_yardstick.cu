/* contract_cuda_yardstick: the cuBLAS strided-batched GEMM that the FieldField
 * kernels are measured against (contract_cuda_yardstick.h). */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdlib>

extern "C" {
#include "contract_cuda_yardstick.h"
}

struct tc_cuda_yardstick {
  cublasHandle_t handle;
};

namespace {

/// Column-major view of layout right: out_c^T (R x L) = right_c (R x K) * left_c^T
/// (K x L), where right_c and left_c are K x R and K x L column-major.
template <typename T, typename Gemm>
cublasStatus_t batched_gemm(Gemm gemm, cublasHandle_t handle, const tc_contraction *s,
                            const void *left, const void *right, void *output) {
  const long long L = s->num_left_fields, R = s->num_right_fields;
  const long long K = tc_contraction_length(s), C = s->num_cells;
  const T one = 1, zero = 0;
  return gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, (int)L, (int)K, &one,
              static_cast<const T *>(right), (int)K, R * K, static_cast<const T *>(left), (int)K,
              L * K, &zero, static_cast<T *>(output), (int)R, L * R, (int)C);
}

} // namespace

extern "C" tc_err tc_cuda_yardstick_create(void *stream, tc_cuda_yardstick **yardstick) {
  *yardstick = nullptr;
  tc_cuda_yardstick *created = static_cast<tc_cuda_yardstick *>(calloc(1, sizeof *created));
  TC_CHECK(created != nullptr, TC_ERR_MEMORY, "out of host memory");
  cublasStatus_t status = cublasCreate(&created->handle);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasSetStream(created->handle, static_cast<cudaStream_t>(stream));
  if (status != CUBLAS_STATUS_SUCCESS) {
    if (created->handle)
      (void)cublasDestroy(created->handle);
    free(created);
    TC_FAIL(TC_ERR_CUDA, "cannot set up cuBLAS: %s", cublasGetStatusString(status));
  }
  *yardstick = created;
  return TC_SUCCESS;
}

extern "C" void tc_cuda_yardstick_destroy(tc_cuda_yardstick **yardstick) {
  if (!*yardstick)
    return;
  (void)cublasDestroy((*yardstick)->handle);
  free(*yardstick);
  *yardstick = nullptr;
}

extern "C" bool tc_cuda_yardstick_supports(const tc_contraction *shape) {
  const int64_t int_max = 2147483647;
  return tc_kernel_is_field_field(shape->kernel) && shape->layout == TC_LAYOUT_RIGHT &&
         !shape->sum_into && tc_contraction_length(shape) <= int_max &&
         shape->num_cells <= int_max;
}

extern "C" tc_err tc_cuda_yardstick_run(tc_cuda_yardstick *yardstick, const tc_contraction *shape,
                                        const void *left, const void *right, void *output) {
  TC_CHECK(tc_cuda_yardstick_supports(shape), TC_ERR_UNSUPPORTED,
           "the cuBLAS yardstick runs FieldField kernels in layout right without sum_into, "
           "not %s (%s layout)", tc_kernel_name(shape->kernel), tc_layout_name(shape->layout));
  const cublasStatus_t status =
      shape->precision == TC_DOUBLE
          ? batched_gemm<double>(cublasDgemmStridedBatched, yardstick->handle, shape, left, right,
                                 output)
          : batched_gemm<float>(cublasSgemmStridedBatched, yardstick->handle, shape, left, right,
                                output);
  TC_CHECK(status == CUBLAS_STATUS_SUCCESS, TC_ERR_CUDA, "cuBLAS batched GEMM for %s failed: %s",
           tc_kernel_name(shape->kernel), cublasGetStatusString(status));
  return TC_SUCCESS;
}
