#!/usr/bin/env bash
# scripts/compare_builds.sh: runs the same decks with two builds of tcmini and
# requires bitwise-identical results files (the /cells, /nodes and /mesh
# datasets, and /element_matrices where output.element_matrices=true wrote
# them, by tests/hardening/h5_identical.py where Python has h5py, else by
# h5diff without a tolerance):
# the default deck, a Q2 deck, a float deck and a layout-left deck. For
# refactors and optimisations that must not change a result.
# Usage: scripts/compare_builds.sh BASE_TCMINI NEW_TCMINI [RANKS] [section.key=value ...]
# (extra overrides, e.g. run.backend=cuda, apply to every deck). Environment:
# MPIRUN (default mpirun), PYTHON (a Python with h5py; default /usr/bin/python3),
# WORK (default a temp dir, removed when every deck is identical).
# Exit status: 0 identical, 1 a run failed or a result differs, 2 bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/compare_builds.sh BASE_TCMINI NEW_TCMINI [RANKS] [section.key=value ...]"
die() {
  echo "compare_builds.sh: error: $*" >&2
  exit 2
}
(($# >= 2)) || die "$usage"
base=$1 new=$2 ranks=${3:-2}
for bin in "$base" "$new"; do
  [[ -f $bin && -x $bin ]] || die "'$bin' is not an executable tcmini ($usage)"
done
[[ $ranks =~ ^[1-9][0-9]{0,5}$ ]] || die "RANKS must be a positive integer, got '$ranks'"
shift $(($# < 3 ? $# : 3))
for word in "$@"; do
  [[ $word =~ ^[A-Za-z_]+\.[A-Za-z_]+= ]] || die "'$word' is not a deck override (section.key=value)"
done
temporary_work=0
if [[ -z ${WORK:-} ]]; then
  work=$(mktemp -d)
  temporary_work=1
else
  work=$WORK
  mkdir -p "$work"
fi
mpirun=("${MPIRUN:-mpirun}" --oversubscribe -n "$ranks")
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
decks=(
  "default|"
  "q2|element.order=2 element.quadrature=5 mesh.cells=8,8,8"
  "float|run.precision=float"
  "left|run.layout=left"
)
python=${PYTHON:-/usr/bin/python3}
same() {
  if "$python" -c "import h5py" 2>/dev/null; then
    "$python" "$root/tests/hardening/h5_identical.py" "$1" "$2"
  else
    local group
    local groups=(/cells /nodes /mesh)
    if h5ls "$1/element_matrices" >/dev/null 2>&1 || h5ls "$2/element_matrices" >/dev/null 2>&1; then
      groups+=(/element_matrices)
    fi
    for group in "${groups[@]}"; do
      h5diff "$1" "$2" "$group" "$group" || return 1
    done
  fi
}
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
  if [[ ! -f $work/$name-base.h5 || ! -f $work/$name-new.h5 ]]; then
    echo "$name: not compared (a run wrote no results file)"; status=1
  elif same "$work/$name-base.h5" "$work/$name-new.h5" > "$work/$name-compare.log" 2>&1; then
    echo "$name: bitwise identical"
  else
    echo "$name: DIFFERENT"; cat "$work/$name-compare.log"; status=1
  fi
done
# The files stay for a look where anything failed or differed.
if ((status == 0 && temporary_work)); then rm -rf "$work"; fi
exit $status
