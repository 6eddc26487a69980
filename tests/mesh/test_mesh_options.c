/* test_mesh_options: tc_mesh_create rejects bad options, impossible sizes and
 * rank counts that do not fit the box with the same code and the same full
 * message on every rank, leaves no mesh behind, and still works afterwards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_test.h"

static const tc_mesh_options good = {
    .cells = {4, 4, 8}, .length = {1.0, 1.0, 1.0}, .distortion = 0.1, .order = 1};

/* Creates with options (NULL passes a NULL options pointer) and expects code
 * and exactly message (after the "rank N: " prefix that agreement adds on
 * several ranks, N the lowest failing rank) on every rank. */
static void expect_failure(const tc_mesh_options *options, tc_err code, int failing_rank,
                           const char *message) {
  int size = tc_size(MPI_COMM_WORLD);
  char expected[1024];
  if (size > 1)
    snprintf(expected, sizeof expected, "rank %d: %s", failing_rank, message);
  else
    snprintf(expected, sizeof expected, "%s", message);
  tc_mesh *mesh = (tc_mesh *)&mesh; /* not NULL: create must reset it */
  tc_error_clear();
  tc_err status = tc_mesh_create(MPI_COMM_WORLD, options, &mesh);
  CHECK(status == code, "expected '%s', got '%s': %s", tc_err_name(code), tc_err_name(status),
        tc_error_message());
  CHECK(strcmp(tc_error_message(), expected) == 0, "message\n  '%s'\nexpected\n  '%s'",
        tc_error_message(), expected);
  CHECK(mesh == NULL, "failed create left a mesh handle");

  /* the message is identical on every rank: compare with rank 0's */
  char root_message[1024];
  snprintf(root_message, sizeof root_message, "%s", tc_error_message());
  CHECK_CALL(tc_broadcast(MPI_COMM_WORLD, root_message, sizeof root_message, 0));
  CHECK(strcmp(root_message, tc_error_message()) == 0, "rank 0 says '%s', this rank '%s'",
        root_message, tc_error_message());
  tc_error_clear();
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS) {
    fprintf(stderr, "MPI start failed: %s\n", tc_error_message());
    return 1;
  }
  const int rank = tc_rank(MPI_COMM_WORLD), size = tc_size(MPI_COMM_WORLD);
  tc_mesh_options bad;
  char message[512];

  expect_failure(NULL, TC_ERR_ARGUMENT, 0, "tc_mesh_create: options is NULL");

  bad = good;
  bad.cells[1] = 0;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "mesh cells must be >= 1 in every direction, got 4 x 0 x 8");
  bad = good;
  bad.cells[2] = -3;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "mesh cells must be >= 1 in every direction, got 4 x 4 x -3");

  bad = good;
  bad.length[0] = 0.0;
  expect_failure(&bad, TC_ERR_INPUT, 0, "mesh lengths must be finite and > 0, got 0 x 1 x 1");
  bad = good;
  bad.length[2] = NAN;
  expect_failure(&bad, TC_ERR_INPUT, 0, "mesh lengths must be finite and > 0, got 1 x 1 x nan");
  bad = good;
  bad.length[1] = INFINITY;
  expect_failure(&bad, TC_ERR_INPUT, 0, "mesh lengths must be finite and > 0, got 1 x inf x 1");

  bad = good;
  bad.order = 3;
  expect_failure(&bad, TC_ERR_INPUT, 0, "mesh order must be 1 (hex8) or 2 (hex27), got 3");
  bad.order = 0;
  expect_failure(&bad, TC_ERR_INPUT, 0, "mesh order must be 1 (hex8) or 2 (hex27), got 0");

  bad = good;
  bad.distortion = 0.25;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "mesh distortion must be in [0, 0.25) so cells stay valid, got 0.25");
  bad.distortion = -0.01;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "mesh distortion must be in [0, 0.25) so cells stay valid, got -0.01");
  bad.distortion = NAN;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "mesh distortion must be in [0, 0.25) so cells stay valid, got nan");

  /* 2^120 cells; and 2^61 cells that fit, whose 8 * 2^61 connectivity
   * entries do not: both rejected before anything is allocated. */
  bad = good;
  bad.cells[0] = bad.cells[1] = bad.cells[2] = (int64_t)1 << 40;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "a 1099511627776x1099511627776x1099511627776-cell box of order 1 has more "
                 "cells or nodes than int64 can count");
  bad.cells[0] = bad.cells[1] = (int64_t)1 << 20;
  bad.cells[2] = (int64_t)1 << 21;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "a 1048576x1048576x2097152-cell box of order 1 has more cells or nodes than "
                 "int64 can count");
  bad.cells[0] = INT64_MAX;
  bad.cells[1] = bad.cells[2] = 1;
  expect_failure(&bad, TC_ERR_INPUT, 0,
                 "a 9223372036854775807x1x1-cell box of order 1 has more cells or nodes than "
                 "int64 can count");

  if (size > 1) {
    /* fewer cells than ranks */
    bad = good;
    bad.cells[0] = bad.cells[1] = 1;
    bad.cells[2] = size - 1;
    snprintf(message, sizeof message,
             "%d ranks cannot share a 1x1x%d-cell box: it has only %d cells and each rank "
             "needs at least one",
             size, size - 1, size - 1);
    expect_failure(&bad, TC_ERR_INPUT, 0, message);

    /* options that differ on one rank */
    bad = good;
    if (rank == size - 1)
      bad.cells[0] = 5;
    snprintf(message, sizeof message,
             "mesh options differ from rank 0's (every rank must pass the same box)");
    expect_failure(&bad, TC_ERR_ARGUMENT, size - 1, message);
  }
  if (size == 3 || size == 5 || size == 6 || size == 7) {
    /* enough cells, but no px*py*pz grid with at most 2 blocks per direction */
    bad = good;
    bad.cells[0] = bad.cells[1] = bad.cells[2] = 2;
    snprintf(message, sizeof message,
             "%d ranks cannot share a 2x2x2-cell box: no px*py*pz = %d rank grid has px <= 2, "
             "py <= 2 and pz <= 2 (each rank needs at least one cell per direction)",
             size, size);
    expect_failure(&bad, TC_ERR_INPUT, 0, message);
  }

  /* after all that, a good mesh still builds */
  tc_mesh *mesh = NULL;
  tc_error_clear();
  CHECK_CALL(tc_mesh_create(MPI_COMM_WORLD, &good, &mesh));
  CHECK(mesh != NULL, "no mesh after a successful create");
  tc_mesh_destroy(&mesh);
  tc_mesh_destroy(&mesh);
  return test_finish("test_mesh_options");
}
