/* tc_memory: refuses, before anything large is allocated, a run that cannot
 * fit in the memory its ranks may use, so that a typo in mesh.cells gives a
 * clear error instead of an allocation failure deep in the mesh, or the
 * kernel's out-of-memory killer taking this job (or another user's on a
 * shared node). The estimate adds up the arrays a rank allocates; what a
 * rank may use is the least of the node's available memory, the cgroup's
 * memory limit and the address-space limit (ulimit -v). */
#ifndef TC_MEMORY_H
#define TC_MEMORY_H

#include <stdint.h>

#include "tc_config.h"
#include "tc_error.h"

/// The bytes one rank allocates for a run, by part (the rank with the
/// largest block of cells; see docs/hardening.md for how it compares with
/// measured peaks).
typedef struct {
  double mesh;             ///< coordinates, numbering, cell-node and node-cell maps
  double graphs;           ///< the assembled matrices' CSR structure (1 and 3 dofs per node)
  double results;          ///< assembled matrices' values, node and cell vectors
  double element_matrices; ///< every cell's element matrices (output.element_matrices)
  double batch;            ///< the assembly loop's batch arrays (in host memory)
  double checks;           ///< the correctness checks' vectors
  double output;           ///< the results file's packing and read-back buffers
  double total;            ///< the sum
} tc_memory_estimate;

/// The estimate for one rank of num_ranks running config (all zero when the
/// box cannot be split over num_ranks; the mesh reports that). Not collective.
tc_memory_estimate tc_memory_estimate_rank(const tc_config *config, int num_ranks);

/// What this rank may still allocate, in bytes, under each limit; negative
/// where there is no such limit (or it cannot be read).
typedef struct {
  double available;           ///< MemAvailable of /proc/meminfo: the node's, for all its ranks
  double cgroup;              ///< the memory cgroup's limit less its usage (v2 memory.max and
                              ///< memory.current, v1 memory.limit_in_bytes and usage_in_bytes),
                              ///< the tightest of the cgroup and its parents: for the node's ranks
  double address_space;       ///< RLIMIT_AS (ulimit -v) less this process's address space now
  double address_space_limit; ///< RLIMIT_AS itself
} tc_memory_limits;

/// Reads the limits. Not collective.
tc_memory_limits tc_memory_read_limits(void);

/// Fails with TC_ERR_INPUT, with one message naming the estimate, the
/// limit and where it comes from, when ranks_on_node ranks of the estimate
/// exceed the node's available memory or its cgroup's limit, or one rank's
/// exceeds the address-space limit. Passes when config->memory_check is
/// false. Not collective: agree on the result (each node decides for itself).
tc_err tc_memory_check(const tc_config *config, int num_ranks, int ranks_on_node);

#endif
