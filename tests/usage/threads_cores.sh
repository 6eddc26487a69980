#!/usr/bin/env bash
# threads_cores.sh: a rank with more OpenMP threads than the cores it may run
# on (mpirun binds it to one core) is warned about, once, and the report
# records the cores per rank and the warning; a rank bound to nothing gets no
# warning. Open MPI's mpirun (--bind-to).
# Usage: threads_cores.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4
shift 4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
common=(output.path=none run.backend=openmp run.steps=1)

"$mpiexec" -n 1 --bind-to core "$@" "$tcmini" "$deck" "${common[@]}" run.threads=2 \
  output.report=bound.yaml > bound.out 2> bound.err || fail "the bound run failed: $(cat bound.err)"
[ "$(grep -c '^tcmini: warning: 2 OpenMP threads per rank, but rank 0 may run on 1 core only' bound.err)" = 1 ] ||
  fail "no single warning on stderr: $(cat bound.err)"
grep -q '^  cores_per_rank: {min: 1, max: 1}$' bound.yaml || fail "bound.yaml has no cores_per_rank of 1"
grep -q '^  warnings: \["2 OpenMP threads per rank' bound.yaml || fail "bound.yaml has no warning"
grep -q 'OpenMP, 2 threads on 1 core' bound.out || fail "the banner does not say 2 threads on 1 core"

"$mpiexec" -n 1 --bind-to none "$@" "$tcmini" "$deck" "${common[@]}" run.threads=1 \
  output.report=free.yaml > free.out 2> free.err || fail "the unbound run failed: $(cat free.err)"
! grep -q "^tcmini: warning: .*OpenMP threads" free.err || fail "a warning without a reason: $(cat free.err)"
! grep -q "^  warnings:" free.yaml || fail "free.yaml records a warning without a reason"
grep -q '^  cores_per_rank: {min: [1-9][0-9]*, max: [1-9][0-9]*}$' free.yaml || fail "free.yaml has no cores_per_rank"

[ "$failures" -eq 0 ] && echo "threads beyond a rank's cores warned about and recorded"
[ "$failures" -eq 0 ]
