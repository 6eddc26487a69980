#!/usr/bin/env bash
# scripts/test.sh: build tcmini (if needed) and run its test suite with CTest.
# Arguments are passed to ctest (e.g. -L mpi, -R contract). Environment:
# BUILD_DIR (default build), CMAKE_ARGS (extra configure flags).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
cd "$build_dir"
exec ctest --output-on-failure --timeout 600 "$@"
