/* contract_openmp_vendor: the OpenMP backend's vendor variant with libxsmm
 * (contract_openmp_vendor.h): one JIT-compiled small GEMM per call, run on
 * every cell under OpenMP (threads over cells, or over blocks of cells in
 * layout left, static schedule).
 *
 * In layout right a cell's left (L x K) and right (R x K) are row-major with
 * K = P*D1*D2 contiguous, and its output (L x R) row-major. libxsmm is
 * column-major and its JIT takes no transposed A, so the product is written
 * out(c)^T = right(c) * left(c)^T as C (R x L, ldc R) = A (R x K, lda R) *
 * B (K x L, ldb K): B is left(c) as it lies, A is right(c) transposed into a
 * per-thread buffer first (libxsmm_otrans; a plain loop for matrices of at
 * most 1024 words, where otrans's per-call cost is larger than the copy).
 *
 * In layout left the cell index is fastest: entry (i, k) of every cell is
 * one run of C words, and a cell's left is (L x K) column-major with its
 * words C apart. A thread takes blocks of consecutive cells and gathers the
 * block's runs into per-cell matrices (libxsmm_otrans of the block's
 * (cells x L K) slice), so that left(c) is (L x K, ld L) and right(c)
 * (R x K, ld R), both column-major as they lie; out(c) = left(c) *
 * right(c)^T is then C (L x R, ldc L) = A (L x K) * B^T with B (R x K), a
 * transposed B, which the JIT takes, and the block's outputs are scattered
 * back the same way (gathered first and accumulated into with sum_into).
 * Arithmetic is the working precision's (FMA, no reduced-precision modes). */
#include <libxsmm.h>
#include <stdlib.h>

#include "contract_openmp_vendor.h"
#include "tc_omp.h"

const char *tc_openmp_vendor_library(void) { return "libxsmm " LIBXSMM_VERSION; }

/* Matrices of at most this many words are transposed by a plain loop. */
enum { SMALL_TRANSPOSE_WORDS = 1024 };
/* Layout left: a block's per-cell matrices (left, right and output) take at
 * most about this many bytes (they stay in L2 between the gather and the
 * products), and a block at least a cache line of cells. */
enum { LEFT_BLOCK_BYTES = 512 * 1024, LEFT_MAX_BLOCK_CELLS = 64, LEFT_MIN_CHUNK = 16 };

bool tc_openmp_vendor_supports(const tc_contraction *shape) {
  const int64_t int_max = 2147483647;
  const int64_t L = shape->num_left_fields, R = shape->num_right_fields;
  const int64_t K = tc_contraction_length(shape);
  if (!tc_kernel_is_field_field(shape->kernel) || L > int_max || R > int_max || K > int_max)
    return false;
  if (shape->layout == TC_LAYOUT_RIGHT)
    return R * K <= int_max;
  /* layout left: the block's slices are indexed by the gather in 32 bits */
  return shape->layout == TC_LAYOUT_LEFT && shape->num_cells <= int_max && L * K <= int_max &&
         R * K <= int_max && L * R <= int_max;
}

/* a (R x K, column-major) = right_c (R x K, row-major) transposed. */
static void transpose_double(int R, int K, const double *restrict right_c, double *restrict a) {
  if ((int64_t)R * K > SMALL_TRANSPOSE_WORDS) {
    libxsmm_otrans(a, right_c, sizeof(double), K, R, K, R);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < K; ++k)
      a[r + (size_t)R * k] = right_c[(size_t)r * K + k];
}

static void transpose_float(int R, int K, const float *restrict right_c, float *restrict a) {
  if ((int64_t)R * K > SMALL_TRANSPOSE_WORDS) {
    libxsmm_otrans(a, right_c, sizeof(float), K, R, K, R);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < K; ++k)
      a[r + (size_t)R * k] = right_c[(size_t)r * K + k];
}

