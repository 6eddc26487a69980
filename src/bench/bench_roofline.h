/* bench_roofline: the machine facts tcmini-bench measures itself and reports
 * first: CPU model, cache size, STREAM-style copy and triad bandwidth and the
 * FMA peak, on a given number of threads. tcmini measures the same ceilings,
 * briefly, for its loop's roofline (library tc_roofline). */
#ifndef BENCH_ROOFLINE_H
#define BENCH_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "tc_contract.h"
#include "tc_error.h"

/// Measured ceilings for one thread count.
typedef struct {
  int threads;
  double copy_bytes_per_second;  ///< c[i] = a[i]: 16 bytes per element (STREAM's count)
  double triad_bytes_per_second; ///< a[i] = b[i] + s*c[i]: 24 bytes per element
  double fma_flops_per_second[TC_PRECISION_COUNT]; ///< 2 flops per fused multiply-add
} bench_roofline;

/// How much a measurement repeats: STREAM passes after a warm-up pass, FMA
/// runs per precision, and iterations of the FMA loop per run.
typedef struct {
  int stream_passes;
  int fma_runs;
  int64_t fma_iterations;
} bench_roofline_effort;

/// tcmini-bench's measurement (8 passes, 3 runs of 20 million iterations:
/// about a second) and a brief one for a mini-app run (3 passes, 2 runs of
/// 4 million iterations: a tenth of that or so, within a few per cent of it
/// on an idle machine).
extern const bench_roofline_effort bench_roofline_thorough, bench_roofline_brief;

/// Measures the ceilings on `threads` threads (OpenMP; 1 without it):
/// copy and triad over three arrays of array_bytes each (choose >> the
/// last-level cache), first touched by the threads that use them, best of
/// several passes; FMA peak from an in-register loop of independent vector
/// accumulators on every thread, best of several runs. With
/// bench_roofline_thorough.
tc_err bench_roofline_measure(int threads, size_t array_bytes, bench_roofline *roofline);

/// The same with the given effort.
tc_err bench_roofline_measure_with(int threads, size_t array_bytes,
                                   const bench_roofline_effort *effort, bench_roofline *roofline);

/// The roofline bound in flop/s of a kernel with the given arithmetic
/// intensity (flops per byte of compulsory traffic): min(FMA peak, AI * copy
/// bandwidth). *memory_bound tells which term is the smaller.
double bench_roofline_bound(const bench_roofline *roofline, tc_precision precision,
                            double intensity, bool *memory_bound);

/// Bytes of the last-level cache (sysfs), 32 MiB if it cannot be read.
size_t bench_machine_last_level_cache(void);
/// Bytes of data cache per core beyond L1: every data or unified cache of
/// level 2 and up that cpu0 uses, each divided among the CPUs that share
/// it (sysfs), e.g. 1 MiB of L2 + 32 MiB of L3 / 2 CPUs = 17 MiB; 0 if
/// sysfs does not say.
size_t bench_machine_cache_per_core(void);
/// Where bench_machine_cache_estimate's figure comes from.
typedef enum {
  BENCH_CACHE_SYSFS,  ///< every cache level from sysfs
  BENCH_CACHE_CPUID,  ///< L2 from the CPU (CPUID, through sysconf), L3 share assumed
  BENCH_CACHE_ASSUMED ///< nothing known: L2 and L3 share assumed
} bench_cache_source;
/// The L3 share a core is assumed to have where the caches cannot be read
/// (virtual machines often hide sysfs's cache directory): 4 MiB, the share of
/// a core of AMD EPYC (32 MiB for 8 cores); Intel Xeon cores have about 2.
#define BENCH_ASSUMED_L3_MIB 4
#define BENCH_ASSUMED_L3_PER_CORE ((size_t)BENCH_ASSUMED_L3_MIB << 20)
/// Bytes of data cache per core beyond L1, for sizing worksets:
/// bench_machine_cache_per_core where sysfs says; else the L2 the CPU reports
/// (sysconf, from CPUID) plus BENCH_ASSUMED_L3_PER_CORE; else 1 MiB of L2
/// plus that share. *source (may be NULL) says which.
size_t bench_machine_cache_estimate(bench_cache_source *source);
/// How bench_machine_cache_estimate's source reads in a report, e.g.
/// "L2 from CPUID, 4 MiB of L3 assumed".
const char *bench_cache_source_text(bench_cache_source source);
/// Processors online.
int bench_machine_processors(void);
/// Threads an OpenMP region gets by default (1 without OpenMP).
int bench_machine_default_threads(void);

#endif
