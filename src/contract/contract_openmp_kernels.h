/* contract_openmp_kernels: the OpenMP kernels for one element type, written
 * once and included by contract_openmp.c for double and for float (TC_REAL is
 * the type, TC_SUFFIX names the instance). All work on the collapsed view
 * omp_view: out[c,i,j] = sum over (p,d) of A[c,i,p,d] * B[c,j,p,d].
 *   omp_flat:   threads over cells, straightforward per-cell loops;
 *   omp_gemm:   FieldField, a small GEMM C_c = A_c * B_c^T per cell, with
 *               A and B packed (zero-padded) into panels for a block of the
 *               collapsed index k and register-blocked micro-kernels of
 *               fixed-size loops the compiler turns into FMAs. Right layout:
 *               one cell at a time, MR x NR blocks, broadcasts of A times
 *               vectors of B. Left layout: blocks of many consecutive
 *               cells (each (i,k) read as one long run), computed VL cells
 *               at a time (one vector per (i,k)), vectorised across the
 *               cells, MI x MJ blocks. Both: the next step's inputs
 *               prefetched while a step computes, the output streamed;
 *   omp_stream: DataField and DataData, memory-bound: one pass over the
 *               inputs, vectorised along k per cell in the right layout and
 *               across consecutive cells in the left layout. */

#define TC_JOIN_(name, suffix) name##_##suffix
#define TC_JOIN(name, suffix) TC_JOIN_(name, suffix)
#define TC_NAME(name) TC_JOIN(name, TC_SUFFIX)
/* Elements per 64-byte vector / cache line; the micro-kernel blocks: rows x
 * columns of the right-layout kernel, rows x columns (each VL cells) of the
 * left-layout kernel. */
#define TC_VL ((int64_t)(64 / sizeof(TC_REAL)))
#define TC_MR 8
#define TC_NR (2 * TC_VL)
#define TC_MI 5
#define TC_MJ 5
/* Collapsed indices per step of the left-layout stream. */
#define TC_KG 4

/* What the threads of omp_flat share. */
typedef struct {
  const omp_view *v;
  const TC_REAL *a, *b;
  TC_REAL *out;
} TC_NAME(omp_flat_team);

static void TC_NAME(omp_flat_range)(void *context, int64_t begin, int64_t end) {
  const TC_NAME(omp_flat_team) *team = context;
  const omp_view *v = team->v;
  for (int64_t c = begin; c < end; ++c)
    for (int64_t i = 0; i < v->rows; ++i)
      for (int64_t j = 0; j < v->cols; ++j) {
        const TC_REAL *ai = team->a + c * v->a_cell + i * v->a_row;
        const TC_REAL *bj = team->b + c * v->b_cell + j * v->b_col;
        TC_REAL sum = 0;
        for (int64_t p = 0; p < v->points; ++p)
          for (int64_t d = 0; d < v->dims; ++d)
            sum += ai[p * v->a_point + d * v->a_dim] * bj[p * v->b_point + d * v->b_dim];
        TC_REAL *o = team->out + c * v->out_cell + i * v->out_row + j * v->out_col;
        *o = v->sum_into ? *o + sum : sum;
      }
}

static void TC_NAME(omp_flat)(const omp_view *v, const void *a, const void *b, void *out) {
  TC_NAME(omp_flat_team) team = {.v = v, .a = a, .b = b, .out = out};
  tc_omp_for(v->cells, TC_NAME(omp_flat_range), &team);
}

/* Right layout micro-kernel: ct[MR x NR, row stride ldc] = (accumulate ? ct
 * : 0) + ap * bp^T, with ap (kb x MR) and bp (kb x NR) packed k-major: per k,
 * MR broadcasts of A times two vectors of B. */
