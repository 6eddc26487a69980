/* test_bench_replay: the two ends of the replay round trip of tcmini-bench.
 *   test_bench_replay write FILE [CASE]    writes a FieldFieldVector case with
 *       known inputs through tc_replay; CASE is double (the default), float,
 *       sum-into (with an initial dataset "output"), or a group path such as
 *       /cases/ffv (the double case inside that group);
 *   test_bench_replay write-swapped FILE   a DataFieldScalar file whose
 *       "left" holds the fields and "right" the data (the two swapped);
 *   test_bench_replay check FILE [CASE]    reads dataset "output" that
 *       tcmini-bench --replay-output wrote and compares it with values worked
 *       out by hand (plus the initial output for sum-into);
 *   test_bench_replay rows FILE [CASE]     reads every row of that file: each
 *       holds the hand values and attributes naming backend, threads, layout,
 *       variant, how it was chosen and precision (the case's), each was
 *       verified, no two rows ran alike, and both layouts and more than one
 *       backend are among them.
 * CTest runs write, then the bench, then check (fixtures in CMakeLists.txt). */
#include <hdf5.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tc_parallel.h"
#include "tc_replay.h"

/* FieldFieldVector with C=2, L=2, R=3, P=2, D1=2: small enough to check by
 * hand, with L != R and every size distinct where it can be. */
enum { C = 2, L = 2, R = 3, P = 2, D = 2 };

static tc_contraction case_shape(tc_precision precision, bool sum_into) {
  tc_contraction shape = {.kernel = TC_FIELD_FIELD_VECTOR,
                          .num_cells = C,
                          .num_left_fields = L,
                          .num_right_fields = R,
                          .num_points = P,
                          .num_data_points = 1,
                          .dim1 = D,
                          .dim2 = 1,
                          .layout = TC_LAYOUT_RIGHT,
                          .precision = precision,
                          .sum_into = sum_into};
  return shape;
}

/* left[c][l][p][d] = 1 + c + 2l + p - d (small integers, some negative
 * products through right); right[c][r][p][d] = (r + 1) * (p ? -1 : 1) + c*d. */
static void fill_inputs(double left[C][L][P][D], double right[C][R][P][D]) {
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < P; ++p)
      for (int d = 0; d < D; ++d) {
        for (int l = 0; l < L; ++l)
          left[c][l][p][d] = 1 + c + 2 * l + p - d;
        for (int r = 0; r < R; ++r)
          right[c][r][p][d] = (r + 1) * (p ? -1 : 1) + c * d;
      }
}

/* out[c][l][r] = sum_{p,d} left[c][l][p][d] * right[c][r][p][d], worked out by
 * hand from the formulas above:
 *   c=0: left(l,p,d) = 1+2l+p-d, right(r,p,d) = (r+1)(1 if p=0 else -1)
 *        p=0: (1+2l) + (2l) = 4l+1 times (r+1); p=1: (2+2l)+(1+2l) = 4l+3 times -(r+1)
 *        out = (r+1)(4l+1-4l-3) = -2(r+1)
 *   c=1: left(l,p,d) = 2+2l+p-d, right(r,p,d) = (r+1)s_p + d
 *        p=0 (s=+1): d=0: (2+2l)(r+1); d=1: (1+2l)(r+2)
 *        p=1 (s=-1): d=0: (3+2l)(-(r+1)); d=1: (2+2l)(-(r+1)+1) = -(2+2l)r
 *        out = (r+1)(2+2l-3-2l) + (1+2l)(r+2) - (2+2l)r = -(r+1) + (1+2l)(r+2) - (2+2l)r */
static const double expected[C][L][R] = {
    {{-2, -4, -6}, {-2, -4, -6}},
    {{1, -1, -3}, {5, 3, 1}},
};

/* The initial output of the sum-into case: 100c + 10l + r. */
static double initial(int c, int l, int r) { return 100.0 * c + 10.0 * l + r; }

typedef struct {
  tc_precision precision;
  bool sum_into;
  const char *group; /* NULL: the root */
} test_case;

static bool parse_case(const char *text, test_case *t) {
  *t = (test_case){TC_DOUBLE, false, NULL};
  if (text == NULL || strcmp(text, "double") == 0)
    return true;
  if (strcmp(text, "float") == 0)
    t->precision = TC_FLOAT;
  else if (strcmp(text, "sum-into") == 0)
    t->sum_into = true;
  else if (text[0] == '/')
    t->group = text;
  else
    return false;
  return true;
}

static int fail(void) {
  fprintf(stderr, "test_bench_replay: %s\n", tc_error_message());
  return 1;
}

