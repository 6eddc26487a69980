#!/usr/bin/env bash
# scripts/gpu/check_vendor.sh: on a GPU node, check and time the vendor
# variant (cuBLAS) and the tuner: build tcmini for sm_90 in a fresh directory,
# run the CUDA and contraction tests, then time AUTO against cuBLAS at the
# presets and at the mini-app's Q2 elasticity shapes, sweep random FieldField
# shapes (double and float; layout right against cuBLAS, layout left against
# layout right), tune this GPU on other random shapes and sweep again with
# that tuning file. Ends with a short summary.
#
#   scripts/gpu/check_vendor.sh [STAGE...]
#     STAGE: build, test, presets, q2, sweep, tune, summary, or all (default);
#     each stage after build reuses the build, so a long run can be split.
#   Environment: OUT (logs; default ./vendor-out), BUILD (default
#   /tmp/tcmini-vendor-build), JOBS, CUDA_ARCH (default 90), SWEEP (shapes
#   per sweep, default 200), TUNE_SHAPES (random shapes the tuner times,
#   every variant on each, default 40), MEMORY (MB per case, default 1024),
#   BACKEND (default cuda; openmp runs the same stages on the CPU cores).
# Exit code: non-zero when a stage failed (its log is named in the output).
set -uo pipefail
OUT=${OUT:-$PWD/vendor-out}
BUILD=${BUILD:-/tmp/tcmini-vendor-build}
JOBS=${JOBS:-$(nproc)}
SWEEP=${SWEEP:-200}
TUNE_SHAPES=${TUNE_SHAPES:-40}
MEMORY=${MEMORY:-1024}
mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$BUILD/bin/tcmini-bench"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(all)
failed=0
wants() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] || [ "$s" = all ] && return 0; done; return 1; }
run_logged() { # name command...: runs it, its output in $OUT/name.txt
  local name=$1; shift
  echo "== $name: $*"
  "$@" > "$OUT/$name.txt" 2>&1
  local status=$?
  [ $status -eq 0 ] || { echo "   exit $status (see $OUT/$name.txt)"; failed=1; }
  return $status
}

if wants build; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
  mpi_args=()
  if [ -x /usr/bin/mpicc.openmpi ]; then
    mpi_args=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi)
  fi
  rm -rf "$BUILD"
  cmake -S "$root" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    "${mpi_args[@]}" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  grep "tcmini: OpenMP" "$OUT/configure.log"
  cmake --build "$BUILD" -j "$JOBS" > "$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
  git -C "$root" rev-parse --short HEAD > "$OUT/revision.txt" 2>/dev/null
fi
[ -x "$bench" ] || { echo "no $bench: run the build stage first"; exit 1; }

if wants test; then
  # contract_cuda: every CUDA variant, cuBLAS among them (FP32 float, handle
  # cache, refusal of layout left, AUTO from a tuning file); contract_tuning:
  # every variant a tuning file can name, run through AUTO on the GPU too.
  (cd "$BUILD" && ctest -L 'cuda|contract' -V --timeout 900) > "$OUT/ctest_cuda.txt" 2>&1 || failed=1
  tail -6 "$OUT/ctest_cuda.txt"
  (cd "$BUILD" && ctest -j 8 --timeout 600 -LE cuda) > "$OUT/ctest_all.txt" 2>&1 || failed=1
  tail -4 "$OUT/ctest_all.txt"
fi

BACKEND=${BACKEND:-cuda}
backend=(--backend "$BACKEND")
[ "$BACKEND" = openmp ] && backend+=(--threads "${THREADS:-$(nproc)}")
common=("${backend[@]}" --memory "$MEMORY" --reps 10 --warmup 2)
if wants presets; then
  # AUTO and every variant beside cuBLAS (the yardstick row), both precisions.
  run_logged presets "$bench" "${common[@]}" --kernel FieldFieldScalar,FieldFieldVector,FieldFieldTensor \
    --preset all --precision all --variant all --check-cells 16 --csv "$OUT/presets.csv"
