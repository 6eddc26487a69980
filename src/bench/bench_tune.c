/* bench_tune: the measurements of tcmini-bench --tune, grouped by shape and
 * by shape class, and the choice written as a tuning file. */
#include "bench_tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_tuning.h"

/* One measured shape: the median time of each variant (0: not measured). */
typedef struct {
  tc_contraction shape;
  double seconds[TC_VARIANT_COUNT];
  double fastest;
  int klass; /* index into the classes */
} measured_shape;

struct bench_tuner {
  tc_backend_kind backend;
  measured_shape *shapes;
  int count, capacity;
};

tc_err bench_tuner_create(tc_backend_kind backend, bench_tuner **tuner) {
  TC_CALLOC(*tuner, 1);
  (*tuner)->backend = backend;
  return TC_SUCCESS;
}

void bench_tuner_destroy(bench_tuner **tuner) {
  if (*tuner == NULL)
    return;
  free((*tuner)->shapes);
  free(*tuner);
  *tuner = NULL;
}

tc_err bench_tuner_add(bench_tuner *tuner, const tc_contraction *shape, tc_variant variant,
                       double seconds) {
  TC_CHECK(variant > TC_VARIANT_AUTO && variant < TC_VARIANT_COUNT && seconds > 0.0,
           TC_ERR_ARGUMENT, "a tuning measurement needs a variant and a time");
  tc_contraction normal = *shape;
  tc_contraction_normalize(&normal);
  int found = -1;
  for (int i = 0; i < tuner->count && found < 0; ++i)
    if (tc_contraction_equal(&tuner->shapes[i].shape, &normal))
      found = i;
  if (found < 0) {
    if (tuner->count == tuner->capacity) {
      const int capacity = tuner->capacity ? 2 * tuner->capacity : 16;
      measured_shape *grown = realloc(tuner->shapes, (size_t)capacity * sizeof *grown);
      TC_CHECK(grown != NULL, TC_ERR_MEMORY, "out of memory recording tuning measurements");
      tuner->shapes = grown;
      tuner->capacity = capacity;
    }
    found = tuner->count++;
    memset(&tuner->shapes[found], 0, sizeof tuner->shapes[found]);
    tuner->shapes[found].shape = normal;
  }
  measured_shape *m = &tuner->shapes[found];
  m->seconds[variant] = seconds;
  if (m->fastest == 0.0 || seconds < m->fastest)
    m->fastest = seconds;
  return TC_SUCCESS;
}

/* Worst and geometric mean of t_v / t_fastest over the shapes of a class;
 * false when v was not measured on all of them. */
static bool class_ratios(const bench_tuner *t, int klass, tc_variant v, double *worst,
                         double *mean) {
  double log_sum = 0.0;
  int n = 0;
  *worst = 0.0;
  for (int i = 0; i < t->count; ++i) {
    const measured_shape *m = &t->shapes[i];
    if (m->klass != klass)
      continue;
    if (!(m->seconds[v] > 0.0))
      return false;
    const double ratio = m->seconds[v] / m->fastest;
    *worst = ratio > *worst ? ratio : *worst;
    log_sum += log(ratio);
    ++n;
  }
  *mean = n > 0 ? exp(log_sum / n) : 0.0;
  return n > 0;
}

/* "8x8x8 (C=1000)": a shape in the note of its class. */
static int shape_text(const tc_contraction *s, char *text, size_t capacity) {
  return snprintf(text, capacity, "%lldx%lldx%lld", (long long)s->num_left_fields,
                  (long long)s->num_right_fields, (long long)tc_contraction_length(s));
}

/* Picks the class's variant and fills its entry; false when no variant
 * measured on all its shapes may be named for the class. */
static bool choose_for_class(const bench_tuner *t, int klass, tc_tuning_entry *entry,
                             double *chosen_worst) {
  bool taken[TC_VARIANT_COUNT] = {false};
  for (;;) {
    tc_variant best = TC_VARIANT_AUTO;
    double best_worst = 0.0, best_mean = 0.0;
    for (int v = TC_VARIANT_AUTO + 1; v < TC_VARIANT_COUNT; ++v) {
      double worst, mean;
      if (taken[v] || !class_ratios(t, klass, (tc_variant)v, &worst, &mean))
        continue;
      const bool better = best == TC_VARIANT_AUTO || worst < best_worst * 0.995 ||
                          (worst <= best_worst * 1.005 && mean < best_mean);
      if (better) {
        best = (tc_variant)v;
        best_worst = worst;
        best_mean = mean;
      }
    }
    if (best == TC_VARIANT_AUTO)
      return false;
    entry->variant = best;
    char why[512];
    if (tc_tuning_entry_check(t->backend, entry, why, sizeof why)) {
      *chosen_worst = best_worst;
      return true;
    }
    taken[best] = true;
  }
}

