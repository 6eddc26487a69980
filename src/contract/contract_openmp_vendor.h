/* contract_openmp_vendor: the OpenMP backend's TC_VARIANT_VENDOR, the small
 * GEMMs of a vendor library called once per cell under OpenMP. Implemented
 * by contract_openmp_vendor.c with libxsmm, or by contract_openmp_vendor_stub.c
 * (no shape supported) when the build has no libxsmm. Private to
 * src/contract. */
#ifndef CONTRACT_OPENMP_VENDOR_H
#define CONTRACT_OPENMP_VENDOR_H

#include <stdbool.h>

#include "tc_contract.h"

/// "libxsmm 1.17", or NULL when this build has no vendor library.
const char *tc_openmp_vendor_library(void);

/// True for a FieldField shape (either layout) whose sizes the library
/// takes (a validated, normalized shape): in layout left, blocks of cells
/// are gathered into per-cell matrices first.
bool tc_openmp_vendor_supports(const tc_contraction *shape);

/// out(c) = left(c) * right(c)^T (+ out(c) with sum_into) for every cell, in
/// the working precision; threads over cells (over blocks of consecutive
/// cells in layout left). A shape the library cannot
/// take gives TC_ERR_UNSUPPORTED.
tc_err tc_openmp_vendor_run(const tc_contraction *shape, const void *left, const void *right,
                            void *output);

#endif
