#!/usr/bin/env bash
# run_or_skip.sh: sourced by the run comparisons (graph_replay.sh,
# in_flight.sh, inputs_modes.sh) with the arguments WORKDIR TCMINI DECK
# MPIEXEC [MPI FLAGS...] -- [tcmini args...]. Makes WORKDIR afresh and enters
# it, sets script_dir (the calling script's folder) and python (TC_PYTHON,
# default python3), and defines run_or_skip NAME [more tcmini args...]:
# tcmini on 2 ranks writing NAME.h5, NAME.yaml and NAME.log; a failed run
# prints its log and exits 1, or exits 77 (skipped) where the run asked for a
# CUDA GPU and none is found.
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4
shift 4
mpi_flags=()
while (($#)) && [ "$1" != "--" ]; do mpi_flags+=("$1"); shift; done
(($#)) && shift
tcmini_args=("$@")
script_dir=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
python=${TC_PYTHON:-python3}
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"

run_or_skip() {
  local name=$1
  shift
  if ! "$mpiexec" -n 2 "${mpi_flags[@]}" "$tcmini" "$deck" "${tcmini_args[@]}" "$@" \
    output.path="$name.h5" output.report="$name.yaml" >"$name.log" 2>&1; then
    if grep -qi "no CUDA device\|no CUDA GPU" "$name.log"; then
      echo "skipped: $(grep -m1 -i 'no CUDA' "$name.log")"
      exit 77
    fi
    cat "$name.log"
    exit 1
  fi
}
