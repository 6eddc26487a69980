/* tc_device_cuda: the device operations of the CUDA backend: which GPU a rank
 * owns (its node-local rank), device memory, copies, one stream per device,
 * and event timers. Plain C against the CUDA runtime API. */
#define _POSIX_C_SOURCE 200809L /* access */
#include "tc_device_impl.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "tc_cuda_call.h"

/* Says why cudaGetDeviceCount found no GPU in a user's terms. Without an
 * NVIDIA driver the runtime reports "CUDA driver version is insufficient",
 * which reads as a version problem on a machine that simply has no GPU, so
 * that case is told apart by whether a driver is loaded at all. */
static tc_err no_gpu_error(cudaError_t rc) {
  bool driver_loaded = access("/proc/driver/nvidia/version", F_OK) == 0;
  if (rc == cudaErrorInsufficientDriver && driver_loaded)
    TC_FAIL(TC_ERR_NO_DEVICE,
            "backend cuda asked for but the NVIDIA driver is older than this build's CUDA runtime "
            "needs (cudaGetDeviceCount: %s)",
            cudaGetErrorString(rc));
  if (rc == cudaSuccess || rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver)
    TC_FAIL(TC_ERR_NO_DEVICE, "backend cuda asked for but no CUDA GPU found%s",
            driver_loaded ? "" : " (no NVIDIA driver is loaded on this machine)");
  TC_FAIL(TC_ERR_NO_DEVICE, "backend cuda asked for but no CUDA GPU is usable (cudaGetDeviceCount: %s)",
          cudaGetErrorString(rc));
}

static tc_err cuda_open(tc_device *device, const tc_device_options *options) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count <= 0) {
    (void)cudaGetLastError(); // clears the error, which is reported here
    return no_gpu_error(rc);
  }
  TC_CHECK(options->local_rank >= 0, TC_ERR_ARGUMENT, "local rank must be >= 0, got %d",
           options->local_rank);
  TC_CHECK(options->local_rank < count || options->allow_gpu_sharing, TC_ERR_NO_DEVICE,
           "backend cuda asked for but node-local rank %d (of %d ranks on this node) has no "
           "GPU of its own: %d visible; run at most %d ranks per node or allow GPU sharing",
           options->local_rank, options->local_size, count, count);
  int gpu = options->local_rank % count;
  TC_CUDA_CALL(cudaSetDevice(gpu));
  struct cudaDeviceProp prop;
  TC_CUDA_CALL(cudaGetDeviceProperties(&prop, gpu));
  char bus_id[32] = "";
  TC_CUDA_CALL(cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, gpu));
  cudaStream_t stream;
  // A blocking stream: it orders with the legacy default stream, so work that
  // a caller queues with stream NULL (tc_contract allows it) is seen in order.
  TC_CUDA_CALL(cudaStreamCreate(&stream));
  device->gpu_index = gpu;
  device->num_threads = 0;
  device->stream = stream;
  snprintf(device->description, sizeof device->description, "%.200s (GPU %d, %.31s)", prop.name,
           gpu, bus_id);
  snprintf(device->model, sizeof device->model, "%.200s", prop.name);
  return TC_SUCCESS;
}

static void cuda_close(tc_device *device) {
  if (device->stream)
    (void)cudaStreamDestroy((cudaStream_t)device->stream); // nothing to report to on close
  device->stream = NULL;
}

static tc_err cuda_memory_bytes(tc_device *device, size_t *bytes) {
  (void)device;
  size_t free_bytes = 0;
  TC_CUDA_CALL(cudaMemGetInfo(&free_bytes, bytes));
  return TC_SUCCESS;
}

static tc_err cuda_alloc(tc_device *device, size_t bytes, void **ptr) {
  (void)device;
  cudaError_t rc = cudaMalloc(ptr, bytes);
  if (rc != cudaSuccess) {
    *ptr = NULL;
    (void)cudaGetLastError(); // clears the error, which is reported below
    TC_FAIL(TC_ERR_MEMORY, "cudaMalloc of %zu bytes failed: %s", bytes, cudaGetErrorString(rc));
  }
  return TC_SUCCESS;
}

static void cuda_release(tc_device *device, void *ptr) {
  (void)device;
  (void)cudaFree(ptr); // release has no error path; a fault shows at the next sync
}

static tc_err cuda_copy(tc_device *device, void *dst, const void *src, size_t bytes,
                        tc_copy_direction direction) {
  enum cudaMemcpyKind kind = direction == TC_COPY_TO_DEVICE ? cudaMemcpyHostToDevice
                             : direction == TC_COPY_TO_HOST ? cudaMemcpyDeviceToHost
                                                            : cudaMemcpyDeviceToDevice;
  cudaStream_t stream = (cudaStream_t)device->stream;
  TC_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  TC_CUDA_CALL(cudaStreamSynchronize(stream));
  return TC_SUCCESS;
}

static tc_err cuda_memset_zero(tc_device *device, void *ptr, size_t bytes) {
  TC_CUDA_CALL(cudaMemsetAsync(ptr, 0, bytes, (cudaStream_t)device->stream));
  return TC_SUCCESS;
}

