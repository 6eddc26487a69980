/* consumer: a program outside tcmini's tree that uses the installed
 * contraction library, as a user would (built through find_package(tcmini)
 * and through pkg-config by tests/release/install.sh). It runs a
 * FieldFieldScalar and a DataFieldVector contraction whose results are known
 * by hand on every CPU backend the library holds, in both layouts, and exits
 * 0 only when every entry is right. */
#include <math.h>
#include <stdio.h>

#include "tc_build.h"
#include "tc_contract.h"

/* FieldFieldScalar, C=2 L=2 R=3 P=2: left[c][l][p] = c + l + p + 1,
 * right[c][r][p] = r - p + 1, so out[c][l][r] = (c+l+1)(r+1) + (c+l+2) r. */
static int field_field_scalar(const tc_contract_backend *backend, tc_layout layout) {
  enum { C = 2, L = 2, R = 3, P = 2 };
  tc_contraction shape = {.kernel = TC_FIELD_FIELD_SCALAR, .num_cells = C, .num_left_fields = L,
                          .num_right_fields = R, .num_points = P, .layout = layout,
                          .precision = TC_DOUBLE};
  tc_contraction_normalize(&shape);
  double left[C * L * P], right[C * R * P], out[C * L * R];
  int64_t left_dims[5], right_dims[5], out_dims[5];
  int left_rank = tc_contraction_left_dims(&shape, left_dims);
  int right_rank = tc_contraction_right_dims(&shape, right_dims);
  int out_rank = tc_contraction_output_dims(&shape, out_dims);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t l = 0; l < L; ++l)
        left[tc_layout_offset(layout, left_rank, left_dims, (int64_t[]){c, l, p})] =
            (double)(c + l + p + 1);
      for (int64_t r = 0; r < R; ++r)
        right[tc_layout_offset(layout, right_rank, right_dims, (int64_t[]){c, r, p})] =
            (double)(r - p + 1);
    }
  if (tc_contract(backend, &shape, TC_VARIANT_AUTO, left, right, out, NULL) != TC_SUCCESS) {
    fprintf(stderr, "consumer: tc_contract failed: %s\n", tc_error_message());
    return 1;
  }
  int wrong = 0;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t r = 0; r < R; ++r) {
        double expected = (double)((c + l + 1) * (r + 1) + (c + l + 2) * r);
        double found = out[tc_layout_offset(layout, out_rank, out_dims, (int64_t[]){c, l, r})];
        wrong += fabs(found - expected) > 1e-12;
      }
  return wrong;
}

/* DataFieldVector, C=1 F=2 P=1 D1=3, one data value per cell:
 * data = (1,2,3), fields[f] = (f+1)(1,1,1), so out[f] = 6(f+1). */
static int data_field_vector(const tc_contract_backend *backend) {
  tc_contraction shape = {.kernel = TC_DATA_FIELD_VECTOR, .num_cells = 1, .num_left_fields = 2,
                          .num_points = 1, .num_data_points = 1, .dim1 = 3,
                          .layout = TC_LAYOUT_RIGHT, .precision = TC_DOUBLE};
  tc_contraction_normalize(&shape);
  const double data[3] = {1, 2, 3}, fields[6] = {1, 1, 1, 2, 2, 2};
  double out[2];
  if (tc_contract(backend, &shape, TC_VARIANT_AUTO, data, fields, out, NULL) != TC_SUCCESS) {
    fprintf(stderr, "consumer: tc_contract failed: %s\n", tc_error_message());
    return 1;
  }
  return (out[0] != 6.0) + (out[1] != 12.0);
}

int main(void) {
  int wrong = 0, backends = 0;
  for (int b = TC_BACKEND_SERIAL; b <= TC_BACKEND_OPENMP; ++b) {
    const tc_contract_backend *backend = tc_contract_backend_get((tc_backend_kind)b);
    if (backend == NULL)
      continue;
    ++backends;
    for (int layout = 0; layout < TC_LAYOUT_COUNT; ++layout)
      wrong += field_field_scalar(backend, (tc_layout)layout);
    wrong += data_field_vector(backend);
  }
  /* tc_build.h and the library agree on the CUDA backend. */
  if ((tc_contract_backend_get(TC_BACKEND_CUDA) != NULL) != (TCMINI_HAVE_CUDA != 0)) {
    fprintf(stderr, "consumer: tc_build.h and the library disagree on the CUDA backend\n");
    ++wrong;
  }
  printf("consumer: %s on %d CPU backend%s (CUDA backend %s), %d wrong\n",
         wrong ? "FAILED" : "ok", backends, backends == 1 ? "" : "s",
         TCMINI_HAVE_CUDA ? "compiled in" : "not compiled in", wrong);
  return wrong == 0 && backends > 0 ? 0 : 1;
}
