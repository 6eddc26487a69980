/* tc_exchange_cuda: the shared-node sums of node vectors that live on the
 * GPU (run.exchange = device, gpu-aware or peer). Each rank packs the values
 * of its shared nodes with a kernel, the packed buffers travel to the
 * neighbours (through pinned host buffers, handed to a CUDA-aware MPI as
 * device pointers, or copied GPU to GPU through CUDA IPC between the ranks of
 * one node), and a kernel sums every shared node's terms in the order of
 * tc_mesh_sum_shared, so the results are bitwise those of the host exchange
 * whatever the route. Plain C interface; without the CUDA backend in the
 * build every call fails with TC_ERR_UNSUPPORTED. */
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

/// How the packed values travel between ranks.
typedef enum {
  TC_EXCHANGE_ROUTE_HOST_BUFFERS, ///< pinned host buffers and MPI messages (run.exchange = device)
  TC_EXCHANGE_ROUTE_MPI_DEVICE,   ///< device buffers handed to a CUDA-aware MPI (gpu-aware)
  TC_EXCHANGE_ROUTE_PEER,         ///< each rank copies its neighbours' packed buffers GPU to GPU
                                  ///< (CUDA IPC); fails where a rank cannot (peer)
  TC_EXCHANGE_ROUTE_PEER_OR_HOST, ///< peer between the ranks that can map each other's
                                  ///< buffers, host buffers between the others (auto)
} tc_exchange_route;

#if TCMINI_HAVE_CUDA
/// Copies the mesh's exchange plan to the device and allocates packed
/// buffers for up to max_components values per node, on the device (two, for
/// the peer routes, used in turn) and, but for the CUDA-aware route, pinned
/// on the host; work is queued on stream (cudaStream_t). Synchronous. Not
/// collective (the caller agrees on the outcome before the first
/// tc_exchange_cuda_sum_fields, which sets the peer routes up).
tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components, tc_exchange_route route,
                               void *stream, tc_exchange_cuda **exchange);

/// Releases the buffers and sets *exchange to NULL. NULL is fine.
void tc_exchange_cuda_destroy(tc_exchange_cuda **exchange);

/// Sums `count` fields (at most 8; device_values[f]:
/// [num_nodes][components[f]], device memory, the components summing to at
/// most max_components) at the
/// shared nodes over every rank that touches them, in place, in one message
/// (or copy) per neighbour: bitwise the sums of tc_mesh_sum_shared_fields.
/// The first call of a peer route maps every neighbour's packed buffers and
/// events, and all ranks agree on the route. Collective on the mesh's
/// communicator.
tc_err tc_exchange_cuda_sum_fields(tc_exchange_cuda *exchange, int count,
                                   double *const device_values[], const int components[]);

/// Sets a peer route up ahead of the first sum: maps every neighbour's
/// packed buffers and events, copies from each once (a GPU's first copy from
/// a peer's memory costs hundreds of microseconds), and all ranks agree on
/// the route. The other routes have nothing to set up. Optional: the first
/// tc_exchange_cuda_sum_fields does it otherwise. Collective on the mesh's
/// communicator.
tc_err tc_exchange_cuda_connect(tc_exchange_cuda *exchange);

/// The route that runs, as run.exchange names it ("device", "gpu-aware",
/// "peer", and "peer+device" where some pairs of ranks copy and others send
/// messages; "auto" before TC_EXCHANGE_ROUTE_PEER_OR_HOST connects), and in
/// *why (may be NULL) the lowest rank's reason for a pair that sends
/// messages on that route ("" where none does). Not collective.
const char *tc_exchange_cuda_route_name(const tc_exchange_cuda *exchange, const char **why);
#else
#define TC_EXCHANGE_CUDA_UNSUPPORTED_                                                   \
  tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,                      \
                 "the GPU shared-node exchange is not in this build (configure with "   \
                 "-DTCMINI_ENABLE_CUDA=ON)")
static inline tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components,
                                             tc_exchange_route route, void *stream,
                                             tc_exchange_cuda **exchange) {
  (void)mesh, (void)max_components, (void)route, (void)stream;
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
static inline tc_err tc_exchange_cuda_connect(tc_exchange_cuda *exchange) {
  (void)exchange;
  return TC_EXCHANGE_CUDA_UNSUPPORTED_;
}
static inline const char *tc_exchange_cuda_route_name(const tc_exchange_cuda *exchange,
                                                      const char **why) {
  (void)exchange;
  if (why)
    *why = "";
  return "none";
}
#endif

#ifdef __cplusplus
}
#endif

#endif
