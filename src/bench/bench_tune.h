/* bench_tune: tcmini-bench --tune: the timings of every variant on a set of
 * shapes, turned into a tuning file (tc_tuning.h) of AUTO's best variant per
 * shape class. */
#ifndef BENCH_TUNE_H
#define BENCH_TUNE_H

#include <stdio.h>

#include "tc_contract.h"
#include "tc_error.h"

typedef struct bench_tuner bench_tuner;

tc_err bench_tuner_create(tc_backend_kind backend, bench_tuner **tuner);
void bench_tuner_destroy(bench_tuner **tuner);

/// Records the median time of a verified row: shape (with its C), variant.
tc_err bench_tuner_add(bench_tuner *tuner, const tc_contraction *shape, tc_variant variant,
                       double seconds);

/// Chooses per shape class (tc_tuning_class_of) the variant whose worst time
/// over the class's shapes, relative to the fastest variant of each shape, is
/// the smallest (ties within 0.5%: the smaller geometric mean), among the
/// variants measured on all of them that the class may name
/// (tc_tuning_entry_check); prints one line per class to out (the choice,
/// the rules' and the vendor's ratios) and writes the tuning file for device
/// at path (comment: lines for its header). TC_ERR_INPUT when nothing was
/// measured.
tc_err bench_tuner_write(bench_tuner *tuner, const char *device, const char *comment,
                         const char *path, FILE *out);

#endif
