/* tc_checks: the correctness checks of an assembled step (see tc_checks.h).
 * Degrees of exactness: on a cell mapped by a Q_p map, det J has degree
 * 3p-1 per reference variable, u_h (the interpolant of a linear u) degree p,
 * the cofactor matrix 2p and reference gradients p; an n-point Gauss rule is
 * exact to degree 2n-1. Affine cells (no distortion) lower these degrees.
 *
 * Conditioning. A stiffness matrix K annihilates constants (E, the
 * elasticity matrix, translations): its (block) rows sum to zero. Products
 * with K are therefore evaluated on differences,
 *   (K x)_i = sum_j K_ij (x_j - x_i),  x.K.x = -1/2 sum_ij K_ij (x_i - x_j)^2
 * (the second for one dof a node; w.E.w is w . (E w) with E w on
 * differences), which are the same numbers in exact arithmetic. Computed
 * directly, x.K.x adds terms of size |K_ij| |x|^2 ~ h that cancel down to a
 * result of size 1: on n^3 cells the rounding of K (float contractions) is
 * amplified about n^2 times (float Q2 failed its 1e-4 tolerance from 16^3
 * cells). On differences the terms of x.K.x are of the size of the result
 * (h^3 each), those of K x of the size of the load it is compared with
 * (h^2), and w . (E w) keeps a factor n (|w| against differences of size
 * h). The difference forms take the zero row sums for granted (they never
 * read K's diagonal): the checks that K annihilates constants and E the
 * rigid-body motions test exactly that, with direct products. The tolerance
 * of a check on differences is the
 * larger of verify.tolerance(_float) and its rounding-error bound
 * gamma_k * M / scale: k the roundings behind one entry of the contraction
 * (its contracted length, plus two for its inputs), gamma_k = k u / (1 - k u)
 * with u the unit roundoff of the run's precision, and M the sum of the
 * magnitudes of the terms compared (|K_ij| |x_j - x_i|, ...). */
#include "tc_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_parallel.h"
#include "tc_physics.h"

typedef struct {
  const tc_config *config;
  const tc_mesh *mesh;
  const tc_mesh_local *local;
  const tc_loop *loop;
  const tc_loop_results *results;
  MPI_Comm comm;
  int rank;
  double tolerance;
  double *u, *w;          /* nodal values of u and w */
  double *scratch;        /* [3 * num_nodes] */
  tc_check_list *list;
} check_context;

/* A check whose relative tolerance is the larger of the configured one and
 * bound (a rounding-error bound relative to scale; 0 for none). */
static void add_bounded_check(check_context *ctx, const char *name, double value,
                              double reference, double scale, double bound,
                              const char *skip_note) {
  tc_check_list *list = ctx->list;
  if (list->count == TC_CHECKS_MAX)
    return;
  tc_check *check = &list->checks[list->count++];
  snprintf(check->name, sizeof check->name, "%s", name);
  check->value = value;
  check->reference = reference;
  check->scale = scale > 0 ? scale : 1.0;
  check->tolerance = fmax(ctx->tolerance, bound);
  check->skipped = skip_note != NULL;
  snprintf(check->note, sizeof check->note, "%s", skip_note ? skip_note : "");
  check->passed = check->skipped || fabs(value - reference) <= check->tolerance * check->scale;
  if (!check->passed)
    list->passed = false;
}

static void add_check(check_context *ctx, const char *name, double value, double reference,
                      double scale, const char *skip_note) {
  add_bounded_check(ctx, name, value, reference, scale, 0.0, skip_note);
}

/* gamma_k of the run's precision (Higham's bound on k roundings): the
 * relative error bound of a contraction entry with k contracted terms (and
 * its two rounded inputs: k + 2). */
static double gamma_of(const check_context *ctx, tc_kernel kernel) {
  const int64_t points = ctx->loop ? tc_loop_num_points(ctx->loop) : 1;
  const int64_t dims = kernel == TC_FIELD_FIELD_TENSOR || kernel == TC_DATA_FIELD_TENSOR ||
                               kernel == TC_DATA_DATA_TENSOR
                           ? 9
                       : kernel == TC_FIELD_FIELD_VECTOR || kernel == TC_DATA_FIELD_VECTOR ||
                               kernel == TC_DATA_DATA_VECTOR
                           ? 3
                           : 1;
  const double u = ctx->config->precision == TC_FLOAT ? 0x1p-24 : 0x1p-53;
  const double k = (double)(points * dims + 2);
  return k * u / (1 - k * u);
}

