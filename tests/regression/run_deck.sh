#!/usr/bin/env bash
# run_deck.sh: a shipped deck agrees with its expected outputs. Runs the deck
# as shipped (plus the given overrides, which must leave the problem as it
# is: steps, ranks, backend, checks), then compares the run's report and,
# when one is written and h5py is at hand, its results file with
# inputs/expected/<deck>.yaml through tcmini-compare: both must agree (exit 0).
# Usage: run_deck.sh WORKDIR PYTHON COMPARE TCMINI DECK EXPECTED RANKS MPIEXEC [MPI FLAGS...] -- [OVERRIDES...]
set -uo pipefail
workdir=$1 python=$2 compare=$3 tcmini=$4 deck=$5 expected=$6 ranks=$7 mpiexec=$8
shift 8
mpi_flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do mpi_flags+=("$1"); shift; done
[ $# -gt 0 ] && shift
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
name=$(basename "$deck" .in)
"$mpiexec" -n "$ranks" "${mpi_flags[@]}" "$tcmini" "$deck" output.report=run.yaml "$@" \
  > run.txt 2>&1 < /dev/null || { echo "FAIL: tcmini $name: $(tail -5 run.txt)"; exit 1; }
grep -E "^(tcmini|device|assembly loop|verdict)" run.txt
"$python" "$compare" "$expected" run.yaml || exit 1
results=$(sed -n 's/^path = "\(.*\)"$/\1/p' <("$tcmini" --print-deck "$deck" "$@" 2> /dev/null))
if [ -n "$results" ] && [ -f "$results" ]; then
  if "$python" -c "import h5py, numpy" 2> /dev/null; then
    "$python" "$compare" "$expected" "$results" || exit 1
  else
    echo "note: no h5py, so the results file '$results' is not compared"
  fi
fi
