/* tc_replay: HDF5 files that hold one contraction's inputs (datasets "left"
 * and "right", root attribute "kernel") or its result (dataset "output"),
 * every array row-major in the logical index order of tc_contract.h. Used by
 * tcmini-bench --replay to rerun a contraction captured elsewhere. */
#ifndef TC_REPLAY_H
#define TC_REPLAY_H

#include "tc_contract.h"
#include "tc_error.h"

/// Reads a contraction's inputs from the HDF5 file at path. The kernel is
/// *kernel_override when that is not NULL, else the name in the root attribute
/// "kernel" (TC_ERR_INPUT when neither is there). The precision comes from the
/// datasets' type (64- or 32-bit float, the same for both), the sizes from
/// their dimensions, which must be the kernel's logical left and right dims
/// (see tc_contraction_left_dims). On success *shape is a validated shape with
/// layout RIGHT and sum_into false, and *left and *right are host arrays,
/// row-major in logical order, that the caller releases with free().
/// Serial HDF5 calls, one process: not collective.
tc_err tc_replay_read_inputs(const char *path, const tc_kernel *kernel_override,
                             tc_contraction *shape, void **left, void **right);

/// Creates (or truncates) the file at path and writes datasets "left" and
/// "right" with shape's logical dims and precision, and the root attribute
/// "kernel". left and right are host arrays, row-major in logical order
/// whatever shape->layout says. Not collective.
tc_err tc_replay_write_inputs(const char *path, const tc_contraction *shape,
                              const void *left, const void *right);

/// Creates (or truncates) the file at path and writes dataset "output" with
/// shape's logical output dims and precision, and the root attribute "kernel".
/// output is a host array, row-major in logical order. Not collective.
tc_err tc_replay_write_output(const char *path, const tc_contraction *shape,
                              const void *output);

/// Reads dataset "output" of the file at path into the host array output
/// (row-major in logical order, tc_contraction_output_count elements);
/// TC_ERR_SHAPE unless its dims and precision are shape's. Not collective.
tc_err tc_replay_read_output(const char *path, const tc_contraction *shape,
                             void *output);

#endif
