/* bench_case: the host data of one benchmark case (random or replayed inputs
 * in logical row-major order and the serial reference result), conversion to
 * a physical layout, and the check of a result against the reference. */
#ifndef BENCH_CASE_H
#define BENCH_CASE_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// One case's host arrays, all row-major in logical order (layout RIGHT).
typedef struct {
  tc_contraction shape;  ///< layout RIGHT
  void *left, *right;    ///< the inputs
  void *initial_output;  ///< with sum_into: the output before the call; NULL otherwise
  void *reference;       ///< the serial backend's REFERENCE result of the checked cells
  int64_t num_checked;   ///< cells with a reference: every cell, or a sample
  int64_t *checked;      ///< the sampled cells, ascending; NULL when every cell is checked
} bench_case;

/// Fills a case with random inputs (and initial output with sum_into) drawn
/// from +-[0.5, 1.5): never zero, mixed signs, reproducible from seed; then
/// computes the reference. shape's layout is ignored (the case is RIGHT).
/// On failure the case is left empty.
tc_err bench_case_create_random(const tc_contraction *shape, uint64_t seed, bench_case *c);

/// As bench_case_create_random, with the reference computed for check_cells
/// cells only, spread evenly over the case (the first and the last among
/// them; check_cells 0, or >= C: every cell). Large cases then cost no full
/// run of the serial reference.
tc_err bench_case_create_random_checked(const tc_contraction *shape, uint64_t seed,
                                        int64_t check_cells, bench_case *c);

/// bench_relative_error of a result against the case's reference over its
/// checked cells; output holds every cell, in layout (the case's shape in
/// that physical layout).
double bench_case_error(const bench_case *c, tc_layout layout, const void *output);

/// Makes a case of given inputs and, with shape->sum_into, initial output
/// (host, logical row-major, malloc'ed; the case takes them over and frees
/// them even on failure; initial_output NULL without sum_into) and computes
/// the reference.
tc_err bench_case_create_from(const tc_contraction *shape, void *left, void *right,
                              void *initial_output, bench_case *c);

/// Frees the case's arrays. A zeroed case is fine.
void bench_case_destroy(bench_case *c);

/// The arrays of a contraction.
typedef enum { BENCH_ARRAY_LEFT, BENCH_ARRAY_RIGHT, BENCH_ARRAY_OUTPUT } bench_array;

/// Element count of one array of shape.
int64_t bench_array_count(const tc_contraction *shape, bench_array which);

/// Copies array `which` of shape from logical row-major order into
/// shape->layout (to_layout) or back (!to_layout). source and target are host
/// arrays that do not overlap.
void bench_relayout(const tc_contraction *shape, bench_array which, const void *source,
                    void *target, bool to_layout);

/// ||output - reference||_2 / ||reference||_2 over count elements of the
/// given precision (the plain norm of the difference if the reference is
/// zero); NaN when the output holds a NaN. Both arrays in the same order.
double bench_relative_error(tc_precision precision, int64_t count, const void *output,
                            const void *reference);

/// The largest relative error accepted for shape: a multiple of the unit
/// roundoff times the contraction length (see bench_case.c).
double bench_tolerance(const tc_contraction *shape);

#endif
