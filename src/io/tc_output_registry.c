/* tc_output_registry: the datasets a writer is asked to write besides the
 * mesh (cell and node fields, element matrices): their names checked and
 * kept, and the check that every rank asked for the same ones. */
#include <stdlib.h>
#include <string.h>

#include "tc_output_impl.h"

static tc_err duplicate_text(const char *text, char **copy) {
  const char *source = text ? text : "";
  size_t bytes = strlen(source) + 1;
  TC_CALLOC(*copy, bytes);
  memcpy(*copy, source, bytes);
  return TC_SUCCESS;
}

static tc_err check_name(const char *name) {
  TC_CHECK(name != NULL && name[0] != '\0', TC_ERR_ARGUMENT, "an output field has no name");
  TC_CHECK(strlen(name) < TC_OUTPUT_NAME_BYTES, TC_ERR_ARGUMENT,
           "output field name '%s' is too long", name);
  TC_CHECK(strcmp(name, ".") != 0 && strcmp(name, "..") != 0, TC_ERR_ARGUMENT,
           "'%s' is not a usable output field name", name);
  for (const char *c = name; *c; c++)
    TC_CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '-' || *c == '.',
             TC_ERR_ARGUMENT,
             "output field name '%s' may hold only letters, digits, '_', '-' and '.'", name);
  return TC_SUCCESS;
}

static tc_err add_field(tc_output *output, const char *group, const char *name, bool on_nodes,
                        int trailing_rank, const hsize_t trailing[2], const double *values,
                        const char *units, const char *description) {
  TC_CALL(check_name(name));
  char path[2 * TC_OUTPUT_NAME_BYTES];
  snprintf(path, sizeof path, "/%s/%s", group, name);
  for (int i = 0; i < output->num_fields; i++)
    TC_CHECK(strcmp(output->fields[i].path, path) != 0, TC_ERR_ARGUMENT,
             "output dataset '%s' was added twice", path);
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  int64_t rows = on_nodes ? part->num_nodes : part->num_cells;
  TC_CHECK(values != NULL || rows == 0, TC_ERR_ARGUMENT, "output dataset '%s' has no values", path);

  if (output->num_fields == output->capacity) {
    int capacity = output->capacity ? 2 * output->capacity : 8;
    tc_output_field_request *grown = realloc(output->fields, (size_t)capacity * sizeof *grown);
    TC_CHECK(grown != NULL, TC_ERR_MEMORY, "out of memory adding output dataset '%s'", path);
    output->fields = grown;
    output->capacity = capacity;
  }
  tc_output_field_request *field = &output->fields[output->num_fields];
  memset(field, 0, sizeof *field);
  snprintf(field->path, sizeof field->path, "%s", path);
  field->on_nodes = on_nodes;
  field->trailing_rank = trailing_rank;
  field->trailing[0] = trailing[0];
  field->trailing[1] = trailing[1];
  field->values = values;
  tc_err err = duplicate_text(name, &field->name);
  if (err == TC_SUCCESS)
    err = duplicate_text(units, &field->units);
  if (err == TC_SUCCESS)
    err = duplicate_text(description, &field->description);
  if (err != TC_SUCCESS) {
    free(field->name);
    free(field->units);
    free(field->description);
    return err;
  }
  output->num_fields++;
  return TC_SUCCESS;
}

static tc_err add_vector_field(tc_output *output, const char *group, bool on_nodes,
                               const tc_output_field *field) {
  TC_CHECK(field != NULL, TC_ERR_ARGUMENT, "no output field given");
  TC_CHECK(field->components >= 1, TC_ERR_ARGUMENT,
           "output field '%s' has %d components; it needs at least 1",
           field->name ? field->name : "", field->components);
  hsize_t trailing[2] = {(hsize_t)field->components, 1};
  return add_field(output, group, field->name, on_nodes, field->components > 1 ? 1 : 0, trailing,
                   field->values, field->units, field->description);
}

