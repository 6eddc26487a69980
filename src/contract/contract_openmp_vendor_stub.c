/* contract_openmp_vendor_stub: the OpenMP backend's vendor variant in a build
 * without libxsmm: no shape is supported (tc_contract_vendor_refusal says
 * why), and a call fails with TC_ERR_UNSUPPORTED. */
#include <stddef.h>

#include "contract_openmp_vendor.h"

const char *tc_openmp_vendor_library(void) { return NULL; }

bool tc_openmp_vendor_supports(const tc_contraction *shape) {
  (void)shape;
  return false;
}

tc_err tc_openmp_vendor_run(const tc_contraction *shape, const void *left, const void *right,
                            void *output) {
  (void)shape, (void)left, (void)right, (void)output;
  TC_FAIL(TC_ERR_UNSUPPORTED, "this build has no libxsmm, the openmp backend's vendor library "
                              "(install libxsmm-dev and configure again)");
}