static inline void TC_NAME(omp_micro_rows)(int64_t kb, const TC_REAL *restrict ap,
                                           const TC_REAL *restrict bp, TC_REAL *restrict ct,
                                           int64_t ldc, bool accumulate) {
  TC_REAL acc[TC_MR][TC_NR];
  for (int r = 0; r < TC_MR; ++r)
    for (int col = 0; col < TC_NR; ++col)
      acc[r][col] = accumulate ? ct[r * ldc + col] : 0;
  for (int64_t k = 0; k < kb; ++k) {
    const TC_REAL *restrict ak = ap + k * TC_MR;
    const TC_REAL *restrict bk = bp + k * TC_NR;
    for (int r = 0; r < TC_MR; ++r)
#pragma omp simd
      for (int col = 0; col < TC_NR; ++col)
        acc[r][col] += ak[r] * bk[col];
  }
  for (int r = 0; r < TC_MR; ++r)
    for (int col = 0; col < TC_NR; ++col)
      ct[r * ldc + col] = acc[r][col];
}

/* Left layout micro-kernel, vectorised across VL cells: for an MI x MJ block
 * of (i,j), ct[(i*ldc + j)*VL + w] = (accumulate ? ct : 0) + sum_k
 * ap[(k*MI + i)*VL + w] * bp[(k*MJ + j)*VL + w]. */
static inline void TC_NAME(omp_micro_cells)(int64_t kb, const TC_REAL *restrict ap,
                                            const TC_REAL *restrict bp, TC_REAL *restrict ct,
                                            int64_t ldc, bool accumulate) {
  TC_REAL acc[TC_MI][TC_MJ][TC_VL];
  for (int i = 0; i < TC_MI; ++i)
    for (int j = 0; j < TC_MJ; ++j)
      for (int w = 0; w < TC_VL; ++w)
        acc[i][j][w] = accumulate ? ct[(i * ldc + j) * TC_VL + w] : 0;
  for (int64_t k = 0; k < kb; ++k) {
    const TC_REAL *restrict ak = ap + k * TC_MI * TC_VL;
    const TC_REAL *restrict bk = bp + k * TC_MJ * TC_VL;
#pragma GCC unroll 8
    for (int i = 0; i < TC_MI; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < TC_MJ; ++j)
#pragma omp simd
        for (int w = 0; w < TC_VL; ++w)
          acc[i][j][w] += ak[i * TC_VL + w] * bk[j * TC_VL + w];
  }
  for (int i = 0; i < TC_MI; ++i)
    for (int j = 0; j < TC_MJ; ++j)
      for (int w = 0; w < TC_VL; ++w)
        ct[(i * ldc + j) * TC_VL + w] = acc[i][j][w];
}

/* Right layout: packs rows [0, rows_pad) x k [0, kb) of one cell into panels
 * of `panel` rows, element (i,k) at dst[(i/panel)*panel*kb + k*panel +
 * i%panel]; rows >= rows are 0. Panels are written sequentially. */
static void TC_NAME(omp_pack_rows)(const TC_REAL *restrict src, int64_t row_stride,
                                   int64_t k_stride, int64_t rows, int64_t rows_pad, int64_t kb,
                                   int64_t panel, TC_REAL *restrict dst) {
  for (int64_t i0 = 0; i0 < rows_pad; i0 += panel) {
    const int64_t live = min_int64(panel, rows - i0);
    TC_REAL *restrict d = dst + i0 * kb;
    const TC_REAL *restrict s = src + i0 * row_stride;
    for (int64_t k = 0; k < kb; ++k) {
      for (int64_t r = 0; r < live; ++r)
        d[k * panel + r] = s[r * row_stride + k * k_stride];
      for (int64_t r = live; r < panel; ++r)
        d[k * panel + r] = 0;
    }
  }
}

/* Left layout: packs rows [0, rows_pad) x k [0, kb) of n consecutive cells
 * (one run of n cells per (i,k)) into panels of `panel` rows per group of VL
 * cells, group g's at dst + g*group_len, the cells of element (i,k) at
 * ((i/panel)*panel*kb + k*panel + i%panel)*VL + w of their group; rows >=
 * rows and cells >= n are 0. Each run is read whole, in order. */
