#!/usr/bin/env bash
# bench_cpu.sh: produces the CPU table of docs/measurements/contract-cpu.md in
# one command: all nine kernels x presets p8,p27,p64,p125 (double, layout
# right) on the serial backend and on OpenMP with 1 and 2 threads, with the roofline
# measured by the same program. About 3 minutes on a 2-core machine (the
# serial REFERENCE rows take most of it).
#
#   scripts/bench_cpu.sh [BUILD_DIR] [OUTPUT_PREFIX]
#     BUILD_DIR       a configured and built tree (default: build)
#     OUTPUT_PREFIX   writes PREFIX.txt (the table as printed) and PREFIX.csv
#                     (default: bench_cpu)
#   Environment: MEMORY_MB (working set per case, default 256 = 8x the 32 MiB
#   L3), THREADS (OpenMP thread counts, default 1,2), REPS (default 10),
#   ROW_TIME_LIMIT (seconds per row's warm-up and timed runs, default 2: the
#   serial REFERENCE backend is an oracle written for clarity and takes many
#   seconds per call on the large FieldField presets, so its rows get fewer
#   runs; the table's reps column says how many).
#
# Exit code: tcmini-bench's (0 only if every row was verified).
set -euo pipefail

build_dir=${1:-build}
prefix=${2:-bench_cpu}
bench="$build_dir/bin/tcmini-bench"
if [[ ! -x "$bench" ]]; then
  echo "bench_cpu.sh: $bench not found; build first: cmake --build $build_dir --target tcmini_bench" >&2
  exit 2
fi

# One thread per core, kept on its core, for steady timings.
export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
export OMP_PLACES=${OMP_PLACES:-cores}

set +e
"$bench" --kernel all --preset all --backend serial,openmp --threads "${THREADS:-1,2}" \
  --precision double --layout right --variant auto \
  --memory "${MEMORY_MB:-256}" --reps "${REPS:-10}" --warmup 2 \
  --row-time-limit "${ROW_TIME_LIMIT:-2}" --csv "$prefix.csv" | tee "$prefix.txt"
status=${PIPESTATUS[0]}
set -e

# The Markdown table of docs/measurements/contract-cpu.md: the CSV's main columns.
awk -F, '
  BEGIN {
    ncols = split("kernel preset C backend thr reps median_ms GFLOP/s GB/s %roof bound speedup verified", names, " ")
    split("%s %s %s %s %s %s %.3f %.2f %.2f %.1f %s %.2f %s", formats, " ")
    split("l l r l r r r r r r l r l", align, " ")
  }
  NR == 1 {
    for (i = 1; i <= NF; ++i) index_of[$i] = i
    line = "|"; rule = "|"
    for (c = 1; c <= ncols; ++c) { line = line " " names[c] " |"; rule = rule (align[c] == "l" ? " --- |" : " ---: |") }
    print line; print rule
    next
  }
  {
    line = "|"
    for (c = 1; c <= ncols; ++c) {
      value = $(index_of[names[c]])
      line = line " " (value == "" ? "-" : sprintf(formats[c], value)) " |"
    }
    print line
  }' "$prefix.csv" > "$prefix.md"
echo "bench_cpu.sh: wrote $prefix.txt, $prefix.csv and $prefix.md (exit $status)"
exit "$status"
