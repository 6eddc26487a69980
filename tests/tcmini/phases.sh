#!/usr/bin/env bash
# phases.sh: small runs at 1 and 2 ranks whose phases must add up to their
# total, whose results file must hold the final phase times and whose report
# must hold the loop's roofline (check_phases.py). Usage: phases.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...]
# TC_PYTHON names a Python with h5py and yaml (default python3).
set -euo pipefail
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4
shift 4
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
status=0
for n in 1 2; do
  "$mpiexec" -n "$n" "$@" "$tcmini" "$deck" mesh.cells=6,5,4 run.steps=2 element.quadrature=3 \
    output.path="run-$n.h5" output.report="run-$n.yaml" > "run-$n.log"
  "${TC_PYTHON:-python3}" "$script_dir/check_phases.py" "run-$n.yaml" "run-$n.h5" || status=1
done
exit $status
