#!/usr/bin/env bash
# scripts/gpu/compare_revisions.sh BASE_SRC: on a GPU node, builds the tcmini
# source tree BASE_SRC (e.g. a git worktree of an earlier revision) and this
# tree side by side for sm_90, runs this tree's CUDA tests, requires the
# results files of both builds on the CUDA backend to be bitwise identical
# (scripts/compare_builds.sh), then times the mini-app with both builds,
# alternating, on the decks of docs/measurements/mini-app-gpu.md. Logs and
# reports go to $OUT/logs.tgz (default ./gpu-out); a summary table is printed
# last and kept in $OUT/summary.txt.
# Environment: JOBS, CUDA_ARCH (default 90), REPS (default 2), SKIP_TESTS=1,
# SKIP_COMPARE=1, EXTRA_TARGETS (more targets of this tree to build, e.g.
# tcmini_bench), CASES (the timed cases, default "q1-128 q1-128-b1024 q2-32
# q2-32-b1024": a deck, q1-128 or q2-32, then -bN for run.batch_cells=N and
# -fused for run.inputs=fused, which runs the new build only).
set -uo pipefail
base_src=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/gpu-out}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
mpi_args=()
if [ -x /usr/bin/mpicc.openmpi ]; then
  mpi_args=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi)
fi
build() { # build SRC DIR TARGETS...
  local src=$1 dir=$2
  shift 2
  cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    "${mpi_args[@]}" > "$dir.configure.log" 2>&1 &&
    cmake --build "$dir" -j "$JOBS" --target "$@" > "$dir.build.log" 2>&1
}
tests=(tcmini)
[ "${SKIP_TESTS:-0}" = 1 ] || tests+=(test_loop_cuda test_contract_cuda)
read -r -a extra <<< "${EXTRA_TARGETS:-}"
tests+=("${extra[@]}")
build "$base_src" /tmp/tc-base tcmini & base_pid=$!
build "$root" /tmp/tc-new "${tests[@]}" || { grep -E "error" /tmp/tc-new.build.log | head -20; exit 1; }
wait $base_pid || { grep -E "error" /tmp/tc-base.build.log | head -20; exit 1; }
echo "built: base $(git -C "$base_src" rev-parse --short HEAD 2>/dev/null), new $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo '+changes')"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  for t in test_loop_cuda test_contract_cuda; do
    /tmp/tc-new/bin/$t > "$OUT/$t.log" 2>&1
    echo "$t: rc=$? $(grep -ciE 'fail' "$OUT/$t.log") lines mention failure; $(tail -1 "$OUT/$t.log")"
  done
fi
if [ "${SKIP_COMPARE:-0}" != 1 ]; then
  WORK="$OUT/compare" MPIRUN=mpirun bash "$root/scripts/compare_builds.sh" /tmp/tc-base/bin/tcmini \
    /tmp/tc-new/bin/tcmini 1 run.backend=cuda mesh.cells=24,24,24 2>&1 | tee "$OUT/compare.txt"
fi

# A case is a deck's overrides; "-fused" in a name adds run.inputs=fused and
# runs the new build only, "-bN" sets run.batch_cells=N.
declare -A decks=(
  [q1-128]="mesh.cells=128,128,128 run.steps=3"
  [q2-32]="element.order=2 element.quadrature=5 mesh.cells=32,32,32 run.steps=2"
)
read -r -a names <<< "${CASES:-q1-128 q1-128-b1024 q2-32 q2-32-b1024}"
overrides_of() {
  local name=$1 deck=${1%%-[bf]*}
  local args=${decks[$deck]}
  [[ $name =~ -b([0-9]+) ]] && args+=" run.batch_cells=${BASH_REMATCH[1]}"
  [[ $name == *-fused* ]] && args+=" run.inputs=fused"
  echo "$args"
}
mpirun=(mpirun -n 1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
summary="$OUT/summary.txt"
printf '%-22s %-5s %12s %9s %9s %9s %9s %9s\n' case build "cells/s" basis "FFT|fused" contract \
  assemble total > "$summary"
for rep in $(seq "${REPS:-2}"); do
  for name in "${names[@]}"; do
    builds=(base new)
    [[ $name == *-fused* ]] && builds=(new)
    for build in "${builds[@]}"; do
      log="$OUT/$name-$build-$rep.txt"
      read -r -a overrides <<< "$(overrides_of "$name")"
      "${mpirun[@]}" "/tmp/tc-$build/bin/tcmini" "$root/inputs/hex.in" run.backend=cuda verify.checks=off \
        output.path=none output.report="$OUT/$name-$build-$rep.yaml" "${overrides[@]}" > "$log" 2>&1
      awk -v n="$name" -v b="$build" '
        $1 == "phase" {phases = 1} $1 == "figure" {phases = 0}
        phases && $1 == "basis" {basis = $4}
        phases && ($1 == "FieldFieldTensor" || $1 == "fused_elasticity") {fft += $4}
        phases && $1 ~ /^(Field|Data|fused)/ {contract += $4} phases && $1 == "assemble" {assemble = $4}
        phases && $1 == "total" {total = $4} $1 == "assembly" && $2 == "loop" {rate = $3}
        END {printf "%-22s %-5s %12s %9.4f %9.4f %9.4f %9.4f %9.3f\n", n, b, rate, basis, fft, contract, assemble, total}' \
        "$log" >> "$summary"
    done
  done
done
tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz --exclude summary.txt --exclude "*.h5" . 2>/dev/null
find "$OUT" -mindepth 1 -maxdepth 1 ! -name logs.tgz ! -name summary.txt -exec rm -rf {} +
cat "$summary"
