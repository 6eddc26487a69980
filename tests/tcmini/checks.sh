#!/usr/bin/env bash
# checks.sh: the correctness checks pass for correct kernels and fail for a
# wrong one, in float as in double.
#   pass SIZE PRECISION [RANKS]: a Q2 deck (5-point rule) of SIZE^3 cells must
#     pass every check (status 0). Float Q2 used to fail three checks from
#     16^3 cells, whose rounding grew with the cell count.
#   wrong SIZE PRECISION: for each of the nine contractions in turn, a
#     deliberately wrong kernel (TCMINI_FAULT=wrong_<Kernel>: one entry of
#     every cell's output off by a thousandth of the cell's largest) must
#     fail the run's checks (status 3, "checks failed").
# Usage: checks.sh MODE SIZE PRECISION RANKS WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
mode=$1 size=$2 precision=$3 ranks=$4 workdir=$5 tcmini=$6 hex=$7 mpiexec=$8
shift 8
mpi_flags=("$@")
mkdir -p "$workdir" && cd "$workdir" || exit 1
run() { # run [VAR=value]: tcmini on the deck; sets status
  "$mpiexec" -n "$ranks" "${mpi_flags[@]}" ${1:+-x "$1"} "$tcmini" "$hex" element.order=2 \
    element.quadrature=5 mesh.cells="$size,$size,$size" run.precision="$precision" \
    run.steps=1 verify.checks=on output.path=none output.report=none \
    < /dev/null > stdout.txt 2> stderr.txt
  status=$?
}
failures=0
if [ "$mode" = pass ]; then
  run
  if [ "$status" -ne 0 ]; then
    failures=1
    echo "FAIL Q2 $size^3 $precision on $ranks ranks: status $status"
    grep -a 'FAIL\|error' stdout.txt stderr.txt | head -10
  else
    echo "ok   Q2 $size^3 $precision on $ranks ranks: $(grep -ac PASS stdout.txt) checks passed"
  fi
else
  for kernel in FieldFieldScalar FieldFieldVector FieldFieldTensor DataFieldScalar \
    DataFieldVector DataFieldTensor DataDataScalar DataDataVector DataDataTensor; do
    TCMINI_FAULT=wrong_$kernel run TCMINI_FAULT
    caught=$(grep -a ' FAIL ' stdout.txt | sed 's/  *FAIL.*//' | paste -sd ';' -)
    if [ "$status" -ne 3 ] || ! grep -aq 'checks failed' stderr.txt; then
      failures=$((failures + 1))
      echo "FAIL wrong $kernel, Q2 $size^3 $precision: status $status, not caught"
    else
      echo "ok   wrong $kernel, Q2 $size^3 $precision: caught by: $caught"
    fi
  done
fi
exit "$failures"
