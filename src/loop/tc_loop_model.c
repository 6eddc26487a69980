/* tc_loop_model: the loop's compulsory bytes and flops per phase and cell
 * (the counts docs/performance.md tabulates, written here once), the
 * ceilings of a rank's device, and the roofline rows of the report. */
#include "tc_loop_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_roofline.h"
#include "bench_roofline_cuda.h"
#include "tc_loop_impl.h"
#include "tc_parallel.h"

/* The GPU's STREAM arrays: five times the 50 MB L2 of an H100, small enough
 * to be quick. */
static const size_t gpu_array_bytes = (size_t)256 << 20;

/* Bytes of the element matrices, vectors or cell values one kernel writes
 * per cell. */
static double output_bytes(const tc_loop *loop, tc_kernel kernel) {
  tc_contraction shape = tc_physics_contraction(kernel, 1, loop->num_fields, loop->num_points,
                                                TC_LAYOUT_RIGHT, loop->precision);
  return (double)(tc_contraction_output_count(&shape) * tc_precision_size(loop->precision));
}

/* geometry: reads each node's index (8 B) and coordinates (24 B); writes the
 * Jacobian (72 B), its inverse (72 B), determinant and weighted measure
 * (8 B each) at every point and the cell's volume. Flops per point: the
 * Jacobian 18 per node (9 entries, a multiply-add each), cofactors 9,
 * determinant 5, reciprocal 1, inverse 27, measure 1, volume 1. */
static tc_loop_cost geometry_cost(int64_t F, int64_t P) {
  return (tc_loop_cost){32.0 * F + 160.0 * P + 8.0, (double)P * (18.0 * F + 44.0)};
}

/* Bytes of the geometry the inputs are built from, per cell: the inverse
 * Jacobians and measures at every point and the node coordinates (the
 * reference basis is the same for every cell and stays in cache). */
static double geometry_read_bytes(double F, double P) { return 8.0 * (9.0 * P + P) + 24.0 * F; }

/* Flops of building the inputs `need` marks, per cell, as the formulas are
 * written (tc_physics.h), shared work counted once: the physical gradients
 * 15 per (node, point); per entry, 1 for a weighting by the measure, 2 for
 * a strain entry (a half of a sum), 4 for a weighted stress entry (lambda
 * tr(eps) I + 2 mu eps, weighted) plus 3 per tensor for the trace;
 * interpolants of u and w 2 per node and entry, the nodal values of u and w
 * 6 per node and component. */
static double build_flops(double F, double P, const bool need[TC_INPUT_COUNT]) {
  const bool gradients = need[TC_INPUT_GRADIENTS] || need[TC_INPUT_WEIGHTED_GRADIENTS] ||
                         need[TC_INPUT_STRAINS] || need[TC_INPUT_WEIGHTED_STRESSES] ||
                         need[TC_INPUT_GRADIENT_U] || need[TC_INPUT_WEIGHTED_GRADIENT_U] ||
                         need[TC_INPUT_STRAIN_W] || need[TC_INPUT_WEIGHTED_STRESS_W];
  const bool strains = need[TC_INPUT_STRAINS] || need[TC_INPUT_WEIGHTED_STRESSES];
  const bool nodal_u = need[TC_INPUT_FIELD_U] || need[TC_INPUT_WEIGHTED_FIELD_U] ||
                       need[TC_INPUT_GRADIENT_U] || need[TC_INPUT_WEIGHTED_GRADIENT_U];
  const bool field_u = need[TC_INPUT_FIELD_U] || need[TC_INPUT_WEIGHTED_FIELD_U];
  const bool gradient_u = need[TC_INPUT_GRADIENT_U] || need[TC_INPUT_WEIGHTED_GRADIENT_U];
  const bool strain_w = need[TC_INPUT_STRAIN_W] || need[TC_INPUT_WEIGHTED_STRESS_W];
  double flops = 0.0;
  flops += gradients ? 15.0 * F * P : 0.0;
  flops += need[TC_INPUT_WEIGHTED_VALUES] ? F * P : 0.0;
  flops += need[TC_INPUT_WEIGHTED_GRADIENTS] ? 3.0 * F * P : 0.0;
  flops += strains ? 2.0 * 27.0 * F * P : 0.0;
  flops += need[TC_INPUT_WEIGHTED_STRESSES] ? 3.0 * F * P * (4.0 * 9.0 + 3.0) : 0.0;
  flops += nodal_u ? 6.0 * F : 0.0;
  flops += field_u ? 2.0 * F * P : 0.0;
  flops += need[TC_INPUT_WEIGHTED_FIELD_U] ? P : 0.0;
  flops += gradient_u ? 2.0 * F * 3.0 * P : 0.0;
  flops += need[TC_INPUT_WEIGHTED_GRADIENT_U] ? 3.0 * P : 0.0;
  flops += strain_w ? 18.0 * F + P * (2.0 * F * 9.0 + 2.0 * 9.0) : 0.0;
  flops += need[TC_INPUT_WEIGHTED_STRESS_W] ? P * (4.0 * 9.0 + 3.0) : 0.0;
  return flops;
}

