/* test_contract_cuda: what the backend-generic conformance test does not
 * cover for the CUDA backend: the no-GPU message, every declared variant
 * (cuBLAS's vendor variant among them) on ragged shapes (tiles, packed groups
 * and slice chunks that divide nothing), grids of far more than 65535 blocks,
 * and poisoned outputs, against an independent host reference; and for the
 * vendor variant (and AUTO's first-call probe of it against the rule's):
 * float computed in FP32 (no TF32), layout left refused with
 * its reason, its cached cuBLAS handle shared by two devices' streams and
 * made again after a release, and AUTO taking it from a tuning file. Exits 77
 * (skip) when no GPU is visible. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_contract.h"
#include "tc_device.h"
#include "tc_parallel.h"
#include "tc_tuning.h"

enum { SKIP_CODE = 77 };

/* A deterministic generator in [-1, 1) (xorshift64*), independent of libc. */
static double next_random(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return (double)((*state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* Offset of a logical index of a rank-n array, written here from the layout's
 * definition (not tc_layout_offset) so that the reference is independent. */
static int64_t offset_of(tc_layout layout, int n, const int64_t *dims, const int64_t *idx) {
  int64_t offset = 0, stride = 1;
  for (int d = 0; d < n; ++d) {
    const int axis = layout == TC_LAYOUT_LEFT ? d : n - 1 - d;
    offset += idx[axis] * stride;
    stride *= dims[axis];
  }
  return offset;
}

/* Reference in long double straight from the definitions in tc_contract.h. */
static void reference(const tc_contraction *s, const double *left, const double *right,
                      long double *out) {
  const int64_t C = s->num_cells, P = s->num_points, D1 = s->dim1, D2 = s->dim2;
  const int64_t Pd = s->num_data_points;
  const bool ff = tc_kernel_is_field_field(s->kernel), df = tc_kernel_is_data_field(s->kernel);
  const int64_t L = ff || df ? s->num_left_fields : 1, R = ff ? s->num_right_fields : 1;
  const int rank = tc_kernel_tensor_rank(s->kernel);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t r = 0; r < R; ++r) {
        long double sum = 0;
        for (int64_t p = 0; p < P; ++p)
          for (int64_t d1 = 0; d1 < D1; ++d1)
            for (int64_t d2 = 0; d2 < D2; ++d2) {
              int64_t ld[5], li[5], rd[5], ri[5];
              int n = 0, m = 0;
              if (ff) {
                ld[n] = C, li[n++] = c, ld[n] = L, li[n++] = l, ld[n] = P, li[n++] = p;
                rd[m] = C, ri[m++] = c, rd[m] = R, ri[m++] = r, rd[m] = P, ri[m++] = p;
              } else if (df) {
                ld[n] = C, li[n++] = c, ld[n] = Pd, li[n++] = Pd == 1 ? 0 : p;
                rd[m] = C, ri[m++] = c, rd[m] = L, ri[m++] = l, rd[m] = P, ri[m++] = p;
              } else {
                ld[n] = C, li[n++] = c, ld[n] = P, li[n++] = p;
                rd[m] = C, ri[m++] = c, rd[m] = P, ri[m++] = p;
              }
              if (rank >= 1)
                ld[n] = D1, li[n++] = d1, rd[m] = D1, ri[m++] = d1;
              if (rank == 2)
                ld[n] = D2, li[n++] = d2, rd[m] = D2, ri[m++] = d2;
              sum += (long double)left[offset_of(s->layout, n, ld, li)] *
                     right[offset_of(s->layout, m, rd, ri)];
            }
        int64_t od[3] = {C, L, R}, oi[3] = {c, l, r};
        const int on = ff ? 3 : df ? 2 : 1;
        out[offset_of(s->layout, on, od, oi)] = sum;
      }
}

/* Host values of an array as doubles, and their device copy in the shape's precision. */
static tc_err upload(tc_device *dev, const tc_contraction *s, const double *values, int64_t count,
                     void *device_ptr) {
  const size_t element = (size_t)tc_precision_size(s->precision);
  void *staging = malloc((size_t)count * element + 1);
  TC_CHECK(staging != NULL, TC_ERR_MEMORY, "out of host memory");
  for (int64_t i = 0; i < count; ++i) {
    if (s->precision == TC_DOUBLE)
      ((double *)staging)[i] = values[i];
    else
      ((float *)staging)[i] = (float)values[i];
  }
  tc_err err = tc_device_copy_to_device(dev, device_ptr, staging, (size_t)count * element);
  free(staging);
  return err;
}

static tc_err download(tc_device *dev, const tc_contraction *s, const void *device_ptr,
                       int64_t count, double *values) {
  const size_t element = (size_t)tc_precision_size(s->precision);
  void *staging = malloc((size_t)count * element + 1);
  TC_CHECK(staging != NULL, TC_ERR_MEMORY, "out of host memory");
  tc_err err = tc_device_copy_to_host(dev, staging, device_ptr, (size_t)count * element);
  for (int64_t i = 0; err == TC_SUCCESS && i < count; ++i)
    values[i] = s->precision == TC_DOUBLE ? ((double *)staging)[i] : ((float *)staging)[i];
  free(staging);
  return err;
}

typedef struct {
  int checked, failed;
} tally;

/* Runs every variant the CUDA backend declares (and AUTO) on one shape, with
 * and without sum_into, each time on a poisoned (or random, for sum_into)
 * output, and compares with the reference by the relative error norm and
 * entry by entry. */
static tc_err check_shape(tc_device *dev, tc_contraction s, uint64_t seed, tally *t) {
  const tc_contract_backend *cuda = tc_device_contract_backend(dev);
  tc_contraction_normalize(&s);
  TC_CALL(tc_contraction_validate(&s));
  const int64_t nl = tc_contraction_left_count(&s), nr = tc_contraction_right_count(&s);
  const int64_t no = tc_contraction_output_count(&s);
  const size_t element = (size_t)tc_precision_size(s.precision);
  double *left = malloc(sizeof(double) * (size_t)nl), *right = malloc(sizeof(double) * (size_t)nr);
  double *initial = malloc(sizeof(double) * (size_t)no), *got = malloc(sizeof(double) * (size_t)no);
  long double *want = malloc(sizeof(long double) * (size_t)no);
  void *d_left = NULL, *d_right = NULL, *d_out = NULL;
  tc_err err = TC_SUCCESS;
  if (!left || !right || !initial || !got || !want) {
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory");
    goto done;
  }
  for (int64_t i = 0; i < nl; ++i)
    left[i] = next_random(&seed);
  for (int64_t i = 0; i < nr; ++i)
    right[i] = next_random(&seed);
  // Values that a float rounding keeps exactly, so float runs see the same data.
  for (int64_t i = 0; i < nl; ++i)
    left[i] = (float)left[i];
  for (int64_t i = 0; i < nr; ++i)
    right[i] = (float)right[i];
  reference(&s, left, right, want);
  if ((err = tc_device_alloc(dev, (size_t)nl * element, &d_left)) ||
      (err = tc_device_alloc(dev, (size_t)nr * element, &d_right)) ||
      (err = tc_device_alloc(dev, (size_t)no * element, &d_out)) ||
      (err = upload(dev, &s, left, nl, d_left)) || (err = upload(dev, &s, right, nr, d_right)))
    goto done;
  const double tolerance = s.precision == TC_DOUBLE ? 1e-11 : 1e-4;
  for (int variant = TC_VARIANT_AUTO; variant < TC_VARIANT_COUNT; ++variant) {
    if (!tc_contract_supports(cuda, &s, (tc_variant)variant))
      continue;
    for (int sum_into = 0; sum_into < 2; ++sum_into) {
      s.sum_into = sum_into;
      for (int64_t i = 0; i < no; ++i)
        initial[i] = sum_into ? (float)next_random(&seed) : 1e30;
      if ((err = upload(dev, &s, initial, no, d_out)) ||
          (err = tc_contract(cuda, &s, (tc_variant)variant, d_left, d_right, d_out,
                             tc_device_stream(dev))) ||
          (err = tc_device_synchronize(dev)) || (err = download(dev, &s, d_out, no, got)))
        goto done;
      long double diff2 = 0, ref2 = 0;
      int64_t worst = -1;
      for (int64_t i = 0; i < no; ++i) {
        const long double expect = want[i] + (sum_into ? initial[i] : 0.0);
        const long double d = (long double)got[i] - expect;
        diff2 += d * d;
        ref2 += expect * expect;
        if (!(fabsl(d) <= 1e3 * tolerance * (1 + fabsl(expect))) && worst < 0)
          worst = i;
      }
      const double rel = ref2 > 0 ? (double)sqrtl(diff2 / ref2) : (double)sqrtl(diff2);
      t->checked++;
      if (!(rel <= tolerance) || worst >= 0) {
        t->failed++;
        printf("FAIL %s %s %s %s%s C=%lld L=%lld R=%lld P=%lld Pd=%lld D1=%lld D2=%lld: "
               "relative error %.3e",
               tc_kernel_name(s.kernel), tc_layout_name(s.layout), tc_precision_name(s.precision),
               tc_variant_name((tc_variant)variant), sum_into ? " sum_into" : "",
               (long long)s.num_cells, (long long)s.num_left_fields,
               (long long)s.num_right_fields, (long long)s.num_points,
               (long long)s.num_data_points, (long long)s.dim1, (long long)s.dim2, rel);
        if (worst >= 0)
          printf(", entry %lld is %.17g, want %.17Lg", (long long)worst, got[worst],
                 want[worst] + (sum_into ? initial[worst] : 0.0));
        printf("\n");
      }
    }
  }
done:
  tc_device_free(dev, &d_left);
  tc_device_free(dev, &d_right);
  tc_device_free(dev, &d_out);
  free(left);
  free(right);
  free(initial);
  free(got);
  free(want);
  return err;
}

/* One run of variant on shape (no sum_into) from random inputs that float
 * keeps exactly, compared with the long double reference: *relative gets
 * ||out - ref|| / ||ref||. dev2: when not NULL, the run goes to that
 * device's stream instead (same GPU). */
static tc_err vendor_run(tc_device *dev, tc_device *dev2, tc_contraction s, tc_variant variant,
                         uint64_t seed, double *relative) {
  tc_device *on = dev2 != NULL ? dev2 : dev;
  tc_contraction_normalize(&s);
  TC_CALL(tc_contraction_validate(&s));
  const int64_t nl = tc_contraction_left_count(&s), nr = tc_contraction_right_count(&s);
  const int64_t no = tc_contraction_output_count(&s);
  const size_t element = (size_t)tc_precision_size(s.precision);
  double *left = malloc(sizeof(double) * (size_t)nl), *right = malloc(sizeof(double) * (size_t)nr);
  double *got = malloc(sizeof(double) * (size_t)no);
  long double *want = malloc(sizeof(long double) * (size_t)no);
  void *d_left = NULL, *d_right = NULL, *d_out = NULL;
  tc_err err = TC_SUCCESS;
  if (!left || !right || !got || !want) {
    err = tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory");
    goto done;
  }
  for (int64_t i = 0; i < nl; ++i)
    left[i] = (float)next_random(&seed);
  for (int64_t i = 0; i < nr; ++i)
    right[i] = (float)next_random(&seed);
  reference(&s, left, right, want);
  if ((err = tc_device_alloc(on, (size_t)nl * element, &d_left)) ||
      (err = tc_device_alloc(on, (size_t)nr * element, &d_right)) ||
      (err = tc_device_alloc(on, (size_t)no * element, &d_out)) ||
      (err = upload(on, &s, left, nl, d_left)) || (err = upload(on, &s, right, nr, d_right)) ||
      (err = tc_device_memset_zero(on, d_out, (size_t)no * element)) ||
      (err = tc_contract(tc_device_contract_backend(on), &s, variant, d_left, d_right, d_out,
                         tc_device_stream(on))) ||
      (err = tc_device_synchronize(on)) || (err = download(on, &s, d_out, no, got)))
    goto done;
  long double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < no; ++i) {
    diff2 += ((long double)got[i] - want[i]) * ((long double)got[i] - want[i]);
    ref2 += want[i] * want[i];
  }
  *relative = ref2 > 0 ? (double)sqrtl(diff2 / ref2) : (double)sqrtl(diff2);
done:
  tc_device_free(on, &d_left);
  tc_device_free(on, &d_right);
  tc_device_free(on, &d_out);
  free(left);
  free(right);
  free(got);
  free(want);
  return err;
}

/* Counts one check, printing what failed. */
static void tally_check(tally *t, bool passed, const char *what, double value) {
  t->checked++;
  if (!passed) {
    t->failed++;
    printf("FAIL vendor: %s (%.3e)\n", what, value);
  }
}

/* Counts one check that AUTO's rules (no tuning file) pick `expected` for s. */
static tc_err expect_rule(tally *t, const tc_contract_backend *cuda, const tc_contraction *s,
                          tc_variant expected, const char *what) {
  tc_variant resolved = TC_VARIANT_AUTO;
  tc_choice source = TC_CHOICE_COUNT;
  TC_CALL(tc_contract_choose(cuda, NULL, s, TC_VARIANT_AUTO, &resolved, &source));
  tally_check(t, resolved == expected, what, 0);
  return TC_SUCCESS;
}

/* The vendor variant's own checks (see the header comment). */
static tc_err check_vendor(tc_device *dev, tally *t) {
  const tc_contract_backend *cuda = tc_device_contract_backend(dev);
  const char *library = tc_contract_vendor_library(cuda);
  printf("vendor library: %s\n", library ? library : "none");
  tally_check(t, library != NULL && strncmp(library, "cuBLAS ", 7) == 0, "the library is cuBLAS", 0);
  // Float in FP32: K = 2048 random products sum with a relative error near
  // sqrt(K) 2^-24 ~ 3e-6; TF32 (10-bit mantissas) would give ~1e-3.
  const tc_contraction single = {.kernel = TC_FIELD_FIELD_SCALAR, .num_cells = 10,
                                 .num_left_fields = 64, .num_right_fields = 48,
                                 .num_points = 2048, .layout = TC_LAYOUT_RIGHT,
                                 .precision = TC_FLOAT};
  double rel = 1;
  TC_CALL(vendor_run(dev, NULL, single, TC_VARIANT_VENDOR, 11, &rel));
  tally_check(t, rel <= 2e-5, "float runs in FP32, not TF32", rel);
  tc_contraction dbl = single;
  dbl.precision = TC_DOUBLE;
  TC_CALL(vendor_run(dev, NULL, dbl, TC_VARIANT_VENDOR, 12, &rel));
  tally_check(t, rel <= 1e-13, "double runs in FP64", rel);
  // Layout left: refused, with the reason.
  tc_contraction left = dbl;
  left.layout = TC_LAYOUT_LEFT;
  tc_variant resolved;
  tc_error_clear();
  const tc_err refused = tc_contract_resolve(cuda, &left, TC_VARIANT_VENDOR, &resolved);
  tally_check(t, refused == TC_ERR_UNSUPPORTED && strstr(tc_error_message(), "layout right only"),
        "layout left is refused with its reason", 0);
  tc_error_clear();
  // The cached handle: made again after a release, and shared by a second
  // device's stream (the last device to close releases it).
  tc_contract_backend_release(cuda);
  TC_CALL(vendor_run(dev, NULL, dbl, TC_VARIANT_VENDOR, 13, &rel));
  tally_check(t, rel <= 1e-13, "a run after the handles were released", rel);
  tc_device_options options = {.backend = TC_BACKEND_CUDA, .local_size = 1,
                               .allow_gpu_sharing = true};
  options.local_rank = tc_device_gpu_index(dev);
  tc_device *second = NULL;
  TC_CALL(tc_device_create(&options, &second));
  tc_err err = vendor_run(dev, second, dbl, TC_VARIANT_VENDOR, 14, &rel);
  tc_device_destroy(&second);
  TC_CALL(err);
  tally_check(t, rel <= 1e-13, "a run on a second device's stream", rel);
  TC_CALL(vendor_run(dev, NULL, dbl, TC_VARIANT_VENDOR, 15, &rel));
  tally_check(t, rel <= 1e-13, "a run after the second device closed", rel);
  // AUTO takes the vendor variant where a tuning file says so.
  char text[512];
  snprintf(text, sizeof text,
           "tcmini-tuning 1\nbackend cuda\ndevice %s\n"
           "kernel=FieldFieldScalar layout=right precision=double L=33-64 R=33-64 K=1025-2048 "
           "variant=vendor\n",
           tc_device_model(dev));
  tc_tuning *tuning = NULL;
  TC_CALL(tc_tuning_parse("test", text, TC_BACKEND_CUDA, tc_device_model(dev), &tuning));
  tc_choice source = TC_CHOICE_COUNT;
  err = tc_contract_choose(cuda, tuning, &dbl, TC_VARIANT_AUTO, &resolved, &source);
  tc_tuning_destroy(&tuning);
  TC_CALL(err);
  tally_check(t, resolved == TC_VARIANT_VENDOR && source == TC_CHOICE_TUNING,
        "AUTO takes vendor from a tuning file", 0);
  // AUTO's first-call probe: the first AUTO run of a shape times the rule's
  // variant and the vendor's and keeps the faster, reported as a probe; with
  // probing off, or for sum_into, AUTO is the rule's.
  tc_contraction probed = dbl;
  probed.num_cells = 37; /* a shape no other check runs */
  tc_variant rule = TC_VARIANT_AUTO;
  TC_CALL(tc_contract_choose(cuda, NULL, &probed, TC_VARIANT_AUTO, &rule, &source));
  tally_check(t, source == TC_CHOICE_RULE, "AUTO by the rules before the first run", 0);
  TC_CALL(vendor_run(dev, NULL, probed, TC_VARIANT_AUTO, 16, &rel));
  tally_check(t, rel <= 1e-13, "AUTO's result after the probe", rel);
  TC_CALL(tc_contract_choose(cuda, NULL, &probed, TC_VARIANT_AUTO, &resolved, &source));
  tally_check(t, source == TC_CHOICE_PROBE && (resolved == rule || resolved == TC_VARIANT_VENDOR),
              "AUTO keeps the probe's choice", 0);
  tc_contract_set_probe(false);
  TC_CALL(tc_contract_choose(cuda, NULL, &probed, TC_VARIANT_AUTO, &resolved, &source));
  tally_check(t, source == TC_CHOICE_RULE && resolved == rule, "probing off: the rules", 0);
  tc_contract_set_probe(true);
  tc_contraction summed = probed;
  summed.sum_into = true;
  TC_CALL(tc_contract_choose(cuda, NULL, &summed, TC_VARIANT_AUTO, &resolved, &source));
  tally_check(t, source == TC_CHOICE_RULE, "sum_into is never probed", 0);
  // The rules' vendor class: double, layout right, at most 8 fields by at
  // least 16, K past FLAT's; not float, not 8 x 8, not short sums, and the
  // vendor's result there matches the reference.
  tc_contract_set_probe(false);
  tc_contraction narrow = {.kernel = TC_FIELD_FIELD_TENSOR, .num_cells = 21,
                           .num_left_fields = 40, .num_right_fields = 5, .num_points = 4,
                           .dim1 = 3, .dim2 = 3, .layout = TC_LAYOUT_RIGHT,
                           .precision = TC_DOUBLE};
  TC_CALL(expect_rule(t, cuda, &narrow, TC_VARIANT_VENDOR, "rules: double 40 x 5 runs the vendor"));
  TC_CALL(vendor_run(dev, NULL, narrow, TC_VARIANT_AUTO, 17, &rel));
  tally_check(t, rel <= 1e-13, "rules: the vendor's 40 x 5 result", rel);
  tc_contraction other = narrow;
  other.precision = TC_FLOAT;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING, "rules: float 40 x 5 runs the tile"));
  other = narrow;
  other.num_left_fields = 8;
  other.num_right_fields = 8;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING, "rules: double 8 x 8 runs the tile"));
  other = narrow;
  other.kernel = TC_FIELD_FIELD_SCALAR;
  other.dim1 = other.dim2 = 1;
  other.num_points = 20;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING,
                      "rules: double 40 x 5, K = 20 runs the tile"));
  // Float in layout right: more than 16 fields on each side run the vendor,
  // at most 16 on one side the tile; layout left keeps its tile.
  other = narrow;
  other.precision = TC_FLOAT;
  other.num_right_fields = 17;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_VENDOR, "rules: float 40 x 17 runs the vendor"));
  TC_CALL(vendor_run(dev, NULL, other, TC_VARIANT_AUTO, 19, &rel));
  tally_check(t, rel <= 1e-5, "rules: the vendor's float 40 x 17 result", rel);
  other.num_right_fields = 16;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING, "rules: float 40 x 16 runs the tile"));
  other.num_right_fields = 17;
  other.layout = TC_LAYOUT_LEFT;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING,
                      "rules: float 40 x 17, layout left runs the tile"));
  // Double in layout right, cells too big for the whole-cell tile: where
  // TILING would run the 32 x 32 tensor-core tile (a side of at most 32) or
  // the 64 x 64 k-tiled one (odd K, past 64 x 64), the vendor; the 96 x 96
  // k-tiled tile and the TMA tiles stay.
  other = narrow;
  other.kernel = TC_FIELD_FIELD_SCALAR;
  other.dim1 = other.dim2 = 1;
  other.num_left_fields = 40;
  other.num_right_fields = 20;
  other.num_points = 2000;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_VENDOR,
                      "rules: double 40 x 20, K = 2000 runs the vendor"));
  other.num_left_fields = 72;
  other.num_right_fields = 103;
  other.num_points = 201;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_VENDOR,
                      "rules: double 72 x 103, K = 201 runs the vendor"));
  TC_CALL(vendor_run(dev, NULL, other, TC_VARIANT_AUTO, 20, &rel));
  tally_check(t, rel <= 1e-13, "rules: the vendor's 72 x 103 result", rel);
  other.num_left_fields = other.num_right_fields = 81;
  other.num_points = 243;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING,
                      "rules: double 81 x 81, K = 243 runs the tile"));
  other.num_left_fields = other.num_right_fields = 64;
  other.num_points = 250;
  TC_CALL(expect_rule(t, cuda, &other, TC_VARIANT_TILING,
                      "rules: double 64 x 64, K = 250 runs the tile"));
  tc_contract_set_probe(true);
  return TC_SUCCESS;
}

