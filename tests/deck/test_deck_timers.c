/* test_deck_timers: the phase list (names written out here independently,
 * kernel phases named by tc_kernel_name), start/stop misuse, a measured
 * interval, nested phases timed exclusively (total beside them), and the
 * min/avg/max reduction over ranks with known per-rank times. */
#include <math.h>

#include "deck_test.h"
#include "tc_timers.h"

static void test_names(void) {
  const char *const expected[] = {
      "startup", "device", "roofline", "mesh", "setup", "upload", "first_touch", "record",
      "batches", "geometry",
      "basis", "FieldFieldScalar", "FieldFieldVector", "FieldFieldTensor", "DataFieldScalar",
      "DataFieldVector", "DataFieldTensor", "DataDataScalar", "DataDataVector",
      "DataDataTensor", "fused_diffusion", "fused_elasticity", "assemble", "exchange", "wait", "copy_back",
      "checks", "output", "total"};
  EXPECT(TC_PHASE_COUNT == sizeof expected / sizeof expected[0], "%d phases",
         (int)TC_PHASE_COUNT);
  for (int p = 0; p < TC_PHASE_COUNT && p < (int)(sizeof expected / sizeof expected[0]); p++)
    EXPECT_STREQ(tc_phase_name((tc_phase)p), expected[p]);
  for (int k = 0; k < TC_KERNEL_COUNT; k++)
    EXPECT_STREQ(tc_phase_name(tc_phase_of_kernel((tc_kernel)k)), tc_kernel_name((tc_kernel)k));
  EXPECT(tc_phase_of_kernel(TC_FIELD_FIELD_SCALAR) == TC_PHASE_FIELD_FIELD_SCALAR, "ffs");
  EXPECT(tc_phase_of_kernel(TC_DATA_DATA_TENSOR) == TC_PHASE_DATA_DATA_TENSOR, "ddt");
  EXPECT_STREQ(tc_phase_name(TC_PHASE_COUNT), "unknown");
  EXPECT(TC_PHASE_STARTUP == 0 && TC_PHASE_TOTAL == TC_PHASE_COUNT - 1, "enum order");
}

static void test_timing(void) {
  tc_timers *timers;
  REQUIRE_CALL(tc_timers_create(&timers));
  EXPECT(tc_timer_seconds(timers, TC_PHASE_MESH) == 0 && tc_timer_count(timers, TC_PHASE_MESH) == 0,
         "starts at zero");
  EXPECT(tc_timer_stop(timers, TC_PHASE_MESH) == TC_ERR_INTERNAL, "stop before start");
  EXPECT_STREQ(tc_error_message(), "timer 'mesh' stopped while not running");
  tc_error_clear();

  /* Two intervals of at least 20 ms each, measured against the same clock. */
  for (int i = 0; i < 2; i++) {
    REQUIRE_CALL(tc_timer_start(timers, TC_PHASE_GEOMETRY));
    double begin = tc_wall_seconds();
    while (tc_wall_seconds() - begin < 0.02) {
    }
    REQUIRE_CALL(tc_timer_stop(timers, TC_PHASE_GEOMETRY));
  }
  double seconds = tc_timer_seconds(timers, TC_PHASE_GEOMETRY);
  EXPECT(seconds >= 0.04 && seconds < 2.0, "two 20 ms waits took %g s", seconds);
  EXPECT(tc_timer_count(timers, TC_PHASE_GEOMETRY) == 2, "two intervals");

  REQUIRE_CALL(tc_timer_start(timers, TC_PHASE_BASIS));
  EXPECT(tc_timer_start(timers, TC_PHASE_BASIS) == TC_ERR_INTERNAL, "started twice");
  EXPECT_STREQ(tc_error_message(), "timer 'basis' started while running");
  tc_error_clear();
  EXPECT(tc_timer_add(timers, TC_PHASE_BASIS, -1.0) == TC_ERR_ARGUMENT, "negative time");
  tc_error_clear();
  EXPECT(tc_timer_start(timers, TC_PHASE_COUNT) == TC_ERR_ARGUMENT, "bad phase");
  tc_error_clear();
  tc_timers_destroy(&timers);
  EXPECT(timers == NULL, "destroy sets NULL");
}

/* Busy-waits for seconds on the timers' clock. */
static void spin(double seconds) {
  double begin = tc_wall_seconds();
  while (tc_wall_seconds() - begin < seconds) {
  }
}

