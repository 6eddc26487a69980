/* tc_physics_fused_diffusion: the scalar problem's six kernels with their
 * inputs built on chip, on the host (see tc_physics_fused.h): one cell per
 * thread at a time; for each quadrature point the values the kernels read
 * (dV, phi, grad phi, u_h, grad u_h) are formed and their products added
 * into the cell's accumulators in the thread's scratch. */
#include "tc_physics_fused.h"

#include <stdlib.h>

#include "tc_fem_array.h"
#include "tc_omp.h"

/* What the threads of tc_physics_fused_diffusion share. */
typedef struct {
  const tc_physics_batch *batch;
  const tc_physics_fields *fields;
  tc_precision precision;
  bool left;
  const tc_physics_fused_diffusion_outputs *outputs;
  double *scratch; /* per thread, per_thread doubles: the sums, nodal u, weighted gradients */
  int64_t per_thread;
} diffusion_team;

/* One thread's cells. */
static void diffusion_share(void *context, int thread, int threads) {
  const diffusion_team *t = context;
  const tc_physics_batch *b = t->batch;
  const tc_physics_fused_diffusion_outputs *out = t->outputs;
  const tc_precision pr = t->precision;
  const int64_t C = b->num_cells, F = b->num_fields, P = b->num_points;
  double *mass = t->scratch + (int64_t)thread * t->per_thread, *stiffness = mass + F * F,
         *load = stiffness + F * F, *flux = load + F, *u = flux + F, *weighted = u + F;
  int64_t begin, end;
  tc_omp_share(C, thread, threads, &begin, &end);
  for (int64_t c = begin; c < end; ++c) {
    for (int64_t e = 0; e < 2 * F * F + 2 * F; ++e)
      mass[e] = 0.0;
    double u2 = 0.0, grad_u2 = 0.0;
    for (int64_t a = 0; a < F; ++a)
      u[a] = tc_physics_field_u(t->fields, b->node_coords + (c * F + a) * 3);
    for (int64_t q = 0; q < P; ++q) {
      const double dV = b->measures[c * P + q];
      double uh = 0.0, guh[3] = {0.0, 0.0, 0.0};
      for (int64_t a = 0; a < F; ++a) {
        const double *g = b->gradients + ((c * F + a) * P + q) * 3;
        uh += u[a] * b->ref_values[a * P + q];
        for (int d = 0; d < 3; ++d) {
          guh[d] += u[a] * g[d];
          weighted[a * 3 + d] = tc_fem_rounded(dV * g[d], pr);
        }
      }
      const double wuh = tc_fem_rounded(dV * uh, pr);
      for (int64_t a = 0; a < F; ++a) {
        const double wphi = tc_fem_rounded(dV * b->ref_values[a * P + q], pr);
        const double *wg = weighted + a * 3;
        for (int64_t r = 0; r < F; ++r) {
          const double *g = b->gradients + ((c * F + r) * P + q) * 3;
          mass[a * F + r] += wphi * tc_fem_rounded(b->ref_values[r * P + q], pr);
          double sum = stiffness[a * F + r];
          for (int d = 0; d < 3; ++d)
            sum += wg[d] * tc_fem_rounded(g[d], pr);
          stiffness[a * F + r] = sum;
        }
        load[a] += wuh * tc_fem_rounded(b->ref_values[a * P + q], pr);
        for (int d = 0; d < 3; ++d)
          flux[a] += tc_fem_rounded(t->fields->g[d], pr) * wg[d];
      }
      u2 += wuh * tc_fem_rounded(uh, pr);
      for (int d = 0; d < 3; ++d)
        grad_u2 += tc_fem_rounded(dV * guh[d], pr) * tc_fem_rounded(guh[d], pr);
    }
    for (int64_t a = 0; a < F; ++a) {
      for (int64_t r = 0; r < F; ++r) {
        const int64_t at = t->left ? c + C * (a + F * r) : (c * F + a) * F + r;
        if (out->mass)
          tc_fem_store(out->mass, pr, at, mass[a * F + r]);
        if (out->stiffness)
          tc_fem_store(out->stiffness, pr, at, stiffness[a * F + r]);
      }
      const int64_t at = t->left ? c + C * a : c * F + a;
      if (out->load)
        tc_fem_store(out->load, pr, at, load[a]);
      if (out->flux_load)
        tc_fem_store(out->flux_load, pr, at, flux[a]);
    }
    if (out->u2)
      tc_fem_store(out->u2, pr, c, u2);
    if (out->grad_u2)
      tc_fem_store(out->grad_u2, pr, c, grad_u2);
  }
}

tc_err tc_physics_fused_diffusion(const tc_physics_batch *batch, const tc_physics_fields *fields,
                                  tc_layout layout, tc_precision precision,
                                  const tc_physics_fused_diffusion_outputs *outputs) {
  const int64_t F = batch->num_fields;
  const int threads = tc_omp_threads();
  diffusion_team team = {.batch = batch, .fields = fields, .precision = precision,
                         .left = layout == TC_LAYOUT_LEFT, .outputs = outputs,
                         .per_thread = (2 * F * F + 3 * F + 3 * F + 7) / 8 * 8};
  team.scratch = malloc((size_t)(team.per_thread * threads) * sizeof *team.scratch);
  TC_CHECK(team.scratch != NULL, TC_ERR_MEMORY, "out of memory in the fused diffusion kernels");
  tc_omp_team(threads, diffusion_share, &team);
  free(team.scratch);
  return TC_SUCCESS;
}
