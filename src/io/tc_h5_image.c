/* tc_h5_image: an HDF5 file driver that keeps the file in memory as sparse
 * extents (see tc_h5_image.h). Only what HDF5 writes is stored: the large
 * datasets' storage is allocated (addresses, end of file) but never written
 * through the driver, so the image stays as small as the file's metadata. */
#include "tc_h5_image.h"

#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"

struct tc_h5_image {
  tc_h5_extent *extents; /* ascending, not overlapping */
  int64_t count;
  int64_t capacity;
  haddr_t end_of_allocation; /* HDF5's EOA */
  int failed;                /* an allocation failed: the image is incomplete */
};

/* The driver's view of an open file: HDF5's public part first. */
typedef struct {
  H5FD_t pub;
  tc_h5_image *image;
} image_file;

/* What the file-access property list carries to the driver's open. */
typedef struct {
  tc_h5_image *image;
} image_access;

static int64_t end_of(const tc_h5_extent *extent) { return extent->offset + extent->bytes; }

/* Makes room for n more extents; 0 on success. */
static int reserve(tc_h5_image *image, int64_t more) {
  if (image->count + more <= image->capacity)
    return 0;
  int64_t capacity = image->capacity ? 2 * image->capacity : 64;
  while (capacity < image->count + more)
    capacity *= 2;
  tc_h5_extent *grown = realloc(image->extents, (size_t)capacity * sizeof *grown);
  if (grown == NULL)
    return -1;
  image->extents = grown;
  image->capacity = capacity;
  return 0;
}

/* A copy of bytes [from, to) of extent as a new extent; 0 on success. */
static int piece_of(const tc_h5_extent *extent, int64_t from, int64_t to, tc_h5_extent *piece) {
  piece->offset = from;
  piece->bytes = to - from;
  piece->data = malloc((size_t)piece->bytes);
  if (piece->data == NULL)
    return -1;
  memcpy(piece->data, extent->data + (from - extent->offset), (size_t)piece->bytes);
  return 0;
}

/* Stores bytes at offset, replacing whatever parts of earlier extents they
 * cover. */
static herr_t store(tc_h5_image *image, int64_t offset, int64_t bytes, const void *data) {
  if (bytes == 0)
    return 0;
  int64_t end = offset + bytes;
  /* first: the first extent that ends after offset; last: the first that
   * starts at or after end. Those in between overlap the new bytes. */
  int64_t first = 0;
  while (first < image->count && end_of(&image->extents[first]) <= offset)
    first++;
  int64_t last = first;
  while (last < image->count && image->extents[last].offset < end)
    last++;
  tc_h5_extent pieces[3]; /* what is kept before, the new bytes, what is kept after */
  int count = 0;
  if (first < last && image->extents[first].offset < offset) {
    if (piece_of(&image->extents[first], image->extents[first].offset, offset, &pieces[count]) < 0)
      goto out_of_memory;
    count++;
  }
  pieces[count].offset = offset;
  pieces[count].bytes = bytes;
  pieces[count].data = malloc((size_t)bytes);
  if (pieces[count].data == NULL)
    goto out_of_memory;
  memcpy(pieces[count].data, data, (size_t)bytes);
  count++;
  if (first < last && end_of(&image->extents[last - 1]) > end) {
    if (piece_of(&image->extents[last - 1], end, end_of(&image->extents[last - 1]),
                 &pieces[count]) < 0)
      goto out_of_memory;
    count++;
  }
  if (reserve(image, count) < 0)
    goto out_of_memory;
  for (int64_t i = first; i < last; i++)
    free(image->extents[i].data);
  int64_t after = image->count - last;
  memmove(&image->extents[first + count], &image->extents[last],
          (size_t)after * sizeof *image->extents);
  memcpy(&image->extents[first], pieces, (size_t)count * sizeof *pieces);
  image->count = first + count + after;
  return 0;

out_of_memory:
  for (int i = 0; i < count; i++)
    free(pieces[i].data);
  image->failed = 1;
  return -1;
}

static H5FD_t *image_open(const char *name, unsigned flags, hid_t access, haddr_t maxaddr) {
  (void)name, (void)flags, (void)maxaddr;
  const image_access *info = H5Pget_driver_info(access);
  if (info == NULL || info->image == NULL)
    return NULL;
  image_file *file = calloc(1, sizeof *file);
  if (file == NULL)
    return NULL;
  file->image = info->image;
  return &file->pub;
}

static herr_t image_close(H5FD_t *file) {
  free(file);
  return 0;
}

static herr_t image_query(const H5FD_t *file, unsigned long *flags) {
  (void)file;
  /* As the MPI-IO driver lays out a file: metadata and small raw data in
   * aggregated blocks, dataset storage allocated when the dataset is made. */
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
           H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_ALLOCATE_EARLY;
  return 0;
}

