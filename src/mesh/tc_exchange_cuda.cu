/* tc_exchange_cuda: shared-node sums of device-resident node vectors (see
 * tc_exchange_cuda.h): pack kernel, then per pair of neighbours either a GPU
 * to GPU copy from the neighbour's mapped buffer (the peer routes) or an MPI
 * message (tc_mesh_exchange_packed_among: through the pinned host buffers, or
 * device pointers to a CUDA-aware MPI), then the sum kernel in
 * tc_mesh_sum_shared's order. Every route runs the one sequence of
 * exchange_and_sum; a route is which pairs send messages and how.
 *
 * The peer route's order of events, for rank r and neighbour n, call k
 * (every rank makes the same calls, so k and its parity p = k % 2 agree):
 * r waits for n's `copied` event, packs into its outbox p and records
 * `packed`; all ranks agree on the outcome (tc_parallel_agree, which no rank
 * leaves before every rank has recorded `packed`); r waits for n's `packed`,
 * copies n's outbox p and records `copied`. n's outbox p is next written at
 * call k + 2, after the agreement of call k + 1, which r reaches only once
 * it has queued its copies of call k and recorded `copied` after them: the
 * wait on `copied` there covers them. An IPC event's wait is on its latest
 * record when the wait is queued, which the agreements order as above. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
extern "C" {
#include "tc_cuda_call.h"
#include "tc_exchange_cuda.h"
#include "tc_fault.h"
#include "tc_parallel.h"
}

#include "tc_cuda_grid.cuh"
#include "tc_cuda_memory.cuh"

/// A neighbour's side of the peer route, mapped into this process.
struct peer_link {
  double *outboxes = nullptr;         ///< its two packed buffers
  cudaEvent_t packed = nullptr, copied = nullptr;
  int64_t capacity = 0;               ///< words of one of its packed buffers
  int64_t first_entry = 0;            ///< where this rank's entries start in them
  bool copies = false;                ///< the pair copies GPU to GPU (else: messages)
};

struct tc_exchange_cuda {
  const tc_mesh *mesh;
  cudaStream_t stream;
  tc_exchange_route route;
  int max_components;
  int64_t entries, num_shared, capacity; /* capacity: words of one packed buffer */
  int num_neighbors;
  const int *neighbor_rank;
  const int64_t *neighbor_offsets;
  int64_t *neighbor_nodes, *shared_nodes, *term_offsets, *terms; /* device copies of the plan */
  double *send, *receive;              /* device, packed; send holds two buffers on peer routes */
  double *host_send, *host_receive;    /* pinned, but for the CUDA-aware route */
  bool *sends;                         /* [num_neighbors]: the pair sends messages */
  bool messages;                       /* some pair of this rank's sends messages */
  /* the peer routes */
  bool decided, peer;                  /* the route is known; some pair (of any rank) copies */
  bool mixed;                          /* over all ranks: some pairs copy, some send */
  char why[512];                       /* why auto fell back to the host buffers */
  int64_t calls;
  cudaEvent_t packed, copied;          /* this rank's, shared with its neighbours */
  peer_link *links;                    /* [num_neighbors] */
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
  const bool peer =
      x->route == TC_EXCHANGE_ROUTE_PEER || x->route == TC_EXCHANGE_ROUTE_PEER_OR_HOST;
  x->capacity = count;
  TC_CALL(device_alloc(&x->send, peer ? 2 * count : count, "exchange send buffer"));
  TC_CALL(device_alloc(&x->receive, count, "exchange receive buffer"));
  if (x->route != TC_EXCHANGE_ROUTE_MPI_DEVICE) {
    TC_CUDA_CALL(cudaMallocHost((void **)&x->host_send, (size_t)count * sizeof(double)));
    TC_CUDA_CALL(cudaMallocHost((void **)&x->host_receive, (size_t)count * sizeof(double)));
  }
  /* every pair sends messages until connect_peers finds pairs that can copy */
  const size_t slots = (size_t)std::max(x->num_neighbors, 1);
  x->links = new (std::nothrow) peer_link[slots];
  x->sends = (bool *)calloc(slots, sizeof *x->sends);
  TC_CHECK(x->links && x->sends, TC_ERR_MEMORY,
           "GPU exchange: out of host memory for %d neighbours", x->num_neighbors);
  for (int n = 0; n < x->num_neighbors; ++n)
    x->sends[n] = true;
  x->messages = x->num_neighbors > 0;
  TC_CUDA_CALL(cudaStreamSynchronize(x->stream));
  return TC_SUCCESS;
}

