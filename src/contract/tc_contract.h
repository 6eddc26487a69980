/* tc_contract: the public interface of the nine Intrepid tensor contractions
 * (FieldField, DataField, DataData x Scalar, Vector, Tensor): shapes, layouts,
 * precisions, algorithm variants, and the backends that run them. */
#ifndef TC_CONTRACT_H
#define TC_CONTRACT_H

#include <stdbool.h>
#include <stdint.h>

#include "tc_error.h"

/// The nine kernels, with Intrepid's names (tc_kernel_name). Logical index
/// order (C cells, L/R/F fields, P points, D1/D2 tensor dimensions):
///   FieldField{Scalar,Vector,Tensor}: out(C,L,R) = sum left(C,L,P[,D1[,D2]]) * right(C,R,P[,D1[,D2]])
///   DataField{Scalar,Vector,Tensor}:  out(C,F)   = sum left=data(C,Pd[,D1[,D2]]) * right=fields(C,F,P[,D1[,D2]])
///                                     with Pd = P, or Pd = 1 (one data value per cell, used at every point)
///   DataData{Scalar,Vector,Tensor}:   out(C)     = sum left(C,P[,D1[,D2]]) * right(C,P[,D1[,D2]])
/// Every index that does not appear in the output is summed.
typedef enum {
  TC_FIELD_FIELD_SCALAR,
  TC_FIELD_FIELD_VECTOR,
  TC_FIELD_FIELD_TENSOR,
  TC_DATA_FIELD_SCALAR,
  TC_DATA_FIELD_VECTOR,
  TC_DATA_FIELD_TENSOR,
  TC_DATA_DATA_SCALAR,
  TC_DATA_DATA_VECTOR,
  TC_DATA_DATA_TENSOR,
  TC_KERNEL_COUNT
} tc_kernel;

/// Physical layout of every array of one contraction.
///   TC_LAYOUT_RIGHT: row-major in the logical order (cell index slowest; each
///                    cell's data contiguous: cache-friendly on CPUs).
///   TC_LAYOUT_LEFT:  column-major in the logical order (cell index fastest:
///                    adjacent GPU threads read adjacent words).
/// The same logical arrays give the same results in either layout.
typedef enum { TC_LAYOUT_RIGHT, TC_LAYOUT_LEFT, TC_LAYOUT_COUNT } tc_layout;

/// Element type of every array of one contraction.
typedef enum { TC_DOUBLE, TC_FLOAT, TC_PRECISION_COUNT } tc_precision;

/// Algorithm variants. Not every backend runs every variant on every kernel
/// (tc_contract_supports says which); TC_VARIANT_AUTO lets the backend choose.
typedef enum {
  TC_VARIANT_AUTO,
  TC_VARIANT_REFERENCE,        ///< the serial oracle: clarity, not speed
  TC_VARIANT_FLAT,             ///< one worker per output entry (GPU) / per cell (CPU), no cooperation
  TC_VARIANT_BLOCKED,          ///< CPU: threads over cells, register/cache-blocked micro-kernels
  TC_VARIANT_TEAM_DEPTH1,      ///< GPU: a block per contraction, block reduction over the contracted index
  TC_VARIANT_TEAM_DEPTH2,      ///< GPU: D1*D2 threads per contraction sum over the points, team reduction
  TC_VARIANT_TEAMSTRIDE,       ///< GPU: a fixed team of 32-64 threads strides over the contracted index
  TC_VARIANT_TEAM_PACKED,      ///< GPU: several short contractions packed into one warp
  TC_VARIANT_SLICING,          ///< GPU: a slice of left in shared memory, reused over right
  TC_VARIANT_ADAPTIVE_SLICING, ///< GPU: several slices per team
  TC_VARIANT_TILING,           ///< GPU: shared-memory tiles over (L,R), contracted index walked tile by tile
  TC_VARIANT_STAGED,           ///< GPU: cells' inputs staged in shared memory by coalesced runs, summed there
  TC_VARIANT_CELL_ROWS,        ///< GPU: DataField, layout right: a warp per slab of a cell's rows, data row in registers
  TC_VARIANT_VENDOR,           ///< FieldField: the vendor library's small/batched GEMM (cuBLAS
                               ///< strided-batched on CUDA, layout right; libxsmm per cell on OpenMP,
                               ///< layout right, or left through blocks of cells gathered per cell;
                               ///< tc_contract_vendor_library names it). "cublas" is another name for it.
  TC_VARIANT_COUNT
} tc_variant;