static void TC_NAME(omp_pack_cells)(const TC_REAL *restrict src, int64_t row_stride,
                                    int64_t k_stride, int64_t rows, int64_t rows_pad, int64_t kb,
                                    int64_t n, int64_t panel, int64_t group_len,
                                    TC_REAL *restrict dst) {
  for (int64_t i0 = 0; i0 < rows_pad; i0 += panel)
    for (int64_t k = 0; k < kb; ++k)
      for (int64_t r = 0; r < panel; ++r) {
        TC_REAL *restrict d = dst + (i0 * kb + k * panel + r) * TC_VL;
        const int64_t live = i0 + r < rows ? n : 0;
        const TC_REAL *restrict cells = live > 0 ? src + (i0 + r) * row_stride + k * k_stride : src;
        int64_t c0 = 0;
        for (; c0 + TC_VL <= live; c0 += TC_VL, d += group_len)
#pragma omp simd
          for (int64_t w = 0; w < TC_VL; ++w)
            d[w] = cells[c0 + w];
        for (; c0 < n; c0 += TC_VL, d += group_len)
          for (int64_t w = 0; w < TC_VL; ++w)
            d[w] = c0 + w < live ? cells[c0 + w] : 0;
      }
}

/* Right layout: writes (or adds, with sum_into) the rows x cols results of
 * cell c from its tile, (i, j) at tile[i*cols_pad + j]; written rows are
 * streamed (store_stream) when `stream`. */
static void TC_NAME(omp_store_tile)(const omp_view *v, const TC_REAL *restrict tile,
                                    int64_t cols_pad, int64_t c, bool stream,
                                    TC_REAL *restrict out) {
  for (int64_t i = 0; i < v->rows; ++i) {
    TC_REAL *restrict o = out + c * v->out_cell + i * v->out_row;
    const TC_REAL *restrict t = tile + i * cols_pad;
    if (v->sum_into) {
#pragma omp simd
      for (int64_t j = 0; j < v->cols; ++j)
        o[j] += t[j];
    } else if (stream) {
      store_stream(o, t, v->cols * (int64_t)sizeof(TC_REAL));
    } else {
#pragma omp simd
      for (int64_t j = 0; j < v->cols; ++j)
        o[j] = t[j];
    }
  }
}

/* Left layout: the same for n consecutive cells from c0, in groups of VL
 * cells, group g's tile at tiles + g*tile_len with the cells of (i, j) at
 * (i*cols_pad + j)*VL + w: each output run of n cells is written whole,
 * gathered into `run` (n elements) and streamed when not summed into. */
static void TC_NAME(omp_store_tiles)(const omp_view *v, const TC_REAL *restrict tiles,
                                     int64_t tile_len, int64_t cols_pad, int64_t c0, int64_t n,
                                     TC_REAL *restrict run, TC_REAL *restrict out) {
  for (int64_t j = 0; j < v->cols; ++j)
    for (int64_t i = 0; i < v->rows; ++i) {
      TC_REAL *restrict o = out + c0 + i * v->out_row + j * v->out_col;
      const TC_REAL *restrict t = tiles + (i * cols_pad + j) * TC_VL;
      if (v->sum_into) {
        for (int64_t w0 = 0; w0 < n; w0 += TC_VL, o += TC_VL, t += tile_len) {
          const int64_t cells = min_int64(TC_VL, n - w0);
#pragma omp simd
          for (int64_t w = 0; w < cells; ++w)
            o[w] += t[w];
        }
      } else {
        for (int64_t w0 = 0; w0 < n; w0 += TC_VL, t += tile_len)
#pragma omp simd
          for (int64_t w = 0; w < TC_VL; ++w)
            run[w0 + w] = t[w];
        store_stream(o, run, n * (int64_t)sizeof(TC_REAL));
      }
    }
}

