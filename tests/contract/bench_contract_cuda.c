/* bench_contract_cuda: a timing table of every CUDA variant of every kernel
 * at the project's preset shapes, through the public tc_contract() seam:
 * median of CUDA-event timings after warm-up, GB/s of compulsory traffic,
 * GFLOP/s, and the fraction of the device-to-device copy bandwidth measured
 * by the same program; FieldField kernels in layout right also against the
 * cuBLAS strided-batched GEMM yardstick. Each output is checked against FLAT's.
 * Usage: bench_contract_cuda [--bytes B] [--reps N] [--layout right|left|both]
 *                            [--precision double|float] [--csv FILE]
 *                            [--kernel NAME,...] [--variant NAME,...]
 * --kernel and --variant (comma-separated names; "cublas" for the yardstick)
 * time only those kernels and variants (FLAT always runs: it gives the check
 * values). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract_cuda_yardstick.h"
#include "tc_contract.h"
#include "tc_device.h"
#include "tc_parallel.h"

typedef struct {
  double bytes; ///< target working set (inputs + output) per shape
  int reps;
  int layout_first, layout_last;
  tc_precision precision;
  const char *csv;
  bool kernels[TC_KERNEL_COUNT];       ///< kernels to time
  bool variants[TC_VARIANT_COUNT + 1]; ///< variants to time; [TC_VARIANT_COUNT]: cuBLAS
} bench_options;

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One timed call: a contraction through tc_contract() (the yardstick when
 * one is given), or, with s NULL, a device-to-device copy of copy_bytes
 * from left to out. */
typedef struct {
  tc_device *dev;
  const tc_contraction *s;
  tc_variant variant;
  tc_cuda_yardstick *yardstick;
  const void *left, *right;
  void *out;
  size_t copy_bytes;
} timed_call;

static tc_err run_call(const timed_call *c) {
  if (c->s == NULL)
    return tc_device_copy_on_device(c->dev, c->out, c->left, c->copy_bytes);
  if (c->yardstick)
    return tc_cuda_yardstick_run(c->yardstick, c->s, c->left, c->right, c->out);
  return tc_contract(tc_device_contract_backend(c->dev), c->s, c->variant, c->left, c->right,
                     c->out, tc_device_stream(c->dev));
}

/* Median seconds of reps timed runs of the call, after two warm-ups. */
static tc_err median_seconds(tc_device_timer *timer, const timed_call *call, int reps,
                             double *median) {
  double *samples = malloc(sizeof(double) * (size_t)reps);
  TC_CHECK(samples != NULL, TC_ERR_MEMORY, "out of host memory");
  tc_err err = TC_SUCCESS;
  for (int r = -2; r < reps && err == TC_SUCCESS; ++r) {
    double seconds = 0;
    if ((err = tc_device_timer_start(timer)) || (err = run_call(call)) ||
        (err = tc_device_timer_stop(timer)) || (err = tc_device_timer_seconds(timer, &seconds)))
      break;
    if (r >= 0)
      samples[r] = seconds;
  }
  if (err == TC_SUCCESS) {
    qsort(samples, (size_t)reps, sizeof(double), compare_doubles);
    *median = reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
  }
  free(samples);
  return err;
}

/* Largest relative difference of the first count outputs from FLAT's. */
static tc_err compare_prefix(tc_device *dev, const tc_contraction *s, const void *out,
                             const double *flat, int64_t count, double *worst) {
  const size_t element = (size_t)tc_precision_size(s->precision);
  void *host = malloc((size_t)count * element + 1);
  TC_CHECK(host != NULL, TC_ERR_MEMORY, "out of host memory");
  tc_err err = tc_device_copy_to_host(dev, host, out, (size_t)count * element);
  double scale = 0, diff = 0;
  for (int64_t i = 0; err == TC_SUCCESS && i < count; ++i) {
    const double v = s->precision == TC_DOUBLE ? ((double *)host)[i] : ((float *)host)[i];
    scale = fmax(scale, fabs(flat[i]));
    diff = fmax(diff, fabs(v - flat[i]));
    if (isnan(v))
      diff = INFINITY;
  }
  *worst = scale > 0 ? diff / scale : diff;
  free(host);
  return err;
}

