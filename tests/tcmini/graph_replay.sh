#!/usr/bin/env bash
# graph_replay.sh: on the CUDA backend, steps that replay a recorded CUDA
# graph of their batches (run.graph = true) give results bitwise identical to
# steps that launch each batch from the host (run.graph = false): the same
# kernels in the same order. Also: the report says the graph was recorded and
# replayed, the record phase was timed once, every second of the graph run
# is in a phase (check_phases.py). (An inverted cell found inside the graph:
# test_loop_cuda, whose per-batch flags the graph's geometry sets.) Exits 77
# (skipped) where no GPU is found.
# Usage: graph_replay.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...] -- [tcmini args...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
source "$(dirname "$0")/run_or_skip.sh" "$@"
for graph in false true; do
  run_or_skip "graph-$graph" run.graph=$graph
done
grep -q "^batches (rank 0): one CUDA graph" graph-true.log ||
  { echo "the run.graph=true run did not replay a graph:"; grep "^batches" graph-true.log; exit 1; }
grep -q "^batches (rank 0): each batch launched from the host (run.graph = false)" graph-false.log ||
  { echo "the run.graph=false run does not say so:"; grep "^batches" graph-false.log; exit 1; }
"$python" - graph-true.yaml graph-false.yaml <<'PY'
import sys, yaml
replayed, launched = (yaml.safe_load(open(path))["phases"]["record"] for path in sys.argv[1:])
assert replayed["count"] == 1 and replayed["max_s"] > 0, f"record phase with the graph: {replayed}"
assert launched["count"] == 0, f"record phase without the graph: {launched}"
PY
"$python" "$script_dir/check_phases.py" graph-true.yaml graph-true.h5
"$python" "$script_dir/../hardening/h5_identical.py" graph-false.h5 graph-true.h5
echo "graph replay: bitwise identical to host launches, record phase timed once"
