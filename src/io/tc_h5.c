/* tc_h5: turning HDF5's error stack into one tcmini error line. */
#include "tc_h5.h"

#include <stdio.h>
#include <string.h>

enum { TC_H5_DETAIL_MAX = 512, TC_H5_NAME_MAX = 64 };

typedef struct {
  char text[TC_H5_DETAIL_MAX];
  int taken;
} stack_detail;

/* Walked from the most specific entry upwards: keep the two innermost
 * descriptions, which name the file, the errno or the MPI error. */
static herr_t collect_detail(unsigned n, const H5E_error2_t *entry, void *data) {
  (void)n;
  stack_detail *detail = data;
  if (detail->taken >= 2 || entry->desc == NULL || entry->desc[0] == '\0')
    return 0;
  size_t used = strlen(detail->text);
  snprintf(detail->text + used, sizeof detail->text - used, "%s%s",
           detail->taken ? "; " : "", entry->desc);
  detail->taken++;
  return 0;
}

/* "ds = H5Dcreate2(file, ...)" -> "H5Dcreate2". */
static void call_name(const char *call_text, char name[TC_H5_NAME_MAX]) {
  const char *start = strstr(call_text, "H5");
  if (start == NULL)
    start = call_text;
  size_t length = strcspn(start, "( ");
  if (length >= TC_H5_NAME_MAX)
    length = TC_H5_NAME_MAX - 1;
  memcpy(name, start, length);
  name[length] = '\0';
}

tc_err tc_h5_failure(const char *call_text, const char *file, int line, const char *func) {
  stack_detail detail = {.text = "", .taken = 0};
  char name[TC_H5_NAME_MAX];
  call_name(call_text, name);
  /* Reading the stack is best effort: the failure is reported either way. */
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_detail, &detail) < 0 ||
      detail.text[0] == '\0')
    snprintf(detail.text, sizeof detail.text, "no detail from the HDF5 error stack");
  /* Clearing only forgets entries already turned into the message above. */
  (void)H5Eclear2(H5E_DEFAULT);
  return tc_error_raise(TC_ERR_HDF5, file, line, func, "%s failed: %s", name, detail.text);
}

tc_err tc_h5_quiet_begin(tc_h5_quiet_state *saved) {
  TC_H5_CALL(H5Eget_auto2(H5E_DEFAULT, &saved->func, &saved->data));
  TC_H5_CALL(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
  return TC_SUCCESS;
}

tc_err tc_h5_quiet_end(const tc_h5_quiet_state *saved) {
  TC_H5_CALL(H5Eset_auto2(H5E_DEFAULT, saved->func, saved->data));
  return TC_SUCCESS;
}
