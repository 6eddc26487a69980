/* tc_output_rows: the rows of a global dataset that one rank writes (the
 * nodes it owns, the cells it holds) in ascending global order, their data
 * packed in that order, and the byte runs of the file they occupy (a rank's
 * box of the lexicographic grid is one run per grid line). */
#include <stdlib.h>
#include <string.h>

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

tc_err tc_row_set_runs(const tc_row_set *rows, int64_t offset, int64_t row_bytes, int64_t *count,
                       tc_byte_run **runs) {
  *count = 0;
  *runs = NULL;
  int64_t stretches = 0;
  for (int64_t i = 0; i < rows->count; i++)
    stretches += i == 0 || rows->global[i] != rows->global[i - 1] + 1;
  if (stretches == 0)
    return TC_SUCCESS;
  TC_CALLOC(*runs, stretches);
  for (int64_t i = 0; i < rows->count; i++) {
    if (i == 0 || rows->global[i] != rows->global[i - 1] + 1)
      (*runs)[(*count)++] = (tc_byte_run){offset + rows->global[i] * row_bytes, 0};
    (*runs)[*count - 1].bytes += row_bytes;
  }
  return TC_SUCCESS;
}
