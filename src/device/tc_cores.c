/* tc_cores: how many CPU cores this process may run on. mpirun binds each
 * rank to a core, a socket or a set of cores (Open MPI binds to a core for
 * up to two ranks), and OpenMP threads beyond that set share its cores while
 * the banner still counts them; so the device layer reads the affinity mask
 * to report the cores and warn about it. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <unistd.h>

#include "tc_device.h"

int tc_device_host_cores(void) {
#ifdef CPU_COUNT
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0)
    return CPU_COUNT(&mask);
#endif
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int)online : 1;
}
