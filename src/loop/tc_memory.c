/* tc_memory: the per-rank memory estimate and the check against the limits
 * a rank runs under (see tc_memory.h). The estimate follows the allocations
 * of tc_mesh, tc_assembly, tc_loop (results and batch arrays), tc_checks and
 * tc_output for the rank with the largest block; it leaves out what the
 * libraries (MPI, OpenMP, HDF5) take, which the limits it is compared with
 * already account for (they are read as what is still free). */
#define _GNU_SOURCE /* getline */
#include "tc_memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tc_loop_backend.h"
#include "tc_mesh.h"
#include "tc_physics.h"

/* The budget of the assembly loop's batch arrays when run.batch_cells = 0
 * on a host backend (tc_loop_host_batch_bytes), for the rank's threads: here
 * run.threads, or every processor when it is 0 (an upper bound). */
static double batch_budget(const tc_config *config) {
  long threads = config->threads > 0 ? (long)config->threads : sysconf(_SC_NPROCESSORS_ONLN);
  return tc_loop_host_batch_bytes(threads > 0 ? (int)threads : 1);
}
/* The results file's read-back buffer at most (tc_output_transfer.c). */
static const double read_back_bytes = 64.0 * 1024 * 1024;

static double batch_bytes_per_cell(const tc_config *config, int64_t fields, int64_t points) {
  const double element = (double)tc_precision_size(config->precision);
  /* Host geometry: node coordinates, Jacobians and their inverses,
   * determinants, measures, physical gradients. */
  double bytes = 8.0 * (double)(fields * 3 + points * 20 + fields * points * 3);
  bool needed[TC_INPUT_COUNT] = {false};
  for (int k = 0; k < TC_KERNEL_COUNT; ++k)
    if (config->kernels[k]) {
      /* A fused kernel builds its inputs on chip (run.inputs = fused). */
      if (tc_config_inputs(config) != TC_INPUTS_FUSED)
        needed[tc_physics_left_input(k)] = needed[tc_physics_right_input(k)] = true;
      tc_contraction shape =
          tc_physics_contraction(k, 1, fields, points, TC_LAYOUT_RIGHT, config->precision);
      bytes += element * (double)tc_contraction_output_count(&shape);
    }
  for (int i = 0; i < TC_INPUT_COUNT; ++i)
    if (needed[i])
      bytes += element * (double)tc_physics_input_count(i, 1, fields, points);
  return bytes;
}

