/* tc_parallel: MPI start/stop, the collectives tcmini uses, collective
 * agreement on failure, and job-wide abort. */
#include "tc_parallel.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_fault.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

tc_err tc_parallel_init(int *argc, char ***argv) {
  int provided = 0;
  TC_MPI_CALL(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  TC_MPI_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  TC_CHECK(provided >= MPI_THREAD_FUNNELED, TC_ERR_MPI,
           "the MPI library does not provide MPI_THREAD_FUNNELED");
  tc_fault_set_rank(tc_rank(MPI_COMM_WORLD));
  return TC_SUCCESS;
}

tc_err tc_parallel_finalize(void) {
  TC_MPI_CALL(MPI_Finalize());
  return TC_SUCCESS;
}

int tc_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int tc_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

bool tc_parallel_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

tc_err tc_node_local_rank(MPI_Comm comm, int *local_rank, int *local_size) {
  MPI_Comm node;
  TC_MPI_CALL(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, tc_rank(comm),
                                  MPI_INFO_NULL, &node));
  *local_rank = tc_rank(node);
  *local_size = tc_size(node);
  TC_MPI_CALL(MPI_Comm_free(&node));
  return TC_SUCCESS;
}

tc_err tc_comm_dup(MPI_Comm comm, MPI_Comm *copy) {
  *copy = MPI_COMM_NULL;
  TC_MPI_CALL(MPI_Comm_dup(comm, copy));
  return TC_SUCCESS;
}

void tc_comm_free(MPI_Comm *comm) {
  if (comm != NULL && *comm != MPI_COMM_NULL)
    (void)MPI_Comm_free(comm); /* sets *comm to MPI_COMM_NULL */
}

double tc_wtime(void) { return MPI_Wtime(); }

/* Posts every receive and send, then waits for all of them: neighbour n's
 * message is items [offsets[n], offsets[n + 1]) (offsets NULL: item n alone)
 * of `item_bytes` bytes each, sent as `count` elements of `type` per item;
 * neighbours with included[n] false are skipped (included NULL: none). */
static tc_err exchange(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                       const int64_t *offsets, int count, MPI_Datatype type, size_t item_bytes,
                       const void *send, void *receive, int tag, const bool *included,
                       MPI_Request *requests) {
  const char *from = send;
  char *into = receive;
  for (int n = 0; n < 2 * num_neighbors; ++n)
    requests[n] = MPI_REQUEST_NULL;
  /* every receive posted before any send, so that no message arrives unexpected */
  for (int pass = 0; pass < 2; ++pass)
    for (int n = 0; n < num_neighbors; ++n) {
      if (included && !included[n])
        continue;
      const int64_t first = offsets ? offsets[n] : n, last = offsets ? offsets[n + 1] : n + 1;
      const int items = (int)((last - first) * count);
      if (pass == 0)
        TC_MPI_CALL(MPI_Irecv(into + (size_t)first * item_bytes, items, type, neighbor_rank[n],
                              tag, comm, &requests[n]));
      else
        TC_MPI_CALL(MPI_Isend(from + (size_t)first * item_bytes, items, type, neighbor_rank[n],
                              tag, comm, &requests[num_neighbors + n]));
    }
  TC_MPI_CALL(MPI_Waitall(2 * num_neighbors, requests, MPI_STATUSES_IGNORE));
  return TC_SUCCESS;
}

/* exchange() with its requests on the stack, or on the heap past 64
 * neighbours (a 3-D box has at most 26). */
static tc_err exchange_with(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                            const int64_t *offsets, int count, MPI_Datatype type,
                            size_t item_bytes, const void *send, void *receive, int tag,
                            const bool *included) {
  enum { ON_STACK = 64 };
  MPI_Request on_stack[2 * ON_STACK];
  MPI_Request *requests = on_stack;
  if (num_neighbors > ON_STACK)
    TC_CALLOC(requests, 2 * (size_t)num_neighbors);
  tc_err err = exchange(comm, num_neighbors, neighbor_rank, offsets, count, type, item_bytes, send,
                        receive, tag, included, requests);
  if (requests != on_stack)
    free(requests);
  return err;
}

tc_err tc_neighbor_exchange_double(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                                   const int64_t *offsets, int components, const double *send,
                                   double *receive, int tag, const bool *included) {
  return exchange_with(comm, num_neighbors, neighbor_rank, offsets, components, MPI_DOUBLE,
                       (size_t)components * sizeof(double), send, receive, tag, included);
}