/* What the threads of tc_openmp_vendor_run share. */
typedef struct {
  int R, K;
  size_t left_words, out_words, words, element;
  int64_t cells;
  libxsmm_dmmfunction gemm_double; /* NULL in float */
  libxsmm_smmfunction gemm_float;  /* NULL in double */
  const void *left, *right;
  void *output;
  char *buffers; /* per thread, words * element bytes: the transposed right */
} vendor_team;

/* One thread's cells of tc_openmp_vendor_run. */
static void vendor_share(void *context, int thread, int threads) {
  const vendor_team *t = context;
  void *a = t->buffers + t->words * t->element * (size_t)thread;
  int64_t begin, end;
  tc_omp_share(t->cells, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c) {
    if (t->gemm_float) {
      transpose_float(t->R, t->K, (const float *)t->right + (size_t)c * t->words, a);
      t->gemm_float(a, (const float *)t->left + (size_t)c * t->left_words,
                    (float *)t->output + (size_t)c * t->out_words);
    } else {
      transpose_double(t->R, t->K, (const double *)t->right + (size_t)c * t->words, a);
      t->gemm_double(a, (const double *)t->left + (size_t)c * t->left_words,
                     (double *)t->output + (size_t)c * t->out_words);
    }
  }
}

static tc_err vendor_run_right(const tc_contraction *s, const void *left, const void *right,
                               void *output) {
  const bool single = s->precision == TC_FLOAT;
  const libxsmm_blasint L = (libxsmm_blasint)s->num_left_fields;
  const libxsmm_blasint R = (libxsmm_blasint)s->num_right_fields;
  const libxsmm_blasint K = (libxsmm_blasint)tc_contraction_length(s);
  const int flags = s->sum_into ? LIBXSMM_GEMM_FLAG_NONE : LIBXSMM_GEMM_FLAG_BETA_0;
  const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  const double alpha = 1, beta = s->sum_into ? 1 : 0;
  const float alpha_float = 1, beta_float = s->sum_into ? 1 : 0;
  libxsmm_dmmfunction gemm_double = NULL;
  libxsmm_smmfunction gemm_float = NULL;
  if (single)
    gemm_float = libxsmm_smmdispatch(R, L, K, &R, &K, &R, &alpha_float, &beta_float, &flags,
                                     &prefetch);
  else
    gemm_double = libxsmm_dmmdispatch(R, L, K, &R, &K, &R, &alpha, &beta, &flags, &prefetch);
  TC_CHECK(gemm_double != NULL || gemm_float != NULL, TC_ERR_UNSUPPORTED,
           "libxsmm has no kernel for a %d x %d x %d %s GEMM on this CPU (%s)", (int)R, (int)L,
           (int)K, tc_precision_name(s->precision), libxsmm_get_target_arch());
  const size_t element = (size_t)tc_precision_size(s->precision);
  const size_t words = (size_t)R * (size_t)K;
  const int threads = tc_omp_threads();
  char *buffers = malloc(words * element * (size_t)threads);
  TC_CHECK(buffers != NULL, TC_ERR_MEMORY,
           "out of memory allocating %zu bytes for the vendor variant's transposes",
           words * element * (size_t)threads);
  vendor_team team = {.R = R, .K = K, .left_words = (size_t)L * (size_t)K,
                      .out_words = (size_t)L * (size_t)R, .words = words, .element = element,
                      .cells = s->num_cells, .gemm_double = gemm_double,
                      .gemm_float = gemm_float, .left = left, .right = right, .output = output,
                      .buffers = buffers};
  tc_omp_team(threads, vendor_share, &team);
  free(buffers);
  return TC_SUCCESS;
}

/* Layout left's products: one JIT kernel per (sum length, accumulate or
 * not) that a block's chunks of k need, in the working precision. */
typedef struct {
  libxsmm_dmmfunction gemm_double[2][2]; /* [last chunk][accumulate]; NULL in float */
  libxsmm_smmfunction gemm_float[2][2];  /* NULL in double */
} left_kernels;

/* What the threads of vendor_run_left share. */
typedef struct {
  libxsmm_blasint L, R, K, chunk; /* chunk: words of k gathered at a time */
  int64_t cells, block;
  size_t element;
  bool sum_into;
  left_kernels kernels;
  const char *left, *right;
  char *output;
  char *buffers; /* per thread: a block's left and right chunks and outputs */
  size_t per_thread;
} left_team;