/* Whether the n-point Gauss rule integrates an integrand of this degree
 * exactly, and the note to show when it does not. */
static const char *inexact_note(const check_context *ctx, int degree) {
  int points = tc_config_quadrature(ctx->config);
  if (degree <= 2 * points - 1)
    return NULL;
  static _Thread_local char note[160];
  snprintf(note, sizeof note,
           "skipped: the %d-point rule is not exact for this integrand (degree %d); use "
           "element.quadrature >= %d",
           points, degree, degree / 2 + 1);
  return note;
}

static int degree(const check_context *ctx, int distorted, int affine) {
  return ctx->config->distortion > 0 ? distorted : affine;
}

static bool owned(const check_context *ctx, int64_t node) {
  return ctx->local->node_owner[node] == ctx->rank;
}

static bool interior(const check_context *ctx, int64_t node) {
  const tc_mesh_local *m = ctx->local;
  int64_t id = m->node_global_id[node];
  int64_t i = id % m->global_nodes[0], j = (id / m->global_nodes[0]) % m->global_nodes[1],
          k = id / (m->global_nodes[0] * m->global_nodes[1]);
  return i > 0 && j > 0 && k > 0 && i < m->global_nodes[0] - 1 && j < m->global_nodes[1] - 1 &&
         k < m->global_nodes[2] - 1;
}

/* Sum over owned nodes of a node vector (all components), over all ranks;
 * of the magnitudes when absolute is set: the size that the round-off of a
 * sum of these values is measured against. */
static tc_err global_sum(const check_context *ctx, const double *values, int components,
                         bool absolute, double *sum) {
  double total = 0.0;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
    if (owned(ctx, n))
      for (int i = 0; i < components; ++i)
        total += absolute ? fabs(values[n * components + i]) : values[n * components + i];
  TC_CALL(tc_allreduce_sum_double(ctx->comm, &total, 1));
  *sum = total;
  return TC_SUCCESS;
}

/* Maximum of |values| over owned nodes (interior ones only if asked), all ranks. */
static tc_err global_max_abs(const check_context *ctx, const double *values, int components,
                             bool interior_only, double *max) {
  double largest = 0.0;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
    if (owned(ctx, n) && (!interior_only || interior(ctx, n)))
      for (int i = 0; i < components; ++i)
        largest = fmax(largest, fabs(values[n * components + i]));
  TC_CALL(tc_allreduce_max_double(ctx->comm, &largest, 1));
  *max = largest;
  return TC_SUCCESS;
}

/* Largest |a - b| over owned nodes, all ranks. */
static tc_err global_max_difference(const check_context *ctx, const double *a, const double *b,
                                    int components, double *max) {
  double largest = 0.0;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
    if (owned(ctx, n))
      for (int i = 0; i < components; ++i)
        largest = fmax(largest, fabs(a[n * components + i] - b[n * components + i]));
  TC_CALL(tc_allreduce_max_double(ctx->comm, &largest, 1));
  *max = largest;
  return TC_SUCCESS;
}

/* y = A x over the whole mesh: the rank-local product, then shared rows summed. */
static tc_err global_product(const check_context *ctx, int components, const double *matrix,
                             const double *x, double *y) {
  tc_assembly_multiply(tc_loop_assembly(ctx->loop), components, matrix, x, y);
  return tc_mesh_sum_shared(ctx->mesh, y, components);
}

/* y = K x evaluated on differences, y_i = sum_j K_ij (x_j - x_i) (per
 * component for 3 dofs a node), and magnitude_i = sum_j |K_ij (x_j - x_i)|,
 * over the whole mesh: the rank's rows, then shared rows summed. K must
 * annihilate constants (translations). magnitude may be NULL. */