/* What the threads of omp_gemm share: the view, its operands, and the
 * blocking omp_gemm chose. */
typedef struct {
  const omp_view *v;
  const TC_REAL *a, *b;
  TC_REAL *out;
  const omp_scratch *scratch;
  bool right, assist;
  int64_t width, groups, units, length, kblock, rows_pad, cols_pad, row_panel, col_panel;
  int64_t a_len, b_len, c_len, calls, a_k, b_k;
} TC_NAME(omp_gemm_team);

/* One thread's units of omp_gemm: a contiguous range, walked in blocks. */
static void TC_NAME(omp_gemm_share)(void *context, int thread, int threads) {
  const TC_NAME(omp_gemm_team) *team = context;
  const omp_view *v = team->v;
  const TC_REAL *a = team->a, *b = team->b;
  TC_REAL *out = team->out;
  const bool right = team->right, assist = team->assist;
  const int64_t size = (int64_t)sizeof(TC_REAL);
  const int64_t width = team->width, groups = team->groups, units = team->units;
  const int64_t length = team->length, kblock = team->kblock;
  const int64_t rows_pad = team->rows_pad, cols_pad = team->cols_pad;
  const int64_t row_panel = team->row_panel, col_panel = team->col_panel;
  const int64_t a_len = team->a_len, b_len = team->b_len, c_len = team->c_len;
  const int64_t calls = team->calls, a_k = team->a_k, b_k = team->b_k;
  TC_REAL *a_packed = scratch_slice(team->scratch, thread);
  TC_REAL *b_packed = a_packed + a_len * groups;
  TC_REAL *tiles = b_packed + b_len * groups;
  TC_REAL *run = tiles + c_len * groups;
  omp_prefetch pf = {0};
  const int64_t u_end = (thread + 1) * units / threads;
  for (int64_t u = thread * units / threads; u < u_end; u += groups) {
    const int64_t c0 = u * width;
    const int64_t n = min_int64(min_int64(groups, u_end - u) * width, v->cells - c0);
    const int64_t live_groups = ceil_div(n, width);
    for (int64_t k0 = 0; k0 < length; k0 += kblock) {
      const int64_t kb = min_int64(kblock, length - k0);
      const TC_REAL *a_step = a + c0 * v->a_cell + k0 * a_k;
      const TC_REAL *b_step = b + c0 * v->b_cell + k0 * b_k;
      prefetch_reset(&pf);
      if (right) {
        TC_NAME(omp_pack_rows)(a_step, v->a_row, a_k, v->rows, rows_pad, kb, TC_MR, a_packed);
        TC_NAME(omp_pack_rows)(b_step, v->b_col, b_k, v->cols, cols_pad, kb, TC_NR, b_packed);
      } else {
        TC_NAME(omp_pack_cells)(a_step, v->a_row, a_k, v->rows, rows_pad, kb, n, TC_MI, a_len,
                                a_packed);
        TC_NAME(omp_pack_cells)(b_step, v->b_col, b_k, v->cols, cols_pad, kb, n, TC_MJ, b_len,
                                b_packed);
      }
      /* The next step: this block's next k block, or the next block's
       * first one (after the output of this block when it is re-read);
       * its runs: per row, kb elements (right) or n cells for each k
       * (left). */
      int64_t c_next = c0, n_next = n, k_next = k0 + kblock;
      if (assist && k_next >= length) {
        if (v->sum_into)
          prefetch_add(&pf, out + c0 * v->out_cell, (right ? v->cols : n) * size, v->rows,
                       v->out_row * size, right ? 1 : v->cols, v->out_col * size, true);
        const int64_t u_next = u + groups;
        c_next = u_next * width, k_next = 0;
        n_next = u_next < u_end
                     ? min_int64(min_int64(groups, u_end - u_next) * width, v->cells - c_next)
                     : 0;
      }
      if (assist && n_next > 0) {
        const int64_t kb_next = min_int64(kblock, length - k_next);
        const int64_t run_bytes = (right ? kb_next : n_next) * size;
        const int64_t outer = right ? 1 : kb_next;
        prefetch_add(&pf, a + c_next * v->a_cell + k_next * a_k, run_bytes, v->rows,
                     v->a_row * size, outer, a_k * size, false);
        prefetch_add(&pf, b + c_next * v->b_cell + k_next * b_k, run_bytes, v->cols,
                     v->b_col * size, outer, b_k * size, false);
      }
      const int64_t per_call = ceil_div(pf.left, calls * live_groups);
      for (int64_t g = 0; g < live_groups; ++g) {
        const TC_REAL *ag = a_packed + g * a_len, *bg = b_packed + g * b_len;
        TC_REAL *tile = tiles + g * c_len;
        for (int64_t j0 = 0; j0 < cols_pad; j0 += col_panel)
          for (int64_t i0 = 0; i0 < rows_pad; i0 += row_panel) {
            prefetch_some(&pf, per_call);
            if (right)
              TC_NAME(omp_micro_rows)(kb, ag + i0 * kb, bg + j0 * kb, tile + i0 * cols_pad + j0,
                                      cols_pad, k0 > 0);
            else
              TC_NAME(omp_micro_cells)(kb, ag + i0 * kb * TC_VL, bg + j0 * kb * TC_VL,
                                       tile + (i0 * cols_pad + j0) * TC_VL, cols_pad, k0 > 0);
          }
      }
    }
    if (right)
      TC_NAME(omp_store_tile)(v, tiles, cols_pad, c0, assist, out);
    else
      TC_NAME(omp_store_tiles)(v, tiles, c_len, cols_pad, c0, n, run, out);
  }
  store_stream_fence();
}

