/* contract_openmp: the OpenMP backend. Every kernel is seen through one
 * "collapsed" view, out[c,i,j] = sum_k A[c,i,k] * B[c,j,k] with k = (p,d)
 * (d the flattened tensor index), described by element strides; this file
 * builds the view, owns the per-thread scratch, chooses the variant and
 * dispatches to the double and float instances of contract_openmp_kernels.h
 * (and to libxsmm for VENDOR, contract_openmp_vendor.h):
 *   FLAT:    threads over cells, plain per-cell loops over the view;
 *   BLOCKED: FieldField as packed per-cell GEMMs with a register-blocked
 *            micro-kernel (in the left layout over blocks of many cells,
 *            read in long runs), the next step's inputs prefetched while a
 *            step computes and the output written with streaming stores;
 *            in layout right in double on AVX-512, up to a length, the
 *            unpacked dot-product kernel of contract_openmp_dot.h instead;
 *            DataField and DataData as one-pass streams. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "contract_openmp_vendor.h"
#include "tc_contract_backend.h"
#include "tc_omp.h"

#ifdef __AVX512F__
#include <immintrin.h>
#endif

/* The collapsed view of one contraction. A holds the rows operand (left for
 * FieldField and DataData, the fields for DataField), B the columns operand
 * (right for FieldField and DataData, the data for DataField, with a point
 * stride of 0 when there is one data value per cell). Strides in elements. */
typedef struct {
  int64_t cells, rows, cols, points, dims; /* C, I, J, P, D = D1*D2 */
  int64_t a_cell, a_row, a_point, a_dim;
  int64_t b_cell, b_col, b_point, b_dim;
  int64_t out_cell, out_row, out_col;
  tc_layout layout;
  bool sum_into;
} omp_view;

/* Strides of an array with logical shape (C, N, P', D) in the layout;
 * shared_point: P' = 1 and the point index is ignored (stride 0). */
static void operand_strides(tc_layout layout, int64_t cells, int64_t n, int64_t points,
                            int64_t dims, bool shared_point, int64_t strides[4]) {
  const int64_t stored_points = shared_point ? 1 : points;
  if (layout == TC_LAYOUT_RIGHT) {
    strides[0] = n * stored_points * dims;
    strides[1] = stored_points * dims;
    strides[2] = dims;
    strides[3] = 1;
  } else {
    strides[0] = 1;
    strides[1] = cells;
    strides[2] = cells * n;
    strides[3] = cells * n * stored_points;
  }
  if (shared_point)
    strides[2] = 0;
}

static omp_view make_view(const tc_contraction *shape) {
  omp_view v = {0};
  const bool field_field = tc_kernel_is_field_field(shape->kernel);
  const bool data_field = tc_kernel_is_data_field(shape->kernel);
  v.cells = shape->num_cells;
  v.rows = tc_kernel_is_data_data(shape->kernel) ? 1 : shape->num_left_fields;
  v.cols = field_field ? shape->num_right_fields : 1;
  v.points = shape->num_points;
  v.dims = shape->dim1 * shape->dim2;
  v.layout = shape->layout;
  v.sum_into = shape->sum_into;
  int64_t a[4], b[4];
  operand_strides(v.layout, v.cells, v.rows, v.points, v.dims, false, a);
  operand_strides(v.layout, v.cells, v.cols, v.points, v.dims,
                  data_field && shape->num_data_points == 1, b);
  v.a_cell = a[0], v.a_row = a[1], v.a_point = a[2], v.a_dim = a[3];
  v.b_cell = b[0], v.b_col = b[1], v.b_point = b[2], v.b_dim = b[3];
  if (v.layout == TC_LAYOUT_RIGHT) {
    v.out_cell = v.rows * v.cols, v.out_row = v.cols, v.out_col = 1;
  } else {
    v.out_cell = 1, v.out_row = v.cells, v.out_col = v.cells * v.rows;
  }
  return v;
}

/* Stride of the collapsed index k of an operand whose (p,d) pairs are
 * contiguous in k: k = p*D + d in the right layout, k = p + P*d in the left
 * (the same enumeration for both operands of one layout). */
