/* tc_device_impl: the body of tc_device and the table of memory/sync/timer
 * operations each kind of device (host or CUDA) provides. Private to
 * src/device. */
#ifndef TC_DEVICE_IMPL_H
#define TC_DEVICE_IMPL_H

#include "tc_device.h"

typedef enum { TC_COPY_TO_DEVICE, TC_COPY_TO_HOST, TC_COPY_ON_DEVICE } tc_copy_direction;

/// What a kind of device does; every function gets a device that open set up.
typedef struct {
  tc_err (*open)(tc_device *device, const tc_device_options *options);
  void (*close)(tc_device *device);
  tc_err (*memory_bytes)(tc_device *device, size_t *bytes);
  tc_err (*alloc)(tc_device *device, size_t bytes, void **ptr);
  void (*release)(tc_device *device, void *ptr);
  tc_err (*copy)(tc_device *device, void *dst, const void *src, size_t bytes,
                 tc_copy_direction direction);
  tc_err (*memset_zero)(tc_device *device, void *ptr, size_t bytes);
  tc_err (*synchronize)(tc_device *device);
  tc_err (*timer_open)(tc_device_timer *timer);
  void (*timer_close)(tc_device_timer *timer);
  tc_err (*timer_start)(tc_device_timer *timer);
  tc_err (*timer_stop)(tc_device_timer *timer);
  tc_err (*timer_seconds)(tc_device_timer *timer, double *seconds);
  tc_err (*timer_between)(tc_device_timer *from, tc_device_timer *to, double *seconds);
  /// Recording of the queue (tc_device_record_begin); NULL where the
  /// device cannot record. record_end sets *replayable (a cudaGraphExec_t)
  /// or fails.
  tc_err (*record_begin)(tc_device *device);
  tc_err (*record_end)(tc_device *device, void **replayable);
  tc_err (*replay)(tc_device *device, void *replayable);
  void (*replayable_release)(void *replayable);
} tc_device_ops;

struct tc_device {
  const tc_device_ops *ops;
  tc_backend_kind backend;
  const tc_contract_backend *contract;
  int gpu_index;      ///< -1 on CPU backends
  int num_threads;    ///< OpenMP threads; 1 for serial, 0 for CUDA
  void *stream;       ///< cudaStream_t on CUDA, NULL on CPUs
  char description[256];
  char model[256];    ///< the GPU's or the CPU's model name (tc_device_model)
};

struct tc_device_recording {
  tc_device *device;
  void *replayable; ///< cudaGraphExec_t
};

struct tc_device_timer {
  tc_device *device;
  double start_seconds, stop_seconds; ///< host clock (CPU devices)
  void *start_event, *stop_event;     ///< cudaEvent_t (CUDA devices)
};

/// The host (serial and OpenMP) operations.
extern const tc_device_ops tc_device_ops_host;
/// The CUDA operations; defined only when CUDA is compiled in (TCMINI_HAVE_CUDA).
extern const tc_device_ops tc_device_ops_cuda;

#endif