/* The case's file; with a NaN in 'left' (cell 1) where nan is set, which
 * tcmini-bench must refuse as a bad replay file. */
static int write_case(const char *path, const test_case *t, bool nan) {
  double left[C][L][P][D], right[C][R][P][D], start[C][L][R];
  float left_f[C * L * P * D], right_f[C * R * P * D];
  fill_inputs(left, right);
  if (nan)
    left[1][0][P - 1][0] = NAN;
  for (int i = 0; i < C * L * P * D; ++i)
    left_f[i] = (float)(&left[0][0][0][0])[i];
  for (int i = 0; i < C * R * P * D; ++i)
    right_f[i] = (float)(&right[0][0][0][0])[i];
  for (int c = 0; c < C; ++c)
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < R; ++r)
        start[c][l][r] = initial(c, l, r);
  tc_contraction shape = case_shape(t->precision, t->sum_into);
  bool single = t->precision == TC_FLOAT;
  if (tc_replay_write_inputs(path, t->group, &shape, single ? (void *)left_f : (void *)left,
                             single ? (void *)right_f : (void *)right,
                             t->sum_into ? (void *)start : NULL) != TC_SUCCESS)
    return fail();
  return 0;
}

/* A DataFieldScalar file as a user might write it with the inputs swapped:
 * "left" = fields (C,F,P) = (4,3,5), "right" = data (C,P) = (4,5). */
static int write_swapped(const char *path) {
  enum { SC = 4, SF = 3, SP = 5 };
  double fields[SC * SF * SP], data[SC * SP];
  for (int i = 0; i < SC * SF * SP; ++i)
    fields[i] = 1.0 + i;
  for (int i = 0; i < SC * SP; ++i)
    data[i] = 2.0 - i;
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t fields_dims[3] = {SC, SF, SP}, data_dims[2] = {SC, SP};
  hid_t fields_space = H5Screate_simple(3, fields_dims, NULL);
  hid_t data_space = H5Screate_simple(2, data_dims, NULL);
  hid_t left = H5Dcreate2(file, "left", H5T_IEEE_F64LE, fields_space, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
  hid_t right = H5Dcreate2(file, "right", H5T_IEEE_F64LE, data_space, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT);
  hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, sizeof "DataFieldScalar");
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t kernel = H5Acreate2(file, "kernel", text, scalar, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = file >= 0 && left >= 0 && right >= 0 && kernel >= 0 &&
            H5Dwrite(left, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, fields) >= 0 &&
            H5Dwrite(right, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 &&
            H5Awrite(kernel, text, "DataFieldScalar") >= 0;
  H5Aclose(kernel);
  H5Sclose(scalar);
  H5Tclose(text);
  H5Dclose(right);
  H5Dclose(left);
  H5Sclose(data_space);
  H5Sclose(fields_space);
  ok = H5Fclose(file) >= 0 && ok;
  if (!ok)
    fprintf(stderr, "test_bench_replay: writing '%s' failed\n", path);
  return ok ? 0 : 1;
}

/* The hand value of out[c][l][r] for the case. */
static double expected_value(const test_case *t, int c, int l, int r) {
  return expected[c][l][r] + (t->sum_into ? initial(c, l, r) : 0.0);
}

/* Compares one output (in the case's precision) with the hand values. */
static int wrong_entries(const test_case *t, const void *output, const char *what) {
  int wrong = 0;
  double tolerance = t->precision == TC_FLOAT ? 1e-5 : 1e-12;
  for (int c = 0; c < C; ++c)
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < R; ++r) {
        int i = (c * L + l) * R + r;
        double found = t->precision == TC_FLOAT ? (double)((const float *)output)[i]
                                                : ((const double *)output)[i];
        double want = expected_value(t, c, l, r);
        if (!(fabs(found - want) <= tolerance * fmax(1.0, fabs(want)))) {
          fprintf(stderr, "%s: output[%d][%d][%d] = %g, expected %g\n", what, c, l, r, found, want);
          ++wrong;
        }
      }
  return wrong;
}

static int check_output(const char *path, const test_case *t) {
  double output[C * L * R];
  tc_contraction shape = case_shape(t->precision, false);
  if (tc_replay_read_output(path, &shape, output) != TC_SUCCESS)
    return fail();
  /* The hand values agree with a direct evaluation of the definition. */
  double left[C][L][P][D], right[C][R][P][D];
  fill_inputs(left, right);
  int failures = wrong_entries(t, output, path);
  for (int c = 0; c < C; ++c)
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < R; ++r) {
        double direct = 0.0;
        for (int p = 0; p < P; ++p)
          for (int d = 0; d < D; ++d)
            direct += left[c][l][p][d] * right[c][r][p][d];
        if (direct != expected[c][l][r]) {
          fprintf(stderr, "hand value [%d][%d][%d] = %g, direct sum %g\n", c, l, r,
                  expected[c][l][r], direct);
          ++failures;
        }
      }
  /* A file without "output", or with other dims, is refused. */
  tc_contraction other = shape;
  other.num_right_fields = R + 1;
  double larger[C * L * (R + 1)];
  if (tc_replay_read_output(path, &other, larger) != TC_ERR_SHAPE) {
    fprintf(stderr, "reading output with the wrong dims was not refused with TC_ERR_SHAPE\n");
    ++failures;
  }
  printf("%s: %d of %d output entries wrong\n", path, failures, C * L * R);
  return failures ? 1 : 0;
}