/* FieldField, one small GEMM per cell. Each thread takes a contiguous range
 * of units (cells in the right layout, groups of VL cells in the left one)
 * and walks it in blocks: one cell in the right layout; in the left layout
 * as many groups as keep the block's tiles within TC_OMP_LEFT_TILE_BYTES,
 * so that each (i,k) of the inputs is read as one long run of cells. Per
 * block and k step: pack A and B, run the micro-kernel over all (row panel,
 * column panel) pairs of each group into the group's tile; then store the
 * tiles. While a step computes, the next step's runs (the next k block of
 * the cell or block, or the next one's first) are prefetched, a few per
 * micro-kernel call, and, with sum_into, the block's output before it is
 * read; without sum_into the output is written with streaming stores, which
 * skip the read for ownership (in the right layout both only for cells of
 * at least TC_OMP_RIGHT_ASSIST_BYTES, which the hardware prefetcher serves
 * better alone). */
static tc_err TC_NAME(omp_gemm)(const omp_view *v, const void *a_void, const void *b_void,
                                void *out_void) {
  const TC_REAL *a = a_void;
  const TC_REAL *b = b_void;
  TC_REAL *out = out_void;
  const bool right = v->layout == TC_LAYOUT_RIGHT;
  const int64_t size = (int64_t)sizeof(TC_REAL);
  const int64_t length = v->points * v->dims;
  const int64_t width = right ? 1 : TC_VL;
  const int64_t row_panel = right ? TC_MR : TC_MI, col_panel = right ? TC_NR : TC_MJ;
  const int64_t rows_pad = round_up(v->rows, row_panel);
  const int64_t cols_pad = round_up(v->cols, col_panel);
  const int64_t units = ceil_div(v->cells, width);
  const int64_t tile_groups = TC_OMP_LEFT_TILE_BYTES / (rows_pad * cols_pad * width * size);
  const int64_t groups =
      right ? 1 : max_int64(1, min_int64(min_int64(TC_OMP_LEFT_MAX_GROUPS, units), tile_groups));
  const int64_t a_k = collapsed_stride(v, v->a_point, v->a_dim);
  const int64_t b_k = collapsed_stride(v, v->b_point, v->b_dim);
  /* The B panel of one micro-kernel call fits in L1, the packed panels of
   * one step (all groups of a block) in TC_OMP_PACK_BYTES (right) or
   * TC_OMP_LEFT_PACK_BYTES (left). */
  const int64_t pack_bytes = right ? TC_OMP_PACK_BYTES : TC_OMP_LEFT_PACK_BYTES;
  int64_t kblock = min_int64(length, TC_OMP_PANEL_BYTES / (col_panel * width * size));
  kblock = min_int64(kblock,
                     max_int64(8, pack_bytes / ((rows_pad + cols_pad) * width * groups * size)));
  /* Per group: packed A, packed B and the tile, each followed by a cache
   * line against 4 KiB aliasing between them. */
  const int64_t a_len = rows_pad * kblock * width + TC_VL;
  const int64_t b_len = cols_pad * kblock * width + TC_VL;
  const int64_t c_len = rows_pad * cols_pad * width + TC_VL;
  const int64_t calls = (rows_pad / row_panel) * (cols_pad / col_panel);
  /* Software prefetch of the next step and streaming stores: always in the
   * left layout, in the right one for cells that are not tiny. */
  const bool assist =
      !right || (v->rows + v->cols) * min_int64(kblock, length) * size >= TC_OMP_RIGHT_ASSIST_BYTES;
  const int threads = tc_omp_threads();
  omp_scratch scratch;
  /* ... and, in the left layout, one output run of the block. */
  const int64_t run_len = right ? 0 : groups * width;
  TC_CALL(scratch_create(threads, (size_t)(((a_len + b_len + c_len) * groups + run_len) * size),
                         &scratch));
  TC_NAME(omp_gemm_team) team = {
      .v = v, .a = a, .b = b, .out = out, .scratch = &scratch, .right = right, .assist = assist,
      .width = width, .groups = groups, .units = units, .length = length, .kblock = kblock,
      .rows_pad = rows_pad, .cols_pad = cols_pad, .row_panel = row_panel,
      .col_panel = col_panel, .a_len = a_len, .b_len = b_len, .c_len = c_len, .calls = calls,
      .a_k = a_k, .b_k = b_k};
  tc_omp_team(threads, TC_NAME(omp_gemm_share), &team);
  scratch_destroy(&scratch);
  return TC_SUCCESS;
}

