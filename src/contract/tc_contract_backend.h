/* tc_contract_backend: the one backend seam of the contraction library, a
 * table of functions per backend (serial, OpenMP, CUDA). Private to
 * src/contract and src/device; users go through tc_contract(). */
#ifndef TC_CONTRACT_BACKEND_H
#define TC_CONTRACT_BACKEND_H

#include "tc_contract.h"

struct tc_contract_backend {
  tc_backend_kind kind;
  /// True if this backend runs `variant` (never AUTO) on a validated shape.
  bool (*supports)(const tc_contraction *shape, tc_variant variant);
  /// The variant AUTO resolves to on a validated shape.
  tc_variant (*choose)(const tc_contraction *shape);
  /// Runs a validated shape with a supported, resolved variant.
  tc_err (*run)(const tc_contraction *shape, tc_variant variant, const void *left,
                const void *right, void *output, void *stream);
  /// The library behind TC_VARIANT_VENDOR ("cuBLAS 13.1.0"), NULL if none
  /// (as is a NULL function).
  const char *(*vendor_library)(void);
  /// Runs a validated shape with a supported, resolved variant once and
  /// gives its time in seconds (the device waited for). NULL: the backend
  /// does not time variants, and AUTO never probes on it.
  tc_err (*time_run)(const tc_contraction *shape, tc_variant variant, const void *left,
                     const void *right, void *output, void *stream, double *seconds);
  /// Releases what the backend keeps between calls (the vendor library's
  /// handles); the next call that needs them makes them again. NULL: nothing.
  void (*release)(void);
};

/// The backends' tables; each is defined by its backend's source file and
/// exists only when that backend is compiled in.
extern const tc_contract_backend tc_contract_backend_serial;
extern const tc_contract_backend tc_contract_backend_openmp;
extern const tc_contract_backend tc_contract_backend_cuda;

#endif