static int check_rows(const char *path, const test_case *t) {
  double output[C * L * R];
  tc_contraction shape = case_shape(t->precision, false);
  int count = 0, failures = 0, layouts = 0, backends = 0;
  tc_replay_row rows[64];
  if (tc_replay_read_row(path, 0, &shape, &rows[0], output, &count) != TC_SUCCESS)
    return fail();
  if (count < 2 || count > 64) {
    fprintf(stderr, "%s: %d rows, expected 2 to 64\n", path, count);
    return 1;
  }
  for (int i = 0; i < count; ++i) {
    char what[64];
    snprintf(what, sizeof what, "%s rows/%d", path, i);
    if (tc_replay_read_row(path, i, &shape, &rows[i], output, NULL) != TC_SUCCESS)
      return fail();
    tc_replay_row *row = &rows[i];
    failures += wrong_entries(t, output, what);
    bool known = (strcmp(row->backend, "serial") == 0 || strcmp(row->backend, "openmp") == 0 ||
                  strcmp(row->backend, "cuda") == 0) &&
                 (strcmp(row->layout, "right") == 0 || strcmp(row->layout, "left") == 0) &&
                 row->variant[0] != '\0' &&
                 row->chosen[0] != '\0' &&
                 strcmp(row->precision, tc_precision_name(t->precision)) == 0 && row->verified;
    if (!known) {
      fprintf(stderr, "%s: backend '%s' threads %d layout '%s' variant '%s' chosen '%s' "
              "precision '%s' verified %d\n", what, row->backend, row->threads, row->layout,
              row->variant, row->chosen, row->precision, row->verified);
      ++failures;
    }
    bool new_layout = true, new_backend = true;
    for (int j = 0; j < i; ++j) {
      if (strcmp(rows[j].backend, row->backend) == 0 && rows[j].threads == row->threads &&
          strcmp(rows[j].layout, row->layout) == 0 && strcmp(rows[j].variant, row->variant) == 0 &&
          strcmp(rows[j].chosen, row->chosen) == 0) {
        fprintf(stderr, "%s: the same run as rows/%d\n", what, j);
        ++failures;
      }
      new_layout = new_layout && strcmp(rows[j].layout, row->layout) != 0;
      new_backend = new_backend && strcmp(rows[j].backend, row->backend) != 0;
    }
    layouts += new_layout;
    backends += new_backend;
  }
  if (layouts != 2 || backends < 2) {
    fprintf(stderr, "%s: %d layouts and %d backends among the rows\n", path, layouts, backends);
    ++failures;
  }
  printf("%s: %d rows, %d layouts, %d backends, %d problems\n", path, count, layouts, backends,
         failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (tc_parallel_init(&argc, &argv) != TC_SUCCESS)
    return 1;
  int status = 2;
  test_case t;
  if (argc < 3 || argc > 4 || !parse_case(argc == 4 ? argv[3] : NULL, &t))
    fprintf(stderr, "usage: test_bench_replay write|write-nan|write-swapped|check|rows FILE [CASE]\n");
  else if (strcmp(argv[1], "write") == 0)
    status = write_case(argv[2], &t, false);
  else if (strcmp(argv[1], "write-nan") == 0)
    status = write_case(argv[2], &t, true);
  else if (strcmp(argv[1], "write-swapped") == 0)
    status = write_swapped(argv[2]);
  else if (strcmp(argv[1], "check") == 0)
    status = check_output(argv[2], &t);
  else if (strcmp(argv[1], "rows") == 0)
    status = check_rows(argv[2], &t);
  else
    fprintf(stderr, "usage: test_bench_replay write|write-nan|write-swapped|check|rows FILE [CASE]\n");
  if (tc_parallel_finalize() != TC_SUCCESS)
    return 1;
  return status;
}
