#!/usr/bin/env bash
# tests/slurm/test_slurm.sh: submits a batch script of scripts/slurm/, unchanged,
# to the throw-away cluster of slurm_cluster.sh and checks what the job did.
# usage: test_slurm.sh CASE LAUNCHER CLUSTER_DIR WORK_DIR TCMINI_BIN
#   CASE      run:  run.sbatch, 2 ranks, a 6x5x4 box of inputs/hex.in, one step
#             weak: weak.sbatch, its default rank counts in a 2-task allocation
#                   (1 and 2), 4x4x4 cells per rank (tests/scaling/tiny-weak.in)
#             noreport: run.sbatch running `true` instead of tcmini: the launcher
#                   succeeds but no report is written, so the job must FAIL
#   LAUNCHER  srun (TCMINI_SRUN_FLAGS=--mpi=pmix) | mpirun (TCMINI_LAUNCHER=mpirun) |
#             srun-default: srun with the cluster's default MPI plugin, none, with
#             which MPI ranks cannot start: the job must FAIL, and its output say
#             what to set (the sweep's warning) and name the failed run
#   CLUSTER_DIR  the cluster (slurm_cluster.sh up CLUSTER_DIR)
#   WORK_DIR  emptied, then the submit directory: job output, reports, results
# Checks: the job ends COMPLETED with exit code 0:0 (scontrol show job: the
# cluster keeps no accounting, so there is no sacct), every launch line used the
# launcher asked for, each run's report and HDF5 file (check_outputs.py), and
# for weak the collector's CSV and PNGs, the job's own and a second collection.
# Environment: TC_PYTHON (PyYAML, h5py, numpy), TCMINI_PYTHON (PyYAML,
# matplotlib) [both /usr/bin/python3], TCMINI_SLURM_JOB_WAIT seconds [150].
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

(($# == 5)) || fail "usage: test_slurm.sh run|weak|noreport srun|srun-default|mpirun CLUSTER_DIR WORK_DIR TCMINI_BIN"
case=$1 launcher=$2 cluster=$3 work=$4 bin=$5
[[ -r $cluster/slurm.env ]] || fail "no cluster in '$cluster' (the slurm_cluster_up test brings it up)"
# shellcheck source=/dev/null
source "$cluster/slurm.env"
[[ -x $bin ]] || fail "no tcmini binary at '$bin'"
python=${TC_PYTHON:-/usr/bin/python3}
collect_python=${TCMINI_PYTHON:-/usr/bin/python3}

launch=(TCMINI_LAUNCHER="${launcher%-default}")
# For a job that must fail: grep patterns its output must match.
expected_failure=()
case "$launcher" in
  srun)
    srun --mpi=list 2>&1 | grep -qw pmix || fail "srun --mpi=list shows no pmix: $(srun --mpi=list 2>&1)"
    # The test cluster's MpiDefault is none, as on sites without a default.
    launch+=(TCMINI_SRUN_FLAGS=--mpi=pmix)
    ;;
  srun-default)
    expected_failure=("MpiDefault=none.*set TCMINI_SRUN_FLAGS=--mpi=pmix" "run single-r00002 failed")
    ;;
  mpirun) ;;
  *) fail "LAUNCHER must be srun, srun-default or mpirun, got '$launcher'" ;;
esac
case "$case" in
  run | noreport)
    script=run.sbatch
    settings=(TCMINI_CELLS="6 5 4" TCMINI_STEPS=1)
    words=(run.label=slurm-single)
    if [[ $case == noreport ]]; then
      bin=$(type -P true)
      expected_failure+=("run single-r00002 wrote no report, though its launcher returned 0")
    fi
    ;;
  weak)
    script=weak.sbatch
    settings=(TCMINI_DECK="$root/tests/scaling/tiny-weak.in" TCMINI_PYTHON="$collect_python")
    words=()
    ;;
  *) fail "CASE must be run, weak or noreport, got '$case'" ;;
esac

rm -rf "$work"
mkdir -p "$work"
cd "$work"
out=$work/out
# The job is submitted from WORK_DIR, so the script finds the repository by
# TCMINI_ROOT; sbatch passes the environment, TCMINI_* included, to the job.
job=$(env TCMINI_ROOT="$root" TCMINI_BIN="$bin" TCMINI_OUT="$out" TCMINI_RESULTS_FILE=1 \
  "${launch[@]}" "${settings[@]}" sbatch --parsable --ntasks=2 "$root/scripts/slurm/$script" \
  "${words[@]}") || fail "sbatch refused scripts/slurm/$script (its message is above)"
