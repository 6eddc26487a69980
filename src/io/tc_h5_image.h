/* tc_h5_image: private to src/io. An HDF5 file built in memory by one
 * process: HDF5 lays out the file (superblock, groups, object headers,
 * attributes, small datasets, and the addresses of large datasets allocated
 * but not written) through a file driver that keeps every byte HDF5 writes
 * as an extent in memory and never touches a disk. The caller then writes
 * the extents and the large datasets' data into the real file itself.
 *
 * Why: HDF5 1.10 cannot survive a failed write of its own (a failed
 * H5Fclose leaves a dangling file id that crashes the process at exit), and
 * Open MPI's MPI-IO may report a failed write as a success. With the image,
 * HDF5 never does I/O that can fail, and every byte of the results file goes
 * through tcmini's own checked transfers. */
#ifndef TC_H5_IMAGE_H
#define TC_H5_IMAGE_H

#include <hdf5.h>
#include <stdint.h>

#include "tc_error.h"

/// Bytes HDF5 wrote at one address.
typedef struct {
  int64_t offset;
  int64_t bytes;
  unsigned char *data;
} tc_h5_extent;

typedef struct tc_h5_image tc_h5_image;

/// Creates an empty image and an HDF5 file in it (H5Fcreate through the
/// image's driver), with access properties copied from access (whose driver
/// is replaced; H5P_DEFAULT for none). *file is closed by the caller with
/// H5Fclose, after which the image holds the complete file. Not collective.
tc_err tc_h5_image_create(hid_t access, tc_h5_image **image, hid_t *file);

/// The extents of the closed file, ascending and not overlapping, and the
/// file's size (its end of allocated space, large datasets included).
/// Valid until tc_h5_image_destroy. Not collective.
void tc_h5_image_contents(const tc_h5_image *image, int64_t *count, const tc_h5_extent **extents,
                          int64_t *file_bytes);

/// Releases the image and sets *image to NULL (NULL is fine).
void tc_h5_image_destroy(tc_h5_image **image);

#endif
