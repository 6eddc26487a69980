/* tc_physics_builder: the CPU builder of the contraction inputs of a batch
 * (tc_physics_input), every input the selected kernels read in one pass
 * over the cells: per cell the physical basis gradients are formed once,
 * at every point, and each input is written from them straight into its
 * array (layout right, double) or through a per-thread cell buffer placed
 * by a table made once (layout left, or float). The values are those of the
 * formulas in tc_physics.h and tc_physics_fields.h, computed in double in
 * the same order whatever the layout, so a batch's inputs do not depend on
 * how the cells are cut into batches. */
#ifndef TC_PHYSICS_BUILDER_H
#define TC_PHYSICS_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_physics.h"

typedef struct tc_physics_builder tc_physics_builder;

/// A builder of the inputs marked in needed, for batches of cells with
/// num_fields fields and num_points points, written in layout and
/// precision, with the fields' values. Sets up the per-thread buffers of
/// the OpenMP threads of the calling thread. Not collective.
tc_err tc_physics_builder_create(const bool needed[TC_INPUT_COUNT], int64_t num_fields,
                                 int64_t num_points, tc_layout layout, tc_precision precision,
                                 const tc_physics_fields *fields, tc_physics_builder **builder);

/// Releases the builder and sets *builder to NULL. NULL is fine.
void tc_physics_builder_destroy(tc_physics_builder **builder);

/// Writes every needed input of the batch into outputs[input] (host arrays
/// of batch->num_cells cells; the other entries are not read), OpenMP
/// threads over the cells. The batch's sizes must be the builder's; its
/// gradients are not read (the builder forms them). Not collective.
tc_err tc_physics_build_inputs(const tc_physics_builder *builder, const tc_physics_batch *batch,
                               void *const outputs[TC_INPUT_COUNT]);

/// One input of the batch into output (host memory), in layout and
/// precision, through a builder made for it alone: for comparisons and tests
/// (the GPU builders are checked against it). Not collective.
tc_err tc_physics_build_input(tc_physics_input input, const tc_physics_batch *batch,
                              const tc_physics_fields *fields, tc_layout layout,
                              tc_precision precision, void *output);

#endif
