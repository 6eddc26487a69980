/* tc_function_space: HGRAD fields in physical space for a batch of cells
 * (Intrepid's FunctionSpaceTools: HGRADtransformVALUE, HGRADtransformGRAD,
 * multiplyMeasure), written in the layout and precision the contractions
 * read, so the assembly passes them straight to tc_contract. Computed in
 * double, rounded once on output; OpenMP threads over cells; not collective.
 * Outputs are host arrays that must not overlap the inputs. */
#ifndef TC_FUNCTION_SPACE_H
#define TC_FUNCTION_SPACE_H

#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// Basis values per cell, (C,F,P) in layout/precision:
///   output(c,f,p) = ref_values(f,p)                   when measures is NULL (HGRADtransformVALUE),
///   output(c,f,p) = measures(c,p) * ref_values(f,p)   otherwise (then multiplyMeasure).
/// ref_values (F,P) from tc_basis_values; measures (C,P) from tc_geometry_measures.
/// TC_ERR_ARGUMENT for negative counts, num_fields < 1, a bad layout or precision.
tc_err tc_hgrad_values(int64_t num_cells, int num_fields, int64_t num_points,
                       const double *ref_values, const double *measures, tc_layout layout,
                       tc_precision precision, void *output);

/// Physical basis gradients per cell, (C,F,P,3) in layout/precision:
///   output(c,f,p,i) = sum_j inverse_jacobians(c,p,j,i) * ref_gradients(f,p,j)   (J^{-T} grad_ref,
///                     HGRADtransformGRAD), times measures(c,p) when measures is not NULL.
/// ref_gradients (F,P,3) from tc_basis_gradients; inverse_jacobians (C,P,3,3) from
/// tc_geometry_invert_jacobians; measures (C,P) or NULL.
/// TC_ERR_ARGUMENT for negative counts, num_fields < 1, a bad layout or precision.
tc_err tc_hgrad_gradients(int64_t num_cells, int num_fields, int64_t num_points,
                          const double *ref_gradients, const double *inverse_jacobians,
                          const double *measures, tc_layout layout, tc_precision precision,
                          void *output);

#endif