static int64_t collapsed_stride(const omp_view *v, int64_t point_stride, int64_t dim_stride) {
  return v->layout == TC_LAYOUT_RIGHT ? dim_stride : point_stride;
}

/* Per-thread scratch: threads slices of slice_bytes (rounded up to whole
 * cache lines), 64-byte aligned. */
typedef struct {
  char *base;
  size_t slice_bytes;
} omp_scratch;

static tc_err scratch_create(int threads, size_t slice_bytes, omp_scratch *scratch) {
  scratch->slice_bytes = (slice_bytes + 63) / 64 * 64 + 64;
  const size_t total = scratch->slice_bytes * (size_t)threads;
  scratch->base = aligned_alloc(64, total);
  TC_CHECK(scratch->base != NULL, TC_ERR_MEMORY,
           "out of memory allocating %zu bytes of OpenMP contraction scratch", total);
  return TC_SUCCESS;
}

static void *scratch_slice(const omp_scratch *scratch, int thread) {
  return scratch->base + scratch->slice_bytes * (size_t)thread;
}

static void scratch_destroy(omp_scratch *scratch) {
  free(scratch->base);
  scratch->base = NULL;
}

static int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

static int64_t ceil_div(int64_t value, int64_t divisor) { return (value + divisor - 1) / divisor; }

static int64_t min_int64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max_int64(int64_t a, int64_t b) { return a > b ? a : b; }

enum { TC_OMP_LINE_BYTES = 64 };

/* Copies `bytes` from src to dst with non-temporal (streaming) stores for
 * the whole 64-byte lines of dst, plain stores for a partial first and last
 * line: output that is written once and not re-read then costs no read for
 * ownership and does not evict the inputs from cache. The streaming stores
 * are weakly ordered: the writer calls store_stream_fence() before others
 * may read them. Plain copy without AVX-512. */
static inline void store_stream(void *restrict dst, const void *restrict src, int64_t bytes) {
  char *d = dst;
  const char *s = src;
#ifdef __AVX512F__
  const int64_t head = min_int64(bytes, (int64_t)(-(uintptr_t)d & (TC_OMP_LINE_BYTES - 1)));
  memcpy(d, s, (size_t)head);
  d += head, s += head, bytes -= head;
  for (; bytes >= TC_OMP_LINE_BYTES;
       bytes -= TC_OMP_LINE_BYTES, d += TC_OMP_LINE_BYTES, s += TC_OMP_LINE_BYTES)
    _mm512_stream_si512((void *)d, _mm512_loadu_si512(s));
#endif
  memcpy(d, s, (size_t)bytes);
}

static inline void store_stream_fence(void) {
#ifdef __AVX512F__
  _mm_sfence();
#endif
}

/* Software prefetch of scattered runs (the left-layout FieldField inputs and
 * output): up to three sections, each a grid of outer x inner runs of
 * run_bytes at byte strides, walked a few runs per call so that the
 * prefetches spread over the computation they overlap. Every cache line of
 * a run is prefetched (into L2: locality hint 2). */
typedef struct {
  const char *base[3];
  int64_t inner[3], inner_stride[3], outer[3], outer_stride[3], run_bytes[3];
  bool write[3];
  int sections, section;
  int64_t i, o, left;
} omp_prefetch;

static void prefetch_reset(omp_prefetch *pf) {
  pf->sections = pf->section = 0;
  pf->i = pf->o = pf->left = 0;
}

/* Appends a section; empty ones are skipped. */
static void prefetch_add(omp_prefetch *pf, const void *base, int64_t run_bytes, int64_t inner,
                         int64_t inner_stride, int64_t outer, int64_t outer_stride, bool write) {
  if (inner <= 0 || outer <= 0 || run_bytes <= 0)
    return;
  const int s = pf->sections++;
  pf->base[s] = base;
  pf->run_bytes[s] = run_bytes;
  pf->inner[s] = inner, pf->inner_stride[s] = inner_stride;
  pf->outer[s] = outer, pf->outer_stride[s] = outer_stride;
  pf->write[s] = write;
  pf->left += inner * outer;
}

