#!/usr/bin/env bash
# scripts/test-sanitizers.sh: builds tcmini with AddressSanitizer and
# UndefinedBehaviorSanitizer (CUDA off, frame pointers kept) and runs the test
# suite with CTest, then the mini-app at 1 and 4 ranks. LeakSanitizer is on,
# with tests/hardening/lsan.supp suppressing what Open MPI, hwloc, HDF5 and the
# OpenMP runtime keep until exit, so a leak in tcmini's code fails. With clang
# (and its libFuzzer) the deck fuzzer is built and its short run is one of the
# tests. Arguments go to ctest (e.g. -L hardening). Environment: BUILD_DIR
# (default build-asan), CC (default clang when it has libFuzzer, else cc),
# CTEST_EXCLUDE (a ctest -E regex of tests to leave out; default: the 3-rank
# pass over the bad-input corpus, whose parsing the 1-rank pass covers and
# whose multi-rank failure paths hardening_faults covers), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=${BUILD_DIR:-build-asan}
jobs=${JOBS:-2}

if [ -z "${CC:-}" ]; then
  CC=cc
  probe=$(mktemp -d)
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    > "$probe/probe.c"
  if command -v clang > /dev/null &&
     clang -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" 2> /dev/null; then
    CC=clang
  fi
  rm -rf "$probe"
fi
export CC

sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTCMINI_ENABLE_CUDA=OFF \
  -DTCMINI_NATIVE=OFF -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize"
cmake --build "$build_dir" -j "$jobs"

# Slow (DWARF) unwinding, and Open MPI's plugins kept loaded, so that leak
# stacks through the MPI libraries name them and lsan.supp can match them.
# use_tls=0: LeakSanitizer's tracer crashes scanning thread-local storage in
# an MPI singleton (a test run without mpirun) otherwise.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export LSAN_OPTIONS=suppressions=$root/tests/hardening/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0:use_tls=0
export OMPI_MCA_mca_base_component_disable_dlclose=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

exclude=${CTEST_EXCLUDE-hardening_bad_input_3rank}
(cd "$build_dir" && ctest --output-on-failure --timeout 600 -j "$jobs" ${exclude:+-E "$exclude"} "$@")

mpi_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)
for ranks in 1 4; do
  echo "== tcmini under the sanitizers, $ranks ranks"
  mpirun "${mpi_flags[@]}" -n "$ranks" "$build_dir/bin/tcmini" inputs/hex.in mesh.cells=12,10,8 \
    run.threads=1 output.overwrite=true output.path="$build_dir/sanitized-$ranks.h5" \
    output.report="$build_dir/sanitized-$ranks.yaml"
done
echo "test-sanitizers.sh: all passed ($CC)"
