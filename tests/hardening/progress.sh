#!/usr/bin/env bash
# progress.sh: the progress line ("tcmini: step k of n") never lands in
# redirected output. Under mpirun a rank's stdout looks like a terminal even
# when mpirun's output goes to a file; with run.progress = auto (the
# default) no line may appear in stdout or stderr there, and with
# run.progress = on it appears on stderr only. The run is made long enough
# (doubling the steps) for run.progress = on to draw the line, which it
# does after two seconds of steps.
# Usage: progress.sh WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 hex=$3 mpiexec=$4
shift 4
mpi_flags=("$@")
mkdir -p "$workdir" && cd "$workdir" || exit 1
run() { # run PROGRESS STEPS: tcmini under mpirun, stdout and stderr to files
  timeout -k 5 120 "$mpiexec" -n 1 "${mpi_flags[@]}" "$tcmini" "$hex" mesh.cells=16,16,16 \
    run.steps="$2" run.progress="$1" verify.checks=off output.path=none output.report=none \
    < /dev/null > stdout.txt 2> stderr.txt
}
steps=8
until run on "$steps" && grep -aq 'tcmini: step [0-9]* of' stderr.txt; do
  [ "$steps" -lt 512 ] || { echo "FAIL: run.progress = on never drew the line"; exit 1; }
  steps=$((steps * 2))
done
if grep -aq 'step [0-9]* of' stdout.txt; then
  echo "FAIL: run.progress = on wrote the line into stdout"; exit 1
fi
echo "ok   run.progress = on, $steps steps: the line is on stderr only"
run auto "$steps" || { echo "FAIL: the run failed"; cat stderr.txt; exit 1; }
if grep -aq 'step [0-9]* of' stdout.txt stderr.txt; then
  echo "FAIL: run.progress = auto under mpirun drew the line into redirected output"; exit 1
fi
echo "ok   run.progress = auto under mpirun, $steps steps: no line in stdout or stderr"
