/* bench_roofline_cuda: the GPU's ceilings for tcmini-bench (copy and triad
 * bandwidth of device memory, FMA peak of the vector units), measured on the
 * current CUDA device. Only in builds with the CUDA backend. */
#ifndef BENCH_ROOFLINE_CUDA_H
#define BENCH_ROOFLINE_CUDA_H

#include <stddef.h>

#include "bench_roofline.h"
#include "tc_error.h"

/// Measures the current device's ceilings into *roofline (threads = 0):
/// copy (bytes read + written per second, the better of a vectorised kernel
/// and cudaMemcpy) and triad over arrays of array_bytes each in device
/// memory (choose >> the L2), best of 10 passes; the FMA peak in double and
/// float from independent in-register FMA chains on every thread (2 flops
/// per FMA; tensor cores excluded). TC_ERR_CUDA with CUDA's message on failure.
tc_err bench_roofline_measure_cuda(size_t array_bytes, bench_roofline *roofline);

#endif