/* basis: writes every contraction input the selected kernels read (element
 * size of the run's precision), from the geometry; nothing where no input
 * is built (every selected kernel runs fused). */
static tc_loop_cost basis_cost(const tc_loop *loop) {
  const double F = (double)loop->num_fields, P = (double)loop->num_points;
  const bool *need = loop->input_needed;
  const double element = (double)tc_precision_size(loop->precision);
  bool any = false;
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    any = any || need[i];
  if (!any)
    return (tc_loop_cost){0.0, 0.0};
  tc_loop_cost cost = {geometry_read_bytes(F, P), build_flops(F, P, need)};
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (need[i])
      cost.bytes += element * (double)tc_physics_input_count(i, 1, loop->num_fields,
                                                             loop->num_points);
  return cost;
}

/* assemble: reads every selected kernel's output once; each assembled value
 * (CSR matrix entry, node vector entry) is read and written once per step
 * (16 B), shared by the cells around it, so per cell the rank's total over
 * its cells; DataData values are written once (8 B). Flops: one add per
 * element-matrix or element-vector entry gathered. */
static tc_loop_cost assemble_cost(const tc_loop *loop) {
  const double cells = loop->local->num_cells > 0 ? (double)loop->local->num_cells : 1.0;
  const double nodes = (double)loop->local->num_nodes;
  tc_loop_cost cost = {0.0, 0.0};
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!loop->config->kernels[k])
      continue;
    const int components = tc_physics_kernel_components(k);
    const double read = output_bytes(loop, k);
    const double entries = read / (double)tc_precision_size(loop->precision);
    cost.bytes += read;
    if (tc_kernel_is_field_field(k)) {
      cost.bytes += 16.0 * (double)tc_assembly_graph(loop->assembly, components)->num_entries /
                    cells;
      cost.flops += entries;
    } else if (tc_kernel_is_data_field(k)) {
      cost.bytes += 16.0 * nodes * components / cells;
      cost.flops += entries;
    } else {
      cost.bytes += 8.0;
    }
  }
  return cost;
}

/* fused_diffusion and fused_elasticity (run.inputs = fused): the kernels'
 * inputs are built next to their products and never stored, so what must
 * cross memory is the geometry they are built from, read by each fused
 * product, and the kernels' outputs; the flops are those of the
 * contractions plus building every input of the product's kernels (as
 * build_flops counts them; a product builds them all whichever of its
 * kernels are selected): the physical gradients, u_h and grad u_h and their
 * weighted copies for the scalar problem's six; the gradients and the
 * strains and stresses of the basis and of w_h for the elasticity trio. */
