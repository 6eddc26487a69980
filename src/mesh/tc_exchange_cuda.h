/* tc_exchange_cuda: the shared-node sums of node vectors that live on the
 * GPU (run.exchange = device or gpu-aware). Each rank packs the values of
 * its shared nodes with a kernel, the packed buffers travel to the
 * neighbours (through pinned host buffers, or handed to a CUDA-aware MPI as
 * device pointers), and a kernel sums every shared node's terms in the order
 * of tc_mesh_sum_shared, so the results are bitwise those of the host
 * exchange. Plain C interface; without the CUDA backend in the build every
 * call fails with TC_ERR_UNSUPPORTED. */
#ifndef TC_EXCHANGE_CUDA_H
#define TC_EXCHANGE_CUDA_H

#include <stdbool.h>

#include "tc_build.h"
#include "tc_error.h"
#include "tc_mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_exchange_cuda tc_exchange_cuda;

#if TCMINI_HAVE_CUDA
/// Copies the mesh's exchange plan to the device and allocates packed
/// buffers for up to max_components values per node, on the device and (for
/// gpu_aware false) pinned on the host; work is queued on stream
/// (cudaStream_t). Synchronous. Not collective (the caller agrees on the
/// outcome before the first tc_exchange_cuda_sum_fields).
tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components, bool gpu_aware,
                               void *stream, tc_exchange_cuda **exchange);

/// Releases the buffers and sets *exchange to NULL. NULL is fine.
void tc_exchange_cuda_destroy(tc_exchange_cuda **exchange);

/// Sums `count` fields (at most 8; device_values[f]:
/// [num_nodes][components[f]], device memory, the components summing to at
/// most max_components) at the
/// shared nodes over every rank that touches them, in place, in one message
/// per neighbour: bitwise the sums of tc_mesh_sum_shared_fields. Collective
/// on the mesh's communicator.
tc_err tc_exchange_cuda_sum_fields(tc_exchange_cuda *exchange, int count,
                                   double *const device_values[], const int components[]);
#else
#define TC_EXCHANGE_CUDA_UNSUPPORTED_                                                   \
  tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,                      \
                 "the GPU shared-node exchange is not in this build (configure with "   \
                 "-DTCMINI_ENABLE_CUDA=ON)")
static inline tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components,
                                             bool gpu_aware, void *stream,
                                             tc_exchange_cuda **exchange) {
  (void)mesh, (void)max_components, (void)gpu_aware, (void)stream;
  *exchange = NULL;
  return TC_EXCHANGE_CUDA_UNSUPPORTED_;
}
static inline void tc_exchange_cuda_destroy(tc_exchange_cuda **exchange) { *exchange = NULL; }
static inline tc_err tc_exchange_cuda_sum_fields(tc_exchange_cuda *exchange, int count,
                                                 double *const device_values[],
                                                 const int components[]) {
  (void)exchange, (void)count, (void)device_values, (void)components;
  return TC_EXCHANGE_CUDA_UNSUPPORTED_;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
