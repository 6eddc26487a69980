/* test_contract_team: the OpenMP team of the per-batch loops (tc_omp) and the
 * OpenMP backend called from inside a caller's own parallel region. Checks
 * that tc_omp_share splits every count into contiguous, ascending, balanced
 * parts that cover it once; that tc_omp_team runs a one-thread body on the
 * calling thread without a region and a larger one on a team; and that every
 * variant the OpenMP backend runs, in both layouts and precisions, gives
 * each thread of a caller's region the whole contraction, bitwise the result
 * of a call from outside any region (a body split by orphaned worksharing
 * would bind to the caller's team and compute a part). */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "contract_test.h"
#include "tc_contract_backend.h"
#include "tc_omp.h"

static void check_share(void) {
  const int64_t counts[] = {0, 1, 2, 5, 31, 100};
  const int teams[] = {1, 2, 3, 7};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    for (size_t j = 0; j < sizeof teams / sizeof teams[0]; ++j) {
      const int64_t n = counts[i];
      const int threads = teams[j];
      int64_t next = 0, smallest = n, largest = 0;
      for (int t = 0; t < threads; ++t) {
        int64_t begin, end;
        tc_omp_share(n, t, threads, &begin, &end);
        test_check(begin == next && end >= begin, "share of thread %d of %d over %lld: [%lld, %lld)",
                   t, threads, (long long)n, (long long)begin, (long long)end);
        smallest = end - begin < smallest ? end - begin : smallest;
        largest = end - begin > largest ? end - begin : largest;
        next = end;
      }
      test_check(next == n && largest - smallest <= 1,
                 "%d shares of %lld end at %lld, sizes %lld-%lld", threads, (long long)n,
                 (long long)next, (long long)smallest, (long long)largest);
    }
}

typedef struct {
  int calls, threads_seen, in_region;
} team_record;

static void record_body(void *context, int thread, int threads) {
  team_record *r = context;
#pragma omp atomic
  r->calls += 1;
  if (thread == 0) {
    r->threads_seen = threads;
#ifdef _OPENMP
    r->in_region = omp_in_parallel();
#endif
  }
}

static void check_team(void) {
  team_record one = {0, 0, -1};
  tc_omp_team(1, record_body, &one);
  test_check(one.calls == 1 && one.threads_seen == 1 && one.in_region <= 0,
             "a one-thread team: %d calls, %d threads, in a region %d", one.calls,
             one.threads_seen, one.in_region);
#ifdef _OPENMP
  if (omp_get_max_threads() >= 2) {
    team_record two = {0, 0, -1};
    tc_omp_team(2, record_body, &two);
    test_check(two.calls == two.threads_seen && two.threads_seen >= 1 && two.threads_seen <= 2,
               "a two-thread team: %d calls, %d threads", two.calls, two.threads_seen);
  }
#endif
}

/* Inputs of shape filled with values that make every output distinct. */
static void fill(const tc_contraction *shape, void *left, void *right) {
  const int64_t nl = tc_contraction_left_count(shape), nr = tc_contraction_right_count(shape);
  for (int64_t e = 0; e < nl; ++e) {
    const double v = 0.25 + (double)((e * 37) % 101) / 101.0;
    if (shape->precision == TC_DOUBLE)
      ((double *)left)[e] = v;
    else
      ((float *)left)[e] = (float)v;
  }
  for (int64_t e = 0; e < nr; ++e) {
    const double v = -0.5 + (double)((e * 53) % 97) / 97.0;
    if (shape->precision == TC_DOUBLE)
      ((double *)right)[e] = v;
    else
      ((float *)right)[e] = (float)v;
  }
}

enum { REGION_THREADS = 3 };

/* kernel's shape with variant: a call from outside any region, then one from
 * each thread of a region of REGION_THREADS, each into its own output. */
static void check_inside_region(const tc_contract_backend *backend, tc_kernel kernel,
                                tc_layout layout, tc_precision precision) {
  const int rank = tc_kernel_tensor_rank(kernel);
  tc_contraction shape = {.kernel = kernel, .num_cells = 37,
                          .num_left_fields = tc_kernel_is_data_data(kernel) ? 0 : 8,
                          .num_right_fields = tc_kernel_is_field_field(kernel) ? 8 : 0,
                          .num_points = 27,
                          .num_data_points = tc_kernel_is_data_field(kernel) ? 27 : 0,
                          .dim1 = rank >= 1 ? 3 : 0, .dim2 = rank >= 2 ? 3 : 0,
                          .layout = layout, .precision = precision};
  tc_contraction_normalize(&shape);
  const size_t size = (size_t)tc_precision_size(precision);
  const size_t out_bytes = (size_t)tc_contraction_output_count(&shape) * size;
  void *left = malloc((size_t)tc_contraction_left_count(&shape) * size);
  void *right = malloc((size_t)tc_contraction_right_count(&shape) * size);
  char *outside = malloc(out_bytes), *inside = malloc(out_bytes * REGION_THREADS);
  if (!test_check(left && right && outside && inside, "out of memory")) {
    free(left);
    free(right);
    free(outside);
    free(inside);
    return;
  }
  fill(&shape, left, right);
  for (int v = 0; v < TC_VARIANT_COUNT; ++v) {
    if (v == TC_VARIANT_AUTO || !tc_contract_supports(backend, &shape, (tc_variant)v))
      continue;
    memset(outside, 0, out_bytes);
    memset(inside, 0, out_bytes * REGION_THREADS);
    if (!test_ok(tc_contract(backend, &shape, (tc_variant)v, left, right, outside, NULL),
                 tc_variant_name((tc_variant)v)))
      continue;
    int failed = 0;
#pragma omp parallel num_threads(REGION_THREADS) reduction(+ : failed)
    {
      int thread = 0;
#ifdef _OPENMP
      thread = omp_get_thread_num();
#endif
      failed += tc_contract(backend, &shape, (tc_variant)v, left, right,
                            inside + (size_t)thread * out_bytes, NULL) != TC_SUCCESS;
    }
    test_check(failed == 0, "%s, %s: %d calls from inside a region failed",
               tc_kernel_name(kernel), tc_variant_name((tc_variant)v), failed);
    for (int t = 0; t < REGION_THREADS; ++t)
      test_check(memcmp(outside, inside + (size_t)t * out_bytes, out_bytes) == 0,
                 "%s, %s layout, %s, variant %s: thread %d of a caller's region computed another "
                 "result than a call from outside",
                 tc_kernel_name(kernel), tc_layout_name(layout), tc_precision_name(precision),
                 tc_variant_name((tc_variant)v), t);
  }
  free(left);
  free(right);
  free(outside);
  free(inside);
}

int main(void) {
  check_share();
  check_team();
  const tc_contract_backend *openmp = tc_contract_backend_get(TC_BACKEND_OPENMP);
  if (openmp == NULL)
    printf("openmp: not compiled in; only tc_omp checked\n");
  else
    for (int k = 0; k < TC_KERNEL_COUNT; ++k)
      for (int layout = 0; layout < 2; ++layout)
        for (int precision = 0; precision < 2; ++precision)
          check_inside_region(openmp, (tc_kernel)k,
                              layout ? TC_LAYOUT_LEFT : TC_LAYOUT_RIGHT,
                              precision ? TC_FLOAT : TC_DOUBLE);
  if (test_failures) {
    fprintf(stderr, "test_contract_team: %d failure(s)\n", test_failures);
    return 1;
  }
  printf("test_contract_team: passed\n");
  return 0;
}