static haddr_t image_get_eoa(const H5FD_t *file, H5FD_mem_t type) {
  (void)type;
  return ((const image_file *)file)->image->end_of_allocation;
}

static herr_t image_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t address) {
  (void)type;
  ((image_file *)file)->image->end_of_allocation = address;
  return 0;
}

static haddr_t image_get_eof(const H5FD_t *file, H5FD_mem_t type) {
  (void)type;
  const tc_h5_image *image = ((const image_file *)file)->image;
  return image->count ? (haddr_t)end_of(&image->extents[image->count - 1]) : 0;
}

static herr_t image_read(H5FD_t *file, H5FD_mem_t type, hid_t transfer, haddr_t address,
                         size_t size, void *buffer) {
  (void)type, (void)transfer;
  const tc_h5_image *image = ((const image_file *)file)->image;
  int64_t from = (int64_t)address, to = from + (int64_t)size;
  memset(buffer, 0, size); /* never written: zeros, as a new file reads */
  for (int64_t i = 0; i < image->count; i++) {
    const tc_h5_extent *extent = &image->extents[i];
    int64_t low = extent->offset > from ? extent->offset : from;
    int64_t high = end_of(extent) < to ? end_of(extent) : to;
    if (low < high)
      memcpy((char *)buffer + (low - from), extent->data + (low - extent->offset),
             (size_t)(high - low));
  }
  return 0;
}

static herr_t image_write(H5FD_t *file, H5FD_mem_t type, hid_t transfer, haddr_t address,
                          size_t size, const void *buffer) {
  (void)type, (void)transfer;
  return store(((image_file *)file)->image, (int64_t)address, (int64_t)size, buffer);
}

static herr_t image_truncate(H5FD_t *file, hid_t transfer, hbool_t closing) {
  (void)file, (void)transfer, (void)closing;
  return 0; /* the file's size is its end of allocation */
}

static const H5FD_class_t image_class = {
    .name = "tcmini_image",
    .maxaddr = (haddr_t)INT64_MAX,
    .fc_degree = H5F_CLOSE_WEAK,
    .fapl_size = sizeof(image_access),
    .open = image_open,
    .close = image_close,
    .query = image_query,
    .get_eoa = image_get_eoa,
    .set_eoa = image_set_eoa,
    .get_eof = image_get_eof,
    .read = image_read,
    .write = image_write,
    .truncate = image_truncate,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

/* The driver's id, registered once while the HDF5 library is open. */
static tc_err image_driver(hid_t *driver) {
  static hid_t registered = -1;
  if (registered < 0 || H5Iis_valid(registered) <= 0)
    TC_H5_CALL(registered = H5FDregister(&image_class));
  *driver = registered;
  return TC_SUCCESS;
}

/* ids: the file-access property list. */
static tc_err create_with(hid_t access, tc_h5_image *image, hid_t *file, hid_t *list) {
  hid_t driver = -1;
  TC_CALL(image_driver(&driver));
  TC_H5_CALL(*list = access == H5P_DEFAULT ? H5Pcreate(H5P_FILE_ACCESS) : H5Pcopy(access));
  image_access info = {image};
  TC_H5_CALL(H5Pset_driver(*list, driver, &info));
  TC_H5_CALL(*file = H5Fcreate("tcmini-image.h5", H5F_ACC_TRUNC, H5P_DEFAULT, *list));
  return TC_SUCCESS;
}

tc_err tc_h5_image_create(hid_t access, tc_h5_image **image, hid_t *file) {
  *file = -1;
  TC_CALLOC(*image, 1);
  hid_t list = -1;
  tc_err err = create_with(access, *image, file, &list);
  if (list >= 0 && H5Pclose(list) < 0 && err == TC_SUCCESS)
    err = tc_h5_failure("H5Pclose", __FILE__, __LINE__, __func__);
  if (err != TC_SUCCESS) {
    if (*file >= 0)
      (void)H5Fclose(*file); /* in memory: closing cannot fail on I/O */
    *file = -1;
    tc_h5_image_destroy(image);
  }
  return err;
}

void tc_h5_image_contents(const tc_h5_image *image, int64_t *count, const tc_h5_extent **extents,
                          int64_t *file_bytes) {
  *count = image->count;
  *extents = image->extents;
  *file_bytes = (int64_t)image->end_of_allocation;
}

void tc_h5_image_destroy(tc_h5_image **image) {
  if (image == NULL || *image == NULL)
    return;
  for (int64_t i = 0; i < (*image)->count; i++)
    free((*image)->extents[i].data);
  free((*image)->extents);
  free(*image);
  *image = NULL;
}