/// What a rank tells a neighbour so that the neighbour can copy from it.
struct peer_record {
  char node[MPI_MAX_PROCESSOR_NAME];  ///< MPI_Get_processor_name
  cudaIpcMemHandle_t outboxes;        ///< its two packed buffers (one allocation)
  cudaIpcEventHandle_t packed, copied;
  int64_t capacity;                   ///< words of one packed buffer
  int64_t first_entry;                ///< where the receiving neighbour's entries start
  int32_t usable;                     ///< 0: it could not share them (it says why)
};

/// Unmaps neighbour n's buffers and events, once its copies queued from
/// this rank's outboxes have run; the pair then sends messages.
void unlink_peer(tc_exchange_cuda *x, int n) {
  peer_link &link = x->links[n];
  x->sends[n] = true;
  x->messages = true;
  if (link.copied)
    (void)cudaEventSynchronize(link.copied);
  if (link.outboxes)
    (void)cudaIpcCloseMemHandle(link.outboxes);
  if (link.packed)
    (void)cudaEventDestroy(link.packed);
  if (link.copied)
    (void)cudaEventDestroy(link.copied);
  link = peer_link{};
  (void)cudaGetLastError(); // a failed unmap is not the next call's error
}

/// Unmaps every neighbour and drops this rank's events, once the copies
/// queued on both sides have run.
void disconnect_peers(tc_exchange_cuda *x) {
  (void)cudaStreamSynchronize(x->stream); // clean-up: no error path
  for (int n = 0; n < x->num_neighbors; ++n)
    unlink_peer(x, n);
  if (x->packed)
    (void)cudaEventDestroy(x->packed);
  if (x->copied)
    (void)cudaEventDestroy(x->copied);
  x->packed = x->copied = nullptr;
  (void)cudaGetLastError();
}