/// Where the variant that runs came from (tc_contract_choose).
typedef enum {
  TC_CHOICE_ASKED,  ///< the caller named the variant
  TC_CHOICE_RULE,   ///< AUTO: the backend's built-in rules
  TC_CHOICE_TUNING, ///< AUTO: an entry of a tuning file (tc_tuning.h)
  TC_CHOICE_PROBE,  ///< AUTO: the faster of the rule's variant and the vendor's, timed at the first call
  TC_CHOICE_COUNT
} tc_choice;

/// Backends, chosen at run time among those compiled in.
typedef enum { TC_BACKEND_SERIAL, TC_BACKEND_OPENMP, TC_BACKEND_CUDA, TC_BACKEND_COUNT } tc_backend_kind;

/// One contraction: kernel, sizes, layout, precision, and Intrepid's sumInto.
/// Sizes that a kernel does not use must be 1 (or 0: tc_contraction_normalize
/// sets them to 1): num_right_fields outside FieldField, num_left_fields for
/// DataData, dim1 for Scalar kernels, dim2 outside Tensor kernels,
/// num_data_points outside DataField.
typedef struct {
  tc_kernel kernel;
  int64_t num_cells;        ///< C
  int64_t num_left_fields;  ///< L for FieldField, F for DataField
  int64_t num_right_fields; ///< R for FieldField
  int64_t num_points;       ///< P
  int64_t num_data_points;  ///< DataField only: P, or 1 for one data value per cell
  int64_t dim1;             ///< D1 (Vector and Tensor kernels)
  int64_t dim2;             ///< D2 (Tensor kernels)
  tc_layout layout;
  tc_precision precision;
  bool sum_into;            ///< add to output instead of overwriting it
} tc_contraction;

/// "FieldFieldScalar", ... ; "unknown" for a bad value.
const char *tc_kernel_name(tc_kernel kernel);
/// Looks a kernel up by its Intrepid name (case-insensitive; the "Contract"
/// prefix is optional). TC_ERR_INPUT with the name if unknown.
tc_err tc_kernel_from_name(const char *name, tc_kernel *kernel);
const char *tc_layout_name(tc_layout layout);               ///< "right", "left"
tc_err tc_layout_from_name(const char *name, tc_layout *layout);
const char *tc_precision_name(tc_precision precision);      ///< "double", "float"
tc_err tc_precision_from_name(const char *name, tc_precision *precision);
const char *tc_variant_name(tc_variant variant);            ///< "auto", "flat", "team-depth1", ..., "vendor"
/// Looks a variant up by name (case-insensitive); "cublas" is read as
/// "vendor". TC_ERR_INPUT with the name if unknown.
tc_err tc_variant_from_name(const char *name, tc_variant *variant);
const char *tc_choice_name(tc_choice choice);               ///< "asked", "rule", "tuning"
const char *tc_backend_name(tc_backend_kind backend);       ///< "serial", "openmp", "cuda"
tc_err tc_backend_from_name(const char *name, tc_backend_kind *backend);

/// True for FieldField kernels (output has two field indices), etc.
bool tc_kernel_is_field_field(tc_kernel kernel);
bool tc_kernel_is_data_field(tc_kernel kernel);
bool tc_kernel_is_data_data(tc_kernel kernel);
/// Number of tensor dimensions per point: 0 (Scalar), 1 (Vector), 2 (Tensor).
int tc_kernel_tensor_rank(tc_kernel kernel);

/// True if two shapes are the same contraction: kernel, every size, layout,
/// precision and sum_into (compare normalized shapes).
bool tc_contraction_equal(const tc_contraction *a, const tc_contraction *b);

/// Sets unused sizes to 1 (see tc_contraction) so that counts can be computed.
void tc_contraction_normalize(tc_contraction *shape);

/// Checks a (normalized) shape: a known kernel, layout and precision, every
/// used size >= 1, unused sizes == 1, num_data_points == P or 1, and element
/// counts that fit in int64. TC_ERR_SHAPE naming the offending size.
tc_err tc_contraction_validate(const tc_contraction *shape);

/// Logical rank and extents of the left, right and output arrays, in the
/// logical index order above (dims has room for 5 entries).
int tc_contraction_left_dims(const tc_contraction *shape, int64_t dims[5]);
int tc_contraction_right_dims(const tc_contraction *shape, int64_t dims[5]);
int tc_contraction_output_dims(const tc_contraction *shape, int64_t dims[5]);

