/* tc_checks: the correctness checks of an assembled step (see tc_checks.h).
 * Degrees of exactness: on a cell mapped by a Q_p map, det J has degree
 * 3p-1 per reference variable, u_h (the interpolant of a linear u) degree p,
 * the cofactor matrix 2p and reference gradients p; an n-point Gauss rule is
 * exact to degree 2n-1. Affine cells (no distortion) lower these degrees. */
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

static void add_check(check_context *ctx, const char *name, double value, double reference,
                      double scale, const char *skip_note) {
  tc_check_list *list = ctx->list;
  if (list->count == TC_CHECKS_MAX)
    return;
  tc_check *check = &list->checks[list->count++];
  snprintf(check->name, sizeof check->name, "%s", name);
  check->value = value;
  check->reference = reference;
  check->scale = scale > 0 ? scale : 1.0;
  check->tolerance = ctx->tolerance;
  check->skipped = skip_note != NULL;
  snprintf(check->note, sizeof check->note, "%s", skip_note ? skip_note : "");
  check->passed = check->skipped || fabs(value - reference) <= ctx->tolerance * check->scale;
  if (!check->passed)
    list->passed = false;
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
  TC_CALL(global_product(ctx, 1, r->stiffness, ctx->u, ctx->scratch));
  TC_CALL(global_max_abs(ctx, ctx->scratch, 1, true, &residual));
  add_check(ctx, "diffusion stiffness annihilates a linear field at interior nodes", residual, 0.0,
            diagonal * largest_u, inexact_note(ctx, degree(ctx, 3 * p, p)));
  if (r->flux_load) {
    double difference, scale;
    TC_CALL(global_max_difference(ctx, ctx->scratch, r->flux_load, 1, &difference));
    TC_CALL(global_max_abs(ctx, r->flux_load, 1, false, &scale));
    add_check(ctx, "flux load (DataFieldVector, P=1 data) equals stiffness times u", difference,
              0.0, fmax(scale, diagonal * largest_u), NULL);
  }
  if (r->cell_grad_u2) {
    double integral, stiffness_u_u;
    TC_CALL(cell_sum(ctx, r->cell_grad_u2, &integral));
    TC_CALL(global_dot(ctx, ctx->u, ctx->scratch, 1, &stiffness_u_u));
    add_check(ctx, "integral of |grad u|^2 (DataDataVector) equals u.K.u", integral,
              stiffness_u_u, fabs(stiffness_u_u), NULL);
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
  TC_CHECK(motion || nodes == 0, TC_ERR_MEMORY, "out of memory in the checks");
  tc_err err = TC_SUCCESS;
  for (int mode = 0; mode < 6 && err == TC_SUCCESS; ++mode) {
    double residual = 0.0, size = 0.0;
    rigid_motion(ctx, mode, motion);
    err = global_product(ctx, 3, r->elasticity, motion, ctx->scratch);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, ctx->scratch, 3, false, &residual);
    if (err == TC_SUCCESS)
      err = global_max_abs(ctx, motion, 3, false, &size);
    worst = fmax(worst, residual);
    largest_motion = fmax(largest_motion, size);
  }
  free(motion);
  TC_CALL(err);
  add_check(ctx, "elasticity stiffness annihilates the 6 rigid-body motions", worst, 0.0,
            diagonal * largest_motion, NULL);
  TC_CALL(global_product(ctx, 3, r->elasticity, ctx->w, ctx->scratch));
  if (r->internal_force) {
    double difference, scale;
    TC_CALL(global_max_difference(ctx, ctx->scratch, r->internal_force, 3, &difference));
    TC_CALL(global_max_abs(ctx, r->internal_force, 3, false, &scale));
    add_check(ctx, "internal force (DataFieldTensor) equals elasticity stiffness times w",
              difference, 0.0, scale, NULL);
  }
  if (r->cell_stress_strain) {
    double integral, energy;
    TC_CALL(cell_sum(ctx, r->cell_stress_strain, &integral));
    TC_CALL(global_dot(ctx, ctx->w, ctx->scratch, 3, &energy));
    add_check(ctx, "integral of sigma:eps (DataDataTensor) equals w.E.w", integral, energy,
              fabs(energy), NULL);
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
