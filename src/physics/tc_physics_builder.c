/* tc_physics_builder: the contraction inputs of a batch in one pass over its
 * cells (see tc_physics_builder.h). Per cell: the physical gradients at
 * every (node, point), the nodal values of u and w, then each needed input
 * in the order of tc_physics_input, row-major over the indices after the
 * cell, into its output (layout right, double) or into the thread's cell
 * buffer, placed afterwards. Each value is the same expression, evaluated
 * in the same order, as tc_hgrad_values/tc_hgrad_gradients (src/fem) and
 * the formulas of tc_physics_fields.h, so that the inputs, and with them the
 * results, are those of separate passes bit for bit. */
#include "tc_physics_builder.h"

#include <stdlib.h>
#include <string.h>

#include "tc_omp.h"

struct tc_physics_builder {
  bool needed[TC_INPUT_COUNT];
  int64_t num_fields, num_points;
  tc_layout layout;
  tc_precision precision;
  tc_physics_fields fields;
  bool direct;                       ///< layout right, double: outputs written in place
  bool gradients;                    ///< some needed input uses the physical gradients
  bool nodal_u, nodal_w;             ///< some needed input uses u or w at the nodes
  int64_t per_cell[TC_INPUT_COUNT];  ///< entries of an input per cell
  int64_t *places[TC_INPUT_COUNT];   ///< layout left: where entry e of a cell goes, times C
  int64_t buffer_at[TC_INPUT_COUNT]; ///< an input's cell buffer in a thread's scratch
  int64_t gradients_at, nodal_u_at, nodal_w_at, per_thread;
  int threads;
  double *scratch;                   ///< threads x per_thread doubles
};

void tc_physics_builder_destroy(tc_physics_builder **builder) {
  tc_physics_builder *b = *builder;
  if (!b)
    return;
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    free(b->places[i]);
  free(b->scratch);
  free(b);
  *builder = NULL;
}

/* Layout left: an entry's offset from its cell's first one is C times the
 * column-major position of its indices after the cell (the first fastest). */
static tc_err left_places(tc_physics_input input, int64_t F, int64_t P, int64_t **places) {
  int64_t dims[5];
  const int rank = tc_physics_input_dims(input, 1, F, P, dims);
  const int64_t count = tc_physics_input_count(input, 1, F, P);
  TC_CALLOC(*places, count > 0 ? count : 1);
  int64_t index[5] = {0};
  for (int64_t e = 0; e < count; ++e) {
    int64_t place = 0;
    for (int k = rank - 1; k >= 1; --k)
      place = place * dims[k] + index[k];
    (*places)[e] = place;
    for (int k = rank - 1; k >= 1; --k) { /* row-major increment */
      if (++index[k] < dims[k])
        break;
      index[k] = 0;
    }
  }
  return TC_SUCCESS;
}

static bool any_of(const bool needed[TC_INPUT_COUNT], const tc_physics_input *inputs, int count) {
  for (int i = 0; i < count; ++i)
    if (needed[inputs[i]])
      return true;
  return false;
}

static tc_err builder_setup(tc_physics_builder *b) {
  static const tc_physics_input gradient_users[] = {
      TC_INPUT_GRADIENTS,   TC_INPUT_WEIGHTED_GRADIENTS,   TC_INPUT_STRAINS,
      TC_INPUT_WEIGHTED_STRESSES, TC_INPUT_GRADIENT_U,     TC_INPUT_WEIGHTED_GRADIENT_U,
      TC_INPUT_STRAIN_W,    TC_INPUT_WEIGHTED_STRESS_W};
  static const tc_physics_input u_users[] = {TC_INPUT_FIELD_U, TC_INPUT_WEIGHTED_FIELD_U,
                                             TC_INPUT_GRADIENT_U, TC_INPUT_WEIGHTED_GRADIENT_U};
  static const tc_physics_input w_users[] = {TC_INPUT_STRAIN_W, TC_INPUT_WEIGHTED_STRESS_W};
  const int64_t F = b->num_fields, P = b->num_points;
  b->gradients = any_of(b->needed, gradient_users, 8);
  b->nodal_u = any_of(b->needed, u_users, 4);
  b->nodal_w = any_of(b->needed, w_users, 2);
  b->direct = b->layout == TC_LAYOUT_RIGHT && b->precision == TC_DOUBLE;
  /* A thread's scratch: gradients, nodal u and w, then the cell buffers. */
  int64_t used = 0;
  b->gradients_at = used, used += F * P * 3;
  b->nodal_u_at = used, used += F;
  b->nodal_w_at = used, used += 3 * F;
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!b->needed[i])
      continue;
    b->per_cell[i] = tc_physics_input_count(i, 1, F, P);
    if (b->direct)
      continue;
    b->buffer_at[i] = used, used += b->per_cell[i];
    if (b->layout == TC_LAYOUT_LEFT)
      TC_CALL(left_places(i, F, P, &b->places[i]));
  }
  b->per_thread = (used + 7) / 8 * 8; /* whole cache lines apart */
  b->threads = tc_omp_threads();
  TC_CALLOC(b->scratch, b->per_thread * b->threads);
  return TC_SUCCESS;
}

