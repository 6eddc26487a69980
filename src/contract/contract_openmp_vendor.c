/* contract_openmp_vendor: the OpenMP backend's vendor variant with libxsmm
 * (contract_openmp_vendor.h): one JIT-compiled small GEMM per call, run on
 * every cell under OpenMP (threads over cells, static schedule).
 *
 * In layout right a cell's left (L x K) and right (R x K) are row-major with
 * K = P*D1*D2 contiguous, and its output (L x R) row-major. libxsmm is
 * column-major and its JIT takes no transposed A, so the product is written
 * out(c)^T = right(c) * left(c)^T as C (R x L, ldc R) = A (R x K, lda R) *
 * B (K x L, ldb K): B is left(c) as it lies, A is right(c) transposed into a
 * per-thread buffer first (libxsmm_otrans; a plain loop for matrices of at
 * most 1024 words, where otrans's per-call cost is larger than the copy).
 * Arithmetic is the working precision's (FMA, no reduced-precision modes). */
#include <libxsmm.h>
#include <stdlib.h>

#include "contract_openmp_vendor.h"
#include "tc_omp.h"

const char *tc_openmp_vendor_library(void) { return "libxsmm " LIBXSMM_VERSION; }

/* Matrices of at most this many words are transposed by a plain loop. */
enum { SMALL_TRANSPOSE_WORDS = 1024 };

bool tc_openmp_vendor_supports(const tc_contraction *shape) {
  const int64_t int_max = 2147483647;
  return tc_kernel_is_field_field(shape->kernel) && shape->layout == TC_LAYOUT_RIGHT &&
         shape->num_left_fields <= int_max && shape->num_right_fields <= int_max &&
         tc_contraction_length(shape) <= int_max &&
         shape->num_right_fields * tc_contraction_length(shape) <= int_max;
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

tc_err tc_openmp_vendor_run(const tc_contraction *s, const void *left, const void *right,
                            void *output) {
  TC_CHECK(tc_openmp_vendor_supports(s), TC_ERR_UNSUPPORTED,
           "libxsmm runs FieldField kernels in layout right with sizes below 2^31, not %s (%s "
           "layout)",
           tc_kernel_name(s->kernel), tc_layout_name(s->layout));
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
