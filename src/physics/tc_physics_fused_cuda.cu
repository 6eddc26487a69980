/* tc_physics_fused_cuda: the elasticity trio with its inputs built on chip,
 * on the GPU (see tc_physics_fused.h): the form a batch runs, chosen from
 * its precision, element and the binary's code, each form in a header of
 * its own:
 * - double, sm_90, elements of at most 8 nodes whose tables fit 48 KB of
 *   shared memory (Q1 up to 64 points): the pair form, DMMA fragments built
 *   in registers (fused_cuda_pair.cuh);
 * - double, sm_90, larger elements (Q2): the tensor-core block form, rows
 *   of A and B in shared memory under DMMA tiles (fused_cuda_block.cuh);
 * - float, elements of at most 8 nodes: the warp form, tables of A and B
 *   entries per basis function and point, 3 x 6 register blocks a lane
 *   (fused_cuda_warp.cuh);
 * - otherwise (float Q2, double without sm_90 code): the FMA form, rows of
 *   A and B in shared memory under TM x TM register tiles
 *   (fused_cuda_fma.cuh).
 * What they share: fused_cuda_common.cuh. Only the outputs go to device
 * memory. */
#include <cuda_runtime.h>

extern "C" {
#include "tc_error.h"
#include "tc_physics_fused.h"
}

#include "fused_cuda_block.cuh"
#include "fused_cuda_fma.cuh"
#include "fused_cuda_pair.cuh"
#include "fused_cuda_warp.cuh"

namespace {

/// The forms, in words, for the report.
constexpr const char *kPairForm =
    "pair: FP64 tensor cores (DMMA), fragments built in registers, a pair of warps a cell";
constexpr const char *kBlockForm =
    "block: FP64 tensor cores (DMMA), rows of A and B in shared memory under 16 x 8 tiles";
constexpr const char *kWarpForm =
    "warp: FMA units, a warp a cell, tables of A and B entries per basis function and point";
constexpr const char *kFmaForm =
    "fma: FMA units, rows of A and B in shared memory under register tiles";

} // namespace

extern "C" tc_err tc_physics_cuda_fused_elasticity(const tc_geometry_cuda_batch *batch,
                                                   const tc_physics_fields *fields,
                                                   tc_layout layout, tc_precision precision,
                                                   const tc_physics_fused_outputs *outputs,
                                                   void *stream, const char **form) {
  tc_fused::fused_plan plan = {};
  plan.side = 3 * batch->num_fields + 1;
  const int tm = plan.side <= tc_fused::kMaxSide ? tc_fused::tile_for(plan.side) : 0;
  TC_CHECK(tm > 0, TC_ERR_UNSUPPORTED,
           "the fused elasticity takes elements of at most 42 nodes (got %d)",
           batch->num_fields);
  TC_CHECK(batch->cells >= 0 && batch->cells <= batch->stride, TC_ERR_ARGUMENT,
           "fused elasticity of %lld cells in a batch of %lld", (long long)batch->cells,
           (long long)batch->stride);
  const bool left = layout == TC_LAYOUT_LEFT;
  cudaStream_t s = (cudaStream_t)stream;
  const char *ran_form = kFmaForm;
  bool ran = false;
  if (precision == TC_DOUBLE) {
    TC_CALL(tc_fused::launch_pair(*batch, *fields, left, outputs, s, &ran));
    ran_form = kPairForm;
    if (!ran) {
      TC_CALL(tc_fused::launch_mma(*batch, *fields, plan.side, left, outputs, s, &ran));
      ran_form = kBlockForm;
    }
    if (!ran) {
      TC_CALL(tc_fused::launch_fma<double>(tm, *batch, *fields, plan, left, outputs, s));
      ran_form = kFmaForm;
    }
  } else {
    TC_CALL(tc_fused::launch_warp<float>(*batch, *fields, left, outputs, s, &ran));
    ran_form = kWarpForm;
    if (!ran) {
      TC_CALL(tc_fused::launch_fma<float>(tm, *batch, *fields, plan, left, outputs, s));
      ran_form = kFmaForm;
    }
  }
  if (form)
    *form = ran_form;
  return TC_SUCCESS;
}