/* Issues the prefetches of up to `runs` more runs. */
static inline void prefetch_some(omp_prefetch *pf, int64_t runs) {
  for (; runs > 0 && pf->left > 0; --runs, --pf->left) {
    const int s = pf->section;
    const char *p = pf->base[s] + pf->i * pf->inner_stride[s] + pf->o * pf->outer_stride[s];
    const char *last = p + pf->run_bytes[s] - 1;
    if (pf->write[s]) {
      for (; p < last; p += TC_OMP_LINE_BYTES)
        __builtin_prefetch(p, 1, 2);
      __builtin_prefetch(last, 1, 2);
    } else {
      for (; p < last; p += TC_OMP_LINE_BYTES)
        __builtin_prefetch(p, 0, 2);
      __builtin_prefetch(last, 0, 2);
    }
    if (++pf->i == pf->inner[s]) {
      pf->i = 0;
      if (++pf->o == pf->outer[s])
        pf->o = 0, ++pf->section;
    }
  }
}

/* Tuning constants shared by both precisions (bytes), for Zen4-like cores
 * (32 KiB L1, 1 MiB L2 per core), chosen by measurement on a 2-core Zen4. */
enum {
  /* The packed panels of one GEMM step stay in L2 beside the tile. */
  TC_OMP_PACK_BYTES = 192 * 1024,
  /* The packed B panel walked by one micro-kernel call stays in L1. */
  TC_OMP_PANEL_BYTES = 32 * 1024,
  /* Left-layout FieldField: a block of cells takes as many cells as keep
   * its tiles (L x R results per cell) within this size (L2 and L3), so
   * that each (i,k) of the inputs is read as a run of several cache lines:
   * on the 2-core VM of docs/measurements every new 4 KiB page that a short
   * run touches costs about as much as the run itself... */
  TC_OMP_LEFT_TILE_BYTES = 2048 * 1024,
  /* ... and so do the packed panels of one k step of that block. */
  TC_OMP_LEFT_PACK_BYTES = 2048 * 1024,
  /* Right-layout FieldField: cells whose packed operands (A and B) take
   * fewer bytes than this are left to the hardware prefetcher and written
   * with plain stores (p8 Scalar, 1 KiB a cell, was slower with both). */
  TC_OMP_RIGHT_ASSIST_BYTES = 2048,
  /* At most 64 groups of VL cells: a block's runs are then 4 KiB. */
  TC_OMP_LEFT_MAX_GROUPS = 64,
  /* Output tile of a left-layout stream step: stays in L2 across the
   * collapsed index while the inputs stream past in long runs. */
  TC_OMP_STREAM_TILE_BYTES = 64 * 1024,
  /* ... and the output of one block of cells over several rows, which
   * share B's runs, stays in L2 too. */
  TC_OMP_STREAM_REUSE_BYTES = 512 * 1024,
};

#define TC_REAL double
#define TC_SUFFIX double
#include "contract_openmp_kernels.h"
#undef TC_REAL
#undef TC_SUFFIX

#define TC_REAL float
#define TC_SUFFIX float
#include "contract_openmp_kernels.h"
#undef TC_REAL
#undef TC_SUFFIX

#include "contract_openmp_dot.h"

static bool openmp_supports(const tc_contraction *shape, tc_variant variant) {
  if (variant == TC_VARIANT_VENDOR)
    return tc_openmp_vendor_supports(shape);
  return variant == TC_VARIANT_FLAT || variant == TC_VARIANT_BLOCKED;
}

/* AUTO: BLOCKED, but for FieldField where the vendor variant (libxsmm) is
 * built. In layout right libxsmm per cell was as fast or faster on the
 * 2-core development machine but for cells of at least 96 x 96 with long
 * sums, K >= 512 in double and K >= 1024 in float (tcmini-bench --sweep 60
 * --memory 64 and the presets, both precisions, the rows of a case timed in
 * turn); in layout left, its blocks of gathered cells took a median of 0.71
 * of BLOCKED's time in double and 0.91 in float over 40 random shapes, but
 * in float lost on every cell whose outputs are at least 45% of its inputs'
 * words (L R >= 0.45 (L + R) K; 16 of 16 such shapes of two seeds), which
 * run BLOCKED (docs/tuning.md). */
