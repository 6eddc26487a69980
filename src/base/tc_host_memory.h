/* tc_host_memory: the size of this machine's memory, for checks of sizes a
 * user asks for (tcmini-bench --memory, a replay file's arrays) before they
 * are allocated, and for the host device's description. */
#ifndef TC_HOST_MEMORY_H
#define TC_HOST_MEMORY_H

#include <stdint.h>

/// Bytes of physical memory on this machine; 0 when it cannot be read.
/// Not collective.
int64_t tc_host_memory_bytes(void);

#endif
