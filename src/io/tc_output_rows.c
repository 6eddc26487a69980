/* tc_output_rows: the rows of a global dataset that one rank writes (the
 * nodes it owns, the cells it holds) in ascending global order, their data
 * packed in that order, and their selection in the file as few regular
 * hyperslabs. */
#include <stdlib.h>
#include <string.h>

#include "tc_h5.h"
#include "tc_output_impl.h"

typedef struct {
  int64_t global;
  int64_t local;
} row_pair;

static int compare_rows(const void *a, const void *b) {
  int64_t x = ((const row_pair *)a)->global, y = ((const row_pair *)b)->global;
  return (x > y) - (x < y);
}

void tc_row_set_free(tc_row_set *rows) {
  free(rows->global);
  free(rows->local);
  memset(rows, 0, sizeof *rows);
}

tc_err tc_row_set_build(int64_t num_local, const int64_t *global_id, const int *owner, int rank,
                        tc_row_set *rows) {
  memset(rows, 0, sizeof *rows);
  row_pair *pairs;
  TC_CALLOC(pairs, num_local);
  int64_t count = 0;
  for (int64_t i = 0; i < num_local; i++)
    if (owner == NULL || owner[i] == rank)
      pairs[count++] = (row_pair){global_id[i], i};
  qsort(pairs, (size_t)count, sizeof *pairs, compare_rows);

  bool identity = count == num_local;
  for (int64_t i = 0; i < count && identity; i++)
    identity = pairs[i].local == i;
  rows->count = count;
  if (count > 0) {
    rows->global = malloc((size_t)count * sizeof *rows->global);
    rows->local = identity ? NULL : malloc((size_t)count * sizeof *rows->local);
    if (rows->global == NULL || (!identity && rows->local == NULL)) {
      free(pairs);
      tc_row_set_free(rows);
      TC_FAIL(TC_ERR_MEMORY, "out of memory listing %lld output rows", (long long)count);
    }
  }
  for (int64_t i = 0; i < count; i++) {
    rows->global[i] = pairs[i].global;
    if (rows->local)
      rows->local[i] = pairs[i].local;
  }
  free(pairs);
  return TC_SUCCESS;
}

int64_t tc_row_set_local(const tc_row_set *rows, int64_t i) {
  return rows->local ? rows->local[i] : i;
}

/* The rows' data in global order: the caller's array itself when the local
 * order already is the global order, else a packed copy in *packed. */
tc_err tc_row_set_gather(const tc_row_set *rows, const void *values, size_t row_bytes,
                         void **packed, const void **data) {
  *packed = NULL;
  if (rows->local == NULL) {
    *data = values;
    return TC_SUCCESS;
  }
  char *buffer;
  TC_CALLOC(buffer, (size_t)rows->count * row_bytes);
  for (int64_t i = 0; i < rows->count; i++)
    memcpy(buffer + (size_t)i * row_bytes,
           (const char *)values + (size_t)rows->local[i] * row_bytes, row_bytes);
  *packed = buffer;
  *data = buffer;
  return TC_SUCCESS;
}

static int64_t run_length(const int64_t *global, int64_t first, int64_t count) {
  int64_t end = first + 1;
  while (end < count && global[end] == global[end - 1] + 1)
    end++;
  return end - first;
}

/* Selects the rows in the file dataspace as few regular hyperslabs: runs of
 * consecutive rows of equal length at a constant stride become one
 * hyperslab (a rank's box of a lexicographic grid is one per grid plane). */
tc_err tc_row_set_select(hid_t space, const tc_row_set *rows, int trailing_rank,
                         const hsize_t trailing[2]) {
  if (rows->count == 0) {
    TC_H5_CALL(H5Sselect_none(space));
    return TC_SUCCESS;
  }
  hsize_t start[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, count[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (int d = 0; d < trailing_rank; d++)
    block[d + 1] = trailing[d];
  const int64_t *global = rows->global;
  H5S_seloper_t operation = H5S_SELECT_SET;
  for (int64_t first = 0; first < rows->count;) {
    int64_t length = run_length(global, first, rows->count);
    int64_t runs = 1, step = length;
    int64_t next = first + length;
    if (next < rows->count && run_length(global, next, rows->count) == length) {
      step = global[next] - global[first];
      for (runs = 2, next += length;
           next < rows->count && global[next] - global[next - length] == step &&
           run_length(global, next, rows->count) == length;
           next += length)
        runs++;
    }
    start[0] = (hsize_t)global[first];
    stride[0] = (hsize_t)step;
    count[0] = (hsize_t)runs;
    block[0] = (hsize_t)length;
    TC_H5_CALL(H5Sselect_hyperslab(space, operation, start, stride, count, block));
    operation = H5S_SELECT_OR;
    first += runs * length;
  }
  return TC_SUCCESS;
}
