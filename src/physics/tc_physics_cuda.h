/* tc_physics_cuda: the GPU twin of tc_physics_build_input: the contraction
 * inputs of a batch built on the device from the geometry tc_geometry_cuda
 * formed, the same logical arrays as the host builders write, computed in
 * double (the fields and material of tc_physics_fields.h) and rounded once.
 * Plain C interface; without the CUDA backend in the build the call fails
 * with TC_ERR_UNSUPPORTED. */
#ifndef TC_PHYSICS_CUDA_H
#define TC_PHYSICS_CUDA_H

#include "tc_build.h"
#include "tc_geometry_cuda.h"
#include "tc_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

#if TCMINI_HAVE_CUDA
/// Writes every input i with outputs[i] non-NULL (device memory of
/// tc_physics_input_count(i, cells, F, P) elements) for the batch
/// (batch->cells cells) in the layout and precision given, all in one
/// launch, each input on blocks of its own. Asynchronous on stream
/// (cudaStream_t).
tc_err tc_physics_cuda_build_inputs(const tc_geometry_cuda_batch *batch,
                                    const tc_physics_fields *fields, tc_layout layout,
                                    tc_precision precision, void *const outputs[TC_INPUT_COUNT],
                                    void *stream);
#else
static inline tc_err tc_physics_cuda_build_inputs(const tc_geometry_cuda_batch *batch,
                                                  const tc_physics_fields *fields,
                                                  tc_layout layout, tc_precision precision,
                                                  void *const outputs[TC_INPUT_COUNT],
                                                  void *stream) {
  (void)batch, (void)fields, (void)layout, (void)precision, (void)outputs, (void)stream;
  return tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the GPU input builders are not in this build (configure with "
                        "-DTCMINI_ENABLE_CUDA=ON)");
}
#endif

#ifdef __cplusplus
}
#endif

#endif