tc_memory_estimate tc_memory_estimate_rank(const tc_config *config, int num_ranks) {
  tc_memory_estimate e;
  memset(&e, 0, sizeof e);
  int64_t block[3];
  if (!tc_mesh_largest_block(config->cells, num_ranks, block))
    return e;
  const double p = (double)config->order, fields = (p + 1) * (p + 1) * (p + 1);
  const double q = (double)tc_config_quadrature(config), points = q * q * q;
  double cells = 1, nodes = 1, couplings = 1;
  for (int d = 0; d < 3; ++d) {
    const double b = (double)block[d];
    cells *= b;
    nodes *= p * b + 1;
    /* Node pairs that share a cell along one direction: (p+1)^2 a cell, the
     * node between two cells counted once. */
    couplings *= b * (p + 1) * (p + 1) - (b - 1);
  }
  const bool *k = config->kernels;
  /* Coordinates, global id, owner, node-cell offsets; cell id, cell-node
   * map, node-cell map and slots. */
  e.mesh = nodes * (24 + 8 + 4 + 8) + cells * (8 + fields * (8 + 8 + 4));
  /* The node graph (offsets, columns, diagonal positions), the 3-dof graph's
   * offsets, each link's positions in its node's row (F a link, F links a
   * cell), and the gather's plan (a node's entry in each batch it is in, 24
   * bytes, with a scratch word a node while it is made). */
  e.graphs = (nodes + 1) * 8 + couplings * 8 + nodes * 2 + (3 * nodes + 1) * 8 +
             cells * fields * fields * 2 + nodes * 32;
  e.results =
      cells * 8 /* volumes */ + (k[TC_FIELD_FIELD_SCALAR] ? couplings * 8 + nodes * 8 : 0) +
      (k[TC_FIELD_FIELD_VECTOR] ? couplings * 8 + nodes * 8 : 0) +
      (k[TC_FIELD_FIELD_TENSOR] ? 9 * couplings * 8 + 3 * nodes * 8 : 0) +
      (k[TC_DATA_FIELD_SCALAR] ? nodes * 8 : 0) + (k[TC_DATA_FIELD_VECTOR] ? nodes * 8 : 0) +
      (k[TC_DATA_FIELD_TENSOR] ? 3 * nodes * 8 : 0) +
      cells * 8 * (k[TC_DATA_DATA_SCALAR] + k[TC_DATA_DATA_VECTOR] + k[TC_DATA_DATA_TENSOR]);
  if (config->element_matrices)
    e.element_matrices =
        cells * fields * fields * 8 *
        (k[TC_FIELD_FIELD_SCALAR] + k[TC_FIELD_FIELD_VECTOR] + 9 * k[TC_FIELD_FIELD_TENSOR]);
  if (config->backend != TC_BACKEND_CUDA) { /* on a GPU the batch lives in the device's memory */
    const double per_cell = batch_bytes_per_cell(config, (int64_t)fields, (int64_t)points);
    double batch_cells = config->batch_cells > 0 ? (double)config->batch_cells
                                                 : floor(batch_budget(config) / per_cell);
    batch_cells = fmin(fmax(batch_cells, 1), cells);
    e.batch = batch_cells * per_cell;
  }
  if (tc_config_checks_enabled(config))
    e.checks = nodes * 8 * 10; /* u, w, a scratch vector and a motion, 1 + 3 + 3 + 3 per node */
  if (strcmp(config->path, "none") != 0) {
    /* Row lists (and the pairs that sort them), then the largest packed
     * dataset and the read-back buffer. */
    const double largest = fmax(cells * fields * 8, nodes * 24);
    e.output = nodes * 32 + cells * 8 + largest + fmin(read_back_bytes, largest);
  }
  e.total = e.mesh + e.graphs + e.results + e.element_matrices + e.batch + e.checks + e.output;
  return e;
}

/* ----------------------------------------------------------- limits -- */

/* The value of "key:" in a /proc file of "key: value kB" lines, in bytes;
 * negative when absent. */
static double proc_kilobytes(const char *path, const char *key) {
  FILE *file = fopen(path, "r");
  if (file == NULL)
    return -1;
  char line[256];
  double value = -1;
  size_t length = strlen(key);
  while (fgets(line, sizeof line, file))
    if (strncmp(line, key, length) == 0 && line[length] == ':') {
      value = strtod(line + length + 1, NULL) * 1024.0;
      break;
    }
  fclose(file);
  return value;
}

/* A file holding one number (or "max"); negative when absent or "max". */
static double file_number(const char *path) {
  FILE *file = fopen(path, "r");
  if (file == NULL)
    return -1;
  char text[64] = "";
  double value = -1;
  if (fgets(text, sizeof text, file) && strncmp(text, "max", 3) != 0) {
    char *end = NULL;
    value = strtod(text, &end);
    if (end == text)
      value = -1;
  }
  fclose(file);
  /* cgroup v1 says "no limit" with a page-rounded LONG_MAX. */
  return value >= 0x7ffffffffffff000 ? -1 : value;
}

/* The memory still free under the cgroup at directory and its parents up to
 * the mount point root (limit file, usage file): the tightest of them. */
static double cgroup_room(const char *root, const char *directory, const char *limit_name,
                          const char *usage_name) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s", root, directory);
  double room = -1;
  for (;;) {
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", path, limit_name);
    double limit = file_number(file);
    snprintf(file, sizeof file, "%s/%s", path, usage_name);
    double usage = file_number(file);
    if (limit >= 0) {
      double here = fmax(limit - fmax(usage, 0), 0);
      room = room < 0 ? here : fmin(room, here);
    }
    char *slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash - path) < strlen(root))
      break;
    *slash = '\0';
  }
  return room;
}

