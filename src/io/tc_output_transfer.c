/* tc_output_transfer: every byte of the results file goes through here:
 * rank 0 writes the layout's bytes (tc_h5_image) and every rank its rows of
 * each dataset, collectively through MPI-IO (tc_parallel_file); then the
 * file is closed, flushed to stable storage (fsync on every node) and read
 * back through a new handle, and each rank compares
 * what it reads with a checksum of what it wrote. An MPI-IO layer that
 * reports a failed write as a success (Open MPI's OMPIO does, on a full file
 * system, at 3 ranks or more) cannot slip a damaged file past this. */
#include <stdlib.h>
#include <string.h>

#include "tc_fault.h"
#include "tc_output_impl.h"

/* A 64-bit checksum of bytes (four interleaved multiply-xor lanes over
 * 8-byte words; not cryptographic: it detects lost or damaged data). */
static uint64_t checksum(const void *data, int64_t bytes) {
  const unsigned char *p = data;
  const uint64_t prime = 0x100000001b3ULL;
  uint64_t lane[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
                      0x27d4eb2f165667c5ULL};
  int64_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int k = 0; k < 4; k++) {
      uint64_t word;
      memcpy(&word, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ word) * prime;
      lane[k] ^= lane[k] >> 29;
    }
  uint64_t sum = (uint64_t)bytes;
  for (int k = 0; k < 4; k++)
    sum = (sum ^ lane[k]) * prime;
  for (; i < bytes; i++)
    sum = (sum ^ p[i]) * prime;
  return sum ^ (sum >> 31);
}

static tc_err fail_point(const tc_output *output, const char *path) {
  TC_CALL(tc_fault_check("io")); /* test-only: TCMINI_FAULT=io */
  TC_CHECK(output->fail_rank != output->rank || strcmp(output->fail_after, path) != 0, TC_ERR_IO,
           "injected failure after writing %s (test hook)", path);
  return TC_SUCCESS;
}

/* Rank 0's share of the layout: the image's extents, as runs and their
 * bytes one after the other. */
typedef struct {
  int64_t count;
  tc_byte_run *runs;
  unsigned char *bytes;
  int64_t total;
} image_share;

static tc_err share_image(const tc_output *output, const tc_output_layout *layout,
                          image_share *share) {
  memset(share, 0, sizeof *share);
  if (output->rank != 0)
    return TC_SUCCESS;
  const tc_h5_extent *extents;
  int64_t file_bytes;
  tc_h5_image_contents(layout->image, &share->count, &extents, &file_bytes);
  TC_CALLOC(share->runs, share->count);
  for (int64_t i = 0; i < share->count; i++) {
    share->runs[i] = (tc_byte_run){extents[i].offset, extents[i].bytes};
    share->total += extents[i].bytes;
  }
  TC_CALLOC(share->bytes, share->total);
  for (int64_t i = 0, at = 0; i < share->count; at += extents[i].bytes, i++)
    memcpy(share->bytes + at, extents[i].data, (size_t)extents[i].bytes);
  return TC_SUCCESS;
}

static void free_share(image_share *share) {
  free(share->runs);
  free(share->bytes);
  memset(share, 0, sizeof *share);
}

/* The read-back goes in pieces of at most this many bytes a rank, so that
 * verifying costs a bounded buffer (tc_memory counts it), not a second copy
 * of the rank's largest dataset. Each piece has its checksum. */
enum { PIECE_BYTES = 64 << 20 };

/* One dataset's rows on this rank: packed in global order, their runs in
 * the file, and the checksums of its pieces as written. */
typedef struct {
  void *packed;
  const void *data;
  int64_t bytes;
  int64_t count;
  tc_byte_run *runs;
} dataset_rows;

static int64_t pieces_of(int64_t bytes) { return (bytes + PIECE_BYTES - 1) / PIECE_BYTES; }

