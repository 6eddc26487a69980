/* tc_memory: the per-rank memory lower bound and the check against the
 * node's physical memory (see tc_memory.h). */
#define _POSIX_C_SOURCE 200809L
#include "tc_memory.h"

#include <unistd.h>

double tc_memory_lower_bound(const tc_config *config, int num_ranks) {
  const double order = (double)config->order;
  const double fields = (order + 1) * (order + 1) * (order + 1); /* nodes per cell */
  const double cells = (double)config->cells[0] * (double)config->cells[1] *
                       (double)config->cells[2] / (num_ranks > 0 ? num_ranks : 1);
  const double nodes = cells * order * order * order; /* a rank's node box has more */
  /* Mesh: cell ids, cell->node and node->cell maps (8 + 20 bytes per cell and
   * node of a cell); coordinates, node ids, owners and offsets (44 per node). */
  double bytes = cells * (8 + 20 * fields) + nodes * 44;
  /* Assembled CSR values: a cell's fields^2 couplings merge into at least a
   * third as many distinct matrix entries (27 per Q1 node, about 64 per Q2
   * node); the elasticity matrix has 9 values per entry. */
  const double entries = cells * fields * fields / 3;
  const int per_entry[3] = {[TC_FIELD_FIELD_SCALAR] = 1, [TC_FIELD_FIELD_VECTOR] = 1,
                            [TC_FIELD_FIELD_TENSOR] = 9};
  for (int k = TC_FIELD_FIELD_SCALAR; k <= TC_FIELD_FIELD_TENSOR; ++k)
    if (config->kernels[k])
      bytes += entries * 8 * per_entry[k];
  return bytes;
}

tc_err tc_memory_check(const tc_config *config, int num_ranks, int ranks_on_node) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0)
    return TC_SUCCESS; /* the system does not say: nothing to compare with */
  const double node_bytes = (double)pages * (double)page_bytes;
  const double rank_bytes = tc_memory_lower_bound(config, num_ranks);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  TC_CHECK(rank_bytes * ranks_on_node <= node_bytes, TC_ERR_INPUT,
           "[mesh] cells = %lld %lld %lld (order %lld) needs at least %.3g GiB on each of the %d "
           "ranks of this node, more than the node's %.1f GiB of memory: use fewer cells, or "
           "more nodes",
           (long long)config->cells[0], (long long)config->cells[1], (long long)config->cells[2],
           (long long)config->order, rank_bytes / gib, ranks_on_node, node_bytes / gib);
  return TC_SUCCESS;
}
