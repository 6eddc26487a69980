#!/usr/bin/env bash
# tuning.sh: a tuning file from tcmini-bench --tune (the deck's shapes, on the
# OpenMP backend) steers the mini-app's AUTO: every kernel's variant comes from
# the file, the report says so and the checks pass. A tuning file that cannot
# be used (missing, a deck instead, another device or backend, an unknown
# variant or one the backend does not run) stops the run at 1 and 2 ranks
# with exit 2, one error line and no file written; with
# run.tuning_on_error = rules it is one warning and the built-in rules.
# Usage: tuning.sh WORKDIR TCMINI TCMINI_BENCH DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 bench=$3 deck=$4 mpiexec=$5
shift 5
mpi=("$@")
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
small=("mesh.cells=4,3,3" run.steps=1 run.backend=openmp run.threads=1)

# The tuning file of this machine for the deck's shapes.
if ! "$bench" --tune tuned.txt --deck "$deck" --backend openmp --threads 1 --memory 2 \
    --reps 1 --warmup 0 > tune.log 2>&1; then
  cat tune.log
  echo "FAIL: tcmini-bench --tune"
  exit 1
fi
entries=$(grep -c '^kernel=' tuned.txt)
[ "$entries" -eq 9 ] || fail "the tuning file has $entries entries, not one per kernel (9)"

# AUTO takes every kernel's variant from it.
for ranks in 1 2; do
  "$mpiexec" -n "$ranks" "${mpi[@]}" "$tcmini" "$deck" "${small[@]}" run.tuning=tuned.txt \
    output.path=none output.report="tuned-$ranks.yaml" > "tuned-$ranks.txt" 2>&1
  status=$?
  tuned=$(grep -cE '^    [A-Za-z]+: "tuning"$' "tuned-$ranks.yaml" 2>/dev/null)
  if [ $status -ne 0 ] || [ "$tuned" != 9 ] ||
     ! grep -q '^  tuning_used: true$' "tuned-$ranks.yaml" ||
     ! grep -q '^tuning file: tuned.txt$' "tuned-$ranks.txt" ||
     ! grep -q '^verdict: passed$' "tuned-$ranks.txt"; then
    cat "tuned-$ranks.txt"
    fail "$ranks rank(s) with the tuning file: exit $status, $tuned kernels chosen by it"
  fi
done

# Files that cannot be used.
printf 'tcmini-tuning 1\nbackend openmp\n' > no_device_line.txt
sed 's/^device .*/device No Such Processor 9000/' tuned.txt > other_device.txt
sed 's/^backend openmp/backend cuda/' tuned.txt > other_backend.txt
sed '0,/variant=[a-z-]*/s//variant=tilling/' tuned.txt > unknown_variant.txt
sed '0,/^kernel=FieldField\([^ ]*\) \(.*\) variant=[a-z-]*/s//kernel=FieldField\1 \2 variant=tiling/' \
  tuned.txt > unrun_variant.txt
cases=(
  "missing.txt|cannot open tuning file 'missing.txt': No such file or directory"
  "$deck|not a tcmini tuning file"
  "no_device_line.txt|no_device_line.txt: no 'device NAME' line"
  "other_device.txt|other_device.txt:[0-9]+: the file was tuned on 'No Such Processor 9000'"
  "other_backend.txt|the file tunes the cuda backend, and this run uses the openmp backend"
  "unknown_variant.txt|unknown_variant.txt:[0-9]+: unknown variant 'tilling'"
  "unrun_variant.txt|the openmp backend does not run variant 'tiling'"
)
for case in "${cases[@]}"; do
  file=${case%%|*} expected=${case#*|}
  for ranks in 1 2; do
    rm -f out.h5 out.xmf out.yaml
    "$mpiexec" -n "$ranks" "${mpi[@]}" "$tcmini" "$deck" "${small[@]}" run.tuning="$file" \
      output.path=out.h5 output.report=out.yaml > bad.out 2> bad.err
    status=$?
    errors=$(grep -c 'tcmini: error' bad.err)
    if [ $status -ne 2 ] || [ "$errors" -ne 1 ] || ! grep -qE "tcmini: error: .*$expected" bad.err ||
       [ -e out.h5 ] || [ -e out.xmf ] || [ -e out.yaml ]; then
      cat bad.err
      fail "$file at $ranks rank(s): exit $status, $errors error line(s); expected exit 2, '$expected', no file"
    fi
  done
done

# run.tuning_on_error = rules: one warning, the rules, and a passed run.
for ranks in 1 2; do
  "$mpiexec" -n "$ranks" "${mpi[@]}" "$tcmini" "$deck" "${small[@]}" run.tuning=other_device.txt \
    run.tuning_on_error=rules output.path=none output.report="rules-$ranks.yaml" \
    > "rules-$ranks.txt" 2> "rules-$ranks.err"
  status=$?
  warnings=$(grep -c 'tcmini: warning: ' "rules-$ranks.err")
  rules=$(grep -cE '^    [A-Za-z]+: "rule"$' "rules-$ranks.yaml" 2>/dev/null)
  if [ $status -ne 0 ] || [ "$warnings" -ne 1 ] || [ "$rules" != 9 ] ||
     ! grep -q "AUTO uses the built-in rules" "rules-$ranks.err" ||
     ! grep -q '^  tuning_used: false$' "rules-$ranks.yaml" ||
     ! grep -q '(not used: the built-in rules apply)' "rules-$ranks.txt"; then
    cat "rules-$ranks.err" "rules-$ranks.txt"
    fail "rules at $ranks rank(s): exit $status, $warnings warning(s), $rules kernels by the rules"
  fi
done

[ $failures -eq 0 ] && echo "tuning: all cases passed"
exit $((failures > 0))
