/* bench_flush: emptying the caches between timed repetitions, so that every
 * repetition reads its inputs from memory (the method of the 2015 clinic
 * report on Intrepid contractions). */
#ifndef BENCH_FLUSH_H
#define BENCH_FLUSH_H

#include <stddef.h>

#include "tc_device.h"
#include "tc_error.h"

typedef struct bench_flush bench_flush;

/// A flush over a buffer of bytes (choose > 2x the last-level cache). With
/// device NULL (or a CPU backend's device) every core reads and writes a
/// host buffer; with a CUDA device the buffer lives in device memory and is
/// overwritten there. One host flush serves every CPU device.
tc_err bench_flush_create(tc_device *device, size_t bytes, bench_flush **flush);

/// The flush a device's rows use: for a device with memory of its own (CUDA)
/// one made here over bytes of it (*owned, which the caller destroys), else
/// the shared host flush (*owned NULL). bytes 0: no flush for a device of
/// its own memory either.
tc_err bench_flush_for_device(tc_device *device, bench_flush *host_flush, size_t bytes,
                              bench_flush **owned, bench_flush **flush);

/// Frees the buffer and sets *flush to NULL. NULL is fine.
void bench_flush_destroy(bench_flush **flush);

/// Streams through the buffer and waits for the device. Not collective.
tc_err bench_flush_run(bench_flush *flush);

#endif