fi
if wants q2; then
  # The mini-app's Q2 elasticity (81 x 81, 3- and 5-point rules) and its
  # stiffness and mass (27 x 27): AUTO, every variant and cuBLAS.
  run_logged q2 "$bench" "${common[@]}" --kernel FieldFieldTensor,FieldFieldVector,FieldFieldScalar \
    --shapes 81x81x27,81x81x125,27x27x27,27x27x125 --precision all --variant all --check-cells 16 \
    --csv "$OUT/q2.csv"
fi
if wants sweep; then
  for precision in double float; do
    run_logged "sweep-$precision" "$bench" "${common[@]}" --sweep "$SWEEP" --seed 1 \
      --precision "$precision" --check-cells 4 --csv "$OUT/sweep-$precision.csv"
    # Layout left, each shape against AUTO in layout right on the same data.
    run_logged "sweep-left-$precision" "$bench" "${common[@]}" --sweep "$SWEEP" --seed 1 \
      --precision "$precision" --layout left --check-cells 4 --csv "$OUT/sweep-left-$precision.csv"
  done
fi
gpu_model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-')
[ "$BACKEND" = cuda ] || gpu_model=$BACKEND
tuning="$OUT/tuning-${gpu_model:-gpu}.txt"
if wants tune; then
  # Tuned on random shapes of seed 2, judged on seed 1's (not the same shapes).
  for precision in double float; do
    # Every variant on each shape: 5 runs each, slow ones cut at 2 s.
    run_logged "tune-$precision" "$bench" "${backend[@]}" --memory "$MEMORY" --reps 5 --warmup 1 \
      --row-time-limit 2 --tune "$tuning.$precision" --sweep "$TUNE_SHAPES" --seed 2 \
      --precision "$precision" --check-cells 4 --csv "$OUT/tune-$precision.csv"
  done
  # One file for both precisions: their classes do not overlap.
  if [ -f "$tuning.double" ] && [ -f "$tuning.float" ]; then
    { cat "$tuning.double"; grep '^kernel=' "$tuning.float"; } > "$tuning"
    for precision in double float; do
      run_logged "sweep-tuned-$precision" "$bench" "${common[@]}" --sweep "$SWEEP" --seed 1 \
        --precision "$precision" --check-cells 4 --tuning "$tuning" \
        --csv "$OUT/sweep-tuned-$precision.csv"
    done
    run_logged q2-tuned "$bench" "${common[@]}" --kernel FieldFieldTensor \
      --shapes 81x81x27,81x81x125 --precision all --tuning "$tuning" --check-cells 16
  fi
fi

if wants summary; then
  echo
  echo "== summary ($(tail -1 "$OUT/gpu.txt" 2>/dev/null); git $(cat "$OUT/revision.txt" 2>/dev/null))"
  grep -hE "tests passed|tests failed" "$OUT"/ctest_*.txt 2>/dev/null
  grep -hE "CUDA runs matched|tuned choices run|^[0-9]+: vendor library|FAIL" "$OUT/ctest_cuda.txt" 2>/dev/null |
    sort -u | head -20
  for name in presets q2 q2-tuned; do
    [ -f "$OUT/$name.txt" ] || continue
    echo "-- $name: AUTO and the vendor row (median ms)"
    grep -E "^FieldField" "$OUT/$name.txt" | awk '$6 == "rule" || $6 == "tuning" || $5 == "vendor" {
      printf "  %-16s %-6s %-6s L=%s R=%s P=%s D=%sx%s %-9s %-9s %s ms %s\n", $1, $2, $8, $10, $11, $12, $14, $15, $5, $6, $18, $NF }'
  done
  for name in sweep-double sweep-float sweep-left-double sweep-left-float sweep-tuned-double \
    sweep-tuned-float; do
    [ -f "$OUT/$name.txt" ] || continue
    echo "-- $name"
    grep -E "time ratio|AUTO slower|layout left slower|^worst|^rerun|rows, .* verified" \
      "$OUT/$name.txt" | sed 's/^/  /'
  done
  [ -f "$tuning" ] && { echo "-- tuning file $tuning"; grep '^kernel=' "$tuning" | sed 's/^/  /'; }
fi
exit $failed