static tc_err prepare(const tc_output *output, const tc_output_dataset *dataset,
                      const tc_output_mesh_rows *rows, bool pack, dataset_rows *mine) {
  memset(mine, 0, sizeof *mine);
  const tc_row_set *set = dataset->on_nodes ? &rows->nodes : &rows->cells;
  if (dataset->offset < 0)
    return TC_SUCCESS; /* no storage: no rows anywhere */
  int64_t row_bytes = tc_output_row_bytes(dataset);
  mine->bytes = set->count * row_bytes;
  TC_CALL(tc_row_set_runs(set, dataset->offset, row_bytes, &mine->count, &mine->runs));
  if (pack && set->count > 0)
    TC_CALL(dataset->pack(output, dataset, set, &mine->packed, &mine->data));
  return TC_SUCCESS;
}

static void free_rows(dataset_rows *mine) {
  free(mine->packed);
  free(mine->runs);
  memset(mine, 0, sizeof *mine);
}

/* The runs of the file that hold bytes [from, from + length) of the rank's
 * stream (its runs' bytes one after the other), into piece (allocated by
 * the caller with count entries: a piece covers at most all the runs). */
static void piece_runs(const tc_byte_run *runs, int64_t count, int64_t from, int64_t length,
                       tc_byte_run *piece, int64_t *pieces) {
  *pieces = 0;
  int64_t at = 0; /* stream offset of run i */
  for (int64_t i = 0; i < count && length > 0; at += runs[i].bytes, i++) {
    if (at + runs[i].bytes <= from)
      continue;
    int64_t skip = from > at ? from - at : 0;
    int64_t take = runs[i].bytes - skip < length ? runs[i].bytes - skip : length;
    piece[(*pieces)++] = (tc_byte_run){runs[i].offset + skip, take};
    from += take;
    length -= take;
  }
}

static tc_err allocate_sums(int64_t count, uint64_t **sums) {
  TC_CALLOC(*sums, count ? count : 1);
  return TC_SUCCESS;
}

/* Packs, checksums (piece by piece, into *sums) and writes one dataset. */
static tc_err write_dataset(const tc_output *output, tc_parallel_file *file,
                            const tc_output_dataset *dataset, const tc_output_mesh_rows *rows,
                            uint64_t **sums, int64_t *payload) {
  dataset_rows mine;
  tc_err err = prepare(output, dataset, rows, true, &mine);
  if (err == TC_SUCCESS)
    err = allocate_sums(pieces_of(mine.bytes), sums);
  err = tc_parallel_agree(output->comm, err);
  if (err == TC_SUCCESS) {
    for (int64_t k = 0; k < pieces_of(mine.bytes); k++) {
      int64_t from = k * PIECE_BYTES;
      int64_t length = mine.bytes - from < PIECE_BYTES ? mine.bytes - from : PIECE_BYTES;
      (*sums)[k] = checksum((const char *)mine.data + from, length);
    }
    err = tc_parallel_file_write(file, mine.count, mine.runs, mine.data);
  }
  if (err == TC_SUCCESS) {
    *payload += mine.bytes;
    err = tc_parallel_agree(output->comm, fail_point(output, dataset->path));
  }
  free_rows(&mine);
  return err;
}

static tc_err allocate_bytes(int64_t bytes, unsigned char **buffer) {
  TC_CALLOC(*buffer, bytes);
  return TC_SUCCESS;
}

static tc_err allocate_runs(int64_t count, tc_byte_run **runs) {
  TC_CALLOC(*runs, count ? count : 1);
  return TC_SUCCESS;
}

static tc_err differs(const tc_output *output, const char *what) {
  TC_FAIL(TC_ERR_IO,
          "the results file '%s' read back differs from what was written (%s, written by rank "
          "%d): the file system lost data; is it full or over quota?",
          output->h5_path, what, output->rank);
}

/* Reads one dataset back piece by piece (every rank takes part in as many
 * collective reads as the rank with the most pieces) and compares each
 * piece's checksum with what was written. */
