#!/usr/bin/env bash
# run_ranks.sh: runs tcmini on the same deck at several rank counts and checks
# that every run passes its checks and that the assembled results agree.
# TC_PYTHON names a Python with h5py and numpy (default python3).
# Usage: run_ranks.sh WORKDIR TOLERANCE "RANKS" TCMINI MPIEXEC [MPI FLAGS...] -- [tcmini args...]
set -euo pipefail
workdir=$1 tolerance=$2 ranks=$3 tcmini=$4 mpiexec=$5
shift 5
mpi_flags=()
while (($#)) && [ "$1" != "--" ]; do mpi_flags+=("$1"); shift; done
(($#)) && shift
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
files=()
for n in $ranks; do
  echo "== $n ranks"
  "$mpiexec" -n "$n" "${mpi_flags[@]}" "$tcmini" "$@" output.path="run-$n.h5" \
    output.report="run-$n.yaml"
  files+=("run-$n.h5")
done
"${TC_PYTHON:-python3}" "$script_dir/compare_results.py" "$tolerance" "${files[@]}"