/// Maps each neighbour's buffers and events whose record allows it (the
/// same node, a usable record, the mappings succeed), setting
/// link.copies; the first reason one cannot goes to why.
void map_peers(tc_exchange_cuda *x, const peer_record &mine, const peer_record *theirs, char *why,
               size_t size) {
  for (int n = 0; n < x->num_neighbors; ++n) {
    const peer_record &them = theirs[n];
    peer_link &link = x->links[n];
    const int rank = x->neighbor_rank[n];
    char reason[sizeof x->why] = "";
    cudaError_t rc = cudaSuccess;
    if (!them.usable)
      snprintf(reason, sizeof reason, "rank %d cannot share its GPU buffers", rank);
    else if (!mine.usable)
      snprintf(reason, sizeof reason, "%s", why);
    else if (strncmp(them.node, mine.node, sizeof mine.node) != 0)
      snprintf(reason, sizeof reason, "rank %d runs on node %.64s, not on this rank's node %.64s",
               rank, them.node, mine.node);
    else if ((rc = cudaIpcOpenMemHandle((void **)&link.outboxes, them.outboxes,
                                        cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess ||
             (rc = cudaIpcOpenEventHandle(&link.packed, them.packed)) != cudaSuccess ||
             (rc = cudaIpcOpenEventHandle(&link.copied, them.copied)) != cudaSuccess)
      snprintf(reason, sizeof reason, "the GPU buffers of rank %d cannot be mapped here (%s)",
               rank, cudaGetErrorString(rc));
    link.capacity = them.capacity;
    link.first_entry = them.first_entry;
    link.copies = !reason[0];
    if (reason[0] && !why[0])
      snprintf(why, size, "%s", reason);
  }
  (void)cudaGetLastError(); // a failed mapping is reported through why
}

/// This rank's buffers and events made shareable into mine, or why not.
void share_own(tc_exchange_cuda *x, peer_record &mine, char *why, size_t size) {
  if (x->num_neighbors == 0)
    return;
  if (tc_fault_check("peer_map") != TC_SUCCESS) { /* test-only: TCMINI_FAULT=peer_map */
    snprintf(why, size, "%s", tc_error_message());
    tc_error_clear();
    return;
  }
  cudaError_t rc = cudaSuccess;
  if ((rc = cudaEventCreateWithFlags(&x->packed, cudaEventDisableTiming | cudaEventInterprocess)) !=
          cudaSuccess ||
      (rc = cudaEventCreateWithFlags(&x->copied, cudaEventDisableTiming | cudaEventInterprocess)) !=
          cudaSuccess ||
      (rc = cudaIpcGetMemHandle(&mine.outboxes, x->send)) != cudaSuccess ||
      (rc = cudaIpcGetEventHandle(&mine.packed, x->packed)) != cudaSuccess ||
      (rc = cudaIpcGetEventHandle(&mine.copied, x->copied)) != cudaSuccess)
    snprintf(why, size, "this rank's GPU buffers cannot be shared (%s)", cudaGetErrorString(rc));
  (void)cudaGetLastError();
}

/// A first copy from each mapped neighbour's memory, so that the cost of the
/// first falls in the set-up rather than in a step. The values are not used:
/// every sum copies before it reads.
tc_err first_copies(tc_exchange_cuda *x) {
  for (int n = 0; n < x->num_neighbors; ++n)
    if (x->links[n].copies)
      TC_CUDA_CALL(cudaMemcpyAsync(x->receive, x->links[n].outboxes, sizeof(double),
                                   cudaMemcpyDeviceToDevice, x->stream));
  TC_CUDA_CALL(cudaStreamSynchronize(x->stream));
  return TC_SUCCESS;
}

/// Sets the peer route up (tc_exchange_cuda_connect, or the first call of
/// sum_fields): every rank makes its outboxes and events shareable, sends
/// its neighbours their records and maps theirs; a pair copies GPU to GPU
/// where each side could map the other's, and sends messages through the
/// host buffers otherwise. On TC_EXCHANGE_ROUTE_PEER a pair that cannot
/// copy fails the run with its reason; on TC_EXCHANGE_ROUTE_PEER_OR_HOST the
/// lowest rank's reason is kept for the report. Collective on the mesh's
/// communicator.
tc_err connect_peers(tc_exchange_cuda *x) {
  MPI_Comm comm = tc_mesh_comm(x->mesh);
  char why[sizeof x->why] = "";
  peer_record mine;
  memset(&mine, 0, sizeof mine);
  int length = 0;
  if (MPI_Get_processor_name(mine.node, &length) != MPI_SUCCESS)
    snprintf(why, sizeof why, "MPI_Get_processor_name failed");
  const int count = x->num_neighbors;
  const size_t slots = (size_t)std::max(count, 1);
  peer_record *records = (peer_record *)calloc(2 * slots, sizeof *records);
  unsigned char *maps = (unsigned char *)calloc(2 * slots, 1);
  tc_err err = records && maps
                   ? TC_SUCCESS
                   : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                    "GPU exchange: out of host memory for %d neighbours", count);
  if (err == TC_SUCCESS && !why[0])
    share_own(x, mine, why, sizeof why);
  mine.capacity = x->capacity;
  mine.usable = !why[0];
  /* no rank waits for a record from a neighbour that has failed */
  err = tc_parallel_agree(comm, err);
  if (err == TC_SUCCESS) {
    for (int n = 0; n < count; ++n) {
      records[n] = mine;
      records[n].first_entry = x->neighbor_offsets[n];
    }
    err = tc_neighbor_exchange_records(comm, count, x->neighbor_rank, (int)sizeof *records,
                                       records, records + count, 7412);
  }
  if (err == TC_SUCCESS) {
    map_peers(x, mine, records + count, why, sizeof why);
    /* a pair copies where both sides mapped the other's buffers */
    for (int n = 0; n < count; ++n)
      maps[n] = x->links[n].copies;
    err = tc_neighbor_exchange_records(comm, count, x->neighbor_rank, 1, maps, maps + count, 7413);
  }
  bool copies = false, messages = false;
  for (int n = 0; err == TC_SUCCESS && n < count; ++n) {
    if (x->links[n].copies && !maps[count + n]) {
      unlink_peer(x, n);
      if (!why[0])
        snprintf(why, sizeof why, "rank %d cannot map this rank's GPU buffers",
                 x->neighbor_rank[n]);
    }
    x->sends[n] = !x->links[n].copies;
    copies = copies || x->links[n].copies;
    messages = messages || x->sends[n];
  }
  free(records);
  free(maps);
  TC_CALL(tc_parallel_agree(comm, err));
  int64_t any[2] = {copies, messages}; /* over all ranks */
  TC_CALL(tc_allreduce_max_int64(comm, any, 2));
  x->decided = true;
  const bool copying = any[0] != 0;
  x->mixed = copying && any[1] != 0;
  x->messages = messages;
  const bool asked = x->route == TC_EXCHANGE_ROUTE_PEER;
  const tc_err local = !messages ? TC_SUCCESS
                       : asked   ? tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                                                  "run.exchange = peer: %s (run.exchange = device "
                                                  "sends through host buffers)", why)
                                 : tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__, "%s",
                                                  why);
  const tc_err agreed = tc_parallel_agree(comm, local);
  if (agreed != TC_SUCCESS && x->route == TC_EXCHANGE_ROUTE_PEER) {
    disconnect_peers(x);
    return agreed;
  }
  if (agreed != TC_SUCCESS) { /* auto: the reason of the lowest rank that sends messages */
    snprintf(x->why, sizeof x->why, "%s", tc_error_message());
    tc_error_clear();
  }
  if (!copying && x->route == TC_EXCHANGE_ROUTE_PEER_OR_HOST) {
    disconnect_peers(x);
    return TC_SUCCESS;
  }
  x->peer = true;
  return tc_parallel_agree(comm, first_copies(x));
}

