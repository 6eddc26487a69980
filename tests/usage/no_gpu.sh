#!/usr/bin/env bash
# no_gpu.sh: asking for the CUDA backend on a machine without a GPU gives one
# clear line and exit status 2 (bad input) from both programs: "no CUDA GPU
# found" in a CUDA build (not the CUDA runtime's "driver version is
# insufficient", which misleads where no driver is installed), "not compiled
# into this build" in a build without CUDA. Skipped (77) where a GPU is usable.
# Usage: no_gpu.sh WORKDIR TCMINI BENCH DECK HAVE_CUDA(0|1) MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 bench=$3 deck=$4 have_cuda=$5 mpiexec=$6
shift 6
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "skipped: this machine has a GPU"
  exit 77
fi
expected="not compiled into this build"
[ "$have_cuda" = 1 ] && expected="no CUDA GPU found"
failures=0
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1

# check NAME STATUS STDERR_FILE: exit 2, one error line naming the problem.
check() {
  local lines
  lines=$(grep -c "error" "$3")
  if [ "$2" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "error: .*$expected" "$3"; then
    echo "FAIL $1: exit $2, expected 2 and one line with '$expected':"
    sed 's/^/    /' "$3"
    failures=$((failures + 1))
  else
    echo "ok   $1: exit 2, $(grep error "$3")"
  fi
}

"$mpiexec" -n 1 "$@" "$tcmini" "$deck" run.backend=cuda output.path=none output.report=none \
  > tcmini.out 2> tcmini.err
check "tcmini run.backend=cuda" $? tcmini.err
"$bench" --backend cuda --preset small --reps 1 --warmup 0 > bench.out 2> bench.err
check "tcmini-bench --backend cuda" $? bench.err
"$bench" --backend serial,cuda --preset small --reps 1 --warmup 0 > bench2.out 2> bench2.err
check "tcmini-bench --backend serial,cuda" $? bench2.err
[ "$failures" -eq 0 ]
