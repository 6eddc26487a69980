/* contract_cuda_vendor: the CUDA backend's TC_VARIANT_VENDOR, cuBLAS's
 * strided-batched GEMM with one cached handle per GPU (contract_cuda_vendor.cu).
 * C++ declarations private to the CUDA backend. */
#ifndef CONTRACT_CUDA_VENDOR_H
#define CONTRACT_CUDA_VENDOR_H

#include <cuda_runtime.h>

extern "C" {
#include "tc_contract.h"
}

/// "cuBLAS 13.1.0" (the version of the headers built against).
const char *tc_cuda_vendor_library();

/// True for a FieldField shape in layout right with L, R and K below 2^31
/// (a validated, normalized shape).
bool tc_cuda_vendor_supports(const tc_contraction *shape);

/// out(c) = left(c) * right(c)^T (+ out(c) with sum_into) for every cell, as
/// cublas{D,S}gemmStridedBatched on stream with the current GPU's handle
/// (made on first use). Asynchronous.
tc_err tc_cuda_vendor_run(const tc_contraction *shape, const void *left, const void *right,
                          void *output, cudaStream_t stream);

/// Destroys every handle made so far; the next call makes its GPU's again.
void tc_cuda_vendor_release();

#endif
