/* tc_device_host: the device operations of the CPU backends (serial and
 * OpenMP): aligned host memory, memcpy, and a monotonic clock. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#define _POSIX_C_SOURCE 200809L
#include "tc_device_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tc_host_memory.h"

void tc_device_cpu_model(char *text, size_t capacity) {
  snprintf(text, capacity, "unknown CPU");
  FILE *info = fopen("/proc/cpuinfo", "r");
  if (info == NULL)
    return;
  char line[512];
  while (fgets(line, sizeof line, info) != NULL) {
    if (strncmp(line, "model name", 10) != 0)
      continue;
    const char *value = strchr(line, ':');
    if (value != NULL) {
      value += strspn(value + 1, " \t") + 1;
      snprintf(text, capacity, "%.*s", (int)strcspn(value, "\n"), value);
    }
    break;
  }
  fclose(info);
}

static tc_err host_open(tc_device *device, const tc_device_options *options) {
  tc_device_cpu_model(device->model, sizeof device->model);
  if (device->backend == TC_BACKEND_OPENMP) {
#ifdef _OPENMP
    if (options->num_threads > 0)
      omp_set_num_threads(options->num_threads);
    device->num_threads = omp_get_max_threads();
#else
    (void)options;
    TC_FAIL(TC_ERR_UNSUPPORTED, "backend openmp needs a build with OpenMP");
#endif
    int cores = tc_device_host_cores();
    snprintf(device->description, sizeof device->description, "OpenMP, %d thread%s on %d core%s",
             device->num_threads, device->num_threads == 1 ? "" : "s", cores,
             cores == 1 ? "" : "s");
  } else {
    device->num_threads = 1;
    snprintf(device->description, sizeof device->description, "serial");
  }
  return TC_SUCCESS;
}

static void host_close(tc_device *device) { (void)device; }

/* Arrays of 2 MiB or more start on a 2 MiB boundary and are offered to the
 * kernel for transparent huge pages (madvise mode takes only those asked
 * for): in layout left a contraction reads runs of a few cells one or more
 * 4 KiB pages apart, more pages than the TLB maps. */
enum { kHugePage = 2 << 20 };

static tc_err host_alloc(tc_device *device, size_t bytes, void **ptr) {
  (void)device;
  const size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  TC_CHECK(rounded >= bytes, TC_ERR_MEMORY, "allocation of %zu bytes is too large", bytes);
  *ptr = aligned_alloc(alignment, rounded);
  if (*ptr == NULL) /* in the user's terms, as TC_CALLOC says it */
    return tc_error_out_of_memory((double)bytes, __FILE__, __LINE__, __func__);
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePage)
    (void)madvise(*ptr, rounded, MADV_HUGEPAGE); /* advice: the run goes on without it */
#endif
  return TC_SUCCESS;
}

static void host_release(tc_device *device, void *ptr) {
  (void)device;
  free(ptr);
}

static tc_err host_copy(tc_device *device, void *dst, const void *src, size_t bytes,
                        tc_copy_direction direction) {
  (void)device;
  (void)direction;
  memcpy(dst, src, bytes);
  return TC_SUCCESS;
}

static tc_err host_memset_zero(tc_device *device, void *ptr, size_t bytes) {
  (void)device;
  memset(ptr, 0, bytes);
  return TC_SUCCESS;
}

static tc_err host_memory_bytes(tc_device *device, size_t *bytes) {
  (void)device;
  const int64_t memory = tc_host_memory_bytes();
  TC_CHECK(memory > 0, TC_ERR_INTERNAL, "cannot read the size of the host's memory");
  *bytes = (size_t)memory;
  return TC_SUCCESS;
}

static tc_err host_synchronize(tc_device *device) {
  (void)device;
  return TC_SUCCESS;
}

static double monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static tc_err host_timer_open(tc_device_timer *timer) {
  (void)timer;
  return TC_SUCCESS;
}
static void host_timer_close(tc_device_timer *timer) { (void)timer; }
static tc_err host_timer_start(tc_device_timer *timer) {
  timer->start_seconds = monotonic_seconds();
  return TC_SUCCESS;
}
static tc_err host_timer_stop(tc_device_timer *timer) {
  timer->stop_seconds = monotonic_seconds();
  return TC_SUCCESS;
}
static tc_err host_timer_seconds(tc_device_timer *timer, double *seconds) {
  *seconds = timer->stop_seconds - timer->start_seconds;
  return TC_SUCCESS;
}

static tc_err host_timer_between(tc_device_timer *from, tc_device_timer *to, double *seconds) {
  *seconds = to->start_seconds - from->start_seconds;
  return TC_SUCCESS;
}

const tc_device_ops tc_device_ops_host = {
    .open = host_open,
    .close = host_close,
    .memory_bytes = host_memory_bytes,
    .alloc = host_alloc,
    .release = host_release,
    .copy = host_copy,
    .memset_zero = host_memset_zero,
    .synchronize = host_synchronize,
    .timer_open = host_timer_open,
    .timer_close = host_timer_close,
    .timer_start = host_timer_start,
    .timer_stop = host_timer_stop,
    .timer_seconds = host_timer_seconds,
    .timer_between = host_timer_between,
};