static tc_err difference_product(const check_context *ctx, int components, const double *matrix,
                                 const double *x, double *y, double *magnitude) {
  const tc_csr *graph = tc_assembly_graph(tc_loop_assembly(ctx->loop), components);
  const tc_csr *nodes = tc_assembly_graph(tc_loop_assembly(ctx->loop), 1);
  for (int64_t row = 0; row < graph->num_rows; ++row) {
    const int64_t node = row / components;
    const tc_assembly_row view = tc_assembly_row_view(nodes, graph, components, row);
    const double *entries = matrix + view.first;
    double sum = 0.0, size = 0.0;
    for (int64_t k = 0; k < view.length; ++k)
      for (int j = 0; j < components; ++j) {
        const double term = entries[k * components + j] *
                            (x[view.nodes[k] * components + j] - x[node * components + j]);
        sum += term;
        size += fabs(term);
      }
    y[row] = sum;
    if (magnitude)
      magnitude[row] = size;
  }
  TC_CALL(tc_mesh_sum_shared(ctx->mesh, y, components));
  return magnitude ? tc_mesh_sum_shared(ctx->mesh, magnitude, components) : TC_SUCCESS;
}

/* x.K.x evaluated on differences, -1/2 sum_ij K_ij (x_i - x_j)^2 (one dof
 * a node; for 3x3 blocks the identity needs symmetric blocks, which the
 * elasticity matrix's off-diagonal blocks are not), and the sum of the
 * magnitudes of its terms, over the whole mesh (each rank's matrix holds its
 * own cells' contributions, so the ranks' sums add up). */
static tc_err difference_form(const check_context *ctx, const double *matrix, const double *x,
                              double *form, double *magnitude) {
  const tc_csr *graph = tc_assembly_graph(tc_loop_assembly(ctx->loop), 1);
  double sums[2] = {0.0, 0.0};
  for (int64_t row = 0; row < graph->num_rows; ++row)
    for (int64_t e = graph->row_offsets[row]; e < graph->row_offsets[row + 1]; ++e) {
      const double difference = x[row] - x[graph->columns[e]];
      const double term = -0.5 * matrix[e] * difference * difference;
      sums[0] += term;
      sums[1] += fabs(term);
    }
  TC_CALL(tc_allreduce_sum_double(ctx->comm, sums, 2));
  *form = sums[0];
  *magnitude = sums[1];
  return TC_SUCCESS;
}

/* sum |x_i| |y_i| over owned nodes, all ranks. */
static tc_err global_abs_dot(const check_context *ctx, const double *x, const double *y,
                             int components, double *dot) {
  double total = 0.0;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
    if (owned(ctx, n))
      for (int i = 0; i < components; ++i)
        total += fabs(x[n * components + i]) * fabs(y[n * components + i]);
  TC_CALL(tc_allreduce_sum_double(ctx->comm, &total, 1));
  *dot = total;
  return TC_SUCCESS;
}

/* x . y over owned nodes, all ranks. */
static tc_err global_dot(const check_context *ctx, const double *x, const double *y,
                         int components, double *dot) {
  double total = 0.0;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
    if (owned(ctx, n))
      for (int i = 0; i < components; ++i)
        total += x[n * components + i] * y[n * components + i];
  TC_CALL(tc_allreduce_sum_double(ctx->comm, &total, 1));
  *dot = total;
  return TC_SUCCESS;
}

static tc_err cell_sum(const check_context *ctx, const double *values, double *sum) {
  double total = 0.0;
  for (int64_t c = 0; c < ctx->local->num_cells; ++c)
    total += values[c];
  TC_CALL(tc_allreduce_sum_double(ctx->comm, &total, 1));
  *sum = total;
  return TC_SUCCESS;
}

static tc_err check_mass(check_context *ctx, double volume) {
  const tc_loop_results *r = ctx->results;
  const int p = (int)ctx->config->order;
  const int64_t entries = tc_assembly_graph(tc_loop_assembly(ctx->loop), 1)->num_entries;
  double total = 0.0;
  for (int64_t e = 0; e < entries; ++e)
    total += r->mass[e];
  TC_CALL(tc_allreduce_sum_double(ctx->comm, &total, 1));
  add_check(ctx, "mass matrix sums to the domain volume", total, volume, volume,
            inexact_note(ctx, degree(ctx, 3 * p - 1, 0)));
  if (r->load) {
    double difference, scale;
    TC_CALL(global_product(ctx, 1, r->mass, ctx->u, ctx->scratch));
    TC_CALL(global_max_difference(ctx, ctx->scratch, r->load, 1, &difference));
    TC_CALL(global_max_abs(ctx, r->load, 1, false, &scale));
    add_check(ctx, "load of u_h (DataFieldScalar) equals mass matrix times u", difference, 0.0,
              scale, NULL);
  }
  if (r->cell_u2) {
    double integral, mass_u_u;
    TC_CALL(cell_sum(ctx, r->cell_u2, &integral));
    TC_CALL(global_product(ctx, 1, r->mass, ctx->u, ctx->scratch));
    TC_CALL(global_dot(ctx, ctx->u, ctx->scratch, 1, &mass_u_u));
    add_check(ctx, "integral of u^2 (DataDataScalar) equals u.M.u", integral, mass_u_u,
              fabs(mass_u_u), NULL);
  }
  return TC_SUCCESS;
}

