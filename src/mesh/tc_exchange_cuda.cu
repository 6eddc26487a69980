/* tc_exchange_cuda: shared-node sums of device-resident node vectors (see
 * tc_exchange_cuda.h): pack kernel, messages through tc_mesh_exchange_packed
 * (host-staged or CUDA-aware), sum kernel in tc_mesh_sum_shared's order. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
extern "C" {
#include "tc_cuda_call.h"
#include "tc_exchange_cuda.h"
#include "tc_parallel.h"
}

#include "tc_cuda_grid.cuh"
#include "tc_cuda_memory.cuh"

struct tc_exchange_cuda {
  const tc_mesh *mesh;
  cudaStream_t stream;
  bool gpu_aware;
  int max_components;
  int64_t entries, num_shared;
  int64_t *neighbor_nodes, *shared_nodes, *term_offsets, *terms; /* device copies of the plan */
  double *send, *receive;                                        /* device, packed */
  double *host_send, *host_receive;                              /* pinned, when not gpu_aware */
};

namespace {

using tc_cuda_grid::first_item;
using tc_cuda_grid::item_stride;
using tc_cuda_memory::device_alloc;
using tc_cuda_memory::device_free;
using tc_cuda_memory::upload;

/// Most fields one exchange packs (tc_exchange_cuda_sum_fields).
constexpr int kMostFields = 8;

/// The fields of one exchange, passed to the kernels by value: field f's
/// values ([num_nodes][components[f]]) are words at[f].. of a packed entry
/// of `width` words.
struct field_list {
  double *values[kMostFields];
  int components[kMostFields], at[kMostFields];
  int count, width;
  /// The field of word w of an entry, and w's component in it.
  __device__ int field_of(int w, int *component) const {
    int f = 0;
    while (f + 1 < count && w >= at[f + 1])
      ++f;
    *component = w - at[f];
    return f;
  }
};

/// send[e][w] = word w of node neighbor_nodes[e]'s packed fields: every
/// field in one launch (launched one a field, the exchange's launches took
/// as long as its copies).
__global__ void pack_kernel(const field_list fields, const int64_t *__restrict__ neighbor_nodes,
                            int64_t entries, double *__restrict__ send) {
  const int width = fields.width;
  for (int64_t t = first_item(); t < entries * width; t += item_stride()) {
    const int64_t e = t / width;
    int c = 0;
    const int f = fields.field_of((int)(t - e * width), &c);
    send[t] = fields.values[f][neighbor_nodes[e] * fields.components[f] + c];
  }
}

/// Each shared node's word becomes the sum of its terms, in the plan's
/// order: -1 its own value, t >= 0 received entry t (tc_mesh_sum_shared).
__global__ void sum_kernel(const field_list fields, const int64_t *__restrict__ shared_nodes,
                           const int64_t *__restrict__ term_offsets,
                           const int64_t *__restrict__ terms, int64_t num_shared,
                           const double *__restrict__ receive) {
  const int width = fields.width;
  for (int64_t t = first_item(); t < num_shared * width; t += item_stride()) {
    const int64_t s = t / width;
    const int w = (int)(t - s * width);
    int c = 0;
    const int f = fields.field_of(w, &c);
    double *own = &fields.values[f][shared_nodes[s] * fields.components[f] + c];
    const int64_t first = term_offsets[s], last = term_offsets[s + 1];
    double total = terms[first] < 0 ? *own : receive[terms[first] * width + w];
    for (int64_t k = first + 1; k < last; ++k)
      total += terms[k] < 0 ? *own : receive[terms[k] * width + w];
    *own = total;
  }
}

tc_err allocate(tc_exchange_cuda *x, const tc_mesh_exchange_plan &plan) {
  TC_CALL(tc_mesh_exchange_fits(x->mesh, x->max_components));
  const int64_t terms = plan.shared_term_offsets[plan.num_shared];
  TC_CALL(upload(&x->neighbor_nodes, plan.neighbor_nodes, x->entries, "exchange nodes", x->stream));
  TC_CALL(upload(&x->shared_nodes, plan.shared_nodes, x->num_shared, "shared nodes", x->stream));
  TC_CALL(upload(&x->term_offsets, plan.shared_term_offsets, x->num_shared + 1,
                 "shared-node term offsets", x->stream));
  TC_CALL(upload(&x->terms, plan.shared_terms, terms, "shared-node terms", x->stream));
  const int64_t count = std::max<int64_t>(x->entries, 1) * x->max_components;
  TC_CALL(device_alloc(&x->send, count, "exchange send buffer"));
  TC_CALL(device_alloc(&x->receive, count, "exchange receive buffer"));
  if (!x->gpu_aware) {
    TC_CUDA_CALL(cudaMallocHost((void **)&x->host_send, (size_t)count * sizeof(double)));
    TC_CUDA_CALL(cudaMallocHost((void **)&x->host_receive, (size_t)count * sizeof(double)));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(x->stream));
  return TC_SUCCESS;
}

/// Packs the fields on the device and brings the packed values to where MPI
/// reads them.
tc_err pack(tc_exchange_cuda *x, const field_list &fields) {
  const int width = fields.width;
  TC_LAUNCH(pack_kernel, x->entries * width, x->stream, fields, x->neighbor_nodes, x->entries,
            x->send);
  const int64_t items = x->entries * width;
  if (items > 0) {
    if (!x->gpu_aware)
      TC_CUDA_CALL(cudaMemcpyAsync(x->host_send, x->send, (size_t)items * sizeof(double),
                                   cudaMemcpyDeviceToHost, x->stream));
  }
  TC_CUDA_CALL(cudaStreamSynchronize(x->stream));
  return TC_SUCCESS;
}

/// Brings the received values to the device and sums them into the fields.
tc_err sum_in(tc_exchange_cuda *x, const field_list &fields) {
  if (!x->gpu_aware && x->entries > 0)
    TC_CUDA_CALL(cudaMemcpyAsync(x->receive, x->host_receive,
                                 (size_t)(x->entries * fields.width) * sizeof(double),
                                 cudaMemcpyHostToDevice, x->stream));
  TC_LAUNCH(sum_kernel, x->num_shared * fields.width, x->stream, fields, x->shared_nodes,
            x->term_offsets, x->terms, x->num_shared, x->receive);
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components, bool gpu_aware,
                                          void *stream, tc_exchange_cuda **exchange) {
  *exchange = nullptr;
  TC_CHECK(max_components >= 1, TC_ERR_ARGUMENT, "GPU exchange: max_components must be >= 1, got %d",
           max_components);
  tc_exchange_cuda *x = (tc_exchange_cuda *)calloc(1, sizeof *x);
  TC_CHECK(x, TC_ERR_MEMORY, "GPU exchange: out of host memory");
  tc_mesh_exchange_plan plan;
  tc_mesh_get_exchange_plan(mesh, &plan);
  x->mesh = mesh;
  x->stream = static_cast<cudaStream_t>(stream);
  x->gpu_aware = gpu_aware;
  x->max_components = max_components;
  x->entries = plan.neighbor_offsets[plan.num_neighbors];
  x->num_shared = plan.num_shared;
  tc_err err = allocate(x, plan);
  if (err != TC_SUCCESS) {
    tc_exchange_cuda_destroy(&x);
    return err;
  }
  *exchange = x;
  return TC_SUCCESS;
}

extern "C" void tc_exchange_cuda_destroy(tc_exchange_cuda **exchange) {
  tc_exchange_cuda *x = *exchange;
  if (!x)
    return;
  device_free(&x->neighbor_nodes);
  device_free(&x->shared_nodes);
  device_free(&x->term_offsets);
  device_free(&x->terms);
  device_free(&x->send);
  device_free(&x->receive);
  (void)cudaFreeHost(x->host_send); // no error path, as device_free
  (void)cudaFreeHost(x->host_receive);
  free(x);
  *exchange = nullptr;
}

extern "C" tc_err tc_exchange_cuda_sum_fields(tc_exchange_cuda *exchange, int count,
                                              double *const device_values[],
                                              const int components[]) {
  tc_exchange_cuda *x = exchange;
  field_list fields = {};
  tc_err err = count >= 0 && count <= kMostFields
                   ? TC_SUCCESS
                   : tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                    "GPU exchange: %d fields, expected 0..%d", count,
                                    kMostFields);
  for (int f = 0; f < count && err == TC_SUCCESS; ++f)
    if (components[f] >= 1 && components[f] <= x->max_components - fields.width) {
      fields.values[f] = device_values[f];
      fields.components[f] = components[f];
      fields.at[f] = fields.width;
      fields.width += components[f];
      fields.count = f + 1;
    } else {
      err = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                           "GPU exchange: %d components, expected 1..%d", components[f],
                           x->max_components - fields.width);
    }
  if (err == TC_SUCCESS && fields.width > 0)
    err = pack(x, fields);
  /* A rank whose pack failed must not leave its neighbours waiting. */
  TC_CALL(tc_parallel_agree(tc_mesh_comm(x->mesh), err));
  if (fields.width == 0)
    return TC_SUCCESS;
  TC_CALL(tc_mesh_exchange_packed(x->mesh, fields.width, x->gpu_aware ? x->send : x->host_send,
                                  x->gpu_aware ? x->receive : x->host_receive));
  return sum_in(x, fields);
}