static tc_loop_cost fused_cost(const tc_loop *loop, bool elastic) {
  const double F = (double)loop->num_fields, P = (double)loop->num_points;
  bool built[TC_INPUT_COUNT] = {false};
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (tc_physics_kernel_elastic(k) == elastic)
      built[tc_physics_left_input(k)] = built[tc_physics_right_input(k)] = true;
  tc_loop_cost cost = {geometry_read_bytes(F, P), 0.0};
  bool any = false;
  for (int k = 0; k < TC_KERNEL_COUNT; ++k) {
    if (!loop->fused[k] || tc_physics_kernel_elastic(k) != elastic)
      continue;
    any = true;
    tc_contraction shape = tc_physics_contraction(k, 1, loop->num_fields, loop->num_points,
                                                  loop->layout, loop->precision);
    cost.bytes += output_bytes(loop, k);
    cost.flops += tc_contraction_flops(&shape);
  }
  if (!any)
    return (tc_loop_cost){0.0, 0.0};
  cost.flops += build_flops(F, P, built);
  return cost;
}

/* The cost of one phase of a batch, as timed with one batch in flight. */
static tc_loop_cost batch_phase_cost(const tc_loop *loop, tc_phase phase) {
  if (phase == TC_PHASE_GEOMETRY)
    return geometry_cost(loop->num_fields, loop->num_points);
  if (phase == TC_PHASE_BASIS)
    return basis_cost(loop);
  if (phase == TC_PHASE_ASSEMBLE)
    return assemble_cost(loop);
  if (phase == TC_PHASE_FUSED_DIFFUSION)
    return fused_cost(loop, false);
  if (phase == TC_PHASE_FUSED_ELASTICITY)
    return fused_cost(loop, true);
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (phase == tc_phase_of_kernel(k) && loop->config->kernels[k] && !loop->fused[k]) {
      tc_contraction shape = tc_physics_contraction(k, 1, loop->num_fields, loop->num_points,
                                                    loop->layout, loop->precision);
      return (tc_loop_cost){tc_contraction_bytes(&shape), tc_contraction_flops(&shape)};
    }
  return (tc_loop_cost){0.0, 0.0};
}

/* With batches in flight their phases are timed together as the batches
 * phase, which then carries the costs of geometry ... assemble. */
tc_loop_cost tc_loop_model_cost(const tc_loop *loop, tc_phase phase) {
  const bool overlapped = loop->in_flight > 1;
  if (phase != TC_PHASE_BATCHES)
    return overlapped ? (tc_loop_cost){0.0, 0.0} : batch_phase_cost(loop, phase);
  tc_loop_cost sum = {0.0, 0.0};
  for (int p = TC_PHASE_GEOMETRY; overlapped && p <= TC_PHASE_ASSEMBLE; ++p) {
    const tc_loop_cost cost = batch_phase_cost(loop, (tc_phase)p);
    sum.bytes += cost.bytes;
    sum.flops += cost.flops;
  }
  return sum;
}

tc_err tc_loop_measure_ceilings(const tc_device *device, int ranks_on_node,
                                tc_loop_ceilings *ceilings) {
  memset(ceilings, 0, sizeof *ceilings);
  bench_roofline measured;
  if (tc_device_backend(device) == TC_BACKEND_CUDA) {
    TC_CALL(bench_roofline_measure_cuda(gpu_array_bytes, &measured));
  } else {
    const int threads = tc_device_num_threads(device), processors = bench_machine_processors();
    if ((int64_t)ranks_on_node * threads > processors) {
      snprintf(ceilings->note, sizeof ceilings->note,
               "not measured: %d ranks of %d thread%s on a node of %d processors",
               ranks_on_node, threads, threads == 1 ? "" : "s", processors);
      return TC_SUCCESS;
    }
    /* The ranks of the node measure together: each rank's arrays are twice
     * its share of the last-level cache, so that together they exceed the
     * cache as one rank's would alone, and each rank first-touches (the
     * most of the measurement's time) only its share. */
    const size_t ranks = (size_t)(ranks_on_node > 0 ? ranks_on_node : 1);
    TC_CALL(bench_roofline_measure_with(threads, 2 * bench_machine_last_level_cache() / ranks,
                                        &bench_roofline_brief, &measured));
  }
  ceilings->measured = true;
  ceilings->copy_bytes_per_second = measured.copy_bytes_per_second;
  for (int p = 0; p < TC_PRECISION_COUNT; ++p)
    ceilings->fma_flops_per_second[p] = measured.fma_flops_per_second[p];
  return TC_SUCCESS;
}