static tc_err check_stiffness(check_context *ctx) {
  const tc_loop_results *r = ctx->results;
  const int p = (int)ctx->config->order;
  const int64_t nodes = ctx->local->num_nodes;
  double diagonal, largest_u, residual;
  TC_CALL(global_max_abs(ctx, r->stiffness_diagonal, 1, false, &diagonal));
  TC_CALL(global_max_abs(ctx, ctx->u, 1, false, &largest_u));
  for (int64_t n = 0; n < nodes; ++n)
    ctx->scratch[n] = 1.0;
  TC_CALL(global_product(ctx, 1, r->stiffness, ctx->scratch, ctx->scratch + nodes));
  TC_CALL(global_max_abs(ctx, ctx->scratch + nodes, 1, false, &residual));
  add_check(ctx, "diffusion stiffness annihilates constants (max |K 1|)", residual, 0.0, diagonal,
            NULL);
  /* K u on differences; scratch + nodes: the magnitudes of its terms. */
  TC_CALL(difference_product(ctx, 1, r->stiffness, ctx->u, ctx->scratch, ctx->scratch + nodes));
  TC_CALL(global_max_abs(ctx, ctx->scratch, 1, true, &residual));
  add_check(ctx, "diffusion stiffness annihilates a linear field at interior nodes", residual, 0.0,
            diagonal * largest_u, inexact_note(ctx, degree(ctx, 3 * p, p)));
  if (r->flux_load) {
    double difference, scale, size;
    TC_CALL(global_max_difference(ctx, ctx->scratch, r->flux_load, 1, &difference));
    TC_CALL(global_max_abs(ctx, r->flux_load, 1, false, &scale));
    TC_CALL(global_max_abs(ctx, ctx->scratch + nodes, 1, false, &size));
    scale = fmax(scale, diagonal * largest_u);
    add_bounded_check(ctx, "flux load (DataFieldVector, P=1 data) equals stiffness times u",
                      difference, 0.0, scale,
                      (gamma_of(ctx, TC_FIELD_FIELD_VECTOR) + gamma_of(ctx, TC_DATA_FIELD_VECTOR)) *
                          size / scale,
                      NULL);
  }
  if (r->cell_grad_u2) {
    double integral, form, size;
    TC_CALL(cell_sum(ctx, r->cell_grad_u2, &integral));
    TC_CALL(difference_form(ctx, r->stiffness, ctx->u, &form, &size));
    /* |grad u_h|^2 >= 0: the integral's terms add up to it. */
    const double bound = gamma_of(ctx, TC_FIELD_FIELD_VECTOR) * size +
                         gamma_of(ctx, TC_DATA_DATA_VECTOR) * fabs(integral);
    add_bounded_check(ctx, "integral of |grad u|^2 (DataDataVector) equals u.K.u", integral, form,
                      fabs(form), bound / fabs(form), NULL);
  }
  return TC_SUCCESS;
}

/* Rigid motion `mode` (0-2 translations, 3-5 rotations about the box centre)
 * at the local nodes, [num_nodes][3]. */
static void rigid_motion(const check_context *ctx, int mode, double *motion) {
  const double *L = ctx->config->length;
  for (int64_t n = 0; n < ctx->local->num_nodes; ++n) {
    const double *x = ctx->local->coords + 3 * n;
    double r[3] = {x[0] - 0.5 * L[0], x[1] - 0.5 * L[1], x[2] - 0.5 * L[2]};
    double *m = motion + 3 * n;
    m[0] = m[1] = m[2] = 0.0;
    if (mode < 3) {
      m[mode] = 1.0;
    } else { /* omega x r with omega = e_(mode-3) */
      int a = (mode - 3 + 1) % 3, b = (mode - 3 + 2) % 3;
      m[a] = -r[b];
      m[b] = r[a];
    }
  }
}

