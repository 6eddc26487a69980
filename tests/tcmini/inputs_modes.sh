#!/usr/bin/env bash
# inputs_modes.sh: the fused elasticity (run.inputs = fused: the trio's inputs
# built on chip) gives the materialised path's results to rounding: every
# /cells, /nodes and /element_matrices dataset within TOLERANCE
# (compare_results.py; both runs write their element matrices), and both
# runs pass their checks. With run.backend=cuda among the arguments it exits
# 77 (skipped) where no GPU is found.
# Usage: inputs_modes.sh WORKDIR TOLERANCE TCMINI DECK MPIEXEC [MPI FLAGS...] -- [tcmini args...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
tolerance=$2
source "$(dirname "$0")/run_or_skip.sh" "$1" "${@:3}"
for inputs in materialised fused; do
  run_or_skip "$inputs" run.inputs=$inputs output.element_matrices=true
  grep -q "inputs $inputs" "$inputs.log" || { echo "$inputs.log does not name run.inputs = $inputs"; exit 1; }
done
grep -q "fused_elasticity" fused.log || { echo "the fused run reports no fused_elasticity phase"; exit 1; }
"$python" -c "import h5py, sys; sys.exit(0 if 'element_matrices/elasticity_stiffness' in h5py.File('fused.h5', 'r') else 1)" ||
  { echo "fused.h5 holds no elasticity element matrices"; exit 1; }
"$python" "$script_dir/compare_results.py" "$tolerance" materialised.h5 fused.h5
