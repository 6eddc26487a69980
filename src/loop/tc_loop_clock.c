/* tc_loop_clock: phase times on the device's queue (see tc_loop_clock.h). */
#include "tc_loop_clock.h"

#include <stdlib.h>

struct tc_loop_clock {
  tc_device *device;
  tc_device_timer **marks; ///< started timers, one per mark of the step
  tc_phase *phases;        ///< the phase each mark starts
  int count, capacity;     ///< marks made since the last collect; timers owned
};

tc_err tc_loop_clock_create(tc_device *device, tc_loop_clock **clock) {
  tc_loop_clock *created;
  TC_CALLOC(created, 1);
  created->device = device;
  *clock = created;
  return TC_SUCCESS;
}

void tc_loop_clock_destroy(tc_loop_clock **clock) {
  tc_loop_clock *c = *clock;
  if (!c)
    return;
  for (int i = 0; i < c->capacity; ++i)
    tc_device_timer_destroy(&c->marks[i]);
  free(c->marks);
  free(c->phases);
  free(c);
  *clock = NULL;
}

/* Room for one more mark: the arrays double, new timers are made once and
 * kept for later steps. */
static tc_err reserve(tc_loop_clock *c) {
  if (c->count < c->capacity)
    return TC_SUCCESS;
  const int capacity = c->capacity ? 2 * c->capacity : 64;
  tc_device_timer **marks = realloc(c->marks, (size_t)capacity * sizeof *marks);
  TC_CHECK(marks, TC_ERR_MEMORY, "out of memory for the phase clock");
  c->marks = marks;
  tc_phase *phases = realloc(c->phases, (size_t)capacity * sizeof *phases);
  TC_CHECK(phases, TC_ERR_MEMORY, "out of memory for the phase clock");
  c->phases = phases;
  for (; c->capacity < capacity; ++c->capacity)
    TC_CALL(tc_device_timer_create(c->device, &c->marks[c->capacity]));
  return TC_SUCCESS;
}

tc_err tc_loop_clock_mark(tc_loop_clock *clock, tc_phase phase) {
  TC_CALL(reserve(clock));
  TC_CALL(tc_device_timer_start(clock->marks[clock->count]));
  clock->phases[clock->count++] = phase;
  return TC_SUCCESS;
}

int tc_loop_clock_count(const tc_loop_clock *clock) { return clock->count; }

tc_err tc_loop_clock_rewind(tc_loop_clock *clock, int count) {
  TC_CHECK(count >= 0 && count <= clock->count, TC_ERR_INTERNAL,
           "phase clock rewound to mark %d of %d", count, clock->count);
  clock->count = count;
  return TC_SUCCESS;
}

/* The timers and phases of a recording's marks stay in place: a collect
 * only sets the count back, and the marks of every step before the
 * recording's are made in the same order. */
tc_err tc_loop_clock_replayed(tc_loop_clock *clock, int from, int to) {
  TC_CHECK(clock->count == from && from <= to && to <= clock->capacity, TC_ERR_INTERNAL,
           "phase clock at mark %d replays marks %d..%d of %d", clock->count, from, to,
           clock->capacity);
  clock->count = to;
  return TC_SUCCESS;
}

tc_err tc_loop_clock_collect(tc_loop_clock *clock, tc_timers *timers) {
  if (clock->count == 0)
    return TC_SUCCESS;
  /* The end of the last phase: one more mark, which starts nothing. */
  TC_CALL(tc_loop_clock_mark(clock, TC_PHASE_COUNT));
  tc_err err = TC_SUCCESS;
  for (int i = 0; i + 1 < clock->count && err == TC_SUCCESS; ++i) {
    double seconds = 0.0;
    err = tc_device_timer_between(clock->marks[i], clock->marks[i + 1], &seconds);
    if (err == TC_SUCCESS)
      err = tc_timer_add(timers, clock->phases[i], seconds);
  }
  clock->count = 0;
  return err;
}
