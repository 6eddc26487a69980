/* bench_roofline: STREAM-style bandwidth, FMA peak and the machine's name,
 * measured by tcmini-bench itself. */
#define _POSIX_C_SOURCE 200809L
#include "bench_roofline.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Vector width of the FMA loop: one full register of the widest ISA built for. */
#if defined(__AVX512F__)
#define BENCH_VECTOR_BYTES 64
#elif defined(__AVX__)
#define BENCH_VECTOR_BYTES 32
#else
#define BENCH_VECTOR_BYTES 16
#endif
/* Independent chains per thread: >= FMA latency x FMA pipes (4 x 2 on recent
 * x86), and few enough to stay in registers. */
#define BENCH_FMA_ACCUMULATORS 12

#define BENCH_REAL double
#define BENCH_FMA_LOOP fma_loop_double
#include "bench_fma_loop.h"
#undef BENCH_REAL
#undef BENCH_FMA_LOOP

#define BENCH_REAL float
#define BENCH_FMA_LOOP fma_loop_float
#include "bench_fma_loop.h"
#undef BENCH_REAL
#undef BENCH_FMA_LOOP

const bench_roofline_effort bench_roofline_thorough = {8, 3, 20 * 1000 * 1000};
const bench_roofline_effort bench_roofline_brief = {3, 2, 4 * 1000 * 1000};

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Keeps results alive so that the compiler cannot drop the measured loops. */
static volatile double sink;

static void stream_bandwidth(int threads, size_t array_bytes, int passes, double *a, double *b,
                             double *c, bench_roofline *roofline) {
  (void)threads; /* read by the OpenMP clauses only */
  int64_t count = (int64_t)(array_bytes / sizeof(double));
  /* First touch by the threads that use the data (page placement on NUMA). */
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  double best_copy = 1e30, best_triad = 1e30;
  const double scalar = 3.0;
  for (int pass = 0; pass <= passes; ++pass) {
    double start = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < count; ++i)
      c[i] = a[i];
    double middle = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < count; ++i)
      a[i] = b[i] + scalar * c[i];
    double end = now_seconds();
    if (pass > 0) { /* pass 0 warms up */
      best_copy = middle - start < best_copy ? middle - start : best_copy;
      best_triad = end - middle < best_triad ? end - middle : best_triad;
    }
  }
  sink = a[count / 2] + c[count / 3];
  roofline->copy_bytes_per_second = 2.0 * (double)count * sizeof(double) / best_copy;
  roofline->triad_bytes_per_second = 3.0 * (double)count * sizeof(double) / best_triad;
}

static void fma_peak(int threads, const bench_roofline_effort *effort, bench_roofline *roofline) {
  const int64_t fma_iterations = effort->fma_iterations;
  for (int p = 0; p < TC_PRECISION_COUNT; ++p) {
    size_t lanes = BENCH_VECTOR_BYTES / (size_t)tc_precision_size((tc_precision)p);
    double flops = 2.0 * (double)fma_iterations * BENCH_FMA_ACCUMULATORS * (double)lanes * threads;
    double best = 1e30;
    for (int run = 0; run < effort->fma_runs; ++run) {
      double total = 0.0;
      double start = now_seconds();
#pragma omp parallel num_threads(threads) reduction(+ : total)
      {
        if (p == TC_DOUBLE)
          total += fma_loop_double(fma_iterations, 1e-3);
        else
          total += fma_loop_float(fma_iterations, 1e-3f);
      }
      double seconds = now_seconds() - start;
      sink = total;
      best = seconds < best ? seconds : best;
    }
    roofline->fma_flops_per_second[p] = flops / best;
  }
}

tc_err bench_roofline_measure(int threads, size_t array_bytes, bench_roofline *roofline) {
  return bench_roofline_measure_with(threads, array_bytes, &bench_roofline_thorough, roofline);
}

tc_err bench_roofline_measure_with(int threads, size_t array_bytes,
                                   const bench_roofline_effort *effort, bench_roofline *roofline) {
#ifndef _OPENMP
  threads = 1;
#endif
  TC_CHECK(threads >= 1, TC_ERR_ARGUMENT, "roofline needs >= 1 thread, got %d", threads);
  TC_CHECK(effort->stream_passes >= 1 && effort->fma_runs >= 1 && effort->fma_iterations >= 1,
           TC_ERR_ARGUMENT, "roofline needs >= 1 pass, run and iteration");
  memset(roofline, 0, sizeof *roofline);
  roofline->threads = threads;
  double *a = malloc(array_bytes), *b = malloc(array_bytes), *c = malloc(array_bytes);
  if (a == NULL || b == NULL || c == NULL) {
    free(a);
    free(b);
    free(c);
    TC_FAIL(TC_ERR_MEMORY, "out of memory allocating 3 x %zu bytes for the STREAM arrays",
            array_bytes);
  }
  stream_bandwidth(threads, array_bytes, effort->stream_passes, a, b, c, roofline);
  free(a);
  free(b);
  free(c);
  fma_peak(threads, effort, roofline);
  return TC_SUCCESS;
}