/* What the threads of omp_stream_right share. */
typedef struct {
  const omp_view *v;
  const TC_REAL *a, *b;
  TC_REAL *out;
  const omp_scratch *scratch; /* per thread, B expanded over the points; NULL if B is not shared */
} TC_NAME(omp_stream_right_team);

static void TC_NAME(omp_stream_right_share)(void *context, int thread, int threads) {
  const TC_NAME(omp_stream_right_team) *team = context;
  const omp_view *v = team->v;
  const int64_t length = v->points * v->dims;
  TC_REAL *expanded = team->scratch ? scratch_slice(team->scratch, thread) : NULL;
  int64_t begin, end;
  tc_omp_share(v->cells, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c) {
    const TC_REAL *restrict bc = team->b + c * v->b_cell;
    if (expanded) {
      for (int64_t p = 0; p < v->points; ++p)
        for (int64_t d = 0; d < v->dims; ++d)
          expanded[p * v->dims + d] = bc[d];
      bc = expanded;
    }
    for (int64_t i = 0; i < v->rows; ++i) {
      const TC_REAL *restrict ai = team->a + c * v->a_cell + i * v->a_row;
      TC_REAL sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t k = 0; k < length; ++k)
        sum += ai[k] * bc[k];
      TC_REAL *o = team->out + c * v->out_cell + i * v->out_row;
      *o = v->sum_into ? *o + sum : sum;
    }
  }
}

