/* tc_device: the backend-independent half of the device layer: choosing the
 * backend's operations and contraction table, argument checks, and the
 * public entry points that forward to the operations. */
#include "tc_device_impl.h"

#include <stdlib.h>

#include "tc_build.h"

/* Open devices per backend: the last one to close releases the backend's
 * cached resources (tc_contract_backend_release). */
static int open_devices[TC_BACKEND_COUNT];

bool tc_device_backend_available(tc_backend_kind backend) {
  return backend >= 0 && backend < TC_BACKEND_COUNT && tc_contract_backend_get(backend) != NULL;
}

tc_err tc_device_create(const tc_device_options *options, tc_device **device) {
  *device = NULL;
  TC_CHECK(options->backend >= 0 && options->backend < TC_BACKEND_COUNT, TC_ERR_ARGUMENT,
           "unknown backend %d", (int)options->backend);
  TC_CHECK(tc_device_backend_available(options->backend), TC_ERR_UNSUPPORTED,
           "backend %s is not compiled into this build of tcmini",
           tc_backend_name(options->backend));
  TC_CHECK(options->num_threads >= 0, TC_ERR_ARGUMENT, "thread count must be >= 0, got %d",
           options->num_threads);
  tc_device *created;
  TC_CALLOC(created, 1);
  created->backend = options->backend;
  created->contract = tc_contract_backend_get(options->backend);
  created->gpu_index = -1;
#if TCMINI_HAVE_CUDA
  created->ops = options->backend == TC_BACKEND_CUDA ? &tc_device_ops_cuda : &tc_device_ops_host;
#else
  created->ops = &tc_device_ops_host;
#endif
  tc_err err = created->ops->open(created, options);
  if (err != TC_SUCCESS) {
    free(created);
    return err;
  }
  ++open_devices[created->backend];
  *device = created;
  return TC_SUCCESS;
}

void tc_device_destroy(tc_device **device) {
  if (!*device)
    return;
  tc_device *d = *device;
  if (--open_devices[d->backend] == 0)
    tc_contract_backend_release(d->contract); /* before the stream goes */
  d->ops->close(d);
  free(d);
  *device = NULL;
}

tc_backend_kind tc_device_backend(const tc_device *device) { return device->backend; }
const tc_contract_backend *tc_device_contract_backend(const tc_device *device) {
  return device->contract;
}
const char *tc_device_description(const tc_device *device) { return device->description; }
const char *tc_device_model(const tc_device *device) { return device->model; }
int tc_device_gpu_index(const tc_device *device) { return device->gpu_index; }
int tc_device_num_threads(const tc_device *device) { return device->num_threads; }
void *tc_device_stream(const tc_device *device) { return device->stream; }

tc_err tc_device_alloc(tc_device *device, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0)
    return TC_SUCCESS;
  return device->ops->alloc(device, bytes, ptr);
}

void tc_device_free(tc_device *device, void **ptr) {
  if (*ptr)
    device->ops->release(device, *ptr);
  *ptr = NULL;
}

tc_err tc_device_copy_to_device(tc_device *device, void *dst, const void *src, size_t bytes) {
  return bytes ? device->ops->copy(device, dst, src, bytes, TC_COPY_TO_DEVICE) : TC_SUCCESS;
}
tc_err tc_device_copy_to_host(tc_device *device, void *dst, const void *src, size_t bytes) {
  return bytes ? device->ops->copy(device, dst, src, bytes, TC_COPY_TO_HOST) : TC_SUCCESS;
}
tc_err tc_device_copy_on_device(tc_device *device, void *dst, const void *src, size_t bytes) {
  return bytes ? device->ops->copy(device, dst, src, bytes, TC_COPY_ON_DEVICE) : TC_SUCCESS;
}
tc_err tc_device_memset_zero(tc_device *device, void *ptr, size_t bytes) {
  return bytes ? device->ops->memset_zero(device, ptr, bytes) : TC_SUCCESS;
}
tc_err tc_device_synchronize(tc_device *device) { return device->ops->synchronize(device); }
tc_err tc_device_memory_bytes(tc_device *device, size_t *bytes) {
  return device->ops->memory_bytes(device, bytes);
}

tc_err tc_device_timer_create(tc_device *device, tc_device_timer **timer) {
  tc_device_timer *created;
  TC_CALLOC(created, 1);
  created->device = device;
  tc_err err = device->ops->timer_open(created);
  if (err != TC_SUCCESS) {
    free(created);
    return err;
  }
  *timer = created;
  return TC_SUCCESS;
}

void tc_device_timer_destroy(tc_device_timer **timer) {
  if (!*timer)
    return;
  (*timer)->device->ops->timer_close(*timer);
  free(*timer);
  *timer = NULL;
}

tc_err tc_device_timer_start(tc_device_timer *timer) {
  return timer->device->ops->timer_start(timer);
}
tc_err tc_device_timer_stop(tc_device_timer *timer) {
  return timer->device->ops->timer_stop(timer);
}
tc_err tc_device_timer_between(tc_device_timer *from, tc_device_timer *to, double *seconds) {
  return to->device->ops->timer_between(from, to, seconds);
}
tc_err tc_device_timer_seconds(tc_device_timer *timer, double *seconds) {
  return timer->device->ops->timer_seconds(timer, seconds);
}

bool tc_device_can_record(const tc_device *device) { return device->ops->record_begin != NULL; }

tc_err tc_device_record_begin(tc_device *device) {
  TC_CHECK(tc_device_can_record(device), TC_ERR_UNSUPPORTED,
           "the %s device cannot record its queue", tc_backend_name(device->backend));
  return device->ops->record_begin(device);
}

tc_err tc_device_record_end(tc_device *device, tc_device_recording **recording) {
  *recording = NULL;
  TC_CHECK(tc_device_can_record(device), TC_ERR_UNSUPPORTED,
           "the %s device cannot record its queue", tc_backend_name(device->backend));
  void *replayable = NULL;
  TC_CALL(device->ops->record_end(device, &replayable));
  tc_device_recording *made = calloc(1, sizeof *made);
  if (!made) {
    device->ops->replayable_release(replayable);
    TC_FAIL(TC_ERR_MEMORY, "out of memory keeping a recording of the device's queue");
  }
  made->device = device;
  made->replayable = replayable;
  *recording = made;
  return TC_SUCCESS;
}

tc_err tc_device_replay(tc_device *device, const tc_device_recording *recording) {
  TC_CHECK(recording && recording->device == device, TC_ERR_ARGUMENT,
           "tc_device_replay: a recording of another device, or none");
  return device->ops->replay(device, recording->replayable);
}

void tc_device_recording_destroy(tc_device_recording **recording) {
  tc_device_recording *r = *recording;
  if (!r)
    return;
  r->device->ops->replayable_release(r->replayable);
  free(r);
  *recording = NULL;
}
