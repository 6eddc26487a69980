#!/usr/bin/env bash
# rerun_refused.sh: the shipped main deck, inputs/hex.in, keeps the default
# output.overwrite = false, as README says: run twice in one directory, the
# second run stops before any work with one line naming the file and how to
# replace it, and the first run's results and report are untouched;
# output.overwrite=true replaces them.
# Usage: rerun_refused.sh WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 hex=$3 mpiexec=$4
shift 4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
small=(mesh.cells=4,4,4 run.steps=1)

"$mpiexec" -n 2 "$@" "$tcmini" "$hex" "${small[@]}" > first.out 2>&1 || fail "first run: $(tail -3 first.out)"
before=$(md5sum tcmini.h5 tcmini.xmf tcmini-report.yaml)
"$mpiexec" -n 2 "$@" "$tcmini" "$hex" "${small[@]}" > second.out 2> second.err
status=$?
[ "$status" -ne 0 ] || fail "the second run replaced the results (exit 0)"
grep -q "^tcmini: error: .*'tcmini.*' exists; set output.overwrite = true" second.err ||
  fail "no error naming the existing file: $(cat second.err)"
[ "$(md5sum tcmini.h5 tcmini.xmf tcmini-report.yaml)" = "$before" ] || fail "the first results changed"
"$mpiexec" -n 2 "$@" "$tcmini" "$hex" "${small[@]}" output.overwrite=true > third.out 2>&1 ||
  fail "output.overwrite=true did not replace them: $(tail -3 third.out)"
[ "$failures" -eq 0 ] && echo "second run refused (exit $status), first results kept; overwrite=true replaced them"
[ "$failures" -eq 0 ]
