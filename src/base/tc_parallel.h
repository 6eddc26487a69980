/* tc_parallel: all of tcmini's MPI in one place (CoMD's parallel.c): start
 * and stop, the few collectives used, agreeing on failure so that no rank is
 * left waiting, and taking the whole job down with a message naming the rank. */
#ifndef TC_PARALLEL_H
#define TC_PARALLEL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"

/// C11's _Noreturn, spelt so that C++ translation units (the .cu files) can
/// include this header too.
#ifdef __cplusplus
#define TC_NORETURN [[noreturn]]
#else
#define TC_NORETURN _Noreturn
#endif

/// Fails the current function with TC_ERR_MPI and MPI's own message.
#define TC_MPI_CALL(expr)                                                      \
  do {                                                                         \
    int tc_mpi_rc_ = (expr);                                                   \
    if (tc_mpi_rc_ != MPI_SUCCESS) {                                           \
      char tc_mpi_msg_[MPI_MAX_ERROR_STRING];                                  \
      int tc_mpi_len_ = 0;                                                     \
      MPI_Error_string(tc_mpi_rc_, tc_mpi_msg_, &tc_mpi_len_);                 \
      TC_FAIL(TC_ERR_MPI, "%s failed: %s", #expr, tc_mpi_msg_);                \
    }                                                                          \
  } while (0)

/// Starts MPI (thread level FUNNELED: only the main thread calls MPI) and
/// makes errors return codes instead of aborting. Collective on MPI_COMM_WORLD.
tc_err tc_parallel_init(int *argc, char ***argv);

/// Stops MPI. Collective on MPI_COMM_WORLD.
tc_err tc_parallel_finalize(void);

/// This process's rank in comm.
int tc_rank(MPI_Comm comm);

/// The number of ranks in comm.
int tc_size(MPI_Comm comm);

/// Rank and count of the ranks that share this node (for picking a GPU).
/// Collective on comm.
tc_err tc_node_local_rank(MPI_Comm comm, int *local_rank, int *local_size);

/// Whether the MPI library takes CUDA device pointers in its calls (Open
/// MPI's MPIX_Query_cuda_support where mpi-ext.h offers it; false for a
/// library that cannot say). Not collective.
bool tc_parallel_cuda_aware(void);

/// Duplicates comm into *copy (a communicator of one's own, so that a
/// module's messages cannot match another's). Collective on comm.
tc_err tc_comm_dup(MPI_Comm comm, MPI_Comm *copy);

/// Frees a communicator made by tc_comm_dup and sets it to MPI_COMM_NULL;
/// MPI_COMM_NULL is fine. A failure cannot be reported (this runs on clean-up
/// paths) and only leaks the handle. Collective on comm.
void tc_comm_free(MPI_Comm *comm);

/// Wall-clock seconds since an arbitrary origin (MPI_Wtime). Not collective.
double tc_wtime(void);

/// Exchanges doubles with neighbouring ranks: for n < num_neighbors whose
/// included[n] is true (included NULL: every n), sends
/// send[offsets[n]*components .. offsets[n+1]*components) to neighbor_rank[n]
/// and receives as many into receive at the same place, all messages at
/// once, then waits for all of them; the others get no message and their
/// part of receive is left as it is. Each neighbour must call it with this
/// rank among its neighbours, including this rank as this rank includes it,
/// with the same counts and tag. Collective among the included neighbours.
tc_err tc_neighbor_exchange_double(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                                   const int64_t *offsets, int components, const double *send,
                                   double *receive, int tag, const bool *included);

/// Exchanges one record of record_bytes bytes with each neighbouring rank:
/// send + n * record_bytes goes to neighbor_rank[n], and neighbour n's
/// record lands at receive + n * record_bytes. Collective among the
/// neighbours, as tc_neighbor_exchange_double.
tc_err tc_neighbor_exchange_records(MPI_Comm comm, int num_neighbors, const int *neighbor_rank,
                                    int record_bytes, const void *send, void *receive, int tag);

/// Agrees on failure: every rank passes its own status and all return the
/// same one. If any rank failed, the error of the lowest failing rank (code,
/// message prefixed with "rank N: " when the job has several ranks, unless
/// it names a rank already, from an earlier agreement) becomes
/// every rank's recorded error and is returned. Collective on comm.
tc_err tc_parallel_agree(MPI_Comm comm, tc_err local);

/// Element-wise sums, minima and maxima over all ranks, in place.
/// Collective on comm.
tc_err tc_allreduce_sum_double(MPI_Comm comm, double *values, int count);
tc_err tc_allreduce_sum_int64(MPI_Comm comm, int64_t *values, int count);
tc_err tc_allreduce_min_double(MPI_Comm comm, double *values, int count);
tc_err tc_allreduce_max_double(MPI_Comm comm, double *values, int count);
tc_err tc_allreduce_max_int64(MPI_Comm comm, int64_t *values, int count);

/// Broadcasts bytes from root. Collective on comm.
tc_err tc_broadcast(MPI_Comm comm, void *buffer, int64_t bytes, int root);

/// Gathers bytes_per_rank bytes from every rank to root: rank r's bytes land
/// at receive + r * bytes_per_rank (receive is used on root only and holds
/// size * bytes_per_rank bytes). Collective on comm.
tc_err tc_gather(MPI_Comm comm, const void *send, int bytes_per_rank, void *receive,
                 int root);

/// Prints "tcmini: error on rank R: message" to stderr and aborts every rank
/// of comm with the given exit code. For failures that cannot be agreed on
/// (a rank that cannot reach the next collective). Not collective.
TC_NORETURN void tc_abort(MPI_Comm comm, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
