/* tc_tuning_shared: a tuning file (tc_tuning.h) loaded for a whole run: read
 * once on rank 0, its text broadcast, parsed on every rank against that
 * rank's device, and the outcome agreed, as the deck is (tc_config_load). */
#ifndef TC_TUNING_SHARED_H
#define TC_TUNING_SHARED_H

#include <mpi.h>
#include <stdbool.h>

#include "tc_tuning.h"

/// Loads the tuning file at path for backend on this rank's device (its
/// model name, tc_device_model). All ranks return the same code: a missing,
/// unreadable or corrupt file, or one for another backend or device on any
/// rank, fails every rank with one message (the lowest failing rank's;
/// TC_ERR_INPUT, also for a file that cannot be read: it is bad input). With
/// fallback, such a failure is instead one warning line on rank 0's stderr
/// and *tuning is NULL on every rank (the built-in rules apply). Collective
/// on comm.
tc_err tc_tuning_load_shared(MPI_Comm comm, const char *path, tc_backend_kind backend,
                             const char *device, bool fallback, tc_tuning **tuning);

#endif
