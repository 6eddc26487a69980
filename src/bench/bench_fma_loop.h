/* bench_fma_loop: template of the FMA-peak loop, included by bench_roofline.c
 * once per precision with BENCH_REAL (double or float) and BENCH_FMA_LOOP
 * (the function's name) defined. BENCH_VECTOR_BYTES and
 * BENCH_FMA_ACCUMULATORS come from the includer. */

/* Runs iterations of BENCH_FMA_ACCUMULATORS independent vector FMAs
 * (acc = acc * a + b: enough chains to cover the FMA latency on every FMA
 * pipe) and returns a sum of the results so the work cannot be dropped.
 * acc converges to b / (1 - a): no overflow, no subnormals. */
static double BENCH_FMA_LOOP(int64_t iterations, BENCH_REAL seed) {
  typedef BENCH_REAL vector_type __attribute__((vector_size(BENCH_VECTOR_BYTES)));
  const vector_type a = (vector_type){0} + (BENCH_REAL)0.999;
  const vector_type b = (vector_type){0} + (BENCH_REAL)0.001;
  vector_type acc[BENCH_FMA_ACCUMULATORS];
  for (int j = 0; j < BENCH_FMA_ACCUMULATORS; ++j)
    acc[j] = (vector_type){0} + seed * (BENCH_REAL)(j + 1);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < BENCH_FMA_ACCUMULATORS; ++j)
      acc[j] = acc[j] * a + b;
  }
  double sum = 0.0;
  for (int j = 0; j < BENCH_FMA_ACCUMULATORS; ++j)
    for (size_t lane = 0; lane < BENCH_VECTOR_BYTES / sizeof(BENCH_REAL); ++lane)
      sum += (double)acc[j][lane];
  return sum;
}