/// Queues a copy, from `from` to `to` (both [entries][width]), of the
/// entries of every run of consecutive neighbours whose pairs send messages:
/// one copy of the whole buffer where every pair sends.
tc_err copy_sending(const tc_exchange_cuda *x, int width, double *to, const double *from,
                    cudaMemcpyKind kind) {
  const int64_t *offsets = x->neighbor_offsets;
  for (int n = 0, end = 0; n < x->num_neighbors; n = std::max(n + 1, end)) {
    for (end = n; end < x->num_neighbors && x->sends[end];)
      ++end;
    const int64_t first = offsets[n] * width, words = offsets[end] * width - first;
    if (words > 0)
      TC_CUDA_CALL(cudaMemcpyAsync(to + first, from + first, (size_t)words * sizeof(double), kind,
                                   x->stream));
  }
  return TC_SUCCESS;
}

/// One exchange on any route (see the order of events at the top of the
/// file): pack; the pairs that send messages send them, staged through the
/// host buffers but on the CUDA-aware route; the pairs that copy copy; sum.
/// `err` is this rank's status so far.
tc_err exchange_and_sum(tc_exchange_cuda *x, const field_list &fields, tc_err err) {
  const int width = fields.width;
  const int64_t parity = x->peer ? x->calls & 1 : 0;
  ++x->calls;
  double *outbox = x->send + parity * x->capacity;
  const bool staged = x->route != TC_EXCHANGE_ROUTE_MPI_DEVICE;
  if (err == TC_SUCCESS && width > 0)
    err = [&]() -> tc_err {
      for (int n = 0; n < x->num_neighbors; ++n) /* their copies of this outbox, two calls ago */
        if (x->links[n].copies)
          TC_CUDA_CALL(cudaStreamWaitEvent(x->stream, x->links[n].copied, 0));
      TC_LAUNCH(pack_kernel, x->entries * width, x->stream, fields, x->neighbor_nodes, x->entries,
                outbox);
      if (x->packed)
        TC_CUDA_CALL(cudaEventRecord(x->packed, x->stream));
      if (!x->messages)
        return TC_SUCCESS;
      if (staged)
        TC_CALL(copy_sending(x, width, x->host_send, outbox, cudaMemcpyDeviceToHost));
      TC_CUDA_CALL(cudaStreamSynchronize(x->stream)); /* MPI reads what was packed */
      return TC_SUCCESS;
    }();
  /* No rank sends or copies before every rank has packed (or failed, and then
   * none does). */
  TC_CALL(tc_parallel_agree(tc_mesh_comm(x->mesh), err));
  if (width == 0)
    return TC_SUCCESS;
  if (x->messages) {
    TC_CALL(tc_mesh_exchange_packed_among(x->mesh, width, staged ? x->host_send : outbox,
                                          staged ? x->host_receive : x->receive, x->sends));
    if (staged)
      TC_CALL(copy_sending(x, width, x->receive, x->host_receive, cudaMemcpyHostToDevice));
  }
  for (int n = 0; n < x->num_neighbors; ++n) {
    const peer_link &link = x->links[n];
    const int64_t first = x->neighbor_offsets[n], entries = x->neighbor_offsets[n + 1] - first;
    if (!link.copies || entries == 0)
      continue;
    TC_CUDA_CALL(cudaStreamWaitEvent(x->stream, link.packed, 0));
    TC_CUDA_CALL(cudaMemcpyAsync(x->receive + first * width,
                                 link.outboxes + parity * link.capacity + link.first_entry * width,
                                 (size_t)(entries * width) * sizeof(double),
                                 cudaMemcpyDeviceToDevice, x->stream));
  }
  if (x->copied)
    TC_CUDA_CALL(cudaEventRecord(x->copied, x->stream));
  TC_LAUNCH(sum_kernel, x->num_shared * width, x->stream, fields, x->shared_nodes,
            x->term_offsets, x->terms, x->num_shared, x->receive);
  return TC_SUCCESS;
}

} // namespace