tc_err tc_loop_roofline(const tc_loop *loop, const tc_phase_stats stats[TC_PHASE_COUNT],
                        double loop_seconds, int64_t steps, const tc_loop_ceilings *mine,
                        tc_report_ceilings *ceilings, tc_report_roofline_row *rows,
                        int *count) {
  MPI_Comm comm = tc_mesh_comm(loop->mesh);
  /* Every rank's bytes and flops per phase (its cells times the steps), then
   * the whole step's, then the ceilings and how many ranks measured them. */
  enum { PER_PHASE = 2 * TC_PHASE_COUNT, LOOP_AT = PER_PHASE, CEILINGS_AT = LOOP_AT + 2 };
  double sums[CEILINGS_AT + 3] = {0};
  const double work = (double)loop->local->num_cells * (double)steps;
  for (int p = 0; p < TC_PHASE_COUNT; ++p) {
    const tc_loop_cost cost = tc_loop_model_cost(loop, p);
    sums[2 * p] = cost.bytes * work;
    sums[2 * p + 1] = cost.flops * work;
    sums[LOOP_AT] += sums[2 * p];
    sums[LOOP_AT + 1] += sums[2 * p + 1];
  }
  if (mine && mine->measured) {
    sums[CEILINGS_AT] = mine->copy_bytes_per_second;
    sums[CEILINGS_AT + 1] = mine->fma_flops_per_second[loop->precision];
    sums[CEILINGS_AT + 2] = 1.0;
  }
  TC_CALL(tc_allreduce_sum_double(comm, sums, CEILINGS_AT + 3));
  double cells = (double)loop->local->num_cells;
  TC_CALL(tc_allreduce_sum_double(comm, &cells, 1));
  const double global_work = cells * (double)steps;
  const int ranks = tc_size(comm);

  memset(ceilings, 0, sizeof *ceilings);
  ceilings->measured = sums[CEILINGS_AT + 2] == (double)ranks;
  if (ceilings->measured) {
    ceilings->copy_bytes_per_second = sums[CEILINGS_AT];
    ceilings->fma_flops_per_second = sums[CEILINGS_AT + 1];
    snprintf(ceilings->source, sizeof ceilings->source,
             "measured by this run, summed over %d rank%s", ranks, ranks == 1 ? "" : "s");
  } else {
    /* Rank 0's reason, the same on every rank. */
    char note[sizeof ceilings->source] = "not measured: run.roofline = false";
    if (mine && !mine->measured && mine->note[0])
      snprintf(note, sizeof note, "%s", mine->note);
    else if (mine && mine->measured)
      snprintf(note, sizeof note, "not measured on every rank");
    TC_CALL(tc_broadcast(comm, note, sizeof note, 0));
    snprintf(ceilings->source, sizeof ceilings->source, "%s", note);
  }
  *count = 0;
  for (int p = 0; p <= TC_PHASE_COUNT; ++p) {
    const bool whole = p == TC_PHASE_COUNT;
    const double bytes = sums[whole ? LOOP_AT : 2 * p];
    const double flops = sums[whole ? LOOP_AT + 1 : 2 * p + 1];
    const double seconds = whole ? loop_seconds : stats[p].max;
    if (bytes <= 0.0 && flops <= 0.0)
      continue;
    tc_report_roofline_row *row = &rows[(*count)++];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", whole ? "loop" : tc_phase_name(p));
    row->bytes_per_cell = global_work > 0 ? bytes / global_work : 0.0;
    row->flops_per_cell = global_work > 0 ? flops / global_work : 0.0;
    row->seconds = seconds;
    row->bytes_per_second = seconds > 0 ? bytes / seconds : NAN;
    row->flops_per_second = seconds > 0 ? flops / seconds : NAN;
  }
  return TC_SUCCESS;
}
