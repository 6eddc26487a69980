/* tc_basis: the Lagrange HGRAD bases Q1 (hex8) and Q2 (hex27) on the
 * reference hexahedron [-1,1]^3 (Intrepid's Basis_HGRAD_HEX_C1/C2_FEM, with
 * tcmini's node order), tabulated at batches of reference points. */
#ifndef TC_BASIS_H
#define TC_BASIS_H

#include <stdint.h>

#include "tc_error.h"

/// Basis functions of the order (order+1)^3 (8 for Q1, 27 for Q2); 0 for an
/// order other than 1 or 2.
int tc_basis_num_fields(int order);

/// Reference coordinates of the nodes, [F][3]. Function/node f = a + (order+1)*(b
/// + (order+1)*c) sits at (t[a], t[b], t[c]) with 1-D nodes t = {-1, 1} (Q1) or
/// {-1, 0, 1} (Q2): the tensor-product order of tc_mesh's cell nodes. Basis
/// function f is 1 at node f and 0 at the others. TC_ERR_ARGUMENT for a bad order.
tc_err tc_basis_nodes(int order, double *nodes);

/// Values of every basis function at num_points reference points:
/// values[f*P + p] (logical (F,P), row-major). points is [P][3].
/// TC_ERR_ARGUMENT for a bad order or a negative num_points.
tc_err tc_basis_values(int order, int64_t num_points, const double *points, double *values);

/// Reference gradients (d/dxi, d/deta, d/dzeta) of every basis function:
/// gradients[(f*P + p)*3 + d] (logical (F,P,3), row-major). points is [P][3].
/// TC_ERR_ARGUMENT for a bad order or a negative num_points.
tc_err tc_basis_gradients(int order, int64_t num_points, const double *points, double *gradients);

#endif