/* This process's memory cgroup (v2 "0::/path", v1 "N:...memory...:/path"). */
static double cgroup_limit(void) {
  FILE *file = fopen("/proc/self/cgroup", "r");
  if (file == NULL)
    return -1;
  char line[4096];
  double room = -1;
  while (fgets(line, sizeof line, file)) {
    line[strcspn(line, "\n")] = '\0';
    char *first = strchr(line, ':'), *second = first ? strchr(first + 1, ':') : NULL;
    if (second == NULL)
      continue;
    double here = -1;
    if (strncmp(line, "0::", 3) == 0) {
      here = cgroup_room("/sys/fs/cgroup", second + 1, "memory.max", "memory.current");
      if (here < 0) /* a hybrid system: v2 under "unified" */
        here = cgroup_room("/sys/fs/cgroup/unified", second + 1, "memory.max", "memory.current");
    } else {
      *second = '\0';
      bool memory = false; /* the controller list holds "memory" */
      for (char *name = strtok(first + 1, ","); name; name = strtok(NULL, ","))
        memory = memory || strcmp(name, "memory") == 0;
      if (memory)
        here = cgroup_room("/sys/fs/cgroup/memory", second + 1, "memory.limit_in_bytes",
                           "memory.usage_in_bytes");
    }
    if (here >= 0)
      room = room < 0 ? here : fmin(room, here);
  }
  fclose(file);
  return room;
}

tc_memory_limits tc_memory_read_limits(void) {
  tc_memory_limits limits = {-1, -1, -1, -1};
  limits.available = proc_kilobytes("/proc/meminfo", "MemAvailable");
  limits.cgroup = cgroup_limit();
  struct rlimit address_space;
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    double used = proc_kilobytes("/proc/self/status", "VmSize");
    limits.address_space_limit = (double)address_space.rlim_cur;
    limits.address_space = fmax((double)address_space.rlim_cur - fmax(used, 0), 0);
  }
  return limits;
}

/* ------------------------------------------------------------ check -- */

static void format_gib(double bytes, char text[32]) {
  if (bytes < 0)
    snprintf(text, 32, "none");
  else
    snprintf(text, 32, "%.3g GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

tc_err tc_memory_check(const tc_config *config, int num_ranks, int ranks_on_node) {
  if (!config->memory_check)
    return TC_SUCCESS;
  const tc_memory_estimate e = tc_memory_estimate_rank(config, num_ranks);
  const tc_memory_limits limits = tc_memory_read_limits();
  const double node_need = e.total * ranks_on_node;
  /* The node's limits bound all its ranks together; the address space one. */
  double node_room = limits.available;
  const char *node_limit = "the node has available";
  if (limits.cgroup >= 0 && (node_room < 0 || limits.cgroup < node_room)) {
    node_room = limits.cgroup;
    node_limit = "the memory cgroup's limit leaves";
  }
  const bool node_short = node_room >= 0 && node_need > node_room;
  const bool rank_short = limits.address_space >= 0 && e.total > limits.address_space;
  if (!node_short && !rank_short)
    return TC_SUCCESS;
  char rank_need[32], all_need[32], room[32], available[32], cgroup[32], address_space[32];
  format_gib(e.total, rank_need);
  format_gib(node_need, all_need);
  format_gib(node_short ? node_room : limits.address_space, room);
  format_gib(limits.available, available);
  format_gib(limits.cgroup, cgroup);
  format_gib(limits.address_space_limit, address_space);
  char needs[320];
  if (node_short)
    snprintf(needs, sizeof needs,
             "; the %d rank%s on this node need%s %s, more than the %s %s (available memory: "
             "%s; cgroup limit: %s; ulimit -v: %s)",
             ranks_on_node, ranks_on_node == 1 ? "" : "s", ranks_on_node == 1 ? "s" : "", all_need,
             room, node_limit, available, cgroup, address_space);
  else
    snprintf(needs, sizeof needs,
             ", more than the %s its address-space limit leaves (ulimit -v of %s, less what the "
             "process maps already; available memory: %s; cgroup limit: %s)",
             room, address_space, available, cgroup);
  TC_FAIL(TC_ERR_INPUT,
          "[mesh] cells = %lld %lld %lld (order %lld) on %d rank%s needs about %s per rank%s: "
          "use fewer cells per rank (more ranks or nodes), or set run.memory_check = false to "
          "run anyway",
          (long long)config->cells[0], (long long)config->cells[1], (long long)config->cells[2],
          (long long)config->order, num_ranks, num_ranks == 1 ? "" : "s", rank_need, needs);
}
