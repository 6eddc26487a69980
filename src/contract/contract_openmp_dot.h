/* contract_openmp_dot: the OpenMP FieldField kernel for layout right in
 * double on AVX-512, included by contract_openmp.c (which defines omp_view,
 * omp_scratch and the scratch functions it uses). In layout right both operands hold
 * each row's collapsed index k contiguously, so out[c,i,j] = sum_k
 * A[c,i,k] * B[c,j,k] is read straight from the inputs, without packing:
 * per cell, blocks of MI rows of A by 4 rows of B keep MI x 4 vector
 * accumulators (8 values of k each) in registers while k runs in steps of
 * 8 (a masked step for the rest), the MI rows of A loaded once per step and
 * held in registers; the accumulators are then summed across their lanes
 * two rows at a time into one vector of 8 results. Packing the operands
 * (the blocked kernel) costs about as much as the products for the
 * loop's shapes (Q1 elasticity: 24 x 24 with k = 243), and unpacked rows
 * start anywhere in a cache line, so loads split lines; even so the
 * products run at about three quarters of the FMA peak on a Zen 5 core
 * with the inputs in cache. Each output is a sum of 8 partial sums (k mod
 * 8) added pairwise: not the order of the blocked kernel, so results differ
 * from it in the last bits. */
#ifdef __AVX512F__

enum {
  TC_DOT_LANES = 8, /* doubles per vector */
  TC_DOT_MJ = 4,    /* rows of B per block: one lane group of the sum */
  /* Longest k the kernel takes: on a Zen 5 core it beats the blocked
   * kernel up to k = 1125 (Q2 elasticity, 81 x 81), where a block's rows
   * already come from L2, and falls behind it at k = 1944 (p125 Tensor). */
  TC_DOT_MAX_LENGTH = 1152,
};

/* out rows r0, r0 + 1 (columns j0..j0+3, live of them) from 8 accumulators
 * acc[0..3] (row r0) and acc[4..7] (row r0 + 1): each summed across its
 * lanes, pairwise. */
static inline void dot_store_pair(const __m512d acc[8], double *restrict row0,
                                  double *restrict row1, __mmask8 live, bool sum_into) {
  const __m512d s01 = _mm512_add_pd(_mm512_unpacklo_pd(acc[0], acc[1]),
                                    _mm512_unpackhi_pd(acc[0], acc[1]));
  const __m512d s23 = _mm512_add_pd(_mm512_unpacklo_pd(acc[2], acc[3]),
                                    _mm512_unpackhi_pd(acc[2], acc[3]));
  const __m512d s45 = _mm512_add_pd(_mm512_unpacklo_pd(acc[4], acc[5]),
                                    _mm512_unpackhi_pd(acc[4], acc[5]));
  const __m512d s67 = _mm512_add_pd(_mm512_unpacklo_pd(acc[6], acc[7]),
                                    _mm512_unpackhi_pd(acc[6], acc[7]));
  const __m512d t0 = _mm512_add_pd(_mm512_shuffle_f64x2(s01, s23, 0x88),
                                   _mm512_shuffle_f64x2(s01, s23, 0xdd));
  const __m512d t1 = _mm512_add_pd(_mm512_shuffle_f64x2(s45, s67, 0x88),
                                   _mm512_shuffle_f64x2(s45, s67, 0xdd));
  /* lanes 0..3: row r0's four sums; lanes 4..7: row r0 + 1's */
  const __m512d u = _mm512_add_pd(_mm512_shuffle_f64x2(t0, t1, 0x88),
                                  _mm512_shuffle_f64x2(t0, t1, 0xdd));
  __m256d low = _mm512_castpd512_pd256(u), high = _mm512_extractf64x4_pd(u, 1);
  if (sum_into) {
    low = _mm256_add_pd(low, _mm256_maskz_loadu_pd(live, row0));
    if (row1)
      high = _mm256_add_pd(high, _mm256_maskz_loadu_pd(live, row1));
  }
  _mm256_mask_storeu_pd(row0, live, low);
  if (row1)
    _mm256_mask_storeu_pd(row1, live, high);
}

/* One block of MI rows of A (a[0..MI-1]) by 4 rows of B (b[0..3]) over k in
 * [0, length); rows past the operand's end point to a zero row. Stores rows
 * of out at out_rows[0..MI-1] (NULL: not stored), columns live. */
