#!/usr/bin/env bash
# determinism.sh: the same deck run twice at the same rank count must give
# bitwise-identical datasets under /cells, /nodes and /mesh (h5_identical.py).
# Usage: determinism.sh WORKDIR "RANK COUNTS" TCMINI MPIEXEC [MPI FLAGS...] -- [tcmini args...]
set -euo pipefail
workdir=$1 ranks=$2 tcmini=$3 mpiexec=$4
shift 4
mpi_flags=()
while (($#)) && [ "$1" != "--" ]; do mpi_flags+=("$1"); shift; done
(($#)) && shift
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
for n in $ranks; do
  for run in a b; do
    "$mpiexec" -n "$n" "${mpi_flags[@]}" "$tcmini" "$@" output.path="run-$n-$run.h5" \
      output.report=none > "run-$n-$run.txt"
  done
  "${TC_PYTHON:-python3}" "$script_dir/h5_identical.py" "run-$n-a.h5" "run-$n-b.h5"
done