/* Right layout: per cell, a vectorised dot product along the contiguous k of
 * each row of A with the cell's B (expanded over the points into scratch
 * when the data has one value per cell). */
static tc_err TC_NAME(omp_stream_right)(const omp_view *v, const TC_REAL *a, const TC_REAL *b,
                                        TC_REAL *out) {
  const int64_t length = v->points * v->dims;
  const bool shared_point = v->b_point == 0 && v->points > 1;
  const int threads = tc_omp_threads();
  omp_scratch scratch = {0};
  if (shared_point)
    TC_CALL(scratch_create(threads, (size_t)length * sizeof(TC_REAL), &scratch));
  TC_NAME(omp_stream_right_team) team = {
      .v = v, .a = a, .b = b, .out = out, .scratch = shared_point ? &scratch : NULL};
  tc_omp_team(threads, TC_NAME(omp_stream_right_share), &team);
  scratch_destroy(&scratch);
  return TC_SUCCESS;
}

/* Left layout, one row segment of n cells: os[w] = (first ? 0 : os[w]) +
 * sum over g < kg of ak[g][w] * bk[g][w], a group of TC_KG collapsed
 * indices at once (TC_KG concurrent input streams, the output loaded and
 * stored once per group), a shorter group one index at a time. */
static inline void TC_NAME(omp_stream_segment)(int64_t n, int64_t kg,
                                               const TC_REAL *const ak[TC_KG],
                                               const TC_REAL *const bk[TC_KG],
                                               TC_REAL *restrict os, bool first) {
  _Static_assert(TC_KG == 4, "the grouped loop below names four streams");
  if (kg == TC_KG) {
    const TC_REAL *restrict a0 = ak[0], *restrict a1 = ak[1], *restrict a2 = ak[2],
                           *restrict a3 = ak[3];
    const TC_REAL *restrict b0 = bk[0], *restrict b1 = bk[1], *restrict b2 = bk[2],
                           *restrict b3 = bk[3];
    if (first) {
#pragma omp simd
      for (int64_t w = 0; w < n; ++w)
        os[w] = a0[w] * b0[w] + a1[w] * b1[w] + a2[w] * b2[w] + a3[w] * b3[w];
    } else {
#pragma omp simd
      for (int64_t w = 0; w < n; ++w)
        os[w] += a0[w] * b0[w] + a1[w] * b1[w] + a2[w] * b2[w] + a3[w] * b3[w];
    }
    return;
  }
  for (int64_t g = 0; g < kg; ++g) {
    const TC_REAL *restrict a = ak[g], *restrict b = bk[g];
    if (first && g == 0) {
#pragma omp simd
      for (int64_t w = 0; w < n; ++w)
        os[w] = a[w] * b[w];
    } else {
#pragma omp simd
      for (int64_t w = 0; w < n; ++w)
        os[w] += a[w] * b[w];
    }
  }
}

/* What the threads of omp_stream_left share: the tiles, row_blocks per
 * block of width cells. */
typedef struct {
  const omp_view *v;
  const TC_REAL *a, *b;
  TC_REAL *out;
  int64_t width, row_blocks, tiles;
} TC_NAME(omp_stream_left_team);

