#!/usr/bin/env bash
# tests/scaling/test_scaling.sh: tests of the scaling tooling (scripts/sweep.sh,
# scripts/slurm/, scripts/collect.py). usage: test_scaling.sh CASE [TCMINI_BIN]
#   'shellcheck': every script is clean under ShellCheck (skipped if shellcheck is absent)
#   dry-run:    the launch lines of mpirun and srun sweeps are the expected ones
#   collect:    the collector on the committed sample reports: expected CSV rows, PNGs,
#               and refusal of reports that do not form the study asked for
#   sweep:      a real weak sweep (1 and 2 ranks, 4x4x4 cells per rank) + collector
# Environment: TCMINI_PYTHON, a Python with PyYAML and matplotlib [/usr/bin/python3].
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${TCMINI_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Compares file $1 with the expected text on stdin.
expect_file() {
  if ! diff -u - "$1"; then
    fail "$1 differs from the expected text (diff above: - expected, + got)"
  fi
}

case_shellcheck() {
  if ! command -v shellcheck >/dev/null; then
    echo "SKIP: shellcheck is not installed"
    return 0
  fi
  shellcheck -x "$root/scripts/sweep.sh" "$root"/scripts/slurm/*.sbatch "$here/test_scaling.sh"
}

case_dry_run() {
  local root_flag=""
  [[ $(id -u) == 0 ]] && root_flag=" --allow-run-as-root"
  local bin=/opt/tcmini/bin/tcmini
  # Local mpirun, 2 cores: 1 and 2 ranks bound, 4 oversubscribed and unbound.
  env -u SLURM_JOB_ID TCMINI_DRY_RUN=1 TCMINI_BIN=$bin TCMINI_OUT=out TCMINI_CORES_PER_NODE=2 \
    TCMINI_RANKS="1 2 4" TCMINI_LAUNCHER=auto "$root/scripts/sweep.sh" weak verify.checks=off \
    >"$work/mpirun.txt"
  local omp="OMP_NUM_THREADS=1 OMP_PLACES=cores OMP_PROC_BIND=close"
  local x="-x OMP_NUM_THREADS -x OMP_PLACES -x OMP_PROC_BIND"
  local deck="$root/inputs/weak-cpu.in run.backend=openmp run.threads=1"
  local tail="output.path=none output.overwrite=true verify.checks=off"
  expect_file "$work/mpirun.txt" <<END
env $omp mpirun -n 1$root_flag --map-by ppr:1:node:PE=1 --bind-to core $x $bin $deck mesh.cells=64,64,64 mesh.length=1,1,1 output.report=out/weak-r00001.yaml $tail
env $omp mpirun -n 2$root_flag --map-by ppr:2:node:PE=1 --bind-to core $x $bin $deck mesh.cells=128,64,64 mesh.length=2,1,1 output.report=out/weak-r00002.yaml $tail
env OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun -n 4$root_flag --map-by ppr:4:node --oversubscribe --bind-to none -x OMP_NUM_THREADS -x OMP_PROC_BIND $bin $deck mesh.cells=128,128,64 mesh.length=2,2,1 output.report=out/weak-r00004.yaml $tail
END
  # Inside a Slurm job of 2 nodes x 4 tasks x 8 cores, CUDA, GPUs bound per node;
  # the batch script passes its arguments through. Rank counts: powers of two up to 8.
  SLURM_JOB_ID=42 SLURM_NTASKS=8 SLURM_TASKS_PER_NODE='4(x2)' SLURM_JOB_NUM_NODES=2 \
    SLURM_CPUS_PER_TASK=8 SLURM_SUBMIT_DIR=$root TCMINI_BACKEND=cuda TCMINI_DRY_RUN=1 \
    TCMINI_BIN=$bin TCMINI_CELLS=32,32,32 TCMINI_STEPS=3 \
    bash "$root/scripts/slurm/strong.sbatch" run.label=s >"$work/srun.txt"
  local srun="srun --cpus-per-task=8 --cpu-bind=cores --kill-on-bad-exit=1"
  local env8="env OMP_NUM_THREADS=8 OMP_PLACES=cores OMP_PROC_BIND=close"
  local args="$root/inputs/strong-gpu.in run.backend=cuda run.threads=8 run.steps=3 mesh.cells=32,32,32"
  local out="results/strong-cuda-42"
  expect_file "$work/srun.txt" <<END
$env8 ${srun/srun/srun --nodes=1 --ntasks=1 --ntasks-per-node=1} --gpus-per-node=1 $bin $args output.report=$out/strong-r00001.yaml output.path=none output.overwrite=true run.label=s
$env8 ${srun/srun/srun --nodes=1 --ntasks=2 --ntasks-per-node=2} --gpus-per-node=2 $bin $args output.report=$out/strong-r00002.yaml output.path=none output.overwrite=true run.label=s
$env8 ${srun/srun/srun --nodes=1 --ntasks=4 --ntasks-per-node=4} --gpus-per-node=4 $bin $args output.report=$out/strong-r00004.yaml output.path=none output.overwrite=true run.label=s
$env8 ${srun/srun/srun --nodes=2 --ntasks=8 --ntasks-per-node=4} --gpus-per-node=4 $bin $args output.report=$out/strong-r00008.yaml output.path=none output.overwrite=true run.label=s
END
  # GPUs bound per task: each rank sees one GPU, so tcmini must accept that.
  SLURM_JOB_ID=42 SLURM_NTASKS_PER_NODE=4 SLURM_JOB_NUM_NODES=1 TCMINI_BACKEND=cuda \
    TCMINI_GPU_BIND=task TCMINI_DRY_RUN=1 TCMINI_BIN=$bin TCMINI_OUT=o \
    "$root/scripts/sweep.sh" single >"$work/task.txt"
  grep -q -- "--ntasks=4 .*--gpus-per-task=1 .* run.gpu_sharing=true" "$work/task.txt" ||
    fail "per-task GPU binding line: $(cat "$work/task.txt")"
  # Bad parameters are refused with status 2.
  local status=0
  TCMINI_DRY_RUN=1 TCMINI_RANKS="1 0" "$root/scripts/sweep.sh" weak 2>/dev/null || status=$?
  ((status == 2)) || fail "TCMINI_RANKS='1 0' gave status $status, expected 2"
  status=0
  TCMINI_DRY_RUN=1 "$root/scripts/sweep.sh" sideways 2>/dev/null || status=$?
  ((status == 2)) || fail "an unknown mode gave status $status, expected 2"
  # Values that must be refused at once, never run (nor factored: a prime
  # rank count near 2^31 used to take the weak factoring forever).
  local bad
  for bad in "TCMINI_RANKS=2147483647" "TCMINI_RANKS=99999999999999999999" \
    "TCMINI_DRY_RUN=yes" "TCMINI_COLLECT=maybe" "TCMINI_RESULTS_FILE=2" \
    "TCMINI_SETUP=/nonexistent" "word=notanoverride"; do
    status=0
    if [[ $bad == word=* ]]; then
      TCMINI_DRY_RUN=1 timeout 20 "$root/scripts/sweep.sh" weak "${bad#word=}" \
        >/dev/null 2>"$work/bad.txt" || status=$?
    else
      env TCMINI_DRY_RUN=1 "$bad" timeout 20 "$root/scripts/sweep.sh" weak \
        >/dev/null 2>"$work/bad.txt" || status=$?
    fi
    if ((status != 2)) || [[ $(wc -l <"$work/bad.txt") != 1 ]] ||
      ! grep -q "^sweep.sh: error: .*${bad%%=*}\|^sweep.sh: error: '${bad#word=}'" "$work/bad.txt"; then
      fail "$bad: status $status, stderr '$(cat "$work/bad.txt")'"
    fi
  done
}

case_collect() {
  local samples=$here/samples
  "$python" "$root/scripts/collect.py" "$samples/weak" --csv "$work/weak.csv" --plots "$work"
  # Hand-computed: loop time t = cells * steps / (cells/s) = 0.5, 0.625, 1.0 s;
  # weak efficiency t(1)/t(N) = 1, 0.8, 0.5; speedup = efficiency * N.
  cut -d, -f1,6,8-16,43,44 "$work/weak.csv" >"$work/weak-columns.csv"
  expect_file "$work/weak-columns.csv" <<END
study,ranks,box,cells,cells_per_rank,steps,loop_s,cells_per_s,speedup,efficiency,verdict,exchange_max_s,exchange_avg_s
weak,1,4x4x4,64,64,2,0.5,256,1,1,passed,0,0
weak,2,8x4x4,128,64,2,0.625,409.6,1.6,0.8,passed,0.08,0.064
weak,4,8x8x4,256,64,2,1,512,2,0.5,passed,0.35,0.28
END
  for png in scaling-phases.png scaling-efficiency.png; do
    [[ -s $work/$png ]] || fail "no $png"
    [[ $(head -c 8 "$work/$png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
      fail "$png is not a PNG file"
  done
  # Strong: t = 1.0, 0.625 s; efficiency t(1) * 1 / (t(2) * 2) = 0.8, speedup 1.6.
  "$python" "$root/scripts/collect.py" "$samples/strong" --csv "$work/strong.csv" --no-plots
  cut -d, -f1,6,9,10,12-15 "$work/strong.csv" >"$work/strong-columns.csv"
  expect_file "$work/strong-columns.csv" <<END
study,ranks,cells,cells_per_rank,loop_s,cells_per_s,speedup,efficiency
strong,1,512,512,1,1024,1,1
strong,2,512,256,0.625,1638.4,1.6,0.8
END
  # Reports that are not the study asked for are refused.
  if "$python" "$root/scripts/collect.py" --study strong "$samples/weak" --csv "$work/x.csv" \
      --no-plots 2>/dev/null; then
    fail "the collector took weak-scaling reports as a strong-scaling study"
  fi
  # Runs of another label form a series of their own.
  "$python" "$root/scripts/collect.py" "$samples/weak" "$samples/strong/strong-r00002.yaml" \
    --study weak --csv "$work/x.csv" --no-plots >"$work/mixed.txt"
  grep -q "4 reports, weak scaling, 2 series" "$work/mixed.txt" ||
    fail "a mixed collection was not split into 2 series: $(cat "$work/mixed.txt")"
  [[ $(grep -c '^weak,strong-sample,.*,1,1,passed,' "$work/x.csv") == 1 ]] ||
    fail "the lone strong-sample run is not its own reference (efficiency 1)"
}

case_sweep() {
  local bin=${1:-$root/build/bin/tcmini}
  [[ -x $bin ]] || fail "no tcmini binary at $bin"
  env -u SLURM_JOB_ID TCMINI_BIN="$bin" TCMINI_OUT="$work/sweep" TCMINI_RANKS="1 2" \
    TCMINI_DECK="$here/tiny-weak.in" TCMINI_PYTHON="$python" TCMINI_THREADS=1 \
    "$root/scripts/sweep.sh" weak
  for name in weak-r00001 weak-r00002; do
    [[ -s $work/sweep/$name.yaml ]] || fail "no report $name.yaml"
  done
  [[ -s $work/sweep/scaling-efficiency.png ]] || fail "no efficiency plot"
  # Two rows, 64 cells per rank, boxes 4x4x4 and 8x4x4, efficiency 1 at one rank.
  cut -d, -f1,6,8,10,15,16 "$work/sweep/scaling.csv" | sed -n 2p |
    grep -qx "weak,1,4x4x4,64,1,passed" || fail "CSV row of 1 rank: $(sed -n 2p "$work/sweep/scaling.csv")"
  cut -d, -f1,6,8,10,16 "$work/sweep/scaling.csv" | sed -n 3p |
    grep -qx "weak,2,8x4x4,64,passed" || fail "CSV row of 2 ranks: $(sed -n 3p "$work/sweep/scaling.csv")"
}

case "${1:-}" in
  shellcheck) case_shellcheck ;;
  dry-run) case_dry_run ;;
  collect) case_collect ;;
  sweep) case_sweep "${2:-}" ;;
  *) fail "usage: test_scaling.sh shellcheck|dry-run|collect|sweep [TCMINI_BIN]" ;;
esac
echo "PASS: $1"