/* setup 30 ms, inside it first_touch 20 ms (twice 10), then setup 10 ms more:
 * setup gets only its own 40 ms, first_touch its 20, total (running beside
 * them) all 60; stopping setup while first_touch runs inside it is misuse. */
static void test_nesting(void) {
  tc_timers *timers;
  REQUIRE_CALL(tc_timers_create(&timers));
  REQUIRE_CALL(tc_timer_start(timers, TC_PHASE_TOTAL));
  REQUIRE_CALL(tc_timer_start(timers, TC_PHASE_SETUP));
  spin(0.03);
  for (int i = 0; i < 2; i++) {
    REQUIRE_CALL(tc_timer_start(timers, TC_PHASE_FIRST_TOUCH));
    if (i == 0) {
      EXPECT(tc_timer_stop(timers, TC_PHASE_SETUP) == TC_ERR_INTERNAL, "outer stopped first");
      EXPECT_STREQ(tc_error_message(), "timer 'setup' stopped while 'first_touch' runs inside it");
      tc_error_clear();
    }
    spin(0.01);
    REQUIRE_CALL(tc_timer_stop(timers, TC_PHASE_FIRST_TOUCH));
  }
  spin(0.01);
  REQUIRE_CALL(tc_timer_stop(timers, TC_PHASE_SETUP));
  REQUIRE_CALL(tc_timer_stop(timers, TC_PHASE_TOTAL));
  const double setup = tc_timer_seconds(timers, TC_PHASE_SETUP);
  const double touch = tc_timer_seconds(timers, TC_PHASE_FIRST_TOUCH);
  const double total = tc_timer_seconds(timers, TC_PHASE_TOTAL);
  EXPECT(setup >= 0.04, "setup %g s", setup);
  EXPECT(touch >= 0.02, "first_touch %g s", touch);
  EXPECT(fabs(setup + touch - total) < 1e-3, "setup %g + first_touch %g = total %g", setup,
         touch, total);
  EXPECT(tc_timer_count(timers, TC_PHASE_SETUP) == 1 &&
             tc_timer_count(timers, TC_PHASE_FIRST_TOUCH) == 2,
         "one setup interval, two first touches");
  tc_timers_destroy(&timers);
}

static void test_reduce(void) {
  tc_timers *timers;
  REQUIRE_CALL(tc_timers_create(&timers));
  int rank = tc_rank(MPI_COMM_WORLD), ranks = tc_size(MPI_COMM_WORLD);
  /* Rank r spends r + 1 s in assemble (in two pieces on rank 0 only) and 0.5 s in output. */
  REQUIRE_CALL(tc_timer_add(timers, TC_PHASE_ASSEMBLE, rank == 0 ? 0.25 : rank + 1.0));
  if (rank == 0)
    REQUIRE_CALL(tc_timer_add(timers, TC_PHASE_ASSEMBLE, 0.75));
  REQUIRE_CALL(tc_timer_add(timers, TC_PHASE_OUTPUT, 0.5));
  tc_phase_stats stats[TC_PHASE_COUNT];
  REQUIRE_CALL(tc_timers_reduce(MPI_COMM_WORLD, timers, stats));
  const tc_phase_stats *assemble = &stats[TC_PHASE_ASSEMBLE];
  EXPECT(assemble->min == 1.0 && assemble->max == ranks, "min %g max %g", assemble->min,
         assemble->max);
  EXPECT(fabs(assemble->avg - (ranks + 1) / 2.0) < 1e-12, "avg %g", assemble->avg);
  EXPECT(assemble->count == 2, "count %lld", (long long)assemble->count);
  EXPECT(stats[TC_PHASE_OUTPUT].min == 0.5 && stats[TC_PHASE_OUTPUT].max == 0.5 &&
             fabs(stats[TC_PHASE_OUTPUT].avg - 0.5) < 1e-15,
         "output");
  EXPECT(stats[TC_PHASE_MESH].max == 0 && stats[TC_PHASE_MESH].count == 0, "untouched phase");
  tc_timers_destroy(&timers);
}

int main(int argc, char **argv) {
  deck_test_init(&argc, &argv);
  test_names();
  test_timing();
  test_nesting();
  test_reduce();
  return deck_test_finish("test_deck_timers");
}
