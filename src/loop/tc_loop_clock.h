/* tc_loop_clock: the phase times of a step taken on the device's own queue.
 * The step marks where each phase starts (a timer started on the device's
 * stream: a CUDA event on GPUs, the host clock on CPUs) and never waits in
 * between; at the end of the step the clock waits once and adds each
 * interval, from one mark to the next, to its phase's timer. On a GPU the
 * phases are then the GPU's own time, and the host queues batch after batch
 * while the GPU works; on CPUs, where the work is done when the call returns,
 * the marks are plain wall-clock readings. Private to src/loop. */
#ifndef TC_LOOP_CLOCK_H
#define TC_LOOP_CLOCK_H

#include "tc_device.h"
#include "tc_timers.h"

typedef struct tc_loop_clock tc_loop_clock;

tc_err tc_loop_clock_create(tc_device *device, tc_loop_clock **clock);
void tc_loop_clock_destroy(tc_loop_clock **clock);

/// Phase `phase` starts here on the device's queue; the phase marked before
/// ends here. Asynchronous.
tc_err tc_loop_clock_mark(tc_loop_clock *clock, tc_phase phase);

/// Ends the last phase marked, waits for the device to reach that point and
/// adds every interval since the last collect to timers. The marks are then
/// free for the next step.
tc_err tc_loop_clock_collect(tc_loop_clock *clock, tc_timers *timers);

#endif
