#!/usr/bin/env bash
# expected_decks.sh: every deck shipped in inputs/ has its expected outputs,
# inputs/expected/<deck>.yaml, which name their origin, and no expected
# outputs are left without their deck.
# Usage: expected_decks.sh INPUTS_DIR
set -uo pipefail
inputs=$1
failures=0
for deck in "$inputs"/*.in; do
  name=$(basename "$deck" .in)
  expected="$inputs/expected/$name.yaml"
  if [ ! -f "$expected" ]; then
    echo "FAIL: $name.in has no expected outputs ($expected)"; failures=$((failures + 1))
  elif ! grep -q "^# Origin: " "$expected" || ! grep -q "^deck: $name.in$" "$expected"; then
    echo "FAIL: $expected does not name its origin and its deck"; failures=$((failures + 1))
  else
    echo "ok   $name.in: $(grep -m1 '^# Origin: ' "$expected")"
  fi
done
for expected in "$inputs"/expected/*.yaml; do
  [ -f "$inputs/$(basename "$expected" .yaml).in" ] ||
    { echo "FAIL: $expected has no deck"; failures=$((failures + 1)); }
done
[ "$failures" -eq 0 ]