/* One thread's blocks of vendor_run_left: per block, the outputs gathered
 * (with sum_into), then per chunk of k the left and right gathered and each
 * cell's product added, then the outputs scattered. */
static void left_share(void *context, int thread, int threads) {
  const left_team *t = context;
  const size_t e = t->element;
  const libxsmm_blasint C = (libxsmm_blasint)t->cells, L = t->L, R = t->R, K = t->K;
  const libxsmm_blasint LR = L * R;
  char *a = t->buffers + (size_t)thread * t->per_thread;
  char *b = a + (size_t)t->block * (size_t)L * (size_t)t->chunk * e;
  char *o = b + (size_t)t->block * (size_t)R * (size_t)t->chunk * e;
  const int64_t blocks = (t->cells + t->block - 1) / t->block;
  int64_t begin, end;
  tc_omp_share(blocks, thread, threads, &begin, &end);
  for (int64_t block = begin; block < end; ++block) {
    const int64_t c0 = block * t->block;
    const libxsmm_blasint n =
        (libxsmm_blasint)(t->cells - c0 < t->block ? t->cells - c0 : t->block);
    /* each array's block is an (n x words, ld C) slice, transposed into cell
     * w's words at w * words of the buffer */
    if (t->sum_into)
      libxsmm_otrans(o, t->output + (size_t)c0 * e, (unsigned)e, n, LR, C, LR);
    for (libxsmm_blasint k0 = 0; k0 < K; k0 += t->chunk) {
      const int last = k0 + t->chunk >= K, more = k0 > 0 || t->sum_into;
      const libxsmm_blasint length = last ? K - k0 : t->chunk;
      const libxsmm_blasint LK = L * length, RK = R * length;
      libxsmm_otrans(a, t->left + ((size_t)c0 + (size_t)C * (size_t)L * (size_t)k0) * e,
                     (unsigned)e, n, LK, C, LK);
      libxsmm_otrans(b, t->right + ((size_t)c0 + (size_t)C * (size_t)R * (size_t)k0) * e,
                     (unsigned)e, n, RK, C, RK);
      for (libxsmm_blasint w = 0; w < n; ++w) {
        if (t->kernels.gemm_float[last][more])
          t->kernels.gemm_float[last][more]((const float *)a + (size_t)w * LK,
                                            (const float *)b + (size_t)w * RK,
                                            (float *)o + (size_t)w * LR);
        else
          t->kernels.gemm_double[last][more]((const double *)a + (size_t)w * LK,
                                             (const double *)b + (size_t)w * RK,
                                             (double *)o + (size_t)w * LR);
      }
    }
    libxsmm_otrans(t->output + (size_t)c0 * e, o, (unsigned)e, LR, n, LR, C);
  }
}

/* The JIT kernel C (L x R, ldc L) (+)= A (L x length, lda L) * B^T, B
 * (R x length, ldb R), into the table; false where libxsmm has none. */
static bool left_dispatch(const tc_contraction *s, libxsmm_blasint length, int last,
                          int accumulate, left_kernels *kernels) {
  const libxsmm_blasint L = (libxsmm_blasint)s->num_left_fields;
  const libxsmm_blasint R = (libxsmm_blasint)s->num_right_fields;
  const int flags =
      LIBXSMM_GEMM_FLAG_TRANS_B | (accumulate ? LIBXSMM_GEMM_FLAG_NONE : LIBXSMM_GEMM_FLAG_BETA_0);
  const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  if (s->precision == TC_FLOAT) {
    const float alpha = 1, beta = accumulate ? 1 : 0;
    kernels->gemm_float[last][accumulate] =
        libxsmm_smmdispatch(L, R, length, &L, &R, &L, &alpha, &beta, &flags, &prefetch);
    return kernels->gemm_float[last][accumulate] != NULL;
  }
  const double alpha = 1, beta = accumulate ? 1 : 0;
  kernels->gemm_double[last][accumulate] =
      libxsmm_dmmdispatch(L, R, length, &L, &R, &L, &alpha, &beta, &flags, &prefetch);
  return kernels->gemm_double[last][accumulate] != NULL;
}

