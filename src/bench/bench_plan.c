/* bench_plan: the backends, thread counts and ceilings of a tcmini-bench run
 * (see bench_plan.h). */
#include "bench_plan.h"

#include <stdio.h>

#include "bench_roofline_cuda.h"
#include "tc_device.h"

size_t bench_plan_cpu_array_bytes(void) { return 4 * bench_machine_last_level_cache(); }

size_t bench_plan_gpu_array_bytes(void) { return (size_t)512 << 20; }

static const bench_roofline *find_roofline(const bench_plan *plan, int threads) {
  for (int i = 0; i < plan->num_rooflines; ++i)
    if (plan->rooflines[i].threads == threads)
      return &plan->rooflines[i];
  return NULL;
}

/* Opens the GPU as the CUDA rows will (a clear error without one), keeps its
 * description and, when asked, measures its ceilings. */
static tc_err open_gpu(bench_plan *plan, bool measure) {
  tc_device_options options = {.backend = TC_BACKEND_CUDA, .local_rank = 0, .local_size = 1,
                               .allow_gpu_sharing = true};
  tc_device *device = NULL;
  TC_CALL(tc_device_create(&options, &device));
  snprintf(plan->gpu_description, sizeof plan->gpu_description, "%s",
           tc_device_description(device));
  tc_err err = TC_SUCCESS;
  if (measure)
    err = bench_roofline_measure_cuda(bench_plan_gpu_array_bytes(), &plan->gpu_roofline);
  tc_device_destroy(&device);
  TC_CALL(err);
  plan->has_gpu_roofline = plan->has_gpu_roofline || measure;
  return TC_SUCCESS;
}

/* The ceilings of one configuration, measured the first time they are needed. */
static tc_err plan_ceilings(bench_plan *plan, bench_config *config, bool measure) {
  if (config->backend == TC_BACKEND_CUDA) {
    if (!plan->has_gpu_roofline)
      TC_CALL(open_gpu(plan, measure));
    config->roofline = plan->has_gpu_roofline ? &plan->gpu_roofline : NULL;
    return TC_SUCCESS;
  }
  if (measure && find_roofline(plan, config->threads) == NULL) {
    TC_CALL(bench_roofline_measure(config->threads, bench_plan_cpu_array_bytes(),
                                   &plan->rooflines[plan->num_rooflines]));
    plan->num_rooflines++;
  }
  config->roofline = find_roofline(plan, config->threads);
  return TC_SUCCESS;
}

tc_err bench_plan_create(const bench_options *o, bench_plan *plan) {
  int thread_counts[BENCH_MAX_THREAD_COUNTS];
  for (int t = 0; t < o->num_thread_counts; ++t)
    thread_counts[t] = o->thread_counts[t] > 0 ? o->thread_counts[t] : bench_machine_default_threads();
  for (int pass = 0; pass < 2; ++pass)
    for (int b = 0; b < o->num_backends; ++b) {
      tc_backend_kind backend = o->backends[b];
      if ((backend == TC_BACKEND_SERIAL) != (pass == 0))
        continue;
      if (backend == TC_BACKEND_SERIAL && (o->sweep > 0 || o->tune_path != NULL))
        continue; /* they measure one backend: not the reference */
      TC_CHECK(tc_device_backend_available(backend), TC_ERR_UNSUPPORTED,
               "backend %s is not compiled into this build", tc_backend_name(backend));
      int counts = backend == TC_BACKEND_OPENMP ? o->num_thread_counts : 1;
      for (int t = 0; t < counts; ++t) {
        int threads = backend == TC_BACKEND_OPENMP ? thread_counts[t]
                      : backend == TC_BACKEND_SERIAL ? 1 : 0;
        bool seen = false;
        for (int c = 0; c < plan->num_configs; ++c)
          seen = seen || (plan->configs[c].backend == backend && plan->configs[c].threads == threads);
        if (!seen)
          plan->configs[plan->num_configs++] = (bench_config){backend, threads, NULL};
      }
    }
  for (int c = 0; c < plan->num_configs; ++c)
    TC_CALL(plan_ceilings(plan, &plan->configs[c], !o->no_roofline));
  return TC_SUCCESS;
}
