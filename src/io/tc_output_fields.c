/* tc_output_fields: the registered cell and node fields and element
 * matrices as datasets of rows in global numbering, and the packing of a
 * rank's rows of local values. */
#include <string.h>

#include "tc_output_impl.h"

tc_err tc_output_pack_values(const tc_output *output, const tc_output_dataset *dataset,
                             const tc_row_set *rows, void **packed, const void **data) {
  (void)output;
  return tc_row_set_gather(rows, dataset->values, (size_t)tc_output_row_bytes(dataset), packed,
                           data);
}

void tc_output_field_datasets(const tc_output *output, tc_output_dataset *datasets) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  for (int i = 0; i < output->num_fields; i++) {
    const tc_output_field_request *field = &output->fields[i];
    tc_output_dataset *dataset = &datasets[i];
    *dataset = (tc_output_dataset){.file_type = H5T_IEEE_F64LE,
                                   .element_bytes = sizeof(double),
                                   .global_rows = field->on_nodes ? part->num_global_nodes
                                                                  : part->num_global_cells,
                                   .trailing_rank = field->trailing_rank,
                                   .trailing = {field->trailing[0], field->trailing[1]},
                                   .units = field->units,
                                   .description = field->description,
                                   .on_nodes = field->on_nodes,
                                   .pack = tc_output_pack_values,
                                   .values = field->values,
                                   .offset = -1};
    memcpy(dataset->path, field->path, sizeof dataset->path);
  }
}
