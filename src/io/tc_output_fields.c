/* tc_output_fields: the registered cell and node fields and element
 * matrices, each written as one dataset of rows in global numbering. */
#include "tc_output_impl.h"

tc_err tc_output_write_fields(const tc_output *output, tc_output_session *s,
                              const tc_output_mesh_rows *rows) {
  const tc_mesh_local *part = tc_mesh_local_part(output->mesh);
  for (int i = 0; i < output->num_fields; i++) {
    const tc_output_field_request *field = &output->fields[i];
    tc_output_dataset_shape shape = {field->path,
                                     H5T_IEEE_F64LE,
                                     H5T_NATIVE_DOUBLE,
                                     sizeof(double),
                                     field->on_nodes ? part->num_global_nodes
                                                     : part->num_global_cells,
                                     field->trailing_rank,
                                     {field->trailing[0], field->trailing[1]},
                                     field->units,
                                     field->description};
    TC_CALL(tc_output_write_rows(output, s, &shape, field->on_nodes ? &rows->nodes : &rows->cells,
                                 field->values));
  }
  return TC_SUCCESS;
}