double bench_roofline_bound(const bench_roofline *roofline, tc_precision precision,
                            double intensity, bool *memory_bound) {
  double memory = intensity * roofline->copy_bytes_per_second;
  double compute = roofline->fma_flops_per_second[precision];
  *memory_bound = memory < compute;
  return *memory_bound ? memory : compute;
}

size_t bench_machine_last_level_cache(void) {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *file = fopen(path, "r");
    if (file == NULL)
      break;
    unsigned long long size = 0;
    char unit = '\0';
    if (fscanf(file, "%llu%c", &size, &unit) >= 1) {
      size *= unit == 'K' ? 1024ull : unit == 'M' ? 1024ull * 1024 : 1ull;
      largest = size > largest ? (size_t)size : largest;
    }
    fclose(file);
  }
  return largest > 0 ? largest : (size_t)32 << 20;
}

/* Reads one line of a sysfs file into text ("" if it cannot be read). */
static void read_line(const char *path, char *text, size_t capacity) {
  text[0] = '\0';
  FILE *file = fopen(path, "r");
  if (file == NULL)
    return;
  if (fgets(text, (int)capacity, file) == NULL)
    text[0] = '\0';
  text[strcspn(text, "\n")] = '\0';
  fclose(file);
}

/* CPUs in a sysfs list such as "0-3,8,10-11". */
static int count_cpus(const char *list) {
  int count = 0;
  for (const char *p = list; *p;) {
    char *end;
    long first = strtol(p, &end, 10), last = first;
    if (end == p)
      break;
    if (*end == '-')
      last = strtol(end + 1, &end, 10);
    count += last >= first ? (int)(last - first + 1) : 0;
    p = *end == ',' ? end + 1 : end;
    if (*end != ',')
      break;
  }
  return count > 0 ? count : 1;
}

size_t bench_machine_cache_per_core(void) {
  size_t total = 0;
  for (int index = 0; index < 16; ++index) {
    char path[128], level[16], type[32], size[32], shared[256];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    read_line(path, level, sizeof level);
    if (!level[0])
      break;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    read_line(path, type, sizeof type);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    read_line(path, size, sizeof size);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list",
             index);
    read_line(path, shared, sizeof shared);
    if (atoi(level) < 2 || strcmp(type, "Instruction") == 0)
      continue;
    char *unit;
    unsigned long long bytes = strtoull(size, &unit, 10);
    bytes *= *unit == 'K' ? 1024ull : *unit == 'M' ? 1024ull * 1024 : 1ull;
    total += (size_t)(bytes / (unsigned long long)count_cpus(shared));
  }
  return total;
}

/* The L2 per core the CPU reports (glibc reads CPUID), 0 if it does not or
 * the figure is implausible. L2 is private to a core, or shared by a few
 * small ones, so it needs no division; glibc's L3 figure is left out: in
 * virtual machines it can be any number, and the CPUs that share it are not
 * known. */
static size_t cpuid_l2_bytes(void) {
#ifdef _SC_LEVEL2_CACHE_SIZE
  const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (bytes >= (64L << 10) && bytes <= (64L << 20))
    return (size_t)bytes;
#endif
  return 0;
}

size_t bench_machine_cache_estimate(bench_cache_source *source) {
  bench_cache_source from = BENCH_CACHE_SYSFS;
  size_t bytes = bench_machine_cache_per_core();
  if (bytes == 0) {
    const size_t l2 = cpuid_l2_bytes();
    from = l2 > 0 ? BENCH_CACHE_CPUID : BENCH_CACHE_ASSUMED;
    bytes = (l2 > 0 ? l2 : (size_t)1 << 20) + BENCH_ASSUMED_L3_PER_CORE;
  }
  if (source)
    *source = from;
  return bytes;
}

/* The assumed L3 share as text, for the report's phrases. */
#define NUMBER_TEXT(x) #x
#define MACRO_TEXT(x) NUMBER_TEXT(x)
#define ASSUMED_L3_TEXT MACRO_TEXT(BENCH_ASSUMED_L3_MIB) " MiB of L3"

const char *bench_cache_source_text(bench_cache_source source) {
  switch (source) {
  case BENCH_CACHE_SYSFS:
    return "from sysfs";
  case BENCH_CACHE_CPUID:
    return "L2 from CPUID, " ASSUMED_L3_TEXT " assumed";
  case BENCH_CACHE_ASSUMED:
    return "assumed: 1 MiB of L2, " ASSUMED_L3_TEXT;
  }
  return "unknown";
}

int bench_machine_processors(void) {
  long count = sysconf(_SC_NPROCESSORS_ONLN);
  return count > 0 ? (int)count : 1;
}

int bench_machine_default_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
