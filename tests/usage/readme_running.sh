#!/usr/bin/env bash
# readme_running.sh: README's "Running" lines work as written on a small
# machine (2 cores here): each `mpirun ...` line of the section's first code
# block that runs on CPUs is run with `mpirun`, `build/bin/` and `inputs/`
# mapped to this build and source tree, and with a smaller mesh appended so
# that the test stays short (the flags and rank counts are what is tested:
# 8 ranks on 2 cores need README's --oversubscribe). As root, Open MPI's own
# environment switch stands in for the --allow-run-as-root README tells root
# users to add.
# Usage: readme_running.sh WORKDIR README BIN_DIR INPUTS_DIR MPIEXEC
set -uo pipefail
workdir=$1 readme=$2 bin=$3 inputs=$4 mpiexec=$5
failures=0 ran=0
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
lines=$(awk '/^## Running/ {section = 1; next} /^## / {section = 0}
             section && /^```/ {block++; next}
             section && block == 1 && /^mpirun / {print}' "$readme")
[ -n "$lines" ] || { echo "FAIL: no mpirun line in README's Running section"; exit 1; }
while IFS= read -r line; do
  command=${line%%#*}
  case "$command" in *"\\"*|*run.backend=cuda*) echo "skip (GPU): $line"; continue ;; esac
  command=${command/#mpirun /$mpiexec }
  command=${command//build\/bin\//$bin/}
  command=${command//inputs\//$inputs/}
  ran=$((ran + 1))
  dir=run$ran
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # the README line's words, as a shell splits them
  if (cd "$dir" && $command mesh.cells=6,6,6 run.steps=1 < /dev/null > out.txt 2>&1); then
    echo "ok   $line"
  else
    echo "FAIL $line"
    tail -5 "$dir/out.txt" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
done <<< "$lines"
[ "$ran" -gt 0 ] && [ "$failures" -eq 0 ]