static tc_err check_elasticity(check_context *ctx) {
  const tc_loop_results *r = ctx->results;
  const int64_t nodes = ctx->local->num_nodes;
  double diagonal, worst = 0.0, largest_motion = 0.0;
  TC_CALL(global_max_abs(ctx, r->elasticity_diagonal, 3, false, &diagonal));
  double *motion = malloc((size_t)(3 * nodes) * sizeof *motion);
  double *size = malloc((size_t)(3 * nodes) * sizeof *size);
  tc_err err = TC_SUCCESS;
  if ((motion == NULL || size == NULL) && nodes > 0)
    err = tc_error_out_of_memory(2.0 * 3 * (double)nodes * sizeof(double), __FILE__, __LINE__,
                                 __func__);
  for (int mode = 0; mode < 6 && err == TC_SUCCESS; ++mode) {
    double residual = 0.0, largest = 0.0;
    rigid_motion(ctx, mode, motion);
    /* Directly, not on differences: this is the check that the rows sum to
     * zero, which the difference forms take for granted. */
    err = global_product(ctx, 3, r->elasticity, motion, ctx->scratch);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, ctx->scratch, 3, false, &residual);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, motion, 3, false, &largest);
    worst = fmax(worst, residual);
    largest_motion = fmax(largest_motion, largest);
  }
  free(motion);
  if (err == TC_SUCCESS)
    add_check(ctx, "elasticity stiffness annihilates the 6 rigid-body motions", worst, 0.0,
              diagonal * largest_motion, NULL);
  if (err == TC_SUCCESS)
    err = difference_product(ctx, 3, r->elasticity, ctx->w, ctx->scratch, size);
  if (err == TC_SUCCESS && r->internal_force) {
    double difference, scale, largest;
    err = global_max_difference(ctx, ctx->scratch, r->internal_force, 3, &difference);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, r->internal_force, 3, false, &scale);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, size, 3, false, &largest);
    if (err == TC_SUCCESS)
      add_bounded_check(
          ctx, "internal force (DataFieldTensor) equals elasticity stiffness times w", difference,
          0.0, scale,
          (gamma_of(ctx, TC_FIELD_FIELD_TENSOR) + gamma_of(ctx, TC_DATA_FIELD_TENSOR)) * largest /
              (scale > 0 ? scale : 1.0),
          NULL);
  }
  /* w.E.w as w . (E w), E w on differences: its rounding is bounded by
   * sum_i |w_i| (|E| |w_j - w_i|)_i. */
  double integral = 0.0, energy = 0.0, magnitude = 0.0;
  if (err == TC_SUCCESS && r->cell_stress_strain)
    err = cell_sum(ctx, r->cell_stress_strain, &integral);
  if (err == TC_SUCCESS && r->cell_stress_strain)
    err = global_dot(ctx, ctx->w, ctx->scratch, 3, &energy);
  if (err == TC_SUCCESS && r->cell_stress_strain)
    err = global_abs_dot(ctx, ctx->w, size, 3, &magnitude);
  free(size);
  TC_CALL(err);
  if (r->cell_stress_strain) {
    /* sigma:eps >= 0 (positive definite material): the integral's terms add
     * up to it. */
    const double bound = gamma_of(ctx, TC_FIELD_FIELD_TENSOR) * magnitude +
                         gamma_of(ctx, TC_DATA_DATA_TENSOR) * fabs(integral);
    add_bounded_check(ctx, "integral of sigma:eps (DataDataTensor) equals w.E.w", integral,
                      energy, fabs(energy), bound / fabs(energy), NULL);
  }
  return TC_SUCCESS;
}