tc_err tc_neighbor_exchange_records(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                                    int record_bytes, const void *send, void *receive, int tag) {
  TC_CHECK(record_bytes > 0 && num_neighbors >= 0, TC_ERR_ARGUMENT,
           "neighbour exchange of %d records of %d bytes", num_neighbors, record_bytes);
  return exchange_with(comm, num_neighbors, neighbor_rank, NULL, record_bytes, MPI_BYTE,
                       (size_t)record_bytes, send, receive, tag, NULL);
}

/* True when message starts with "rank N: ": an error agreed on before (a
 * nested agreement), which must keep naming the rank that failed. */
static bool names_a_rank(const char *message) {
  if (strncmp(message, "rank ", 5) != 0 || !isdigit((unsigned char)message[5]))
    return false;
  const char *rest = message + 5;
  while (isdigit((unsigned char)*rest))
    rest++;
  return rest[0] == ':' && rest[1] == ' ';
}

tc_err tc_parallel_agree(MPI_Comm comm, tc_err local) {
  int size = tc_size(comm);
  int first_failed = local != TC_SUCCESS ? tc_rank(comm) : size;
  TC_MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm));
  if (first_failed == size)
    return TC_SUCCESS;

  /* The lowest failing rank tells everyone its code, message and origin. */
  struct {
    int code;
    char message[1024];
    char origin[256];
  } report;
  memset(&report, 0, sizeof report);
  if (tc_rank(comm) == first_failed) {
    report.code = (int)local;
    if (size > 1 && !names_a_rank(tc_error_message()))
      snprintf(report.message, sizeof report.message, "rank %d: %s", first_failed,
               tc_error_message());
    else
      snprintf(report.message, sizeof report.message, "%s", tc_error_message());
    snprintf(report.origin, sizeof report.origin, "%s", tc_error_origin());
  }
  TC_MPI_CALL(MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, first_failed, comm));
  tc_error_adopt((tc_err)report.code, report.message, report.origin);
  return (tc_err)report.code;
}

static tc_err allreduce(MPI_Comm comm, void *values, int count, MPI_Datatype type,
                        MPI_Op op) {
  TC_MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, values, count, type, op, comm));
  return TC_SUCCESS;
}

tc_err tc_allreduce_sum_double(MPI_Comm comm, double *values, int count) {
  return allreduce(comm, values, count, MPI_DOUBLE, MPI_SUM);
}
tc_err tc_allreduce_sum_int64(MPI_Comm comm, int64_t *values, int count) {
  return allreduce(comm, values, count, MPI_INT64_T, MPI_SUM);
}
tc_err tc_allreduce_min_double(MPI_Comm comm, double *values, int count) {
  return allreduce(comm, values, count, MPI_DOUBLE, MPI_MIN);
}
tc_err tc_allreduce_max_double(MPI_Comm comm, double *values, int count) {
  return allreduce(comm, values, count, MPI_DOUBLE, MPI_MAX);
}
tc_err tc_allreduce_max_int64(MPI_Comm comm, int64_t *values, int count) {
  return allreduce(comm, values, count, MPI_INT64_T, MPI_MAX);
}

tc_err tc_broadcast(MPI_Comm comm, void *buffer, int64_t bytes, int root) {
  char *bytes_left = buffer;
  const int64_t chunk = 1 << 30;
  for (int64_t done = 0; done < bytes; done += chunk) {
    int64_t now = bytes - done < chunk ? bytes - done : chunk;
    TC_MPI_CALL(MPI_Bcast(bytes_left + done, (int)now, MPI_BYTE, root, comm));
  }
  return TC_SUCCESS;
}

tc_err tc_gather(MPI_Comm comm, const void *send, int bytes_per_rank, void *receive,
                 int root) {
  TC_MPI_CALL(MPI_Gather(send, bytes_per_rank, MPI_BYTE, receive, bytes_per_rank, MPI_BYTE,
                         root, comm));
  return TC_SUCCESS;
}

TC_NORETURN void tc_abort(MPI_Comm comm, int exit_code, const char *fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  fprintf(stderr, "tcmini: error on rank %d: %s\n", tc_rank(comm), message);
  fflush(stderr);
  MPI_Abort(comm, exit_code);
  exit(exit_code);
}
