#!/usr/bin/env bash
# scripts/setup.sh: on a fresh Debian machine, install tcmini's dependencies
# (Debian packages only), configure and build it into build/, and run the main
# job on the small default deck. Options:
#   --deps-only   install the packages and stop
#   --no-run      install and build, do not run
#   --with-slurm  also install Slurm and munge, for the tests that run the
#                 batch scripts on a throw-away cluster (docs/slurm.md). The
#                 packages start no Slurm daemon (there is no slurm.conf);
#                 munge's may start the system munged, which the tests do not use
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure flags),
# RANKS (default 8).
set -euo pipefail
cd "$(dirname "$0")/.."

deps_only=0
run=1
slurm=0
for arg in "$@"; do
  case "$arg" in
    --deps-only) deps_only=1 ;;
    --no-run) run=0 ;;
    --with-slurm) slurm=1 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

packages=(build-essential cmake libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools
          python3-yaml python3-h5py python3-numpy python3-matplotlib shellcheck
          libxsmm-dev pkg-config)
# Slurm's pmix plugin (srun --mpi=pmix) loads libpmix.so, which is in libpmix-dev.
((slurm)) && packages+=(slurmctld slurmd slurm-client munge libpmix-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
((deps_only)) && exit 0

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
((run)) || exit 0

mpi_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)
exec mpirun "${mpi_flags[@]}" -n "${RANKS:-8}" "$build_dir/bin/tcmini" inputs/hex.in output.overwrite=true
