/* bench_flush: the cache flush of tcmini-bench. */
#include "bench_flush.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct bench_flush {
  tc_device *device;
  double *host;     /* CPU backends */
  void *on_device;  /* CUDA */
  size_t count;     /* doubles in host, or bytes / 8 of on_device */
  int threads;
  double sink;      /* keeps the flush's reads from being optimised away */
};

tc_err bench_flush_create(tc_device *device, size_t bytes, bench_flush **flush) {
  bench_flush *created;
  TC_CALLOC(created, 1);
  created->device = device;
  created->count = bytes / sizeof(double);
  created->threads = 1;
#ifdef _OPENMP
  /* Every core's private caches are flushed, whatever threads the kernel ran. */
  created->threads = omp_get_num_procs();
#endif
  tc_err err;
  if (device != NULL && tc_device_backend(device) == TC_BACKEND_CUDA) {
    err = tc_device_alloc(device, created->count * sizeof(double), &created->on_device);
  } else {
    created->host = malloc(created->count * sizeof(double));
    err = created->host ? TC_SUCCESS
                        : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                         "out of memory allocating a %zu-byte flush buffer", bytes);
    /* Written once so that every page is real memory: untouched pages all
     * map the one zero page, and reading them would flush nothing. */
    double *buffer = created->host;
    int64_t count = buffer ? (int64_t)created->count : 0;
#pragma omp parallel for num_threads(created->threads) schedule(static)
    for (int64_t i = 0; i < count; ++i)
      buffer[i] = (double)(i & 1023);
  }
  if (err != TC_SUCCESS) {
    bench_flush_destroy(&created);
    return err;
  }
  *flush = created;
  return TC_SUCCESS;
}

tc_err bench_flush_for_device(tc_device *device, bench_flush *host_flush, size_t bytes,
                              bench_flush **owned, bench_flush **flush) {
  *owned = NULL;
  *flush = host_flush;
  if (tc_device_backend(device) != TC_BACKEND_CUDA || bytes == 0)
    return TC_SUCCESS;
  TC_CALL(bench_flush_create(device, bytes, owned));
  *flush = *owned;
  return TC_SUCCESS;
}

void bench_flush_destroy(bench_flush **flush) {
  if (*flush == NULL)
    return;
  if ((*flush)->on_device != NULL)
    tc_device_free((*flush)->device, &(*flush)->on_device);
  free((*flush)->host);
  free(*flush);
  *flush = NULL;
}

tc_err bench_flush_run(bench_flush *flush) {
  if (flush->on_device != NULL) {
    TC_CALL(tc_device_memset_zero(flush->device, flush->on_device, flush->count * sizeof(double)));
    return tc_device_synchronize(flush->device);
  }
  /* Reads only: the lines it leaves in the caches are clean, so the timed
   * kernel pays no write-back of flush data (a writing flush would add up
   * to a cache's worth of write traffic to every memory-bound row). */
  const double *buffer = flush->host;
  int64_t count = (int64_t)flush->count;
  double sum = 0.0;
#pragma omp parallel for simd num_threads(flush->threads) schedule(static) reduction(+ : sum)
  for (int64_t i = 0; i < count; ++i)
    sum += buffer[i];
  flush->sink += sum;
  return TC_SUCCESS;
}
