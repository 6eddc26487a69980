#!/usr/bin/env bash
# perturbed.sh: tcmini-compare fails (exit 1), naming the quantity, on results
# that differ from the expected outputs, and refuses (exit 2) a run of another
# problem. A quick run agrees first; then copies of its report and results
# file are perturbed one quantity at a time.
# Usage: perturbed.sh WORKDIR PYTHON COMPARE TCMINI QUICK_DECK EXPECTED MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 python=$2 compare=$3 tcmini=$4 deck=$5 expected=$6 mpiexec=$7
shift 7
failures=0
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
"$mpiexec" -n 1 "$@" "$tcmini" "$deck" output.path=run.h5 output.report=run.yaml run.steps=1 \
  > run.txt 2>&1 < /dev/null || { echo "FAIL: the quick run: $(tail -5 run.txt)"; exit 1; }

# expect NAME STATUS PATTERN FILE: tcmini-compare on FILE exits STATUS and says PATTERN.
expect() {
  "$python" "$compare" "$expected" "$4" > "$1.out" 2>&1
  local status=$?
  if [ "$status" -ne "$2" ] || ! grep -q -- "$3" "$1.out"; then
    echo "FAIL $1: exit $status, expected $2 and '$3':"
    sed 's/^/    /' "$1.out"
    failures=$((failures + 1))
  else
    echo "ok   $1: exit $status: $(grep -m1 -- "$3" "$1.out")"
  fi
}

# perturb_yaml NAME SED_EXPRESSION: a copy of the report with one edit.
perturb_yaml() {
  sed "$2" run.yaml > "$1.yaml"
  cmp -s run.yaml "$1.yaml" && { echo "FAIL $1: the edit changed nothing"; failures=$((failures + 1)); }
}

expect unperturbed 0 "agrees with" run.yaml
# A field's sum off by a relative 1e-4 (the last digits of "nodes/load" sum: 0.99999...).
perturb_yaml load_sum '/name: "nodes\/load"/s/sum: 0\.99999/sum: 0.99989/'
expect load_sum 1 "DIFFERS nodes/load sum" load_sum.yaml
# A norm, and a maximum.
perturb_yaml force_norm '/name: "nodes\/internal_force"/s/norm: 0\.1/norm: 0.2/'
expect force_norm 1 "DIFFERS nodes/internal_force norm" force_norm.yaml
perturb_yaml volume_max '/name: "cells\/volume"/s/max: 0\.00/max: 0.10/'
expect volume_max 1 "DIFFERS cells/volume max" volume_max.yaml
# A check's value, and a check that failed in the run.
perturb_yaml check_value '/name: "mass matrix sums to the domain volume"/s/value: [0-9.e+-]*/value: 1.5/'
expect check_value 1 "DIFFERS check 'mass matrix sums to the domain volume' value" check_value.yaml
perturb_yaml check_failed '/name: "integral of u^2 (DataDataScalar) is exact"/s/passed: true/passed: false/'
expect check_failed 1 "DIFFERS check 'integral of u^2 (DataDataScalar) is exact': failed in the run" check_failed.yaml
# A field missing from the run.
perturb_yaml missing '/name: "nodes\/flux_load"/d'
expect missing 1 "DIFFERS nodes/flux_load: not in the run" missing.yaml
# Another problem: refused, not compared.
perturb_yaml other_problem 's/^  cells = 8 8 8$/  cells = 8 8 9/'
expect other_problem 2 "another problem" other_problem.yaml
# Files that are not what they should be: one error line, exit 2, no traceback.
perturb_yaml no_name '/name: "mass matrix sums to the domain volume"/s/{name: /{label: /'
expect no_name 2 "is not a well-formed tcmini file (KeyError: 'name')" no_name.yaml
perturb_yaml value_text '/name: "mass matrix sums to the domain volume"/s/value: [0-9.e+-]*/value: abc/'
expect value_text 2 "is not a well-formed tcmini file (ValueError" value_text.yaml
head -c 64 /dev/urandom | tr -d '\n' | sed 's/^/\xff/' > binary.yaml
printf '\377\376\375' >> binary.yaml
expect binary 2 "'binary.yaml' is not a text file: expected YAML" binary.yaml
mkfifo fifo.yaml
expect fifo 2 "'fifo.yaml' is not a regular file" fifo.yaml
for name in no_name value_text binary fifo; do
  if grep -q Traceback "$name.out"; then echo "FAIL $name: a traceback"; failures=$((failures + 1)); fi
done

if "$python" -c "import h5py, numpy" 2> /dev/null; then
  expect unperturbed_h5 0 "agrees with" run.h5
  cp run.h5 force.h5
  "$python" -c "
import h5py
with h5py.File('force.h5', 'r+') as f:
    f['nodes/internal_force'][0, 0] += 1e-3
" || failures=$((failures + 1))
  expect force_h5 1 "DIFFERS nodes/internal_force" force.h5
else
  echo "note: no h5py, so no results file is perturbed"
fi
echo "$failures failed"
[ "$failures" -eq 0 ]
