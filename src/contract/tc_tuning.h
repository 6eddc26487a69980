/* tc_tuning: a tuning file, AUTO's choice per shape class measured on one
 * device (written by `tcmini-bench --tune`, read by the mini-app's
 * run.tuning and by tc_contract_choose). A shape class is a kernel, a
 * layout, a precision and ranges of its sizes (never single shapes), so the
 * file speaks for shapes that were not measured. Format (docs/tuning.md):
 *
 *   tcmini-tuning 1
 *   backend cuda
 *   device NVIDIA H100 80GB HBM3
 *   kernel=FieldFieldTensor layout=right precision=double L=65-128 R=65-128 K=129-256 variant=vendor
 *
 * '#' starts a comment; size keys per kernel family: FieldField L, R, K;
 * DataField F, K, data (P: a value per point, 1: one per cell); DataData K
 * (K = P*D1*D2, the contracted length); each takes "low-high" or one number.
 * Classes of one kernel, layout and precision may not overlap. */
#ifndef TC_TUNING_H
#define TC_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_contract.h"
#include "tc_error.h"

/// The sizes a class has ranges for: the rows of the output (L or F), its
/// columns (R; 1 outside FieldField) and the contracted length K = P*D1*D2.
enum { TC_TUNING_ROWS, TC_TUNING_COLS, TC_TUNING_LENGTH, TC_TUNING_SIZES };

/// One line of a tuning file: a shape class and the variant AUTO takes there.
typedef struct {
  tc_kernel kernel;
  tc_layout layout;
  tc_precision precision;
  bool one_data_point;             ///< DataField: one data value per cell (data=1)
  int64_t low[TC_TUNING_SIZES];    ///< inclusive ranges, 1 <= low <= high
  int64_t high[TC_TUNING_SIZES];
  tc_variant variant;              ///< never AUTO in a file
  char note[256];                  ///< written after the entry as "# note"; may be empty
} tc_tuning_entry;

/// Version of the format this build reads and writes.
enum { TC_TUNING_FORMAT = 1 };

/// The class tcmini-bench --tune files a shape under: its kernel, layout,
/// precision and data points, and for each size the power-of-two bucket that
/// holds it ([1,1], [2,2], [3,4], [5,8], ..., [2^(b-1)+1, 2^b]). The
/// variant is AUTO and the note empty. shape need not be normalized.
void tc_tuning_class_of(const tc_contraction *shape, tc_tuning_entry *entry);

/// True if the entry's class holds the (normalized) shape.
bool tc_tuning_entry_covers(const tc_tuning_entry *entry, const tc_contraction *shape);

typedef struct tc_tuning tc_tuning;

/// Whether a tuning file of backend may hold the entry (the checks
/// tc_tuning_parse makes of one line): a known kernel, layout, precision and
/// a variant other than AUTO; ranges 1 <= low <= high (1 for sizes the kernel
/// lacks); a variant the backend runs at one end of the class at least (a
/// shape inside it where the variant does not run gets the backend's rules).
/// False with the reason written to why otherwise.
bool tc_tuning_entry_check(tc_backend_kind backend, const tc_tuning_entry *entry, char *why,
                           size_t capacity);

/// Reads a tuning file's text: origin names it in messages ("file:line: ...").
/// backend: the backend that will use it; device: the name of the device it
/// will run on (tc_device_model), or NULL to accept any. Fails with one line
/// (TC_ERR_INPUT) on a text that is not a tuning file, of another format
/// version, another backend or device, a bad or duplicate key, a bad range, an
/// unknown variant, an entry tc_tuning_entry_check refuses, or classes that
/// overlap. Not collective.
tc_err tc_tuning_parse(const char *origin, const char *text, tc_backend_kind backend,
                       const char *device, tc_tuning **tuning);

/// The text of the file at path (NUL-terminated; the caller frees it):
/// TC_ERR_IO names the path and the system's reason when it cannot be read,
/// TC_ERR_INPUT when it is over 1 MiB or holds NUL bytes (not a tuning
/// file). Not collective.
tc_err tc_tuning_read_text(const char *path, char **text);

/// tc_tuning_parse of the file at path (tc_tuning_read_text). Not collective.
tc_err tc_tuning_load(const char *path, tc_backend_kind backend, const char *device,
                      tc_tuning **tuning);

/// Frees the tuning and sets *tuning to NULL. NULL is fine.
void tc_tuning_destroy(tc_tuning **tuning);

tc_backend_kind tc_tuning_backend(const tc_tuning *tuning);
/// The device named in the file.
const char *tc_tuning_device(const tc_tuning *tuning);
/// Where it was read from (the origin given to tc_tuning_parse).
const char *tc_tuning_origin(const tc_tuning *tuning);
int tc_tuning_count(const tc_tuning *tuning);
const tc_tuning_entry *tc_tuning_entry_at(const tc_tuning *tuning, int index);

/// The variant of the entry whose class holds the (normalized) shape: true
/// and *variant set, or false when no entry holds it.
bool tc_tuning_lookup(const tc_tuning *tuning, const tc_contraction *shape, tc_variant *variant);

/// The text of a tuning file: the header for backend and device, the lines
/// of comment (may be NULL; each line is written after "# "), then one line
/// per entry. *text is the caller's to free(). Entries are checked as
/// tc_tuning_parse checks them (TC_ERR_ARGUMENT when one is not valid).
tc_err tc_tuning_format(tc_backend_kind backend, const char *device, const char *comment,
                        const tc_tuning_entry *entries, int count, char **text);

/// Writes tc_tuning_format's text to path: to a temporary file beside it,
/// renamed over path once complete, so that a failed write leaves an
/// existing file as it was. Not collective.
tc_err tc_tuning_write(const char *path, tc_backend_kind backend, const char *device,
                       const char *comment, const tc_tuning_entry *entries, int count);

#endif