static tc_err cuda_synchronize(tc_device *device) {
  TC_CUDA_CALL(cudaStreamSynchronize((cudaStream_t)device->stream));
  return TC_SUCCESS;
}

static tc_err cuda_timer_open(tc_device_timer *timer) {
  cudaEvent_t start, stop;
  TC_CUDA_CALL(cudaEventCreate(&start));
  cudaError_t rc = cudaEventCreate(&stop);
  if (rc != cudaSuccess) {
    (void)cudaEventDestroy(start);
    TC_FAIL(TC_ERR_CUDA, "cudaEventCreate failed: %s", cudaGetErrorString(rc));
  }
  timer->start_event = start;
  timer->stop_event = stop;
  return TC_SUCCESS;
}

static void cuda_timer_close(tc_device_timer *timer) {
  (void)cudaEventDestroy((cudaEvent_t)timer->start_event);
  (void)cudaEventDestroy((cudaEvent_t)timer->stop_event);
}

/* An event recorded on the device's stream; while the stream is being
 * recorded (tc_device_record_begin), a node of the graph that records the
 * event each time the graph runs (without the flag, an event recorded in
 * capture only marks a point of the capture and is never timed). */
static tc_err record_event(cudaEvent_t event, cudaStream_t stream) {
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TC_CUDA_CALL(cudaStreamIsCapturing(stream, &capture));
  TC_CUDA_CALL(cudaEventRecordWithFlags(event, stream,
                                        capture == cudaStreamCaptureStatusActive
                                            ? cudaEventRecordExternal
                                            : cudaEventRecordDefault));
  return TC_SUCCESS;
}

static tc_err cuda_timer_start(tc_device_timer *timer) {
  return record_event((cudaEvent_t)timer->start_event, (cudaStream_t)timer->device->stream);
}

static tc_err cuda_timer_stop(tc_device_timer *timer) {
  return record_event((cudaEvent_t)timer->stop_event, (cudaStream_t)timer->device->stream);
}

static tc_err cuda_timer_seconds(tc_device_timer *timer, double *seconds) {
  float milliseconds = 0.0f;
  TC_CUDA_CALL(cudaEventSynchronize((cudaEvent_t)timer->stop_event));
  TC_CUDA_CALL(cudaEventElapsedTime(&milliseconds, (cudaEvent_t)timer->start_event,
                                    (cudaEvent_t)timer->stop_event));
  *seconds = 1e-3 * (double)milliseconds;
  return TC_SUCCESS;
}

static tc_err cuda_timer_between(tc_device_timer *from, tc_device_timer *to, double *seconds) {
  float milliseconds = 0.0f;
  TC_CUDA_CALL(cudaEventSynchronize((cudaEvent_t)to->start_event));
  TC_CUDA_CALL(cudaEventElapsedTime(&milliseconds, (cudaEvent_t)from->start_event,
                                    (cudaEvent_t)to->start_event));
  *seconds = 1e-3 * (double)milliseconds;
  return TC_SUCCESS;
}

/* Relaxed capture: the loop's first batch may still make a library handle
 * or raise a kernel's shared-memory limit, which are not queue work. */
static tc_err cuda_record_begin(tc_device *device) {
  TC_CUDA_CALL(cudaStreamBeginCapture((cudaStream_t)device->stream,
                                      cudaStreamCaptureModeRelaxed));
  return TC_SUCCESS;
}

static tc_err cuda_record_end(tc_device *device, void **replayable) {
  cudaGraph_t graph = NULL;
  cudaError_t rc = cudaStreamEndCapture((cudaStream_t)device->stream, &graph);
  (void)cudaGetLastError(); /* a failed capture leaves no sticky error */
  TC_CHECK(rc == cudaSuccess && graph, TC_ERR_CUDA,
           "the GPU could not record the step's launches as a CUDA graph: %s",
           cudaGetErrorString(rc));
  cudaGraphExec_t exec = NULL;
  rc = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  TC_CHECK(rc == cudaSuccess, TC_ERR_CUDA, "preparing the recorded CUDA graph failed: %s",
           cudaGetErrorString(rc));
  *replayable = exec;
  return TC_SUCCESS;
}

static tc_err cuda_replay(tc_device *device, void *replayable) {
  TC_CUDA_CALL(cudaGraphLaunch((cudaGraphExec_t)replayable, (cudaStream_t)device->stream));
  return TC_SUCCESS;
}

static void cuda_replayable_release(void *replayable) {
  if (replayable)
    (void)cudaGraphExecDestroy((cudaGraphExec_t)replayable);
}

const tc_device_ops tc_device_ops_cuda = {
    .open = cuda_open,
    .close = cuda_close,
    .memory_bytes = cuda_memory_bytes,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
    .memset_zero = cuda_memset_zero,
    .synchronize = cuda_synchronize,
    .timer_open = cuda_timer_open,
    .timer_close = cuda_timer_close,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .timer_seconds = cuda_timer_seconds,
    .timer_between = cuda_timer_between,
    .record_begin = cuda_record_begin,
    .record_end = cuda_record_end,
    .replay = cuda_replay,
    .replayable_release = cuda_replayable_release,
};
