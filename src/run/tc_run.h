/* tc_run: the mini-app's run after its deck is loaded, for the tcmini
 * driver: open the rank's device (and read the tuning file), build the
 * rank's part of the mesh, check the results file's destination, set up the
 * element-assembly loop, run its steps, run the checks, write the results
 * file (beside output.path when a check failed) and the report's figures,
 * roofline and file. */
#ifndef TC_RUN_H
#define TC_RUN_H

#include "tc_config.h"
#include "tc_error.h"
#include "tc_report.h"
#include "tc_timers.h"

/// Runs config, recording into report and timing every stage into timers
/// (the startup and total phases are the caller's: total is stopped here,
/// before the report is written). Every failure is agreed among the ranks
/// before it is returned, so no rank waits in a collective for a dead one;
/// a failed check is in the report's verdict, not the return value.
/// Collective on MPI_COMM_WORLD.
tc_err tc_run(const tc_config *config, tc_report *report, tc_timers *timers);

#endif
