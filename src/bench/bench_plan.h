/* bench_plan: what a tcmini-bench run times, before any case: the backends
 * at their thread counts (serial first, so that every other row has its
 * serial time to compare with), and the ceilings each row is read against,
 * measured once: the CPU's per thread count, the GPU's for the CUDA
 * backend (opened here either way, so that a missing GPU fails before any
 * work with its message). */
#ifndef BENCH_PLAN_H
#define BENCH_PLAN_H

#include <stddef.h>

#include "bench_options.h"
#include "bench_roofline.h"

enum { BENCH_MAX_CONFIGS = TC_BACKEND_COUNT * BENCH_MAX_THREAD_COUNTS };

/// One backend at one thread count.
typedef struct {
  tc_backend_kind backend;
  int threads;                    ///< OpenMP threads; 1 serial; 0 CUDA
  const bench_roofline *roofline; ///< the CPU's for its thread count, the GPU's for CUDA; NULL: none measured
} bench_config;

typedef struct {
  bench_config configs[BENCH_MAX_CONFIGS];
  int num_configs;
  bench_roofline rooflines[BENCH_MAX_THREAD_COUNTS + 1]; ///< the CPU's, one per thread count
  int num_rooflines;
  bool has_gpu_roofline;
  bench_roofline gpu_roofline;
  char gpu_description[256];
} bench_plan;

/// STREAM arrays of the CPU ceilings: 4x the last-level cache, far from any cache.
size_t bench_plan_cpu_array_bytes(void);
/// STREAM arrays of the GPU ceilings: 512 MiB each, ~10x the L2 of an H100/H200.
size_t bench_plan_gpu_array_bytes(void);

/// Fills plan from the options (--backend, --threads, --sweep/--tune, which
/// leave the serial reference out, --no-roofline). TC_ERR_UNSUPPORTED for a
/// backend this build does not have; the CUDA backend's errors when no GPU
/// can be opened.
tc_err bench_plan_create(const bench_options *options, bench_plan *plan);

#endif