extern "C" tc_err tc_exchange_cuda_create(const tc_mesh *mesh, int max_components,
                                          tc_exchange_route route, void *stream,
                                          tc_exchange_cuda **exchange) {
  *exchange = nullptr;
  TC_CHECK(max_components >= 1, TC_ERR_ARGUMENT, "GPU exchange: max_components must be >= 1, got %d",
           max_components);
  tc_exchange_cuda *x = (tc_exchange_cuda *)calloc(1, sizeof *x);
  TC_CHECK(x, TC_ERR_MEMORY, "GPU exchange: out of host memory");
  tc_mesh_exchange_plan plan;
  tc_mesh_get_exchange_plan(mesh, &plan);
  x->mesh = mesh;
  x->stream = static_cast<cudaStream_t>(stream);
  x->route = route;
  x->max_components = max_components;
  x->entries = plan.neighbor_offsets[plan.num_neighbors];
  x->num_shared = plan.num_shared;
  x->num_neighbors = plan.num_neighbors;
  x->neighbor_rank = plan.neighbor_rank;
  x->neighbor_offsets = plan.neighbor_offsets;
  x->decided = route == TC_EXCHANGE_ROUTE_HOST_BUFFERS || route == TC_EXCHANGE_ROUTE_MPI_DEVICE;
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
  if (x->links && x->sends)
    disconnect_peers(x);
  delete[] x->links;
  free(x->sends);
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
  if (!x->decided)
    TC_CALL(connect_peers(x));
  return exchange_and_sum(x, fields, err);
}

extern "C" tc_err tc_exchange_cuda_connect(tc_exchange_cuda *exchange) {
  return exchange->decided ? TC_SUCCESS : connect_peers(exchange);
}

extern "C" const char *tc_exchange_cuda_route_name(const tc_exchange_cuda *exchange,
                                                   const char **why) {
  const tc_exchange_cuda *x = exchange;
  if (why)
    *why = x ? x->why : "";
  if (!x)
    return "none";
  if (x->route == TC_EXCHANGE_ROUTE_MPI_DEVICE)
    return "gpu-aware";
  if (x->route == TC_EXCHANGE_ROUTE_HOST_BUFFERS)
    return "device";
  if (!x->decided)
    return x->route == TC_EXCHANGE_ROUTE_PEER ? "peer" : "auto";
  return !x->peer ? "device" : x->mixed ? "peer+device" : "peer";
}