tc_err tc_physics_builder_create(const bool needed[TC_INPUT_COUNT], int64_t num_fields,
                                 int64_t num_points, tc_layout layout, tc_precision precision,
                                 const tc_physics_fields *fields, tc_physics_builder **builder) {
  TC_CHECK(num_fields >= 1 && num_points >= 1, TC_ERR_ARGUMENT,
           "input builder for %lld fields and %lld points", (long long)num_fields,
           (long long)num_points);
  TC_CHECK(layout == TC_LAYOUT_RIGHT || layout == TC_LAYOUT_LEFT, TC_ERR_ARGUMENT,
           "unknown layout %d", (int)layout);
  TC_CHECK(precision == TC_DOUBLE || precision == TC_FLOAT, TC_ERR_ARGUMENT,
           "unknown precision %d", (int)precision);
  tc_physics_builder *b;
  TC_CALLOC(b, 1);
  memcpy(b->needed, needed, sizeof b->needed);
  b->num_fields = num_fields;
  b->num_points = num_points;
  b->layout = layout;
  b->precision = precision;
  b->fields = *fields;
  tc_err err = builder_setup(b);
  if (err != TC_SUCCESS) {
    tc_physics_builder_destroy(&b);
    return err;
  }
  *builder = b;
  return TC_SUCCESS;
}

/* Physical gradients of every node at every point of the cell: J^{-T} times
 * the reference gradient, (F,P,3) (tc_hgrad_gradients' expression). */
static void cell_gradients(int64_t F, int64_t P, const double *restrict ref_gradients,
                           const double *restrict inverses, double *restrict gradients) {
  for (int64_t a = 0; a < F; ++a)
    for (int64_t q = 0; q < P; ++q) {
      const double *r = ref_gradients + (a * P + q) * 3, *J = inverses + q * 9;
      double *g = gradients + (a * P + q) * 3;
      for (int i = 0; i < 3; ++i)
        g[i] = J[0 * 3 + i] * r[0] + J[1 * 3 + i] * r[1] + J[2 * 3 + i] * r[2];
    }
}

/* eps(phi_a e_i) and dV sigma(phi_a e_i), (3F,P,3,3) each; either may be
 * NULL. Entry by entry the expressions of tc_physics_basis_strain and
 * tc_physics_stress_of_strain, with their terms that are the constant 0.0
 * folded by hand, keeping each "+ 0.0" (it turns -0.0 into +0.0), each
 * product and sum in the same order, so that the values are bitwise those
 * of the helpers' pass wherever the compiler contracts (into FMAs) alike in
 * both; fem_inputs checks it on each build (GCC 12 in C11 mode, which does
 * not contract, and clang 14 with -march=native pass). For gradient g, eps
 * has 0.5 (g_i + g_i) at (i,i), h_k = 0.5 (g_k + 0.0) at (i,k) and (k,i),
 * 0.0 elsewhere; its trace is eps_ii + 0.0; sigma is lambda trace + 2 mu
 * eps_jj on the diagonal and 0.0 + 2 mu eps_jk off it, where 2 mu 0.0 is
 * `zero` below. h_k and sigma's off-diagonal (i,k) entries do not depend on
 * i, so they are formed once a point; the generic form spent three times the
 * arithmetic. */
static void cell_strains(const tc_physics_fields *f, int64_t F, int64_t P,
                         const double *restrict gradients, const double *restrict dV,
                         double *restrict strains, double *restrict stresses) {
  const double lambda = f->lambda, two_mu = 2.0 * f->mu, zero = two_mu * 0.0;
  const double off_zero = 0.0 + zero; /* sigma_jk, j != k, neither i */
  for (int64_t a = 0; a < F; ++a)
    for (int64_t q = 0; q < P; ++q) {
      const double *g = gradients + (a * P + q) * 3;
      double h[3], s[3];
      for (int k = 0; k < 3; ++k) {
        h[k] = 0.5 * (g[k] + 0.0);
        s[k] = 0.0 + two_mu * h[k];
      }
#pragma GCC unroll 3
      for (int i = 0; i < 3; ++i) {
        const double diagonal = 0.5 * (g[i] + g[i]);
        const double lambda_trace = lambda * (diagonal + 0.0);
        const double sigma_ii = lambda_trace + two_mu * diagonal;
        const double sigma_jj = lambda_trace + zero;
        const int64_t at = ((a * 3 + i) * P + q) * 9;
        double eps[9], sigma[9];
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k) {
            const bool on_row = j == i, on_column = k == i;
            eps[3 * j + k] = on_row && on_column ? diagonal
                             : on_row            ? h[k]
                             : on_column         ? h[j]
                                                 : 0.0;
            sigma[3 * j + k] = j == k ? (on_row ? sigma_ii : sigma_jj)
                               : on_row    ? s[k]
                               : on_column ? s[j]
                                           : off_zero;
          }
        if (strains)
          for (int k = 0; k < 9; ++k)
            strains[at + k] = eps[k];
        if (stresses)
          for (int k = 0; k < 9; ++k)
            stresses[at + k] = dV[q] * sigma[k];
      }
    }
}

