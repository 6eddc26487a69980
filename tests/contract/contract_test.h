/* contract_test: functions shared by the contraction tests: failure reporting,
 * logical-array access written from the layout definitions (independent of
 * tc_layout_offset), and running one contraction on a tc_device with host
 * arrays copied in and out. Header-only; each test is one translation unit. */
#ifndef TC_CONTRACT_TEST_H
#define TC_CONTRACT_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tc_contract.h"
#include "tc_device.h"

/// Exit code CTest reads as "skipped" (SKIP_RETURN_CODE).
enum { TC_TEST_SKIP = 77 };

static int test_failures = 0;

/// Records a failed check with a message; returns cond.
static inline bool test_check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline bool test_check(bool cond, const char *fmt, ...) {
  if (!cond) {
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, args);
    fprintf(stderr, "\n");
    va_end(args);
    ++test_failures;
  }
  return cond;
}

/// Prints the recorded tcmini error and counts a failure unless err is success.
static inline bool test_ok(tc_err err, const char *what) {
  return test_check(err == TC_SUCCESS, "%s: %s: %s (at %s)", what, tc_err_name(err),
                    tc_error_message(), tc_error_origin());
}

/// Offset of a logical index of a rank-n array: row-major for the right
/// layout, column-major for the left, written from the definitions.
static inline int64_t test_offset(tc_layout layout, int rank, const int64_t dims[], const int64_t index[]) {
  int64_t offset = 0, stride = 1;
  for (int d = 0; d < rank; ++d) {
    const int axis = layout == TC_LAYOUT_LEFT ? d : rank - 1 - d;
    offset += index[axis] * stride;
    stride *= dims[axis];
  }
  return offset;
}

/// The logical multi-index of position `linear` in row-major logical order.
static inline void test_unravel(int rank, const int64_t dims[], int64_t linear, int64_t index[]) {
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
}

/// Runs shape with variant on device: host arrays (in the shape's precision
/// and layout) are copied to device memory, and output (read first when
/// sum_into) is copied back.
static inline tc_err test_run_on_device(tc_device *device, const tc_contraction *shape, tc_variant variant,
                                 const void *left, const void *right, void *output) {
  const size_t size = (size_t)tc_precision_size(shape->precision);
  const size_t left_bytes = (size_t)tc_contraction_left_count(shape) * size;
  const size_t right_bytes = (size_t)tc_contraction_right_count(shape) * size;
  const size_t out_bytes = (size_t)tc_contraction_output_count(shape) * size;
  void *d_left = NULL, *d_right = NULL, *d_out = NULL;
  tc_err err = tc_device_alloc(device, left_bytes, &d_left);
  if (err == TC_SUCCESS)
    err = tc_device_alloc(device, right_bytes, &d_right);
  if (err == TC_SUCCESS)
    err = tc_device_alloc(device, out_bytes, &d_out);
  if (err == TC_SUCCESS)
    err = tc_device_copy_to_device(device, d_left, left, left_bytes);
  if (err == TC_SUCCESS)
    err = tc_device_copy_to_device(device, d_right, right, right_bytes);
  if (err == TC_SUCCESS)
    err = tc_device_copy_to_device(device, d_out, output, out_bytes);
  if (err == TC_SUCCESS)
    err = tc_contract(tc_device_contract_backend(device), shape, variant, d_left, d_right, d_out,
                      tc_device_stream(device));
  if (err == TC_SUCCESS)
    err = tc_device_synchronize(device);
  if (err == TC_SUCCESS)
    err = tc_device_copy_to_host(device, output, d_out, out_bytes);
  tc_device_free(device, &d_left);
  tc_device_free(device, &d_right);
  tc_device_free(device, &d_out);
  return err;
}

/// Opens a device for backend kind (OpenMP with several threads so that the
/// partitioning over threads is exercised). False, having said why, when the
/// backend is not compiled in, has no device (a GPU backend on a machine
/// without a GPU: skipped) or cannot open one (a failed check).
static inline bool test_open_device(tc_backend_kind kind, tc_device **device) {
  const char *name = tc_backend_name(kind);
  if (tc_contract_backend_get(kind) == NULL) {
    printf("%s: not compiled in\n", name);
    return false;
  }
  const tc_device_options options = {
      .backend = kind, .num_threads = kind == TC_BACKEND_OPENMP ? 3 : 0, .local_rank = 0,
      .local_size = 1, .allow_gpu_sharing = true};
  *device = NULL;
  tc_error_clear();
  const tc_err err = tc_device_create(&options, device);
  if (err == TC_ERR_NO_DEVICE) {
    printf("%s: skipped (%s)\n", name, tc_error_message());
    return false;
  }
  return test_ok(err, name);
}

#endif