/// Element counts of the three arrays.
int64_t tc_contraction_left_count(const tc_contraction *shape);
int64_t tc_contraction_right_count(const tc_contraction *shape);
int64_t tc_contraction_output_count(const tc_contraction *shape);
/// Bytes of one element (8 or 4).
int64_t tc_precision_size(tc_precision precision);

/// Length of one contraction: P*D1*D2 (the collapsed contracted index).
int64_t tc_contraction_length(const tc_contraction *shape);

/// Floating-point operations of one call: 2 per multiply-add (plus one add
/// per output entry with sum_into).
double tc_contraction_flops(const tc_contraction *shape);

/// Compulsory device-memory traffic of one call in bytes: each input read
/// once, the output written once (and read once with sum_into).
double tc_contraction_bytes(const tc_contraction *shape);

/// Offset of a logical multi-index (as many entries as the array's logical
/// rank, given by dims/rank) in the given physical layout.
int64_t tc_layout_offset(tc_layout layout, int rank, const int64_t dims[],
                         const int64_t index[]);

/// The backend's function table (see tc_contract_backend.h). NULL when that
/// backend is not compiled in.
typedef struct tc_contract_backend tc_contract_backend;
const tc_contract_backend *tc_contract_backend_get(tc_backend_kind kind);

/// Releases what the backend keeps between calls (the vendor library's
/// handles: one cuBLAS handle per GPU, made at the first vendor call on that
/// GPU); later calls make them again. tc_device_destroy calls it when the
/// last device of the backend closes. NULL is fine. Not thread-safe against
/// concurrent contractions on that backend.
void tc_contract_backend_release(const tc_contract_backend *backend);

/// True if backend runs variant on this shape (AUTO is always supported).
bool tc_contract_supports(const tc_contract_backend *backend,
                          const tc_contraction *shape, tc_variant variant);

/// The library behind the backend's TC_VARIANT_VENDOR, with its version
/// where known ("cuBLAS 12.8.4", "libxsmm 1.17"), or NULL when this build
/// has none for the backend (then no shape supports the vendor variant).
const char *tc_contract_vendor_library(const tc_contract_backend *backend);

/// Why the backend does not run TC_VARIANT_VENDOR on shape, in the user's
/// terms (one line), or NULL when it does.
const char *tc_contract_vendor_refusal(const tc_contract_backend *backend,
                                       const tc_contraction *shape);

/// The variant that runs for `variant` on this shape: variant itself, or the
/// backend's choice for TC_VARIANT_AUTO. TC_ERR_UNSUPPORTED if the backend
/// cannot run the variant on this shape.
tc_err tc_contract_resolve(const tc_contract_backend *backend,
                           const tc_contraction *shape, tc_variant variant,
                           tc_variant *resolved);

/// As tc_contract_resolve, and says where the variant came from: a named
/// variant is *source TC_CHOICE_ASKED; AUTO takes the entry of tuning (a
/// tc_tuning, NULL for none) that covers the shape when there is one and the
/// backend runs its variant on this shape (TC_CHOICE_TUNING), else the
/// backend's rules (TC_CHOICE_RULE).
typedef struct tc_tuning tc_tuning;
tc_err tc_contract_choose(const tc_contract_backend *backend, const tc_tuning *tuning,
                          const tc_contraction *shape, tc_variant variant, tc_variant *resolved,
                          tc_choice *source);

/// AUTO's first-call probe (on by default): where a backend can time its
/// variants and runs the vendor variant on a FieldField shape, and no tuning
/// entry covers it, the first tc_contract call of each shape (every size,
/// layout and precision) with AUTO times the rule's variant and the vendor's
/// on the caller's arrays (twice each, the faster run counting; not for
/// sum_into, whose output would be added to more than once) and runs the
/// faster from then on, so that AUTO is never behind the vendor library by
/// more than the timing noise. The choice is kept for the process (the last
/// 256 shapes); tc_contract_choose reports it as TC_CHOICE_PROBE once made.
/// Not thread-safe: one thread a process calls tc_contract with AUTO.
void tc_contract_set_probe(bool enabled);
bool tc_contract_probe_enabled(void);

/// Runs one contraction: validates the shape, resolves the variant and runs
/// it. left, right and output live in the backend's memory space (device
/// memory for CUDA) and do not overlap; output is written (or, with sum_into,
/// added to) in full. stream: the CUDA stream (cudaStream_t) or NULL for the
/// default; ignored by CPU backends. Asynchronous on CUDA. Not collective.
tc_err tc_contract(const tc_contract_backend *backend, const tc_contraction *shape,
                   tc_variant variant, const void *left, const void *right,
                   void *output, void *stream);

#endif