static tc_err fill_random(tc_device *dev, void *pool, size_t bytes, tc_precision precision) {
  const size_t chunk = (size_t)1 << 24, element = (size_t)tc_precision_size(precision);
  unsigned char *host = malloc(chunk);
  TC_CHECK(host != NULL, TC_ERR_MEMORY, "out of host memory");
  uint64_t state = 0x2545f4914f6cdd1dull;
  tc_err err = TC_SUCCESS;
  for (size_t done = 0; done < bytes && err == TC_SUCCESS; done += chunk) {
    const size_t n = (bytes - done < chunk ? bytes - done : chunk) / element;
    for (size_t i = 0; i < n; ++i) {
      state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
      const double v = (double)((state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
      if (precision == TC_DOUBLE)
        ((double *)host)[i] = v;
      else
        ((float *)host)[i] = (float)v;
    }
    err = tc_device_copy_to_device(dev, (unsigned char *)pool + done, host, n * element);
  }
  free(host);
  return err;
}

static tc_err run_bench(tc_device *dev, const bench_options *o) {
  // Preset shapes: (L = R = F, P) for every kernel; D1 = 3, D1 = D2 = 3.
  const int64_t presets[][2] = {{8, 8}, {27, 27}, {64, 125}, {125, 216}};
  const size_t pool_bytes = (size_t)o->bytes;
  void *pool = NULL, *out = NULL;
  tc_device_timer *timer = NULL;
  tc_cuda_yardstick *yardstick = NULL;
  FILE *csv = NULL;
  double *flat = NULL;
  const int64_t check_count = (int64_t)1 << 20;
  tc_err err;
  if ((err = tc_device_alloc(dev, pool_bytes, &pool)) ||
      (err = tc_device_alloc(dev, pool_bytes, &out)) ||
      (err = tc_device_timer_create(dev, &timer)) ||
      (err = tc_cuda_yardstick_create(tc_device_stream(dev), &yardstick)) ||
      (err = fill_random(dev, pool, pool_bytes, o->precision)))
    goto done;
  flat = malloc(sizeof(double) * (size_t)check_count);
  if (!flat) {
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory");
    goto done;
  }
  double copy_seconds = 0;
  const timed_call copy = {.dev = dev, .left = pool, .out = out, .copy_bytes = pool_bytes};
  if ((err = median_seconds(timer, &copy, o->reps, &copy_seconds)))
    goto done;
  const double copy_bw = 2.0 * (double)pool_bytes / copy_seconds; /* read + write */
  printf("device: %s\ndevice-to-device copy: %.1f GB/s (read + write, %.2f GB buffer)\n",
         tc_device_description(dev), copy_bw * 1e-9, (double)pool_bytes * 1e-9);
  if (o->csv && !(csv = fopen(o->csv, "w"))) {
    err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__, "cannot write %s", o->csv);
    goto done;
  }
  if (csv)
    fprintf(csv, "kernel,layout,precision,L,R,P,D1,D2,C,variant,resolved,median_ms,GBps,"
                 "GFLOPps,copy_fraction,max_rel_diff_vs_flat\n");
  printf("%-17s %-5s %4s %4s %7s %-16s %9s %8s %9s %6s %8s\n", "kernel", "lay", "L=R", "P", "C",
         "variant", "ms", "GB/s", "GFLOP/s", "%copy", "vs flat");
  for (int kernel = 0; kernel < TC_KERNEL_COUNT; ++kernel)
    for (size_t n = 0; o->kernels[kernel] && n < sizeof presets / sizeof presets[0]; ++n)
      for (int layout = o->layout_first; layout <= o->layout_last; ++layout) {
        tc_contraction s = {.kernel = (tc_kernel)kernel, .num_cells = 1,
                            .num_left_fields = presets[n][0], .num_right_fields = presets[n][0],
                            .num_points = presets[n][1], .num_data_points = presets[n][1],
                            .dim1 = 3, .dim2 = 3, .layout = (tc_layout)layout,
                            .precision = o->precision};
        const int rank = tc_kernel_tensor_rank(s.kernel);
        if (rank < 2)
          s.dim2 = 1;
        if (rank < 1)
          s.dim1 = 1;
        if (!tc_kernel_is_field_field(s.kernel))
          s.num_right_fields = 1;
        if (tc_kernel_is_data_data(s.kernel))
          s.num_left_fields = 1;
        if (!tc_kernel_is_data_field(s.kernel))
          s.num_data_points = 1;
        // Data-data and data-field kernels do not depend on L: measure them once per P.
        if (tc_kernel_is_data_data(s.kernel) && n > 0 && presets[n][1] == presets[n - 1][1])
          continue;
        const double per_cell = tc_contraction_bytes(&s);
        s.num_cells = (int64_t)(o->bytes / per_cell);
        const int64_t in_elements = tc_contraction_left_count(&s) + tc_contraction_right_count(&s);
        const size_t element = (size_t)tc_precision_size(s.precision);
        const void *left = pool;
        const void *right = (const unsigned char *)pool + (size_t)tc_contraction_left_count(&s) * element;
        if ((double)in_elements * (double)element > (double)pool_bytes)
          continue;
        const int64_t checked = tc_contraction_output_count(&s) < check_count
                                    ? tc_contraction_output_count(&s)
                                    : check_count;
        for (int variant = TC_VARIANT_FLAT; variant < TC_VARIANT_COUNT + 2; ++variant) {
          // The last two passes time AUTO and the cuBLAS yardstick, after FLAT
          // has given the check values.
          const bool use_yardstick = variant == TC_VARIANT_COUNT + 1;
          const tc_variant v = variant >= TC_VARIANT_COUNT ? TC_VARIANT_AUTO : (tc_variant)variant;
          if ((v != TC_VARIANT_FLAT && !o->variants[use_yardstick ? TC_VARIANT_COUNT : v]) ||
              (use_yardstick ? !tc_cuda_yardstick_supports(&s)
                             : !tc_contract_supports(tc_device_contract_backend(dev), &s, v)))
            continue;
          tc_variant resolved = v;
          double seconds = 0, diff = 0;
          if ((err = tc_contract_resolve(tc_device_contract_backend(dev), &s, v, &resolved)) ||
              (err = tc_device_memset_zero(dev, out, (size_t)tc_contraction_output_count(&s) * element)) ||
              (err = median_seconds(timer,
                                    &(timed_call){.dev = dev, .s = &s, .variant = v,
                                                  .yardstick = use_yardstick ? yardstick : NULL,
                                                  .left = left, .right = right, .out = out},
                                    o->reps, &seconds)))
            goto done;
          if (v == TC_VARIANT_FLAT) {
            void *host = malloc((size_t)checked * element);
            if (!host) {
              err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of memory");
              goto done;
            }
            err = tc_device_copy_to_host(dev, host, out, (size_t)checked * element);
            for (int64_t i = 0; i < checked; ++i)
              flat[i] = s.precision == TC_DOUBLE ? ((double *)host)[i] : ((float *)host)[i];
            free(host);
            if (err)
              goto done;
          } else if ((err = compare_prefix(dev, &s, out, flat, checked, &diff))) {
            goto done;
          }
          const double gbs = tc_contraction_bytes(&s) / seconds * 1e-9;
          const double gflops = tc_contraction_flops(&s) / seconds * 1e-9;
          char name[40];
          if (use_yardstick)
            snprintf(name, sizeof name, "cublas");
          else
            snprintf(name, sizeof name, "%s%s%s", tc_variant_name(v),
                     v == TC_VARIANT_AUTO ? "=" : "", v == TC_VARIANT_AUTO ? tc_variant_name(resolved) : "");
          printf("%-17s %-5s %4lld %4lld %7lld %-16s %9.4f %8.1f %9.1f %5.1f%% %8.1e\n",
                 tc_kernel_name(s.kernel), tc_layout_name(s.layout),
                 (long long)s.num_left_fields, (long long)s.num_points, (long long)s.num_cells,
                 name, seconds * 1e3, gbs, gflops, 100.0 * gbs * 1e9 / copy_bw, diff);
          if (csv)
            fprintf(csv, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%s,%s,%.6f,%.2f,%.2f,%.4f,%.3e\n",
                    tc_kernel_name(s.kernel), tc_layout_name(s.layout),
                    tc_precision_name(s.precision), (long long)s.num_left_fields,
                    (long long)s.num_right_fields, (long long)s.num_points, (long long)s.dim1,
                    (long long)s.dim2, (long long)s.num_cells,
                    use_yardstick ? "cublas" : tc_variant_name(v),
                    use_yardstick ? "cublas" : tc_variant_name(resolved), seconds * 1e3, gbs,
                    gflops, gbs * 1e9 / copy_bw,
                    diff);
        }
        fflush(stdout);
      }
done:
  if (csv)
    fclose(csv);
  free(flat);
  tc_device_timer_destroy(&timer);
  tc_cuda_yardstick_destroy(&yardstick);
  tc_device_free(dev, &pool);
  tc_device_free(dev, &out);
  return err;
}

/* Marks the comma-separated names of list in chosen (count entries), looked
 * up with from_name; everything else is unmarked. */
static tc_err parse_list(const char *list, bool *chosen, int count,
                         tc_err (*from_name)(const char *, int *)) {
  for (int n = 0; n < count; ++n)
    chosen[n] = false;
  char name[64];
  for (const char *p = list; *p;) {
    const size_t len = strcspn(p, ",");
    TC_CHECK(len > 0 && len < sizeof name, TC_ERR_INPUT, "bad name in list '%s'", list);
    memcpy(name, p, len);
    name[len] = '\0';
    int value;
    TC_CALL(from_name(name, &value));
    chosen[value] = true;
    p += len + (p[len] == ',');
  }
  return TC_SUCCESS;
}

static tc_err kernel_from_name(const char *name, int *value) {
  tc_kernel kernel;
  TC_CALL(tc_kernel_from_name(name, &kernel));
  *value = (int)kernel;
  return TC_SUCCESS;
}

static tc_err variant_from_name(const char *name, int *value) {
  if (!strcmp(name, "cublas")) {
    *value = TC_VARIANT_COUNT;
    return TC_SUCCESS;
  }
  tc_variant variant;
  TC_CALL(tc_variant_from_name(name, &variant));
  *value = (int)variant;
  return TC_SUCCESS;
}

static tc_err parse_options(int argc, char **argv, bench_options *o) {
  *o = (bench_options){.bytes = 1e9, .reps = 15, .layout_first = 0,
                       .layout_last = TC_LAYOUT_COUNT - 1, .precision = TC_DOUBLE};
  for (int n = 0; n < TC_KERNEL_COUNT; ++n)
    o->kernels[n] = true;
  for (int n = 0; n <= TC_VARIANT_COUNT; ++n)
    o->variants[n] = true;
  for (int i = 1; i < argc; ++i) {
    TC_CHECK(i + 1 < argc, TC_ERR_INPUT, "option %s needs a value", argv[i]);
    const char *value = argv[++i];
    if (!strcmp(argv[i - 1], "--bytes")) {
      o->bytes = atof(value);
      TC_CHECK(o->bytes >= 1e6, TC_ERR_INPUT, "--bytes must be at least 1e6, got %s", value);
    } else if (!strcmp(argv[i - 1], "--reps")) {
      o->reps = atoi(value);
      TC_CHECK(o->reps >= 1, TC_ERR_INPUT, "--reps must be at least 1, got %s", value);
    } else if (!strcmp(argv[i - 1], "--layout")) {
      if (strcmp(value, "both") != 0) {
        tc_layout layout;
        TC_CALL(tc_layout_from_name(value, &layout));
        o->layout_first = o->layout_last = (int)layout;
      }
    } else if (!strcmp(argv[i - 1], "--precision")) {
      TC_CALL(tc_precision_from_name(value, &o->precision));
    } else if (!strcmp(argv[i - 1], "--csv")) {
      o->csv = value;
    } else if (!strcmp(argv[i - 1], "--kernel")) {
      TC_CALL(parse_list(value, o->kernels, TC_KERNEL_COUNT, kernel_from_name));
    } else if (!strcmp(argv[i - 1], "--variant")) {
      TC_CALL(parse_list(value, o->variants, TC_VARIANT_COUNT + 1, variant_from_name));
    } else {
      TC_FAIL(TC_ERR_INPUT, "unknown option %s", argv[i - 1]);
    }
  }
  return TC_SUCCESS;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "bench_contract_cuda: %s\n", tc_error_message());
    return 1;
  }
  bench_options o;
  tc_device_options options = {.backend = TC_BACKEND_CUDA};
  tc_device *dev = NULL;
  tc_err err = parse_options(argc, argv, &o);
  if (err == TC_SUCCESS)
    err = tc_node_local_rank(MPI_COMM_WORLD, &options.local_rank, &options.local_size);
  if (err == TC_SUCCESS)
    err = tc_device_create(&options, &dev);
  if (err == TC_SUCCESS)
    err = run_bench(dev, &o);
  if (err != TC_SUCCESS)
    fprintf(stderr, "bench_contract_cuda: %s (%s)\n", tc_error_message(), tc_error_origin());
  tc_device_destroy(&dev);
  tc_parallel_finalize();
  return err == TC_SUCCESS ? 0 : err == TC_ERR_NO_DEVICE ? 77 : 1;
}