static tc_err check_integrals(check_context *ctx, double volume) {
  const tc_loop_results *r = ctx->results;
  const tc_physics_fields *f = tc_physics_default_fields();
  const double *L = ctx->config->length;
  const int p = (int)ctx->config->order;
  double total;
  TC_CALL(cell_sum(ctx, r->cell_volume, &total));
  add_check(ctx, "sum of cell volumes equals the domain volume", total, volume, volume,
            inexact_note(ctx, degree(ctx, 3 * p - 1, 0)));
  if (r->load) {
    double exact = tc_physics_exact_integral_u(f, L);
    TC_CALL(global_sum(ctx, r->load, 1, false, &total));
    add_check(ctx, "load vector (DataFieldScalar) sums to the integral of u", total, exact,
              fabs(exact), inexact_note(ctx, degree(ctx, 4 * p - 1, 1)));
  }
  if (r->flux_load) {
    double scale;
    TC_CALL(global_sum(ctx, r->flux_load, 1, false, &total));
    TC_CALL(global_sum(ctx, r->flux_load, 1, true, &scale));
    add_check(ctx, "flux load (DataFieldVector) sums to zero", total, 0.0, scale, NULL);
  }
  if (r->internal_force) {
    double scale, worst = 0.0;
    TC_CALL(global_sum(ctx, r->internal_force, 3, true, &scale));
    for (int i = 0; i < 3; ++i) {
      double component = 0.0;
      for (int64_t n = 0; n < ctx->local->num_nodes; ++n)
        if (owned(ctx, n))
          component += r->internal_force[3 * n + i];
      TC_CALL(tc_allreduce_sum_double(ctx->comm, &component, 1));
      worst = fmax(worst, fabs(component));
    }
    add_check(ctx, "internal force (DataFieldTensor) sums to zero per component", worst, 0.0,
              scale, NULL);
  }
  if (r->cell_u2) {
    double exact = tc_physics_exact_integral_u2(f, L);
    TC_CALL(cell_sum(ctx, r->cell_u2, &total));
    add_check(ctx, "integral of u^2 (DataDataScalar) is exact", total, exact, fabs(exact),
              inexact_note(ctx, degree(ctx, 5 * p - 1, 2)));
  }
  if (r->cell_grad_u2) {
    double exact = tc_physics_exact_integral_grad_u2(f, L);
    TC_CALL(cell_sum(ctx, r->cell_grad_u2, &total));
    add_check(ctx, "integral of |grad u|^2 (DataDataVector) is exact", total, exact, fabs(exact),
              inexact_note(ctx, degree(ctx, 3 * p - 1, 0)));
  }
  if (r->cell_stress_strain) {
    double exact = tc_physics_exact_integral_stress_strain(f, L);
    TC_CALL(cell_sum(ctx, r->cell_stress_strain, &total));
    add_check(ctx, "integral of sigma:eps (DataDataTensor) is exact", total, exact, fabs(exact),
              inexact_note(ctx, degree(ctx, 3 * p - 1, 0)));
  }
  return TC_SUCCESS;
}

static tc_err run_checks(check_context *ctx) {
  const tc_loop_results *r = ctx->results;
  const double *L = ctx->config->length;
  const double volume = L[0] * L[1] * L[2];
  const int64_t nodes = ctx->local->num_nodes;
  TC_CALLOC(ctx->u, nodes);
  TC_CALLOC(ctx->w, 3 * nodes);
  TC_CALLOC(ctx->scratch, 3 * nodes);
  tc_physics_nodal_u(tc_physics_default_fields(), nodes, ctx->local->coords, ctx->u);
  tc_physics_nodal_w(tc_physics_default_fields(), nodes, ctx->local->coords, ctx->w);
  TC_CALL(check_integrals(ctx, volume));
  if (r->mass)
    TC_CALL(check_mass(ctx, volume));
  if (r->stiffness)
    TC_CALL(check_stiffness(ctx));
  if (r->elasticity)
    TC_CALL(check_elasticity(ctx));
  return TC_SUCCESS;
}

tc_err tc_checks_run(const tc_config *config, const tc_mesh *mesh, const tc_loop *loop,
                     tc_check_list *list) {
  memset(list, 0, sizeof *list);
  list->passed = true;
  check_context ctx = {
      .config = config,
      .mesh = mesh,
      .local = tc_mesh_local_part(mesh),
      .loop = loop,
      .results = tc_loop_get_results(loop),
      .comm = tc_mesh_comm(mesh),
      .tolerance = tc_config_tolerance(config),
      .list = list,
  };
  ctx.rank = tc_rank(ctx.comm);
  tc_err err = run_checks(&ctx);
  free(ctx.u);
  free(ctx.w);
  free(ctx.scratch);
  return err;
}
