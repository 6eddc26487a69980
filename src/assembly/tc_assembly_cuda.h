/* tc_assembly_cuda: the GPU twin of tc_assembly's gather-assemble: the
 * rank's node->cell links, the CSR structures and the link positions of a
 * tc_assembly copied to the device once, and the gather of a batch's element
 * outputs into device matrices, node vectors and cell arrays. Each assembled
 * entry is summed over its cells in ascending order, as tc_assembly_add_*
 * does, so the results are bitwise those of the host. Plain C interface;
 * without the CUDA backend in the build every call fails with
 * TC_ERR_UNSUPPORTED. */
#ifndef TC_ASSEMBLY_CUDA_H
#define TC_ASSEMBLY_CUDA_H

#include <stdint.h>

#include "tc_assembly.h"
#include "tc_build.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_assembly_cuda tc_assembly_cuda;

/// What a gather does with a batch's element outputs (tc_assembly_cuda_gather).
typedef enum {
  TC_GATHER_MATRICES, ///< element matrices into CSR values
  TC_GATHER_VECTORS,  ///< element vectors into a node vector
  TC_GATHER_CELLS,    ///< each cell's outputs copied into a cell array
} tc_gather_kind;

/// One gather: the element block, the target's shape and the target
/// (device memory).
typedef struct {
  tc_gather_kind kind;
  tc_element_block block;
  int components;        ///< matrices and vectors: 1 or 3 per node
  int64_t rows, columns; ///< cells: the outputs of a cell
  double *target;
} tc_gather;

#if TCMINI_HAVE_CUDA
/// Copies mesh's node->cell links and cell nodes (mesh: the host part the
/// assembly was built on), assembly's CSR structures and link positions to
/// the device, and works out the node range each batch of batch_cells cells
/// touches (and, where the batch touches few of that range's nodes, the list
/// of those it touches, which its gathers then visit). Work is queued on stream (cudaStream_t). Synchronous. Not
/// collective.
tc_err tc_assembly_cuda_create(const tc_assembly *assembly, const tc_mesh_local *mesh,
                               int64_t batch_cells, void *stream, tc_assembly_cuda **created);

/// Releases the device copies and sets *assembly to NULL. NULL is fine.
void tc_assembly_cuda_destroy(tc_assembly_cuda **assembly);

/// The device copy of the mesh's cell nodes, [num_cells][nodes_per_cell].
const int64_t *tc_assembly_cuda_cell_nodes(const tc_assembly_cuda *assembly);
/// The device CSR structure for `components` (1 or 3) per node: its row
/// offsets (columns NULL: no kernel reads them).
const tc_csr *tc_assembly_cuda_graph(const tc_assembly_cuda *assembly, int components);

/// Gathers the element outputs of batches (block.data in device memory; a
/// batch starts at a multiple of batch_cells) into device targets, all in
/// one launch (at most 12 gathers, of one precision), asynchronously on
/// `stream` (a cudaStream_t; NULL: the stream the assembly was created
/// with):
/// - TC_GATHER_MATRICES adds element matrices into the CSR values of a
///   matrix of `components` (1 or 3) per node. A node's rows are set to
///   zero, not added to, in the batch that holds the node's first cell, so
///   that a step needs no zeroing of the matrices.
/// - TC_GATHER_VECTORS adds element vectors into a node vector
///   [num_nodes][components] (zeroed by the caller before the first batch).
/// - TC_GATHER_CELLS copies the (rows x columns) outputs of each cell into
///   the array [cells][rows][columns] row-major in double, at the batch's
///   cells.
/// Each entry takes its cells in ascending order, so the sums are bitwise
/// those of tc_assembly_add_*.
tc_err tc_assembly_cuda_gather(const tc_assembly_cuda *assembly, int count,
                               const tc_gather *gathers, void *stream);

/// Row sums and diagonal of a device matrix of `components` per node into
/// device node vectors (either may be NULL), each row summed in ascending
/// order as tc_assembly_row_sums_and_diagonal does. Asynchronous.
tc_err tc_assembly_cuda_row_sums_and_diagonal(const tc_assembly_cuda *assembly, int components,
                                              const double *values, double *row_sums,
                                              double *diagonal);

#else

#define TC_ASSEMBLY_CUDA_UNSUPPORTED_                                                      \
  tc_error_raise(TC_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,                         \
                 "the GPU gather-assemble is not in this build (configure with "           \
                 "-DTCMINI_ENABLE_CUDA=ON)")
static inline tc_err tc_assembly_cuda_create(const tc_assembly *assembly,
                                             const tc_mesh_local *mesh, int64_t batch_cells,
                                             void *stream, tc_assembly_cuda **created) {
  (void)assembly, (void)mesh, (void)batch_cells, (void)stream;
  *created = NULL;
  return TC_ASSEMBLY_CUDA_UNSUPPORTED_;
}
static inline void tc_assembly_cuda_destroy(tc_assembly_cuda **assembly) { *assembly = NULL; }
static inline const int64_t *tc_assembly_cuda_cell_nodes(const tc_assembly_cuda *assembly) {
  (void)assembly;
  return NULL;
}
static inline const tc_csr *tc_assembly_cuda_graph(const tc_assembly_cuda *assembly,
                                                   int components) {
  (void)assembly, (void)components;
  return NULL;
}
static inline tc_err tc_assembly_cuda_gather(const tc_assembly_cuda *assembly, int count,
                                             const tc_gather *gathers, void *stream) {
  (void)assembly, (void)count, (void)gathers, (void)stream;
  return TC_ASSEMBLY_CUDA_UNSUPPORTED_;
}
static inline tc_err tc_assembly_cuda_row_sums_and_diagonal(const tc_assembly_cuda *assembly,
                                                            int components, const double *values,
                                                            double *row_sums, double *diagonal) {
  (void)assembly, (void)components, (void)values, (void)row_sums, (void)diagonal;
  return TC_ASSEMBLY_CUDA_UNSUPPORTED_;
}

#endif

#ifdef __cplusplus
}
#endif

#endif