static tc_err verify_dataset(const tc_output *output, tc_parallel_file *file,
                             const tc_output_dataset *dataset, const tc_output_mesh_rows *rows,
                             const uint64_t *sums) {
  dataset_rows mine;
  unsigned char *back = NULL;
  tc_byte_run *piece = NULL;
  tc_err err = prepare(output, dataset, rows, false, &mine);
  int64_t pieces = pieces_of(mine.bytes), all_pieces = pieces;
  if (err == TC_SUCCESS)
    err = allocate_bytes(mine.bytes < PIECE_BYTES ? mine.bytes : PIECE_BYTES, &back);
  if (err == TC_SUCCESS)
    err = allocate_runs(mine.count, &piece);
  err = tc_parallel_agree(output->comm, err);
  if (err == TC_SUCCESS)
    err = tc_allreduce_max_int64(output->comm, &all_pieces, 1);
  bool same = true;
  for (int64_t k = 0; k < all_pieces && err == TC_SUCCESS; k++) {
    int64_t from = k * PIECE_BYTES, length = 0, count = 0;
    if (k < pieces) {
      length = mine.bytes - from < PIECE_BYTES ? mine.bytes - from : PIECE_BYTES;
      piece_runs(mine.runs, mine.count, from, length, piece, &count);
    }
    err = tc_parallel_file_read(file, count, piece, back);
    if (err == TC_SUCCESS && k < pieces)
      same = same && checksum(back, length) == sums[k];
  }
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, same ? TC_SUCCESS : differs(output, dataset->path));
  free(piece);
  free(back);
  free_rows(&mine);
  return err;
}

static tc_err verify_image(const tc_output *output, tc_parallel_file *file,
                           const image_share *share) {
  unsigned char *back = NULL;
  tc_err err = tc_parallel_agree(output->comm, allocate_bytes(share->total, &back));
  if (err == TC_SUCCESS)
    err = tc_parallel_file_read(file, share->count, share->runs, back);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(
        output->comm, share->total == 0 || memcmp(back, share->bytes, (size_t)share->total) == 0
                          ? TC_SUCCESS
                          : differs(output, "the HDF5 metadata"));
  free(back);
  return err;
}

static tc_err allocate_lists(int count, uint64_t ***sums) {
  TC_CALLOC(*sums, count ? count : 1);
  return TC_SUCCESS;
}

tc_err tc_output_transfer(const tc_output *output, const char *path,
                          const tc_output_dataset *datasets, int count,
                          const tc_output_mesh_rows *rows, const tc_output_layout *layout,
                          tc_output_transfer_stats *stats) {
  *stats = (tc_output_transfer_stats){0, 0, 0, 0};
  double started = tc_wtime();
  image_share share;
  uint64_t **sums = NULL; /* [count] the checksums of each dataset's pieces */
  tc_err err = share_image(output, layout, &share);
  if (err == TC_SUCCESS)
    err = allocate_lists(count, &sums);
  err = tc_parallel_agree(output->comm, err);
  tc_parallel_file *file = NULL;
  if (err == TC_SUCCESS)
    err = tc_parallel_file_open(output->comm, path, true, &file);
  if (err == TC_SUCCESS) {
    err = tc_parallel_file_write(file, share.count, share.runs, share.bytes);
    for (int i = 0; i < count && err == TC_SUCCESS; i++)
      err = write_dataset(output, file, &datasets[i], rows, &sums[i], &stats->payload_bytes);
  }
  if (file != NULL) /* closing is collective: also after a failure */
    err = tc_output_agree_next(output->comm, err, tc_parallel_file_close(&file));
  double written = tc_wtime();
  if (err == TC_SUCCESS)
    err = tc_parallel_file_sync_path(output->comm, path);
  double flushed = tc_wtime();
  /* Read back through a new handle, opened for reading once the written
   * one is closed: nothing can come from the writer's own buffers. */
  if (err == TC_SUCCESS)
    err = tc_parallel_file_open(output->comm, path, false, &file);
  if (err == TC_SUCCESS) {
    err = verify_image(output, file, &share);
    for (int i = 0; i < count && err == TC_SUCCESS; i++)
      err = verify_dataset(output, file, &datasets[i], rows, sums[i]);
  }
  if (file != NULL)
    err = tc_output_agree_next(output->comm, err, tc_parallel_file_close(&file));
  stats->write_seconds = written - started;
  stats->flush_seconds = flushed - written;
  stats->verify_seconds = tc_wtime() - flushed;
  for (int i = 0; sums && i < count; i++)
    free(sums[i]);
  free(sums);
  free_share(&share);
  return err;
}
