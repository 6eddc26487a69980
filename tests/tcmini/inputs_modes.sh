#!/usr/bin/env bash
# inputs_modes.sh: the fused elasticity (run.inputs = fused: the trio's inputs
# built on chip) gives the materialised path's results to rounding: every
# /cells and /nodes dataset within TOLERANCE (compare_results.py), and both
# runs pass their checks. With run.backend=cuda among the arguments it exits
# 77 (skipped) where no GPU is found.
# Usage: inputs_modes.sh WORKDIR TOLERANCE TCMINI DECK MPIEXEC [MPI FLAGS...] -- [tcmini args...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
workdir=$1 tolerance=$2 tcmini=$3 deck=$4 mpiexec=$5
shift 5
mpi_flags=()
while (($#)) && [ "$1" != "--" ]; do mpi_flags+=("$1"); shift; done
(($#)) && shift
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
for inputs in materialised fused; do
  if ! "$mpiexec" -n 2 "${mpi_flags[@]}" "$tcmini" "$deck" "$@" run.inputs=$inputs \
    output.path="$inputs.h5" output.report="$inputs.yaml" >"$inputs.log" 2>&1; then
    if grep -qi "no CUDA device\|no CUDA GPU" "$inputs.log"; then
      echo "skipped: $(grep -m1 -i 'no CUDA' "$inputs.log")"
      exit 77
    fi
    cat "$inputs.log"
    exit 1
  fi
  grep -q "inputs $inputs" "$inputs.log" || { echo "$inputs.log does not name run.inputs = $inputs"; exit 1; }
done
grep -q "fused_elasticity" fused.log || { echo "the fused run reports no fused_elasticity phase"; exit 1; }
"${TC_PYTHON:-python3}" "$script_dir/compare_results.py" "$tolerance" materialised.h5 fused.h5
