/* tc_device: the "X" of MPI+X. Which backend a rank runs, which GPU it owns,
 * memory in that backend's space, copies, synchronisation and timers. All
 * CUDA runtime calls outside the .cu kernels live behind this interface. */
#ifndef TC_DEVICE_H
#define TC_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "tc_contract.h"
#include "tc_error.h"

typedef struct tc_device tc_device;

/// How a rank gets its device.
typedef struct {
  tc_backend_kind backend; ///< serial, openmp or cuda
  int num_threads;         ///< OpenMP threads (0: leave OMP_NUM_THREADS / the runtime's default)
  int local_rank;          ///< this rank's index among the ranks on its node (tc_node_local_rank)
  int local_size;          ///< ranks on this node
  bool allow_gpu_sharing;  ///< let several ranks share one GPU when a node has more ranks than GPUs
} tc_device_options;

/// True if this build has the backend compiled in.
bool tc_device_backend_available(tc_backend_kind backend);

/// Opens the device: for CUDA, picks GPU local_rank (TC_ERR_NO_DEVICE when
/// there is no usable GPU, or more ranks than GPUs without sharing); for
/// OpenMP sets the thread count. Not collective.
tc_err tc_device_create(const tc_device_options *options, tc_device **device);

/// Releases the device and sets *device to NULL. NULL is fine. When the last
/// open device of a backend closes, the backend's cached resources (the
/// vendor variant's library handles) are released too. Create and destroy
/// devices from one thread.
void tc_device_destroy(tc_device **device);

tc_backend_kind tc_device_backend(const tc_device *device);
/// The contraction backend that runs on this device.
const tc_contract_backend *tc_device_contract_backend(const tc_device *device);
/// One line that names the device: "NVIDIA H100 80GB HBM3 (GPU 0, 0000:1b:00.0)",
/// "OpenMP, 2 threads", "serial".
const char *tc_device_description(const tc_device *device);
/// The model of the hardware, the same on every rank with the same kind of
/// device (tuning files are keyed on it): the GPU's name ("NVIDIA H100 80GB
/// HBM3") on CUDA, the CPU's model name from /proc/cpuinfo ("unknown CPU"
/// where there is none) on the CPU backends.
const char *tc_device_model(const tc_device *device);
/// The host CPU's model name ("AMD EPYC 9B14", from /proc/cpuinfo), or
/// "unknown CPU".
void tc_device_cpu_model(char *text, size_t capacity);
/// GPU index used (-1 for CPU backends).
int tc_device_gpu_index(const tc_device *device);
/// OpenMP threads used (1 for serial, 0 for CUDA).
int tc_device_num_threads(const tc_device *device);
/// The CUDA stream this device's work goes to (cudaStream_t), NULL on CPUs.
void *tc_device_stream(const tc_device *device);
/// CPU cores (logical CPUs) this process may run on: the size of its affinity
/// mask, which mpirun's binding narrows (one core per rank by default for up
/// to two Open MPI ranks), or the online CPUs where no mask can be read.
/// Not collective.
int tc_device_host_cores(void);

/// Bytes of memory the device has in all (the GPU's, or the host's RAM).
tc_err tc_device_memory_bytes(tc_device *device, size_t *bytes);

/// Memory in the device's space, 64-byte aligned (256 on GPUs). TC_ERR_MEMORY
/// names the size when it fails. *ptr is NULL for bytes == 0.
tc_err tc_device_alloc(tc_device *device, size_t bytes, void **ptr);
/// Frees and sets *ptr to NULL. NULL is fine.
void tc_device_free(tc_device *device, void **ptr);
/// Copies host to device, device to host, device to device. Synchronous.
tc_err tc_device_copy_to_device(tc_device *device, void *dst, const void *src, size_t bytes);
tc_err tc_device_copy_to_host(tc_device *device, void *dst, const void *src, size_t bytes);
tc_err tc_device_copy_on_device(tc_device *device, void *dst, const void *src, size_t bytes);
/// Sets bytes of device memory to zero.
tc_err tc_device_memset_zero(tc_device *device, void *ptr, size_t bytes);
/// Waits for all work queued on the device; reports asynchronous errors.
tc_err tc_device_synchronize(tc_device *device);

/// A timer of the work queued on the device: CUDA events on GPUs, a monotonic clock
/// (after synchronising) on CPUs.
typedef struct tc_device_timer tc_device_timer;
tc_err tc_device_timer_create(tc_device *device, tc_device_timer **timer);
void tc_device_timer_destroy(tc_device_timer **timer);
tc_err tc_device_timer_start(tc_device_timer *timer);
tc_err tc_device_timer_stop(tc_device_timer *timer);
/// Seconds between the last start and stop (waits for the stop).
tc_err tc_device_timer_seconds(tc_device_timer *timer, double *seconds);
/// Seconds from the last start of `from` to the last start of `to` (waits
/// for the latter), so that a chain of timers, each only started, times
/// consecutive intervals of the device's queue without waiting in between.
tc_err tc_device_timer_between(tc_device_timer *from, tc_device_timer *to, double *seconds);

/// A recording of the work queued on a device's queue between
/// tc_device_record_begin and tc_device_record_end, replayed later as one
/// launch with the same arguments (a CUDA graph: the kernels, copies, sets
/// and timer starts queued in between, none of them run while recorded).
/// Only GPUs record (tc_device_can_record).
typedef struct tc_device_recording tc_device_recording;
bool tc_device_can_record(const tc_device *device);
/// Starts recording the device's queue: what is queued from here on is
/// recorded, not run, until tc_device_record_end.
tc_err tc_device_record_begin(tc_device *device);
/// Ends the recording and prepares it for replay. Always ends it; an
/// error names what could not be recorded (a call that waits for the
/// device, say), and then *recording stays NULL.
tc_err tc_device_record_end(tc_device *device, tc_device_recording **recording);
/// Queues the recorded work once more on the device's queue. Asynchronous.
tc_err tc_device_replay(tc_device *device, const tc_device_recording *recording);
/// Releases a recording and sets *recording to NULL. NULL is fine.
void tc_device_recording_destroy(tc_device_recording **recording);

#endif
