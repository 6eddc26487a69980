/* tc_checks: correctness checks of an assembled step that a wrong kernel,
 * layout, gather or exchange breaks: exact integrals of the manufactured
 * fields, invariants (constants and rigid motions in the kernel of the
 * stiffness matrices, partition of unity), and agreement between kernels that
 * compute the same quantity two ways (e.g. the load vector of u_h against the
 * mass matrix times u). */
#ifndef TC_CHECKS_H
#define TC_CHECKS_H

#include <stdbool.h>

#include "tc_config.h"
#include "tc_loop.h"
#include "tc_mesh.h"

/// One check: |value - reference| <= tolerance * scale passes.
typedef struct {
  char name[96];
  double value;      ///< what the run computed
  double reference;  ///< what it should be
  double scale;      ///< the size the error is measured against
  double tolerance;  ///< relative tolerance
  bool passed;
  bool skipped;      ///< not applicable (e.g. quadrature not exact for it); see note
  char note[160];
} tc_check;

enum { TC_CHECKS_MAX = 32 };

typedef struct {
  tc_check checks[TC_CHECKS_MAX];
  int count;
  bool passed; ///< every check that ran passed
} tc_check_list;

/// Runs every check that applies to the selected kernels on the results of
/// the last step. The same list on every rank. Collective on the mesh's
/// communicator.
tc_err tc_checks_run(const tc_config *config, const tc_mesh *mesh, const tc_loop *loop,
                     tc_check_list *list);

#endif
