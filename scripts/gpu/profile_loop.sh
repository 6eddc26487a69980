#!/usr/bin/env bash
# scripts/gpu/profile_loop.sh TCMINI KERNELS [section.key=value ...]: profiles
# the kernels of the mini-app's loop on the CUDA backend whose names match the
# regular expression KERNELS with Nsight Compute (ncu, clocks left as they
# are), a few launches each, and prints the speed-of-light, memory and
# occupancy sections. Default deck: 64^3 Q1 cells, one step.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tcmini=$1 kernels=$2
shift 2
mpirun=(mpirun -n 1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
"${mpirun[@]}" ncu --clock-control none --launch-skip "${SKIP:-20}" --launch-count "${COUNT:-6}" \
  -k "regex:$kernels" --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section Occupancy --section LaunchStats --section WarpStateStats \
  "$tcmini" "$root/inputs/hex.in" run.backend=cuda mesh.cells=64,64,64 run.steps=1 \
  verify.checks=off output.path=none output.report="${TMPDIR:-/tmp}/profile-report.yaml" \
  output.overwrite=true "$@"