/* Shapes chosen to be ragged against every fixed size in the kernels: tiles
 * of 8, 16, 32 and 64 (FMA k tiles of 8 and 16; tensor-core k tiles of 16
 * and 32 copied in 16-byte pieces, so odd and even K, one cell, several
 * tiles per cell and many cells per block; TMA chunks of 32 and 64 words
 * over 64 x 64, 96 x 64, 96 x 96 and 128 x 64 tiles, for even K too big for
 * whole cells; k-tiled 64 x 64 and 96 x 96 tiles for odd K; slabs of
 * 32 and 16 rows for cells of 115-130 KB, one to three cells per block, odd K;
 * strips of 64 words of k per row for bigger cells of at most 64 x 64, one
 * to two tasks per block, odd K, ragged tiles and a ragged last chunk),
 * packed groups of 2..16 lanes, slice chunks of 32 KiB, and warps of 32; DataField has a K in each of
 * CELL_ROWS's eleven ranges (its data row in registers or re-read, whole cells
 * or slabs of one, broadcast data of 1, 3, 6, 9 and 10 values per cell). */
static tc_err run_checks(tc_device *dev, tally *t) {
  typedef struct {
    tc_kernel kernel;
    int64_t C, L, R, P, D1, D2;
  } shape_case;
  const shape_case cases[] = {
      {TC_FIELD_FIELD_SCALAR, 5, 8, 8, 8, 1, 1},       {TC_FIELD_FIELD_SCALAR, 7, 9, 13, 17, 1, 1},
      {TC_FIELD_FIELD_SCALAR, 3, 27, 19, 27, 1, 1},    {TC_FIELD_FIELD_SCALAR, 2, 65, 41, 33, 1, 1},
      {TC_FIELD_FIELD_SCALAR, 2, 3, 5, 4100, 1, 1},    {TC_FIELD_FIELD_SCALAR, 3, 1, 1, 1, 1, 1},
      {TC_FIELD_FIELD_VECTOR, 4, 17, 15, 9, 3, 1},     {TC_FIELD_FIELD_VECTOR, 2, 130, 7, 5, 2, 1},
      {TC_FIELD_FIELD_TENSOR, 3, 11, 12, 7, 3, 3},     {TC_FIELD_FIELD_TENSOR, 2, 5, 6, 130, 3, 4},
      {TC_FIELD_FIELD_SCALAR, 1, 33, 70, 10, 1, 1},    {TC_FIELD_FIELD_TENSOR, 3, 130, 129, 5, 3, 3},
      {TC_FIELD_FIELD_VECTOR, 2, 20, 21, 700, 3, 1},   {TC_FIELD_FIELD_SCALAR, 3, 9, 10, 1, 1, 1},
      {TC_FIELD_FIELD_SCALAR, 3, 130, 129, 128, 1, 1}, {TC_FIELD_FIELD_VECTOR, 2, 125, 66, 300, 3, 1},
      {TC_FIELD_FIELD_TENSOR, 2, 40, 97, 14, 3, 3},    {TC_FIELD_FIELD_SCALAR, 3, 64, 64, 125, 1, 1},
      {TC_FIELD_FIELD_VECTOR, 5, 45, 70, 43, 3, 1},    {TC_FIELD_FIELD_SCALAR, 301, 40, 33, 201, 1, 1},
      // The first slab shape again, after two that launched the same kernel
      // with less shared memory: its remembered launch size must still fit.
      {TC_FIELD_FIELD_SCALAR, 2, 64, 64, 125, 1, 1},
      {TC_FIELD_FIELD_VECTOR, 3, 64, 64, 125, 3, 1},   {TC_FIELD_FIELD_TENSOR, 4, 50, 37, 41, 3, 3},
      {TC_FIELD_FIELD_VECTOR, 150, 33, 64, 101, 3, 1}, {TC_FIELD_FIELD_TENSOR, 3, 89, 74, 28, 3, 3},
      // TMA tiles of 12 warps over several ragged tiles a cell: 96 x 64
      // (3 row tiles, 50 of 64 columns) and 96 x 96 (3 column tiles).
      {TC_FIELD_FIELD_SCALAR, 2, 260, 50, 130, 1, 1}, {TC_FIELD_FIELD_SCALAR, 2, 95, 270, 150, 1, 1},
      // Whole cells whose tiles share k steps (32 x 32 over 4 warps, 16 x 16
      // over 2 and over 8), 16 x 8 tiles over 10 x 20 cells (16 x 16 ones:
      // 11 x 12 and 9 x 10 above), and many groups of whole cells handed out
      // by the task counter.
      {TC_FIELD_FIELD_VECTOR, 3, 25, 26, 45, 3, 1},   {TC_FIELD_FIELD_TENSOR, 5, 28, 27, 27, 3, 3},
      {TC_FIELD_FIELD_SCALAR, 3, 16, 15, 300, 1, 1},
      {TC_FIELD_FIELD_TENSOR, 3, 10, 20, 7, 3, 3},    {TC_FIELD_FIELD_SCALAR, 2001, 27, 19, 27, 1, 1},
      // Layout left's tensor-core tiles: 16 x 16 and 32 x 32 tiles of 8
      // cells, and 64 x 64 tiles of 4 (K >= 64 where they pad no more than
      // 32 x 32 ones), ragged last groups, several row and column tiles a
      // cell (ragged ones past 64 rows too), short sums (K < 64 keeps 32 x
      // 32 tiles where 64 x 64 would pad no more) and long ones.
      {TC_FIELD_FIELD_SCALAR, 7, 33, 40, 20, 1, 1},   {TC_FIELD_FIELD_TENSOR, 13, 17, 40, 5, 3, 3},
      {TC_FIELD_FIELD_TENSOR, 9, 70, 130, 19, 3, 3},  {TC_FIELD_FIELD_SCALAR, 11, 65, 64, 300, 1, 1},
      {TC_FIELD_FIELD_VECTOR, 7, 60, 100, 30, 3, 1},  {TC_FIELD_FIELD_SCALAR, 6, 128, 97, 64, 1, 1},
      // Float layout left's lane tile: groups of 32 cells copied in 16-byte
      // (C a multiple of 4) and 8-byte (C even) pieces, ragged last groups.
      {TC_FIELD_FIELD_TENSOR, 68, 20, 24, 9, 3, 3},   {TC_FIELD_FIELD_SCALAR, 66, 33, 18, 40, 1, 1},
      {TC_DATA_FIELD_SCALAR, 33, 7, 1, 5, 1, 1},       {TC_DATA_FIELD_SCALAR, 9, 13, 1, 100, 1, 1},
      {TC_DATA_FIELD_VECTOR, 21, 8, 1, 3, 3, 1},       {TC_DATA_FIELD_VECTOR, 5, 5, 1, 40, 3, 1},
      {TC_DATA_FIELD_TENSOR, 17, 6, 1, 2, 2, 3},       {TC_DATA_FIELD_TENSOR, 3, 9, 1, 27, 3, 3},
      {TC_DATA_FIELD_SCALAR, 4, 11, 1, 23, 1, 1},      {TC_DATA_FIELD_VECTOR, 3, 10, 1, 10, 3, 1},
      {TC_DATA_FIELD_VECTOR, 5, 6, 1, 21, 3, 1},       {TC_DATA_FIELD_TENSOR, 5, 4, 1, 10, 3, 3},
      {TC_DATA_FIELD_SCALAR, 3, 29, 1, 150, 1, 1},     {TC_DATA_FIELD_VECTOR, 2, 70, 1, 217, 3, 1},
      {TC_DATA_FIELD_TENSOR, 2, 5, 1, 61, 2, 5},       {TC_DATA_FIELD_VECTOR, 3, 7, 1, 110, 3, 1},
      {TC_DATA_DATA_SCALAR, 70, 1, 1, 1, 1, 1},        {TC_DATA_DATA_SCALAR, 45, 1, 1, 13, 1, 1},
      {TC_DATA_DATA_SCALAR, 6, 1, 1, 1000, 1, 1},      {TC_DATA_DATA_VECTOR, 50, 1, 1, 5, 3, 1},
      {TC_DATA_DATA_VECTOR, 7, 1, 1, 70, 3, 1},        {TC_DATA_DATA_TENSOR, 40, 1, 1, 1, 3, 3},
      {TC_DATA_DATA_TENSOR, 9, 1, 1, 33, 3, 3},
  };
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (size_t n = 0; n < sizeof cases / sizeof cases[0]; ++n)
    for (int layout = 0; layout < TC_LAYOUT_COUNT; ++layout)
      for (int precision = 0; precision < TC_PRECISION_COUNT; ++precision)
        for (int broadcast = 0; broadcast < (tc_kernel_is_data_field(cases[n].kernel) ? 2 : 1);
             ++broadcast) {
          const shape_case *k = &cases[n];
          const int64_t data_points = !tc_kernel_is_data_field(k->kernel) ? 0 : broadcast ? 1 : k->P;
          tc_contraction s = {.kernel = k->kernel, .num_cells = k->C, .num_left_fields = k->L,
                              .num_right_fields = k->R, .num_points = k->P,
                              .num_data_points = data_points, .dim1 = k->D1,
                              .dim2 = k->D2, .layout = (tc_layout)layout,
                              .precision = (tc_precision)precision};
          TC_CALL(check_shape(dev, s, seed + 7919 * n, t));
        }
  // Far more than 65535 contractions, so one-block-per-contraction variants
  // launch a capped grid and stride; and many cells for FLAT and TILING.
  const tc_contraction big[] = {
      {.kernel = TC_DATA_DATA_SCALAR, .num_cells = 300001, .num_points = 3, .layout = TC_LAYOUT_RIGHT},
      {.kernel = TC_DATA_DATA_VECTOR, .num_cells = 200003, .num_points = 2, .dim1 = 3,
       .layout = TC_LAYOUT_LEFT},
      {.kernel = TC_DATA_FIELD_SCALAR, .num_cells = 70001, .num_left_fields = 3,
       .num_points = 4, .num_data_points = 1, .layout = TC_LAYOUT_LEFT},
      {.kernel = TC_DATA_FIELD_VECTOR, .num_cells = 40001, .num_left_fields = 5,
       .num_points = 9, .num_data_points = 9, .dim1 = 3, .layout = TC_LAYOUT_RIGHT},
      {.kernel = TC_DATA_FIELD_TENSOR, .num_cells = 3001, .num_left_fields = 9, .num_points = 40,
       .num_data_points = 1, .dim1 = 3, .dim2 = 3, .layout = TC_LAYOUT_RIGHT},
      {.kernel = TC_FIELD_FIELD_SCALAR, .num_cells = 70001, .num_left_fields = 2,
       .num_right_fields = 3, .num_points = 2, .layout = TC_LAYOUT_RIGHT},
      {.kernel = TC_FIELD_FIELD_SCALAR, .num_cells = 20001, .num_left_fields = 12,
       .num_right_fields = 10, .num_points = 3, .layout = TC_LAYOUT_RIGHT},
  };
  for (size_t n = 0; n < sizeof big / sizeof big[0]; ++n)
    TC_CALL(check_shape(dev, big[n], seed + 104729 * n, t));
  return check_vendor(dev, t);
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "test_contract_cuda: %s\n", tc_error_message());
    return 1;
  }
  int code = 0;
  tc_device_options options = {.backend = TC_BACKEND_CUDA};
  tc_device *dev = NULL;
  tc_err err = tc_node_local_rank(MPI_COMM_WORLD, &options.local_rank, &options.local_size);
  if (err == TC_SUCCESS)
    err = tc_device_create(&options, &dev);
  if (err == TC_ERR_NO_DEVICE) {
    // The message must say what was asked for and why it cannot be had.
    const char *message = tc_error_message();
    const bool clear = strstr(message, "backend cuda asked for") != NULL &&
                       (strstr(message, "no CUDA GPU") != NULL ||
                        strstr(message, "NVIDIA driver is older") != NULL ||
                        strstr(message, "has no GPU of its own") != NULL);
    printf("%s: %s\n", clear ? "SKIP (no usable GPU)" : "FAIL (unclear message)", message);
    code = clear ? SKIP_CODE : 1;
  } else if (err != TC_SUCCESS) {
    printf("FAIL: %s (%s)\n", tc_error_message(), tc_error_origin());
    code = 1;
  } else {
    printf("device: %s\n", tc_device_description(dev));
    tally t = {0, 0};
    err = run_checks(dev, &t);
    if (err != TC_SUCCESS) {
      printf("FAIL: %s (%s)\n", tc_error_message(), tc_error_origin());
      code = 1;
    } else {
      printf("%d of %d CUDA runs matched the reference\n", t.checked - t.failed, t.checked);
      code = t.failed == 0 && t.checked > 0 ? 0 : 1;
    }
  }
  tc_device_destroy(&dev);
  if (tc_parallel_finalize() != TC_SUCCESS && code == 0)
    code = 1;
  return code;
}