tc_err bench_tuner_write(bench_tuner *t, const char *device, const char *comment,
                         const char *path, FILE *out) {
  TC_CHECK(t->count > 0, TC_ERR_INPUT, "--tune: no verified row to tune from");
  tc_tuning_entry *entries, *chosen_entries = NULL;
  TC_CALLOC(entries, t->count);
  chosen_entries = calloc((size_t)t->count, sizeof *chosen_entries);
  if (chosen_entries == NULL) {
    free(entries);
    TC_FAIL(TC_ERR_MEMORY, "out of memory choosing the tuning entries");
  }
  int classes = 0;
  for (int i = 0; i < t->count; ++i) {
    tc_tuning_entry e;
    tc_tuning_class_of(&t->shapes[i].shape, &e);
    int found = -1;
    for (int c = 0; c < classes && found < 0; ++c)
      if (entries[c].kernel == e.kernel && entries[c].layout == e.layout &&
          entries[c].precision == e.precision && entries[c].one_data_point == e.one_data_point &&
          memcmp(entries[c].low, e.low, sizeof e.low) == 0 &&
          memcmp(entries[c].high, e.high, sizeof e.high) == 0)
        found = c;
    if (found < 0) {
      found = classes++;
      entries[found] = e;
    }
    t->shapes[i].klass = found;
  }
  fprintf(out, "\ntuning: %d shape(s) in %d class(es); ratios are times over the fastest "
               "variant of each shape (worst over the class)\n",
          t->count, classes);
  fprintf(out, "%-16s %-5s %-6s %-24s %6s  %-16s %-22s %s\n", "kernel", "lay", "prec",
          "class (rows cols K)", "shapes", "chosen (worst)", "rules (worst)", "vendor (worst)");
  int written = 0;
  const tc_contract_backend *backend = tc_contract_backend_get(t->backend);
  for (int c = 0; c < classes; ++c) {
    tc_tuning_entry e = entries[c];
    double worst = 0.0;
    const bool chosen = choose_for_class(t, c, &e, &worst);
    /* The note: the shapes and how the choice, the rules and the vendor fare. */
    int shapes = 0;
    char list[160] = "", text[48];
    size_t used = 0;
    tc_variant rule = TC_VARIANT_AUTO;
    for (int i = 0; i < t->count; ++i)
      if (t->shapes[i].klass == c) {
        ++shapes;
        if (rule == TC_VARIANT_AUTO && backend != NULL &&
            tc_contract_resolve(backend, &t->shapes[i].shape, TC_VARIANT_AUTO, &rule) != TC_SUCCESS) {
          tc_error_clear();
          rule = TC_VARIANT_AUTO;
        }
        shape_text(&t->shapes[i].shape, text, sizeof text);
        if (used + strlen(text) + 8 < sizeof list)
          used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                   text);
      }
    double rule_worst = 0.0, vendor_worst = 0.0, mean;
    const bool rule_known =
        rule != TC_VARIANT_AUTO && class_ratios(t, c, rule, &rule_worst, &mean);
    const bool vendor_known = class_ratios(t, c, TC_VARIANT_VENDOR, &vendor_worst, &mean);
    char class_text[64], rule_text[40] = "-", vendor_text[24] = "-", chosen_text[40] = "none";
    snprintf(class_text, sizeof class_text, "%lld-%lld %lld-%lld %lld-%lld", (long long)e.low[0],
             (long long)e.high[0], (long long)e.low[1], (long long)e.high[1],
             (long long)e.low[2], (long long)e.high[2]);
    if (rule_known)
      snprintf(rule_text, sizeof rule_text, "%s (%.2f)", tc_variant_name(rule), rule_worst);
    if (vendor_known)
      snprintf(vendor_text, sizeof vendor_text, "%.2f", vendor_worst);
    if (chosen) {
      snprintf(chosen_text, sizeof chosen_text, "%s (%.2f)", tc_variant_name(e.variant), worst);
      const bool vendor_note = vendor_known && e.variant != TC_VARIANT_VENDOR;
      snprintf(e.note, sizeof e.note, "%d shape(s) LxRxK %s: %s %.2f of the fastest%s%s",
               shapes, list, tc_variant_name(e.variant), worst, vendor_note ? ", vendor " : "",
               vendor_note ? vendor_text : "");
      if (rule_known && rule != e.variant) {
        const size_t length = strlen(e.note);
        snprintf(e.note + length, sizeof e.note - length, ", rules' %s %.2f",
                 tc_variant_name(rule), rule_worst);
      }
      chosen_entries[written++] = e;
    }
    fprintf(out, "%-16s %-5s %-6s %-24s %6d  %-16s %-22s %s\n", tc_kernel_name(e.kernel),
            tc_layout_name(e.layout), tc_precision_name(e.precision), class_text, shapes,
            chosen_text, rule_text, vendor_text);
  }
  tc_err err = written > 0 ? tc_tuning_write(path, t->backend, device, comment, chosen_entries,
                                              written)
                           : tc_error_raise(TC_ERR_INPUT, __FILE__, __LINE__, __func__,
                                            "--tune: no class has a variant to name");
  if (err == TC_SUCCESS)
    fprintf(out, "wrote %d entr%s to tuning file '%s' (device '%s')\n", written,
            written == 1 ? "y" : "ies", path, device);
  free(entries);
  free(chosen_entries);
  return err;
}
