/* tc_geometry: the geometry of a batch of hexahedral cells at reference
 * points (Intrepid's CellTools): Jacobians of the reference-to-physical map,
 * their determinants and inverses, weighted measures, physical points. All
 * arrays are double, row-major in the logical order given; the functions run
 * with OpenMP threads over cells and are not collective. */
#ifndef TC_GEOMETRY_H
#define TC_GEOMETRY_H

#include <stdint.h>

#include "tc_error.h"

/// Jacobians of the isoparametric maps x(xi) = sum_a X_a phi_a(xi) of
/// num_cells cells at num_points reference points:
///   jacobians (C,P,3,3), J_ij = d x_i / d xi_j = sum_a node_coords(c,a,i) * ref_gradients(a,p,j).
/// node_coords is (C,Nn,3): each cell's node coordinates gathered in the basis
/// node order (tc_basis_nodes); ref_gradients is (Nn,P,3) from
/// tc_basis_gradients for the cell's order (Nn = nodes_per_cell).
/// TC_ERR_ARGUMENT for negative counts or nodes_per_cell < 1.
tc_err tc_geometry_jacobians(int64_t num_cells, int nodes_per_cell, const double *node_coords,
                             int64_t num_points, const double *ref_gradients, double *jacobians);

/// Determinants (C,P) and, when inverses is not NULL, inverses (C,P,3,3) of
/// jacobians (C,P,3,3). TC_ERR_ARGUMENT naming the first cell (its index in
/// this batch) with det J <= 0 at some point: an inverted or degenerate cell;
/// the outputs are then incomplete.
tc_err tc_geometry_invert_jacobians(int64_t num_cells, int64_t num_points, const double *jacobians,
                                    double *determinants, double *inverses);

/// Weighted measures (C,P): measures(c,p) = weights(p) * determinants(c,p),
/// the volume element of cell c at quadrature point p (they sum to the
/// cell's volume). weights is (P), e.g. tc_quadrature_weights.
/// TC_ERR_ARGUMENT naming the first cell (its index in this batch) with
/// det J <= 0 at some point.
tc_err tc_geometry_measures(int64_t num_cells, int64_t num_points, const double *determinants,
                            const double *weights, double *measures);

/// Physical points (C,P,3): x(c,p,i) = sum_a node_coords(c,a,i) * ref_values(a,p),
/// node_coords (C,Nn,3) as for tc_geometry_jacobians, ref_values (Nn,P) from
/// tc_basis_values. TC_ERR_ARGUMENT for negative counts or nodes_per_cell < 1.
tc_err tc_geometry_physical_points(int64_t num_cells, int nodes_per_cell,
                                   const double *node_coords, int64_t num_points,
                                   const double *ref_values, double *points);

#endif