static void TC_NAME(omp_stream_left_range)(void *context, int64_t first_tile, int64_t end_tile) {
  const TC_NAME(omp_stream_left_team) *team = context;
  const omp_view *v = team->v;
  const TC_REAL *a = team->a, *b = team->b;
  TC_REAL *out = team->out;
  const int64_t cells = v->cells, rows = v->rows, length = v->points * v->dims;
  const int64_t width = team->width, row_blocks = team->row_blocks;
  const int64_t a_k = collapsed_stride(v, v->a_point, v->a_dim);
  for (int64_t t = first_tile; t < end_tile; ++t) {
    const int64_t c0 = t / row_blocks * width, n = min_int64(width, cells - c0);
    const int64_t block = t % row_blocks;
    const int64_t i0 = block * rows / row_blocks, i1 = (block + 1) * rows / row_blocks;
    if (length == 0 && !v->sum_into)
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t w = 0; w < n; ++w)
          out[i * v->out_row + c0 + w] = 0;
    for (int64_t k0 = 0; k0 < length; k0 += TC_KG) {
      const int64_t kg = min_int64(TC_KG, length - k0);
      const TC_REAL *as[TC_KG], *bs[TC_KG];
      for (int64_t g = 0; g < kg; ++g) {
        const int64_t k = k0 + g;
        as[g] = a + k * a_k + i0 * v->a_row + c0;
        bs[g] = b + k % v->points * v->b_point + k / v->points * v->b_dim + c0;
      }
      const bool first = k0 == 0 && !v->sum_into;
      for (int64_t i = i0; i < i1; ++i) {
        TC_NAME(omp_stream_segment)(n, kg, as, bs, out + i * v->out_row + c0, first);
        for (int64_t g = 0; g < kg; ++g)
          as[g] += v->a_row;
      }
    }
  }
}

/* Left layout. For each collapsed k, A holds one run of C cells per row,
 * the rows adjacent, and B one run of C cells. Work is cut into tiles of
 * (block of rows) x (block of cells), the row blocks of one cell block
 * consecutive: rows of at most TC_OMP_STREAM_TILE_BYTES are taken whole, as
 * many per tile as fit in that size, so that a tile reads one contiguous run
 * of A per k; longer rows are cut into blocks of about that size, over as
 * many rows as keep the tile's output within TC_OMP_STREAM_REUSE_BYTES, so
 * that B's runs are reused from cache by all the rows. Per tile and group of
 * TC_KG values of k, out[tile] (kept in cache across the k loop) takes the
 * products of A's runs and B's runs: A read once, in long unit-stride runs. */
static tc_err TC_NAME(omp_stream_left)(const omp_view *v, const TC_REAL *a, const TC_REAL *b,
                                       TC_REAL *out) {
  const int64_t cells = v->cells, rows = v->rows;
  if (cells == 0 || rows == 0)
    return TC_SUCCESS;
  const int threads = tc_omp_threads();
  const int64_t size = (int64_t)sizeof(TC_REAL);
  const int64_t tile_max = TC_OMP_STREAM_TILE_BYTES / size;
  int64_t cell_blocks = 1, row_blocks;
  if (cells > tile_max) {
    cell_blocks = round_up(ceil_div(cells, tile_max), threads);
    row_blocks = ceil_div(rows, max_int64(1, TC_OMP_STREAM_REUSE_BYTES / size / tile_max));
  } else {
    /* Whole rows; the row blocks a multiple of the thread count, and the
     * cells split too when there are too few rows to go round. */
    row_blocks = min_int64(rows, round_up(ceil_div(rows * cells, tile_max), threads));
    if (row_blocks < threads)
      cell_blocks = threads;
  }
  const int64_t width = min_int64(cells, round_up(ceil_div(cells, cell_blocks), TC_VL));
  cell_blocks = ceil_div(cells, width);
  TC_NAME(omp_stream_left_team) team = {.v = v, .a = a, .b = b, .out = out,
                                        .width = width, .row_blocks = row_blocks,
                                        .tiles = cell_blocks * row_blocks};
  tc_omp_for(team.tiles, TC_NAME(omp_stream_left_range), &team);
  return TC_SUCCESS;
}

static tc_err TC_NAME(omp_stream)(const omp_view *v, const void *a, const void *b, void *out) {
  if (v->layout == TC_LAYOUT_RIGHT)
    return TC_NAME(omp_stream_right)(v, a, b, out);
  return TC_NAME(omp_stream_left)(v, a, b, out);
}

#undef TC_JOIN_
#undef TC_JOIN
#undef TC_NAME
#undef TC_VL
#undef TC_MR
#undef TC_NR
#undef TC_MI
#undef TC_MJ
#undef TC_KG