static inline __attribute__((always_inline)) void
dot_block(int mi, int64_t length, const double *const a[6], const double *const b[TC_DOT_MJ],
          double *const out_rows[6], __mmask8 live, bool sum_into) {
  __m512d acc[6][TC_DOT_MJ];
  for (int i = 0; i < mi; ++i)
    for (int j = 0; j < TC_DOT_MJ; ++j)
      acc[i][j] = _mm512_setzero_pd();
  int64_t k = 0;
  for (; k + TC_DOT_LANES <= length; k += TC_DOT_LANES) {
    __m512d av[6];
    for (int i = 0; i < mi; ++i) {
      av[i] = _mm512_loadu_pd(a[i] + k);
      __asm__("" : "+v"(av[i])); /* held in a register, not re-read per FMA */
    }
    for (int j = 0; j < TC_DOT_MJ; ++j) {
      const __m512d bv = _mm512_loadu_pd(b[j] + k);
      for (int i = 0; i < mi; ++i)
        acc[i][j] = _mm512_fmadd_pd(av[i], bv, acc[i][j]);
    }
  }
  if (k < length) {
    const __mmask8 tail = (__mmask8)((1u << (length - k)) - 1u);
    __m512d av[6];
    for (int i = 0; i < mi; ++i)
      av[i] = _mm512_maskz_loadu_pd(tail, a[i] + k);
    for (int j = 0; j < TC_DOT_MJ; ++j) {
      const __m512d bv = _mm512_maskz_loadu_pd(tail, b[j] + k);
      for (int i = 0; i < mi; ++i)
        acc[i][j] = _mm512_fmadd_pd(av[i], bv, acc[i][j]);
    }
  }
  for (int i = 0; i < mi; i += 2) {
    const __m512d pair[8] = {acc[i][0],     acc[i][1],     acc[i][2],     acc[i][3],
                             acc[i + 1][0], acc[i + 1][1], acc[i + 1][2], acc[i + 1][3]};
    if (out_rows[i])
      dot_store_pair(pair, out_rows[i], out_rows[i + 1], live, sum_into);
  }
}

/* One cell: blocks of 6 rows while they last, then 4 or 2 (an odd last row
 * paired with the zero row), each against every group of 4 rows of B. */
static inline void dot_cell(const omp_view *v, const double *a, const double *b, double *out,
                            const double *zero) {
  const int64_t I = v->rows, J = v->cols, K = v->points * v->dims;
  for (int64_t i0 = 0; i0 < I;) {
    const int64_t left = I - i0;
    const int mi = left >= 6 ? 6 : left >= 3 ? 4 : 2;
    const double *ar[6];
    double *rows[6];
    for (int i = 0; i < mi; ++i) {
      const bool live_row = i0 + i < I;
      ar[i] = live_row ? a + (i0 + i) * v->a_row : zero;
      rows[i] = live_row ? out + (i0 + i) * v->out_row : NULL;
    }
    for (int64_t j0 = 0; j0 < J; j0 += TC_DOT_MJ) {
      const double *br[TC_DOT_MJ];
      for (int j = 0; j < TC_DOT_MJ; ++j)
        br[j] = j0 + j < J ? b + (j0 + j) * v->b_col : zero;
      const int64_t live_cols = J - j0 < TC_DOT_MJ ? J - j0 : TC_DOT_MJ;
      const __mmask8 live = (__mmask8)((1u << live_cols) - 1u);
      double *at[6];
      for (int i = 0; i < mi; ++i)
        at[i] = rows[i] ? rows[i] + j0 : NULL;
      if (mi == 6)
        dot_block(6, K, ar, br, at, live, v->sum_into);
      else if (mi == 4)
        dot_block(4, K, ar, br, at, live, v->sum_into);
      else
        dot_block(2, K, ar, br, at, live, v->sum_into);
    }
    i0 += mi;
  }
}

/* Whether the dot kernel takes the view: layout right, collapsed index
 * contiguous in both operands, and not too long. */
static bool omp_dot_fits(const omp_view *v) {
  const int64_t length = v->points * v->dims;
  return v->layout == TC_LAYOUT_RIGHT && v->a_dim == 1 && v->b_dim == 1 &&
         v->a_point == v->dims && v->b_point == v->dims && v->out_col == 1 && length >= 1 &&
         length <= TC_DOT_MAX_LENGTH;
}

/* What the threads of omp_dot_double share. */
typedef struct {
  const omp_view *v;
  const double *a, *b;
  double *out;
  const omp_scratch *scratch; /* per thread, a zero row */
} omp_dot_team;

/* One thread's cells of omp_dot_double. */
static void omp_dot_share(void *context, int thread, int threads) {
  const omp_dot_team *team = context;
  const omp_view *v = team->v;
  const int64_t length = v->points * v->dims;
  double *zero = scratch_slice(team->scratch, thread);
  memset(zero, 0, (size_t)length * sizeof(double));
  int64_t begin, end;
  tc_omp_share(v->cells, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c)
    dot_cell(v, team->a + c * v->a_cell, team->b + c * v->b_cell, team->out + c * v->out_cell,
             zero);
}

/* Threads over cells; each thread's zero row (for the rows past an
 * operand's end) in the scratch. */
static tc_err omp_dot_double(const omp_view *v, const double *a, const double *b, double *out) {
  const int64_t length = v->points * v->dims;
  const int threads = tc_omp_threads();
  omp_scratch scratch;
  TC_CALL(scratch_create(threads, (size_t)length * sizeof(double), &scratch));
  omp_dot_team team = {.v = v, .a = a, .b = b, .out = out, .scratch = &scratch};
  tc_omp_team(threads, omp_dot_share, &team);
  scratch_destroy(&scratch);
  return TC_SUCCESS;
}

#endif
