/* tc_memory: refuses, before anything is allocated, a problem that cannot
 * fit in the memory of the nodes it runs on, so that a typo in mesh.cells
 * gives a clear error instead of an allocation failure deep in the mesh or
 * the kernel's out-of-memory killer. */
#ifndef TC_MEMORY_H
#define TC_MEMORY_H

#include <stdint.h>

#include "tc_config.h"
#include "tc_error.h"

/// A lower bound, in bytes, on what one rank of num_ranks allocates for
/// config: the mesh arrays and the assembled matrices of its share of the
/// cells (rank shares are at least the average; batch buffers, halo buffers
/// and the CSR structure are not counted). Not collective.
double tc_memory_lower_bound(const tc_config *config, int num_ranks);

/// Fails with TC_ERR_INPUT, naming the bound and the node's memory, when
/// ranks_on_node times tc_memory_lower_bound exceeds this node's physical
/// memory. Not collective: agree on the result (each node decides for itself).
tc_err tc_memory_check(const tc_config *config, int num_ranks, int ranks_on_node);

#endif