/* One cell's inputs into dst[input], row-major after the cell index. */
static void build_cell(const tc_physics_builder *b, const tc_physics_batch *batch, int64_t c,
                       double *restrict mine, double *const dst[TC_INPUT_COUNT]) {
  const int64_t F = b->num_fields, P = b->num_points;
  const tc_physics_fields *f = &b->fields;
  const bool *need = b->needed;
  const double *dV = batch->measures + c * P;
  const double *x = batch->node_coords + c * F * 3;
  const double *ref = batch->ref_values;
  double *restrict grad = mine + b->gradients_at;
  double *restrict u = mine + b->nodal_u_at, *restrict w = mine + b->nodal_w_at;
  if (b->gradients)
    cell_gradients(F, P, batch->ref_gradients, batch->inverse_jacobians + c * P * 9, grad);
  for (int64_t a = 0; b->nodal_u && a < F; ++a)
    u[a] = tc_physics_field_u(f, x + 3 * a);
  for (int64_t a = 0; b->nodal_w && a < F; ++a)
    tc_physics_field_w(f, x + 3 * a, w + 3 * a);

  if (need[TC_INPUT_VALUES])
    memcpy(dst[TC_INPUT_VALUES], ref, (size_t)(F * P) * sizeof(double));
  if (need[TC_INPUT_WEIGHTED_VALUES])
    for (int64_t a = 0; a < F; ++a)
      for (int64_t q = 0; q < P; ++q)
        dst[TC_INPUT_WEIGHTED_VALUES][a * P + q] = dV[q] * ref[a * P + q];
  if (need[TC_INPUT_GRADIENTS])
    memcpy(dst[TC_INPUT_GRADIENTS], grad, (size_t)(F * P * 3) * sizeof(double));
  if (need[TC_INPUT_WEIGHTED_GRADIENTS])
    for (int64_t a = 0; a < F; ++a)
      for (int64_t q = 0; q < P; ++q)
        for (int i = 0; i < 3; ++i)
          dst[TC_INPUT_WEIGHTED_GRADIENTS][(a * P + q) * 3 + i] = dV[q] * grad[(a * P + q) * 3 + i];
  if (need[TC_INPUT_STRAINS] || need[TC_INPUT_WEIGHTED_STRESSES])
    cell_strains(f, F, P, grad, dV, need[TC_INPUT_STRAINS] ? dst[TC_INPUT_STRAINS] : NULL,
                 need[TC_INPUT_WEIGHTED_STRESSES] ? dst[TC_INPUT_WEIGHTED_STRESSES] : NULL);
  if (need[TC_INPUT_FIELD_U] || need[TC_INPUT_WEIGHTED_FIELD_U])
    for (int64_t q = 0; q < P; ++q) {
      double value = 0.0;
      for (int64_t a = 0; a < F; ++a)
        value += u[a] * ref[a * P + q];
      if (need[TC_INPUT_FIELD_U])
        dst[TC_INPUT_FIELD_U][q] = value;
      if (need[TC_INPUT_WEIGHTED_FIELD_U])
        dst[TC_INPUT_WEIGHTED_FIELD_U][q] = dV[q] * value;
    }
  if (need[TC_INPUT_GRADIENT_U_CELL])
    for (int d = 0; d < 3; ++d)
      dst[TC_INPUT_GRADIENT_U_CELL][d] = f->g[d];
  if (need[TC_INPUT_GRADIENT_U] || need[TC_INPUT_WEIGHTED_GRADIENT_U])
    for (int64_t q = 0; q < P; ++q)
      for (int d = 0; d < 3; ++d) {
        double sum = 0.0;
        for (int64_t a = 0; a < F; ++a)
          sum += u[a] * grad[(a * P + q) * 3 + d];
        if (need[TC_INPUT_GRADIENT_U])
          dst[TC_INPUT_GRADIENT_U][q * 3 + d] = sum;
        if (need[TC_INPUT_WEIGHTED_GRADIENT_U])
          dst[TC_INPUT_WEIGHTED_GRADIENT_U][q * 3 + d] = dV[q] * sum;
      }
  if (need[TC_INPUT_STRAIN_W] || need[TC_INPUT_WEIGHTED_STRESS_W])
    for (int64_t q = 0; q < P; ++q) {
      double H[9] = {0}, eps[9], sigma[9];
      for (int64_t a = 0; a < F; ++a) {
        const double *g = grad + (a * P + q) * 3;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            H[3 * i + j] += w[3 * a + i] * g[j];
      }
      tc_physics_symmetric_part(H, eps);
      tc_physics_stress_of_strain(f, eps, sigma);
      for (int k = 0; k < 9; ++k) {
        if (need[TC_INPUT_STRAIN_W])
          dst[TC_INPUT_STRAIN_W][q * 9 + k] = eps[k];
        if (need[TC_INPUT_WEIGHTED_STRESS_W])
          dst[TC_INPUT_WEIGHTED_STRESS_W][q * 9 + k] = dV[q] * sigma[k];
      }
    }
}

