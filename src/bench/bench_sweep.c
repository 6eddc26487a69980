/* bench_sweep: the random shapes of tcmini-bench --sweep and the summary of
 * AUTO against its reference over them (the vendor variant in layout right,
 * AUTO in layout right for layout left). */
#include "bench_sweep.h"

#include <math.h>
#include <stdlib.h>

#include "bench_options.h"

/* splitmix64, seeded per shape so that shape i does not depend on N. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [low, high] (the modulo bias is below 1e-16 here). */
static int64_t uniform(uint64_t *state, int64_t low, int64_t high) {
  return low + (int64_t)(next_random(state) % (uint64_t)(high - low + 1));
}

void bench_sweep_shape(uint64_t seed, int64_t index, tc_layout layout, tc_precision precision,
                       int64_t memory_mb, tc_contraction *shape) {
  uint64_t state = seed * UINT64_C(0x2545F4914F6CDD1D) + (uint64_t)index;
  (void)next_random(&state);
  const int rank = (int)uniform(&state, 0, 2);
  *shape = (tc_contraction){.kernel = (tc_kernel)(TC_FIELD_FIELD_SCALAR + rank),
                            .layout = layout,
                            .precision = precision};
  shape->num_left_fields = uniform(&state, BENCH_SWEEP_MIN_FIELDS, BENCH_SWEEP_MAX_FIELDS);
  shape->num_right_fields = uniform(&state, BENCH_SWEEP_MIN_FIELDS, BENCH_SWEEP_MAX_FIELDS);
  shape->num_points = uniform(&state, 1, BENCH_SWEEP_MAX_POINTS);
  shape->dim1 = rank >= 1 ? uniform(&state, 1, BENCH_SWEEP_MAX_DIM) : 1;
  shape->dim2 = rank >= 2 ? uniform(&state, 1, BENCH_SWEEP_MAX_DIM) : 1;
  shape->num_data_points = 1;
  shape->num_cells = bench_cells_for_memory(shape, memory_mb);
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of sorted values (linear between neighbours). */
static double quantile(const double *sorted, int64_t count, double q) {
  const double at = q * (double)(count - 1);
  const int64_t below = (int64_t)floor(at);
  const int64_t above = below + 1 < count ? below + 1 : below;
  return sorted[below] + (at - (double)below) * (sorted[above] - sorted[below]);
}

void bench_sweep_print_summary(FILE *out, const bench_sweep_result *results, int64_t count,
                               tc_layout layout, uint64_t seed, const char *backend_options) {
  const bool left = layout == TC_LAYOUT_LEFT;
  const char *ratio_name = left ? "layout left/right time ratio of AUTO" : "AUTO/vendor time ratio";
  double *ratios = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
  if (ratios == NULL) {
    fprintf(out, "sweep: out of memory for the summary\n");
    return;
  }
  int64_t measured = 0, above_one = 0, above_tie = 0, worst = -1;
  double log_sum = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const bench_sweep_result *r = &results[i];
    if (!(r->auto_seconds > 0.0 && r->reference_seconds > 0.0))
      continue;
    const double ratio = r->auto_seconds / r->reference_seconds;
    ratios[measured++] = ratio;
    log_sum += log(ratio);
    above_one += ratio > 1.0;
    above_tie += ratio > 1.05;
    if (worst < 0 || ratio > results[worst].auto_seconds / results[worst].reference_seconds)
      worst = i;
  }
  fprintf(out, "\nsweep: %lld random FieldField shapes of seed %llu (L, R uniform in %d-%d, P in "
               "1-%d, D1, D2 in 1-%d)\n",
          (long long)count, (unsigned long long)seed, BENCH_SWEEP_MIN_FIELDS,
          BENCH_SWEEP_MAX_FIELDS, BENCH_SWEEP_MAX_POINTS, BENCH_SWEEP_MAX_DIM);
  if (measured == 0) {
    fprintf(out, "%s: no shape has both rows\n", ratio_name);
    free(ratios);
    return;
  }
  qsort(ratios, (size_t)measured, sizeof *ratios, compare_doubles);
  fprintf(out,
          "%s over %lld shapes (below 1: %s faster): min %.3f, 10%% %.3f, "
          "median %.3f, 90%% %.3f, max %.3f, geometric mean %.3f\n",
          ratio_name, (long long)measured, left ? "layout left" : "AUTO", ratios[0],
          quantile(ratios, measured, 0.1), quantile(ratios, measured, 0.5),
          quantile(ratios, measured, 0.9), ratios[measured - 1], exp(log_sum / (double)measured));
  fprintf(out, "%s slower than %s on %lld shapes, by more than 5%% on %lld\n",
          left ? "layout left" : "AUTO", left ? "layout right" : "the vendor",
          (long long)above_one, (long long)above_tie);
  const bench_sweep_result *w = &results[worst];
  const tc_contraction *s = &w->shape;
  fprintf(out,
          "worst: shape %lld, %s L=%lld R=%lld P=%lld D1=%lld D2=%lld C=%lld: auto (%s, %s) "
          "%.4f ms, %s %.4f ms, ratio %.3f\n",
          (long long)worst, tc_kernel_name(s->kernel), (long long)s->num_left_fields,
          (long long)s->num_right_fields, (long long)s->num_points, (long long)s->dim1,
          (long long)s->dim2, (long long)s->num_cells, tc_variant_name(w->auto_variant),
          w->chosen ? w->chosen : "-", 1e3 * w->auto_seconds,
          left ? "auto in layout right" : "vendor", 1e3 * w->reference_seconds,
          w->auto_seconds / w->reference_seconds);
  fprintf(out,
          "rerun it: tcmini-bench %s --kernel %s --left %lld --right %lld --points %lld --dim1 "
          "%lld --dim2 %lld --cells %lld --layout %s --precision %s --variant all\n",
          backend_options, tc_kernel_name(s->kernel), (long long)s->num_left_fields,
          (long long)s->num_right_fields, (long long)s->num_points, (long long)s->dim1,
          (long long)s->dim2, (long long)s->num_cells, left ? "left,right" : "right",
          tc_precision_name(s->precision));
  free(ratios);
}