tc_err tc_output_add_cell_field(tc_output *output, const tc_output_field *field) {
  return add_vector_field(output, "cells", false, field);
}

tc_err tc_output_add_node_field(tc_output *output, const tc_output_field *field) {
  return add_vector_field(output, "nodes", true, field);
}

tc_err tc_output_add_element_matrix(tc_output *output, const tc_output_matrix *matrix) {
  TC_CHECK(matrix != NULL, TC_ERR_ARGUMENT, "no element matrix given");
  TC_CHECK(matrix->rows >= 1 && matrix->cols >= 1, TC_ERR_ARGUMENT,
           "element matrix '%s' is %d x %d; it needs at least 1 x 1",
           matrix->name ? matrix->name : "", matrix->rows, matrix->cols);
  hsize_t trailing[2] = {(hsize_t)matrix->rows, (hsize_t)matrix->cols};
  return add_field(output, "element_matrices", matrix->name, false, 2, trailing, matrix->values,
                   matrix->units, matrix->description);
}

/* Every rank must write the same datasets in the same order, or the
 * collective calls would not match: compare with rank 0's list. */
static tc_err fields_signature(const tc_output *output, char **signature, int64_t *bytes) {
  int64_t length = 1;
  for (int i = 0; i < output->num_fields; i++)
    length += (int64_t)strlen(output->fields[i].path) + 48;
  TC_CALLOC(*signature, length);
  int64_t used = 0;
  for (int i = 0; i < output->num_fields; i++) {
    const tc_output_field_request *field = &output->fields[i];
    const char *separator = i + 1 < output->num_fields ? " " : "";
    unsigned long long rows = field->trailing[0], cols = field->trailing[1];
    if (field->trailing_rank == 0)
      used += snprintf(*signature + used, (size_t)(length - used), "%s%s", field->path, separator);
    else if (field->trailing_rank == 1)
      used += snprintf(*signature + used, (size_t)(length - used), "%s[%llu]%s", field->path, rows,
                       separator);
    else
      used += snprintf(*signature + used, (size_t)(length - used), "%s[%llux%llu]%s", field->path,
                       rows, cols, separator);
  }
  *bytes = used + 1;
  return TC_SUCCESS;
}

static tc_err allocate_text(int64_t bytes, char **text) {
  TC_CALLOC(*text, bytes);
  return TC_SUCCESS;
}

tc_err tc_output_check_same_fields(const tc_output *output) {
  char *mine = NULL;
  int64_t bytes = 0;
  tc_err err = tc_parallel_agree(output->comm, fields_signature(output, &mine, &bytes));
  if (err != TC_SUCCESS) {
    free(mine);
    return err;
  }
  int64_t root_bytes = bytes;
  char *root = NULL;
  err = tc_broadcast(output->comm, &root_bytes, sizeof root_bytes, 0);
  if (err == TC_SUCCESS)
    err = tc_parallel_agree(output->comm, allocate_text(root_bytes, &root));
  if (err == TC_SUCCESS) {
    if (output->rank == 0)
      memcpy(root, mine, (size_t)bytes);
    err = tc_broadcast(output->comm, root, root_bytes, 0);
  }
  if (err == TC_SUCCESS) {
    tc_err local = TC_SUCCESS;
    if (strcmp(root, mine) != 0)
      local = tc_error_raise(TC_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                             "the ranks add different output datasets: '%s' here, '%s' on rank 0",
                             mine, root);
    err = tc_parallel_agree(output->comm, local);
  }
  free(root);
  free(mine);
  return err;
}

void tc_output_free_fields(tc_output *output) {
  for (int i = 0; i < output->num_fields; i++) {
    free(output->fields[i].name);
    free(output->fields[i].units);
    free(output->fields[i].description);
  }
  free(output->fields);
  output->fields = NULL;
  output->num_fields = output->capacity = 0;
}