/* Places a cell's buffered inputs into the outputs: layout right in float
 * (rounded once), or layout left (each entry C apart from the last cell's). */
static void place_cell(const tc_physics_builder *b, int64_t c, int64_t C,
                       double *const dst[TC_INPUT_COUNT], void *const outputs[TC_INPUT_COUNT]) {
  for (int i = 0; i < TC_INPUT_COUNT; ++i) {
    if (!b->needed[i])
      continue;
    const double *from = dst[i];
    const int64_t count = b->per_cell[i];
    if (b->layout == TC_LAYOUT_RIGHT) {
      float *to = (float *)outputs[i] + c * count;
      for (int64_t e = 0; e < count; ++e)
        to[e] = (float)from[e];
      continue;
    }
    const int64_t *places = b->places[i];
    if (b->precision == TC_DOUBLE) {
      double *to = (double *)outputs[i] + c;
      for (int64_t e = 0; e < count; ++e)
        to[places[e] * C] = from[e];
    } else {
      float *to = (float *)outputs[i] + c;
      for (int64_t e = 0; e < count; ++e)
        to[places[e] * C] = (float)from[e];
    }
  }
}

/* What the threads of tc_physics_build_inputs share. */
typedef struct {
  const tc_physics_builder *builder;
  const tc_physics_batch *batch;
  void *const *outputs;
} build_team;

/* One thread's cells of tc_physics_build_inputs, through its own slice of
 * the cell buffers. */
static void build_share(void *context, int thread, int threads) {
  const build_team *team = context;
  const tc_physics_builder *b = team->builder;
  const int64_t C = team->batch->num_cells;
  double *mine = b->scratch + (int64_t)thread * b->per_thread;
  int64_t begin, end;
  tc_omp_share(C, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c) {
    double *dst[TC_INPUT_COUNT] = {0};
    for (int i = 0; i < TC_INPUT_COUNT; ++i)
      if (b->needed[i])
        dst[i] = b->direct ? (double *)team->outputs[i] + c * b->per_cell[i]
                           : mine + b->buffer_at[i];
    build_cell(b, team->batch, c, mine, dst);
    if (!b->direct)
      place_cell(b, c, C, dst, team->outputs);
  }
}

tc_err tc_physics_build_inputs(const tc_physics_builder *b, const tc_physics_batch *batch,
                               void *const outputs[TC_INPUT_COUNT]) {
  TC_CHECK(batch->num_fields == b->num_fields && batch->num_points == b->num_points &&
               batch->num_cells >= 0,
           TC_ERR_ARGUMENT, "a batch of %lld cells, %lld fields, %lld points for a builder of "
           "%lld fields, %lld points", (long long)batch->num_cells, (long long)batch->num_fields,
           (long long)batch->num_points, (long long)b->num_fields, (long long)b->num_points);
  build_team team = {.builder = b, .batch = batch, .outputs = outputs};
  tc_omp_team(b->threads, build_share, &team);
  return TC_SUCCESS;
}

tc_err tc_physics_build_input(tc_physics_input input, const tc_physics_batch *batch,
                              const tc_physics_fields *fields, tc_layout layout,
                              tc_precision precision, void *output) {
  TC_CHECK(input >= 0 && input < TC_INPUT_COUNT, TC_ERR_ARGUMENT, "unknown input %d", (int)input);
  bool needed[TC_INPUT_COUNT] = {false};
  void *outputs[TC_INPUT_COUNT] = {NULL};
  needed[input] = true;
  outputs[input] = output;
  tc_physics_builder *builder = NULL;
  TC_CALL(tc_physics_builder_create(needed, batch->num_fields, batch->num_points, layout,
                                    precision, fields, &builder));
  tc_err err = tc_physics_build_inputs(builder, batch, outputs);
  tc_physics_builder_destroy(&builder);
  return err;
}
