#!/usr/bin/env bash
# scripts/compare_builds.sh: runs the same decks with two builds of tcmini and
# requires bitwise-identical results files (tests/hardening/h5_identical.py):
# the default deck, a Q2 deck, a float deck and a layout-left deck. For
# refactors and optimisations that must not change a result.
# Usage: scripts/compare_builds.sh BASE_TCMINI NEW_TCMINI [RANKS] [section.key=value ...]
# (extra overrides, e.g. run.backend=cuda, apply to every deck). Environment:
# MPIRUN (default mpirun), PYTHON (a Python with h5py; default /usr/bin/python3),
# WORK (default a temp dir).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=$1 new=$2 ranks=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
work=${WORK:-$(mktemp -d)}
mpirun=(${MPIRUN:-mpirun} --oversubscribe -n "$ranks")
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
decks=(
  "default|"
  "q2|element.order=2 element.quadrature=5 mesh.cells=8,8,8"
  "float|run.precision=float"
  "left|run.layout=left"
)
status=0
for entry in "${decks[@]}"; do
  name=${entry%%|*} args=${entry#*|}
  for build in base new; do
    bin=$base; [ "$build" = new ] && bin=$new
    # shellcheck disable=SC2086
    "${mpirun[@]}" "$bin" "$root/inputs/hex.in" $args "$@" output.overwrite=true \
      output.path="$work/$name-$build.h5" output.report="$work/$name-$build.yaml" \
      > "$work/$name-$build.log" 2>&1 || { echo "$name: $build run failed ($work/$name-$build.log)"; status=1; }
  done
  if ${PYTHON:-/usr/bin/python3} "$root/tests/hardening/h5_identical.py" "$work/$name-base.h5" "$work/$name-new.h5" \
      > "$work/$name-compare.log" 2>&1; then
    echo "$name: bitwise identical"
  else
    echo "$name: DIFFERENT"; cat "$work/$name-compare.log"; status=1
  fi
done
exit $status
