/* bench_roofline_cuda: the GPU's ceilings for tcmini-bench (copy and triad
 * bandwidth of device memory, FMA peak of the vector units), measured on the
 * current CUDA device. Without the CUDA backend in the build the call
 * exists and fails with TC_ERR_UNSUPPORTED. */
#ifndef BENCH_ROOFLINE_CUDA_H
#define BENCH_ROOFLINE_CUDA_H

#include <stddef.h>

#include "bench_roofline.h"
#include "tc_build.h"
#include "tc_error.h"

/// Measures the current device's ceilings into *roofline (threads = 0):
/// copy (bytes read + written per second, the better of a vectorised kernel
/// and cudaMemcpy) and triad over arrays of array_bytes each in device
/// memory (choose >> the L2), best of 10 passes; the FMA peak in double and
/// float from independent in-register FMA chains on every thread (2 flops
/// per FMA; tensor cores excluded). TC_ERR_CUDA with CUDA's message on failure.
#if TCMINI_HAVE_CUDA
tc_err bench_roofline_measure_cuda(size_t array_bytes, bench_roofline *roofline);
#else
static inline tc_err bench_roofline_measure_cuda(size_t array_bytes, bench_roofline *roofline) {
  (void)array_bytes, (void)roofline;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the CUDA backend is not in this build of tcmini-bench (configure with "
                        "-DTCMINI_ENABLE_CUDA=ON)");
}
#endif

#endif
