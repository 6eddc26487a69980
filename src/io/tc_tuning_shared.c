/* tc_tuning_shared: the collective load of a tuning file (tc_tuning_shared.h). */
#include "tc_tuning_shared.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_parallel.h"

/* Rank 0's text on every rank (NULL where allocation failed: see err). */
static tc_err share_text(MPI_Comm comm, const char *path, char **text) {
  *text = NULL;
  int64_t length = 0;
  tc_err err = TC_SUCCESS;
  if (tc_rank(comm) == 0) {
    err = tc_tuning_read_text(path, text);
    if (err == TC_SUCCESS)
      length = (int64_t)strlen(*text);
  }
  TC_CALL(tc_parallel_agree(comm, err));
  TC_CALL(tc_broadcast(comm, &length, sizeof length, 0));
  if (tc_rank(comm) != 0) {
    *text = malloc((size_t)length + 1);
    err = *text != NULL ? TC_SUCCESS
                        : tc_error_raise(TC_ERR_MEMORY, __FILE__, __LINE__, __func__,
                                         "out of memory receiving a %lld-byte tuning file",
                                         (long long)length);
  }
  err = tc_parallel_agree(comm, err);
  if (err == TC_SUCCESS)
    err = tc_broadcast(comm, *text, length + 1, 0);
  if (err != TC_SUCCESS) {
    free(*text);
    *text = NULL;
  }
  return err;
}

tc_err tc_tuning_load_shared(MPI_Comm comm, const char *path, tc_backend_kind backend,
                             const char *device, bool fallback, tc_tuning **tuning) {
  *tuning = NULL;
  char *text = NULL;
  tc_err err = share_text(comm, path, &text);
  if (err == TC_SUCCESS) {
    err = tc_parallel_agree(comm, tc_tuning_parse(path, text, backend, device, tuning));
    if (err != TC_SUCCESS)
      tc_tuning_destroy(tuning);
  }
  free(text);
  /* a file the deck names that cannot be read is bad input */
  err = tc_error_recode(err, TC_ERR_IO, TC_ERR_INPUT);
  if (err == TC_SUCCESS || !fallback || err == TC_ERR_MPI || err == TC_ERR_MEMORY)
    return err;
  if (tc_rank(comm) == 0)
    fprintf(stderr, "tcmini: warning: %s; AUTO uses the built-in rules (run.tuning_on_error = "
                    "rules)\n",
            tc_error_message());
  tc_error_clear();
  return TC_SUCCESS;
}
