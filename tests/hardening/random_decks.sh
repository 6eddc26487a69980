#!/usr/bin/env bash
# random_decks.sh: tcmini on decks nobody hand-picked. COUNT decks are drawn
# deterministically from SEED as valid overrides of DECK (inputs/hex.in):
#   element.order 1|2, element.quadrature 0..5 (0 = order + 1; now and then
#   6..10 on a small Q1 mesh), mesh.cells 2..9 per direction (at least one
#   direction >= 3, so that 3 ranks can share the box; cells x steps <= 800
#   for Q2), mesh.distortion 0|0.05|0.1 (now and then a non-unit mesh.length),
#   run.layout right|left|auto, run.precision double|float, run.variant auto
#   (now and then flat or blocked, which the openmp backend runs on every
#   kernel), run.batch_cells 0|1|7|64|more than the cells, run.steps 1..2,
#   physics.kernels all or a random non-empty subset, run.inputs
#   auto|materialised|fused, run.roofline mostly false (it only costs time);
# always run.backend=openmp run.threads=1 verify.checks=on output.overwrite=true
# with the results file and the report inside WORKDIR/deck-NN/.
# Each deck runs at 1 rank and at 3 ranks; both must exit 0 with
# "verdict: passed" and no failed check ("verdict: not checked" is accepted:
# a rule too short for every check's integrand skips them all, and the deck
# is still valid; its line says so), and the two results files must agree
# (tests/tcmini/compare_results.py: /cells and /nodes normwise within 1e-12
# in double, 1e-5 in float, the tolerances of tests/tcmini's rank tests;
# /mesh/coordinates and /mesh/connectivity exactly). A run that takes more
# than TC_RANDOM_DECKS_RUN_LIMIT seconds (default 120) is killed and counts
# as a failure (a hang).
# Exits 77 (skipped) when TCMINI has no openmp backend.
# One line per deck: its overrides and PASS or FAIL; a failing deck adds one
# "reproduce:" line with the exact commands and a few lines of its output,
# and the sweep goes on. Exit status 1 if any deck failed.
#
# Usage: random_decks.sh WORKDIR TCMINI DECK MPIEXEC COUNT SEED [MPI FLAGS...] [-- tcmini args...]
# (MPI flags as CTest passes them, TC_MPIEXEC_FLAGS: --oversubscribe, and
# --allow-run-as-root as root; extra tcmini arguments come after every drawn
# and fixed override.) TC_PYTHON names a Python with h5py and numpy (default
# python3); the decks are drawn with it too (random.Random(SEED)). By hand:
#   TC_PYTHON=/usr/bin/python3 tests/hardening/random_decks.sh /tmp/rd \
#     build/bin/tcmini inputs/hex.in mpiexec 40 1234 --oversubscribe
set -euo pipefail
if (($# < 6)); then
  echo "usage: $0 WORKDIR TCMINI DECK MPIEXEC COUNT SEED [MPI FLAGS...] [-- tcmini args...]" >&2
  exit 2
fi
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4 count=$5 seed=$6
shift 6
mpi_flags=()
while (($#)) && [ "$1" != "--" ]; do mpi_flags+=("$1"); shift; done
(($#)) && shift
extra_args=("$@")
script_dir=$(cd "$(dirname "$0")" && pwd)
compare=$(cd "$script_dir/../tcmini" && pwd)/compare_results.py
python=${TC_PYTHON:-python3}
run_limit=${TC_RANDOM_DECKS_RUN_LIMIT:-120}
[[ "$count" =~ ^[0-9]+$ ]] || { echo "COUNT '$count' is not a number" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "SEED '$seed' is not a number" >&2; exit 2; }
# Absolute paths, so that every reproducer runs from any directory.
tcmini=$(cd "$(dirname "$tcmini")" && pwd)/$(basename "$tcmini")
deck=$(cd "$(dirname "$deck")" && pwd)/$(basename "$deck")
# (Read whole: grep -q would stop reading early, and pipefail would take the
# writer's SIGPIPE as a failed pipeline.)
version=$("$tcmini" --version)
if ! grep -q '^backends:.*openmp' <<< "$version"; then
  echo "skipped: this tcmini has no openmp backend"
  exit 77
fi
rm -rf "$workdir" && mkdir -p "$workdir"
workdir=$(cd "$workdir" && pwd)
export OMP_NUM_THREADS=1

# One line of overrides per deck (values without spaces: kernels are joined
# by commas, cells and lengths as the command line writes triples).
"$python" - "$count" "$seed" > "$workdir/decks.txt" << 'EOF'
import random
import sys

count, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
KERNELS = ["FieldFieldScalar", "FieldFieldVector", "FieldFieldTensor",
           "DataFieldScalar", "DataFieldVector", "DataFieldTensor",
           "DataDataScalar", "DataDataVector", "DataDataTensor"]
for _ in range(count):
    order = rng.choice([1, 2])
    limit = 800 if order == 2 else 3000
    while True:
        cells = [rng.randint(2, 9) for _ in range(3)]
        steps = rng.randint(1, 2)
        total = cells[0] * cells[1] * cells[2]
        # 3 ranks need a rank grid px*py*pz = 3 with at most one rank per
        # cell in each direction: some direction must have 3 cells or more.
        if max(cells) >= 3 and total * steps <= limit:
            break
    quadrature = rng.randint(0, 5)
    if order == 1 and total <= 300 and rng.random() < 0.1:
        quadrature = rng.randint(6, 10)
    o = [f"element.order={order}", f"element.quadrature={quadrature}",
         "mesh.cells=" + ",".join(map(str, cells)),
         f"mesh.distortion={rng.choice(['0', '0.05', '0.1'])}"]
    if rng.random() < 0.2:
        o.append("mesh.length=" + ",".join(rng.choice(["0.5", "1", "2", "3.25"]) for _ in range(3)))
    o.append(f"run.layout={rng.choice(['right', 'left', 'auto'])}")
    o.append(f"run.precision={rng.choice(['double', 'float'])}")
    o.append(f"run.variant={rng.choice(['auto'] * 6 + ['flat', 'blocked'])}")
    o.append(f"run.batch_cells={rng.choice([0, 1, 7, 64, total + rng.randint(1, 100)])}")
    o.append(f"run.steps={steps}")
    if rng.random() < 0.5:
        o.append("physics.kernels=all")
    else:
        o.append("physics.kernels=" + ",".join(rng.sample(KERNELS, rng.randint(1, 8))))
    o.append(f"run.inputs={rng.choice(['auto', 'materialised', 'fused'])}")
    o.append(f"run.roofline={'true' if rng.random() < 0.25 else 'false'}")
    print(" ".join(o))
EOF

# quoted WORDS...: the words as one shell line, quoting only the words that need it.
quoted() {
  local word out="" q
  for word in "$@"; do
    if [[ "$word" =~ ^[A-Za-z0-9_./=,:+@%-]+$ ]]; then q=$word; else printf -v q '%q' "$word"; fi
    out+="${out:+ }$q"
  done
  printf '%s' "$out"
}

failures=0
index=0
# The decks are read on fd 3: mpiexec forwards its stdin to rank 0.
while read -r -u 3 -a overrides; do
  index=$((index + 1))
  name=$(printf 'deck-%02d' "$index")
  dir=$workdir/$name
  mkdir -p "$dir"
  tolerance=1e-12
  [[ " ${overrides[*]} " == *" run.precision=float "* ]] && tolerance=1e-5
  problem="" repro=() detail=""
  for n in 1 3; do
    cmd=("$mpiexec" -n "$n" "${mpi_flags[@]}" "$tcmini" "$deck" "${overrides[@]}"
      run.backend=openmp run.threads=1 verify.checks=on output.overwrite=true
      output.path="$dir/r$n.h5" output.report="$dir/r$n.yaml" "${extra_args[@]}")
    run_repro="OMP_NUM_THREADS=1 $(quoted "${cmd[@]}")"
    repro+=("$run_repro")
    status=0
    timeout -k 5 "$run_limit" "${cmd[@]}" < /dev/null > "$dir/r$n.out" 2> "$dir/r$n.err" ||
      status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
      problem="$n ranks: no end within ${run_limit} s (killed)"
    elif [ "$status" -ne 0 ]; then
      problem="$n ranks: exit status $status"
    elif ! grep -aq '^verdict: passed\|^verdict: not checked' "$dir/r$n.out"; then
      problem="$n ranks: no 'verdict: passed' line"
    elif grep -aq ' FAIL ' "$dir/r$n.out"; then
      problem="$n ranks: a check failed"
    fi
    if [ -n "$problem" ]; then
      repro=("$run_repro")
      detail=$( (grep -ah 'tcmini: \| FAIL \|^verdict' "$dir/r$n.out" "$dir/r$n.err" || true) |
        cut -c1-300 | head -6)
      [ -n "$detail" ] || detail=$(cat "$dir/r$n.err" "$dir/r$n.out" | cut -c1-300 | head -6)
      break
    fi
  done
  compare_cmd=("$python" "$compare" "$tolerance" "$dir/r1.h5" "$dir/r3.h5")
  if [ -z "$problem" ]; then
    repro+=("$(quoted "${compare_cmd[@]}")")
    if ! "${compare_cmd[@]}" > "$dir/compare.txt" 2>&1; then
      problem="1 and 3 ranks disagree beyond $tolerance"
      detail=$( (grep -a 'FAIL\|Error\|error' "$dir/compare.txt" || tail -3 "$dir/compare.txt") |
        cut -c1-300 | head -6)
    fi
  fi
  if [ -z "$problem" ]; then
    note=""
    grep -aq '^verdict: not checked' "$dir/r1.out" && note=" (verdict: not checked, every check skipped)"
    echo "$name PASS$note: ${overrides[*]}"
  else
    failures=$((failures + 1))
    echo "$name FAIL ($problem): ${overrides[*]}"
    # The reproducer on one line: the run that failed, or both runs and the comparison.
    line=""
    for c in "${repro[@]}"; do line+="${line:+ && }$c"; done
    echo "  reproduce: $line"
    sed 's/^/    /' <<< "$detail"
  fi
done 3< "$workdir/decks.txt"
echo "random decks (seed $seed): $((index - failures)) of $index passed"
[ "$failures" -eq 0 ]