/* Layout left: per thread, blocks of consecutive cells gathered into
 * per-cell matrices a chunk of k at a time, multiplied, and scattered back
 * (see the header). A block holds a whole number of cache lines of cells,
 * as many as keep its matrices within LEFT_BLOCK_BYTES, at most
 * LEFT_MAX_BLOCK_CELLS; where one line of cells' whole sums would not fit,
 * k comes in chunks that do. */
static tc_err vendor_run_left(const tc_contraction *s, const void *left, const void *right,
                              void *output) {
  const libxsmm_blasint L = (libxsmm_blasint)s->num_left_fields;
  const libxsmm_blasint R = (libxsmm_blasint)s->num_right_fields;
  const libxsmm_blasint K = (libxsmm_blasint)tc_contraction_length(s);
  const size_t element = (size_t)tc_precision_size(s->precision);
  const int64_t line = 64 / (int64_t)element;
  const int64_t per_cell = ((int64_t)(L + R) * K + (int64_t)L * R) * (int64_t)element;
  int64_t block = LEFT_BLOCK_BYTES / per_cell / line * line;
  block = block < line ? line : block > LEFT_MAX_BLOCK_CELLS ? LEFT_MAX_BLOCK_CELLS : block;
  libxsmm_blasint chunk = K;
  if (block * per_cell > LEFT_BLOCK_BYTES) {
    const int64_t room = LEFT_BLOCK_BYTES / block / (int64_t)element - (int64_t)L * R;
    const int64_t fit = room / (L + R) < LEFT_MIN_CHUNK ? LEFT_MIN_CHUNK : room / (L + R);
    chunk = (libxsmm_blasint)(fit < K ? fit : K);
  }
  left_kernels kernels = {0};
  const libxsmm_blasint last = K - (K - 1) / chunk * chunk;
  bool found = true;
  for (int accumulate = 0; accumulate <= 1; ++accumulate) {
    found = found && left_dispatch(s, last, 1, accumulate, &kernels);
    if (chunk < K)
      found = found && left_dispatch(s, chunk, 0, accumulate, &kernels);
  }
  TC_CHECK(found, TC_ERR_UNSUPPORTED,
           "libxsmm has no kernel for a %d x %d x %d %s GEMM with a transposed B on this CPU "
           "(%s)", (int)L, (int)R, (int)chunk, tc_precision_name(s->precision),
           libxsmm_get_target_arch());
  const int threads = tc_omp_threads();
  const size_t per_thread =
      (size_t)block * (((size_t)L + (size_t)R) * (size_t)chunk + (size_t)L * R) * element;
  char *buffers = malloc(per_thread * (size_t)threads);
  TC_CHECK(buffers != NULL, TC_ERR_MEMORY,
           "out of memory allocating %zu bytes for the vendor variant's per-cell matrices",
           per_thread * (size_t)threads);
  left_team team = {.L = L, .R = R, .K = K, .chunk = chunk, .cells = s->num_cells,
                    .block = block, .element = element, .sum_into = s->sum_into,
                    .kernels = kernels, .left = left, .right = right, .output = output,
                    .buffers = buffers, .per_thread = per_thread};
  tc_omp_team(threads, left_share, &team);
  free(buffers);
  return TC_SUCCESS;
}

tc_err tc_openmp_vendor_run(const tc_contraction *s, const void *left, const void *right,
                            void *output) {
  TC_CHECK(tc_openmp_vendor_supports(s), TC_ERR_UNSUPPORTED,
           "libxsmm runs FieldField kernels with sizes below 2^31, not %s (%s layout)",
           tc_kernel_name(s->kernel), tc_layout_name(s->layout));
  if (s->layout == TC_LAYOUT_LEFT)
    return vendor_run_left(s, left, right, output);
  return vendor_run_right(s, left, right, output);
}