enum { TC_OMP_BLOCKED_MIN_SIDE = 96, TC_OMP_BLOCKED_MIN_K_DOUBLE = 512,
       TC_OMP_BLOCKED_MIN_K_FLOAT = 1024, TC_OMP_LEFT_BLOCKED_OUTPUT_PERCENT = 45 };

static tc_variant openmp_choose(const tc_contraction *shape) {
  if (tc_kernel_is_field_field(shape->kernel) && tc_openmp_vendor_supports(shape)) {
    if (shape->layout == TC_LAYOUT_LEFT)
      return shape->precision == TC_FLOAT &&
                     100 * shape->num_left_fields * shape->num_right_fields >=
                         TC_OMP_LEFT_BLOCKED_OUTPUT_PERCENT *
                             (shape->num_left_fields + shape->num_right_fields) *
                             tc_contraction_length(shape)
                 ? TC_VARIANT_BLOCKED
                 : TC_VARIANT_VENDOR;
    const int64_t side = min_int64(shape->num_left_fields, shape->num_right_fields);
    const int64_t long_k = shape->precision == TC_DOUBLE ? TC_OMP_BLOCKED_MIN_K_DOUBLE
                                                         : TC_OMP_BLOCKED_MIN_K_FLOAT;
    if (side < TC_OMP_BLOCKED_MIN_SIDE || tc_contraction_length(shape) < long_k)
      return TC_VARIANT_VENDOR;
  }
  return TC_VARIANT_BLOCKED;
}

static tc_err openmp_run(const tc_contraction *shape, tc_variant variant, const void *left,
                         const void *right, void *output, void *stream) {
  (void)stream;
  const omp_view v = make_view(shape);
  /* A is the fields array (right) for DataField, left otherwise. */
  const bool swap = tc_kernel_is_data_field(shape->kernel);
  const void *a = swap ? right : left;
  const void *b = swap ? left : right;
  const bool gemm = tc_kernel_is_field_field(shape->kernel);
  switch (variant) {
  case TC_VARIANT_FLAT:
    if (shape->precision == TC_FLOAT)
      omp_flat_float(&v, a, b, output);
    else
      omp_flat_double(&v, a, b, output);
    return TC_SUCCESS;
  case TC_VARIANT_BLOCKED:
    if (shape->precision == TC_FLOAT)
      return gemm ? omp_gemm_float(&v, a, b, output) : omp_stream_float(&v, a, b, output);
#ifdef __AVX512F__
    if (gemm && omp_dot_fits(&v))
      return omp_dot_double(&v, a, b, output);
#endif
    return gemm ? omp_gemm_double(&v, a, b, output) : omp_stream_double(&v, a, b, output);
  case TC_VARIANT_VENDOR:
    return tc_openmp_vendor_run(shape, left, right, output);
  default:
    TC_FAIL(TC_ERR_INTERNAL, "OpenMP backend given variant %s", tc_variant_name(variant));
  }
}

/* One run on the wall clock, for AUTO's first-call probe (tc_contract.c):
 * where the rule picks BLOCKED, the first AUTO call of a shape times it
 * against the vendor variant and keeps the faster, as on the GPU. */
static tc_err openmp_time_run(const tc_contraction *shape, tc_variant variant, const void *left,
                              const void *right, void *output, void *stream, double *seconds) {
  const double start = omp_get_wtime();
  const tc_err err = openmp_run(shape, variant, left, right, output, stream);
  *seconds = omp_get_wtime() - start;
  return err;
}

const tc_contract_backend tc_contract_backend_openmp = {
    .kind = TC_BACKEND_OPENMP,
    .supports = openmp_supports,
    .choose = openmp_choose,
    .run = openmp_run,
    .vendor_library = tc_openmp_vendor_library,
    .time_run = openmp_time_run,
    .release = NULL,
};
