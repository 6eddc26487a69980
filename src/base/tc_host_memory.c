/* tc_host_memory: the machine's physical memory (see tc_host_memory.h). */
#define _XOPEN_SOURCE 700 /* sysconf's page counts */
#include "tc_host_memory.h"

#include <unistd.h>

int64_t tc_host_memory_bytes(void) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0)
    return 0;
  return (int64_t)pages * (int64_t)page_bytes;
}
