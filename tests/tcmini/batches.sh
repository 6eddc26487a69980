#!/usr/bin/env bash
# batches.sh: the assembled results must not depend on how the loop cuts the
# cells into batches (the gather sums each node's cells in ascending order
# across batches): one batch and batches of 7 cells give bitwise the same
# datasets. On the CPU backends run.in_flight asks for nothing: with 4 asked
# the run says it ran one batch at a time, times each phase, and gives the
# same datasets. Usage: batches.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4
shift 4
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
for batch in 0 7; do
  "$mpiexec" -n 2 "$@" "$tcmini" "$deck" mesh.cells=6,5,4 run.steps=1 run.batch_cells=$batch \
    output.path="batch-$batch.h5" output.report="batch-$batch.yaml"
done
"$mpiexec" -n 2 "$@" "$tcmini" "$deck" mesh.cells=6,5,4 run.steps=1 run.batch_cells=7 \
  run.in_flight=4 output.path=flight.h5 output.report=flight.yaml >flight.log 2>&1 ||
  { cat flight.log; exit 1; }
grep -q "^batches (rank 0): .*; 1 batch in flight (CPU backends run one batch at a time)$" \
  flight.log || { echo "run.in_flight=4 on a CPU backend:"; grep "^batches" flight.log; exit 1; }
"${TC_PYTHON:-python3}" - flight.yaml <<'PY'
import sys, yaml
phases = yaml.safe_load(open(sys.argv[1]))["phases"]
assert phases["batches"]["count"] == 0 and phases["geometry"]["count"] > 0, phases
PY
"${TC_PYTHON:-python3}" "$script_dir/compare_results.py" 0 batch-0.h5 batch-7.h5
"${TC_PYTHON:-python3}" "$script_dir/compare_results.py" 0 batch-7.h5 flight.h5
