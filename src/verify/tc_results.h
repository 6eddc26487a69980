/* tc_results: the assembled results of a run as named fields (the node and
 * cell vectors the results file holds, with units and meaning), and their
 * summaries: sums, norms and extremes, which do not depend on how fast the
 * run was, how many ranks it had or which backend ran it (up to rounding),
 * so that a regression test can compare them with stored reference values
 * (scripts/tcmini-compare). */
#ifndef TC_RESULTS_H
#define TC_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "tc_loop.h"
#include "tc_mesh.h"

/// One node or cell field of the results.
typedef struct {
  const char *group;       ///< "nodes" or "cells": the results file's group
  const char *name;        ///< dataset name within the group, e.g. "load"
  int components;          ///< 1, or 3 for vector fields
  const char *units;       ///< e.g. "length^3" (docs/output.md says what the units are)
  const char *description; ///< what the field is
  size_t offset;           ///< of the field's pointer in tc_loop_results
} tc_result_field;

/// The fields a run can produce, in the results file's order; *count gets
/// how many. A field whose pointer in tc_loop_results is NULL did not run.
const tc_result_field *tc_results_fields(int *count);

/// The values of field in results (NULL when its kernel did not run).
const double *tc_results_values(const tc_result_field *field, const tc_loop_results *results);

/// The summary of one field over the whole mesh: every entry (all
/// components) of every global node or cell counted once.
typedef struct {
  char name[48];     ///< "nodes/load", ...
  const char *units;
  int64_t count;     ///< entries summed
  double sum;        ///< sum of the entries
  double sum_abs;    ///< sum of their magnitudes: the scale of the sum's rounding
  double norm;       ///< 2-norm
  double min, max;
} tc_result_summary;

enum { TC_RESULTS_MAX = 16 };

/// Summarises every field that ran in the last step of loop, in the order of
/// tc_results_fields; *count gets how many. The same values on every rank.
/// Collective on the mesh's communicator.
tc_err tc_results_summarize(const tc_mesh *mesh, const tc_loop *loop,
                            tc_result_summary summaries[TC_RESULTS_MAX], int *count);

#endif
