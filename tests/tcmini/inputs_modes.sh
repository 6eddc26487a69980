#!/usr/bin/env bash
# inputs_modes.sh: the fused products (run.inputs = fused: every kernel's
# inputs built on chip, the elasticity trio in one product, the scalar
# problem's six in another) give the materialised path's results to
# rounding: every /cells, /nodes and /element_matrices dataset within TOLERANCE
# (compare_results.py; both runs write their element matrices), and both
# runs pass their checks; the fused run names FORM as the form of the fused
# product that ran (host, pair, block, warp or fma), in its summary and its
# report, and the materialised run names none. With run.backend=cuda among
# the arguments it exits 77 (skipped) where no GPU is found.
# Usage: inputs_modes.sh WORKDIR TOLERANCE FORM TCMINI DECK MPIEXEC [MPI FLAGS...] -- [tcmini args...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
tolerance=$2 form=$3
source "$(dirname "$0")/run_or_skip.sh" "$1" "${@:4}"
for inputs in materialised fused; do
  run_or_skip "$inputs" run.inputs=$inputs output.element_matrices=true
  grep -q "inputs $inputs" "$inputs.log" || { echo "$inputs.log does not name run.inputs = $inputs"; exit 1; }
done
for phase in fused_diffusion fused_elasticity; do
  grep -q "^$phase " fused.log || { echo "the fused run reports no $phase phase"; exit 1; }
done
grep -q "^fused elasticity (rank 0): $form:" fused.log ||
  { echo "the fused run does not name the $form form: $(grep -m1 '^fused elasticity' fused.log)"; exit 1; }
grep -q "^  fused_form: \"$form:" fused.yaml || { echo "fused.yaml does not name the $form form"; exit 1; }
if grep -q "^fused elasticity\|fused_form" materialised.log materialised.yaml; then
  echo "the materialised run names a fused form"
  exit 1
fi
"$python" -c "import h5py, sys; sys.exit(0 if 'element_matrices/elasticity_stiffness' in h5py.File('fused.h5', 'r') else 1)" ||
  { echo "fused.h5 holds no elasticity element matrices"; exit 1; }
"$python" "$script_dir/compare_results.py" "$tolerance" materialised.h5 fused.h5
