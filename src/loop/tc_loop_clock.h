/* tc_loop_clock: the phase times of a step taken on the device's own queue.
 * The step marks where each phase starts (a timer started on the device's
 * stream: a CUDA event on GPUs, the host clock on CPUs) and never waits in
 * between; at the end of the step the clock waits once and adds each
 * interval, from one mark to the next, to its phase's timer. On a GPU the
 * phases are then the GPU's own time, and the host queues batch after batch
 * while the GPU works; on CPUs, where the work is done when the call returns,
 * the marks are plain wall-clock readings. Marks queued into a recording of
 * the device's queue (a CUDA graph) start their timers each time it is
 * replayed (tc_loop_clock_replayed). Private to src/loop. */
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

/// Marks made since the last collect.
int tc_loop_clock_count(const tc_loop_clock *clock);

/// Forgets the marks made after the first `count` (marks queued into a
/// recording of the device's queue that was then discarded).
tc_err tc_loop_clock_rewind(tc_loop_clock *clock, int count);

/// The marks from..to-1, made once while the device's queue was being
/// recorded (tc_device_record_begin), are made again by a replay of that
/// recording: the same timers, started in the same order, for the same
/// phases. The clock must stand at `from` marks.
tc_err tc_loop_clock_replayed(tc_loop_clock *clock, int from, int to);

/// Ends the last phase marked, waits for the device to reach that point and
/// adds every interval since the last collect to timers. The marks are then
/// free for the next step.
tc_err tc_loop_clock_collect(tc_loop_clock *clock, tc_timers *timers);

#endif
