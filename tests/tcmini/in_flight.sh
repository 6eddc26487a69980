#!/usr/bin/env bash
# in_flight.sh: on the CUDA backend, batches in flight (run.in_flight = 3:
# batch b on stream b % 3, their gathers kept in batch order) give results
# bitwise identical to one batch at a time, launched from the host or
# replayed as a CUDA graph; the report says how many were in flight, the
# batches phase timed them and every second of the run is in a phase
# (check_phases.py). Exits 77 (skipped) where no GPU is found.
# Usage: in_flight.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...] -- [tcmini args...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
source "$(dirname "$0")/run_or_skip.sh" "$@"
for run in "one 1 false" "three 3 false" "graph 3 true"; do
  read -r name lanes graph <<<"$run"
  run_or_skip "$name" run.in_flight="$lanes" run.graph="$graph"
done
for name in three graph; do
  grep -q "^batches (rank 0): .*; 3 batches in flight (run.in_flight)" "$name.log" ||
    { echo "the $name run does not say 3 batches were in flight:"; grep "^batches" "$name.log"; exit 1; }
done
grep -q "^batches (rank 0): one CUDA graph" graph.log ||
  { echo "the run.graph=true run did not replay a graph:"; grep "^batches" graph.log; exit 1; }
"$python" - one.yaml three.yaml <<'PY'
import sys, yaml
one, three = (yaml.safe_load(open(path))["phases"] for path in sys.argv[1:])
assert one["batches"]["count"] == 0 and one["geometry"]["count"] > 0, f"one lane: {one}"
assert three["batches"]["count"] > 0 and three["batches"]["max_s"] > 0, f"three: {three['batches']}"
assert three["geometry"]["count"] == 0 and three["basis"]["count"] == 0, f"three: {three}"
PY
for name in three graph; do
  "$python" "$script_dir/check_phases.py" "$name.yaml" "$name.h5"
  "$python" "$script_dir/../hardening/h5_identical.py" one.h5 "$name.h5"
done
echo "batches in flight: bitwise identical to one at a time, with and without a graph"
