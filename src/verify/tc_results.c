/* tc_results: the named result fields and their summaries (see tc_results.h). */
#include "tc_results.h"

#include <math.h>
#include <stdio.h>

#include "tc_parallel.h"

#define FIELD(member) offsetof(tc_loop_results, member)

/* Units: length is the unit of mesh.length, u is dimensionless, w a
 * displacement (a length), stress the unit of the Lame parameters. */
static const tc_result_field fields[] = {
    {"cells", "volume", 1, "length^3", "sum of the weighted measures of the cell", FIELD(cell_volume)},
    {"cells", "integral_u2", 1, "length^3", "DataDataScalar: integral of u_h^2 over the cell",
     FIELD(cell_u2)},
    {"cells", "integral_grad_u2", 1, "length",
     "DataDataVector: integral of |grad u_h|^2 over the cell", FIELD(cell_grad_u2)},
    {"cells", "integral_stress_strain", 1, "stress*length^3",
     "DataDataTensor: integral of sigma(w_h):eps(w_h) over the cell", FIELD(cell_stress_strain)},
    {"nodes", "lumped_mass", 1, "length^3", "row sums of the assembled mass matrix",
     FIELD(lumped_mass)},
    {"nodes", "stiffness_diagonal", 1, "length",
     "diagonal of the assembled diffusion stiffness matrix", FIELD(stiffness_diagonal)},
    {"nodes", "elasticity_diagonal", 3, "stress*length",
     "diagonal of the assembled elasticity stiffness matrix, per component",
     FIELD(elasticity_diagonal)},
    {"nodes", "load", 1, "length^3", "DataFieldScalar: integral of u_h phi_a", FIELD(load)},
    {"nodes", "flux_load", 1, "length", "DataFieldVector: integral of grad u . grad phi_a",
     FIELD(flux_load)},
    {"nodes", "internal_force", 3, "stress*length^2",
     "DataFieldTensor: integral of sigma(w_h) : eps(phi_a e_i)", FIELD(internal_force)},
};
enum { NUM_FIELDS = sizeof fields / sizeof fields[0] };
_Static_assert((int)NUM_FIELDS <= (int)TC_RESULTS_MAX, "TC_RESULTS_MAX is too small");

const tc_result_field *tc_results_fields(int *count) {
  *count = NUM_FIELDS;
  return fields;
}

const double *tc_results_values(const tc_result_field *field, const tc_loop_results *results) {
  return *(const double *const *)((const char *)results + field->offset);
}

tc_err tc_results_summarize(const tc_mesh *mesh, const tc_loop *loop,
                            tc_result_summary summaries[TC_RESULTS_MAX], int *count) {
  MPI_Comm comm = tc_mesh_comm(mesh);
  const tc_mesh_local *local = tc_mesh_local_part(mesh);
  const tc_loop_results *results = tc_loop_get_results(loop);
  const int rank = tc_rank(comm);
  *count = 0;
  for (int f = 0; f < NUM_FIELDS; ++f) {
    const tc_result_field *field = &fields[f];
    const double *values = tc_results_values(field, results);
    if (values == NULL)
      continue;
    bool on_nodes = field->group[0] == 'n';
    int64_t rows = on_nodes ? local->num_nodes : local->num_cells;
    /* sum, sum of magnitudes, sum of squares, entries; -min, max */
    double sums[4] = {0.0, 0.0, 0.0, 0.0}, extremes[2] = {-INFINITY, -INFINITY};
    for (int64_t row = 0; row < rows; ++row) {
      if (on_nodes && local->node_owner[row] != rank) /* a shared node counts once */
        continue;
      for (int c = 0; c < field->components; ++c) {
        double value = values[row * field->components + c];
        sums[0] += value;
        sums[1] += fabs(value);
        sums[2] += value * value;
        sums[3] += 1.0;
        extremes[0] = fmax(extremes[0], -value);
        extremes[1] = fmax(extremes[1], value);
      }
    }
    TC_CALL(tc_allreduce_sum_double(comm, sums, 4));
    TC_CALL(tc_allreduce_max_double(comm, extremes, 2));
    tc_result_summary *s = &summaries[(*count)++];
    snprintf(s->name, sizeof s->name, "%s/%s", field->group, field->name);
    s->units = field->units;
    s->count = (int64_t)sums[3];
    s->sum = sums[0];
    s->sum_abs = sums[1];
    s->norm = sqrt(sums[2]);
    s->min = -extremes[0];
    s->max = extremes[1];
  }
  return TC_SUCCESS;
}