job=${job%%;*}
echo "submitted scripts/slurm/$script as job $job ($launcher)"

# A job still queued or running when this test ends (failure, timeout) is cancelled.
cancel_job() {
  timeout 10 scancel "$job" 2>/dev/null || true
}
trap cancel_job EXIT

# A field of the job (a controller that does not answer: empty after 10 s).
job_field() {
  timeout 10 scontrol -o show job "$job" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p"
}

limit=${TCMINI_SLURM_JOB_WAIT:-150}
state=""
deadline=$((SECONDS + limit))
while ((SECONDS < deadline)); do
  state=$(job_field JobState)
  case "$state" in
    PENDING | CONFIGURING | RUNNING | COMPLETING | "") sleep 0.2 ;;
    *) break ;;
  esac
done
output=$(job_field StdOut)
case "$state" in
  PENDING | CONFIGURING | RUNNING | COMPLETING | "")
    fail "job $job is still '${state:-unknown to scontrol}' after $limit s (TCMINI_SLURM_JOB_WAIT)" ;;
esac
# After the job: fails showing the job's output and the slurmd's errors.
fail_job() {
  {
    echo "---- job output ($output):"
    cat "$output" 2>/dev/null || echo "(none)"
    echo "---- errors in the test cluster's slurmd.log:"
    grep -i error "$TCMINI_SLURM_CLUSTER/log/slurmd.log" 2>/dev/null | tail -n 10 || true
    echo "----"
  } >&2
  fail "$@"
}
exit_code=$(job_field ExitCode)
echo "job $job: JobState=${state:-unknown} ExitCode=$exit_code (scontrol show job)"
[[ $output == "$work"/tcmini-* && -s $output ]] ||
  fail_job "job output '$output' is not the script's tcmini-*.out in the submit directory"
if ((${#expected_failure[@]})); then
  [[ $state == FAILED && $exit_code == 1:0 ]] ||
    fail_job "job $job ended $state, exit code $exit_code; expected FAILED, 1:0 (a run failed)"
  for pattern in "${expected_failure[@]}"; do
    grep -q -- "$pattern" "$output" || fail_job "the job output does not say '$pattern'"
  done
  trap - EXIT
  echo "PASS: scripts/slurm/$script ($case, $launcher) failed as it must, saying why"
  exit 0
fi
if [[ $state != COMPLETED ]]; then
  fail_job "job $job (scripts/slurm/$script) ended $state, exit code $exit_code, reason $(job_field Reason)"
fi
[[ $exit_code == 0:0 ]] || fail_job "job $job ended with exit code $exit_code"

# Every launch line used the launcher asked for.
[[ -s $out/commands.txt ]] || fail_job "no $out/commands.txt"
while read -r line; do
  if [[ $launcher == srun ]]; then
    [[ $line == *" srun "*" --mpi=pmix "* ]] || fail_job "not an srun --mpi=pmix launch: $line"
  else
    [[ $line == *" mpirun -n "* && $line != *" srun "* ]] || fail_job "not an mpirun launch: $line"
  fi
done <"$out/commands.txt"

if [[ $case == run ]]; then
  "$python" "$here/check_outputs.py" run "$out/single-r00002" 2 6,5,4 1,1,1 ||
    fail_job "the run's report or results file is wrong"
else
  "$python" "$here/check_outputs.py" run "$out/weak-r00001" 1 4,4,4 1,1,1 ||
    fail_job "the 1-rank run's report or results file is wrong"
  "$python" "$here/check_outputs.py" run "$out/weak-r00002" 2 8,4,4 2,1,1 ||
    fail_job "the 2-rank run's report or results file is wrong"
  "$python" "$here/check_outputs.py" csv "$out/scaling.csv" 1 2 ||
    fail_job "the CSV the job collected is wrong"
  "$collect_python" "$root/scripts/collect.py" --study weak --csv "$work/collected.csv" \
    --plots "$work/plots" "$out" || fail_job "scripts/collect.py failed on the job's reports"
  "$python" "$here/check_outputs.py" csv "$work/collected.csv" 1 2 ||
    fail_job "the collected CSV is wrong"
  for png in "$out"/scaling-{phases,efficiency}.png "$work"/plots/scaling-{phases,efficiency}.png; do
    [[ $(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
      fail_job "$png is missing or not a PNG file"
  done
fi
trap - EXIT
echo "PASS: scripts/slurm/$script with $launcher"
