#!/usr/bin/env bash
# install.sh: `cmake --install` into a fresh temporary prefix, then use what it
# installed as a user would, from outside the source tree:
#   - the programs, decks and scripts are there, and the installed tcmini runs
#     the installed quick deck;
#   - tests/release/consumer, a separate CMake project, builds against the
#     prefix through find_package(tcmini) (tcmini::contract) and runs;
#   - the same program builds through pkg-config (tcmini.pc, which names
#     libxsmm by name, not by a path) and runs;
#   - neither links MPI (the contraction library does not use it).
# Usage: install.sh BUILD_DIR WORKDIR C_COMPILER MPIEXEC [MPI FLAGS...]
# Environment: TC_CONSUMER_CFLAGS, the build's C flags, given to both consumers
# (a sanitizer build's libraries need the sanitizer runtimes at link time).
set -uo pipefail
build=$1 workdir=$2 cc=$3 mpiexec=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
consumer_flags=${TC_CONSUMER_CFLAGS:-}
read -r -a consumer_flag_list <<< "$consumer_flags"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

rm -rf "$workdir" && mkdir -p "$workdir" || exit 1
prefix=$workdir/prefix
cmake --install "$build" --prefix "$prefix" > "$workdir/install.log" 2>&1 ||
  { cat "$workdir/install.log"; echo "FAIL: cmake --install"; exit 1; }

for f in bin/tcmini bin/tcmini-bench bin/tcmini-compare share/tcmini/inputs/hex.in \
         share/tcmini/inputs/quick.in share/tcmini/inputs/expected/quick.yaml \
         share/tcmini/scripts/sweep.sh \
         share/tcmini/scripts/slurm/run.sbatch share/doc/tcmini/LICENSE \
         include/tcmini/tc_contract.h include/tcmini/tc_error.h include/tcmini/tc_build.h; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
libdir=$(cd "$prefix" && dirname "$(find . -name tcmini.pc | head -1)")
libdir=${libdir%/pkgconfig}
[ -n "$libdir" ] && [ -e "$prefix/$libdir/cmake/tcmini/tcminiConfig.cmake" ] ||
  fail "no tcmini.pc and CMake package under $prefix"

# The installed program runs the installed deck in a directory of its own.
# (TC_NO_RESULTS_FILE=1: a build without HDF5 writes no results file.)
results=()
[ "${TC_NO_RESULTS_FILE:-0}" = 1 ] && results=(output.path=none)
mkdir -p "$workdir/run" && (cd "$workdir/run" &&
  "$mpiexec" -n 1 "$@" "$prefix/bin/tcmini" "$prefix/share/tcmini/inputs/quick.in" "${results[@]}" \
    > run.txt 2>&1) ||
  fail "installed tcmini on the installed quick deck: $(tail -3 "$workdir/run/run.txt")"
"$prefix/bin/tcmini-bench" --version > /dev/null || fail "installed tcmini-bench --version"
# ... and the installed tcmini-compare finds it as expected (where PyYAML is at hand).
if python3 -c "import yaml" 2> /dev/null; then
  "$prefix/bin/tcmini-compare" "$prefix/share/tcmini/inputs/expected/quick.yaml" \
    "$workdir/run/quick-report.yaml" || fail "installed tcmini-compare on the quick run"
fi

# find_package(tcmini) in a project of its own.
if cmake -S "$here/consumer" -B "$workdir/consumer-cmake" -DCMAKE_C_COMPILER="$cc" \
     -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_C_FLAGS="$consumer_flags" -DCMAKE_EXE_LINKER_FLAGS="$consumer_flags" > "$workdir/consumer-cmake.log" 2>&1 &&
   cmake --build "$workdir/consumer-cmake" >> "$workdir/consumer-cmake.log" 2>&1; then
  "$workdir/consumer-cmake/consumer" || fail "the find_package consumer ran wrong"
  grep -q libmpi <<< "$(ldd "$workdir/consumer-cmake/consumer" 2> /dev/null)" &&
    fail "the find_package consumer links MPI"
else
  tail -30 "$workdir/consumer-cmake.log"
  fail "the consumer did not build through find_package(tcmini)"
fi

# pkg-config, as a Makefile would use it.
if command -v pkg-config > /dev/null; then
  export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
  [ "$(pkg-config --modversion tcmini)" = "$(sed -n 's/^Version: //p' "$PKG_CONFIG_PATH/tcmini.pc")" ] ||
    fail "pkg-config --modversion tcmini"
  # libxsmm by name (-lxsmm), not by this machine's path to its archive.
  grep -q '/libxsmm' "$PKG_CONFIG_PATH/tcmini.pc" &&
    fail "tcmini.pc names libxsmm by a path: $(grep '^Libs' "$PKG_CONFIG_PATH/tcmini.pc")"
  # shellcheck disable=SC2046
  if "$cc" -std=c11 -Wall -Wextra "${consumer_flag_list[@]}" -o "$workdir/consumer-pc" "$here/consumer/consumer.c" \
       $(pkg-config --cflags --libs tcmini) > "$workdir/consumer-pc.log" 2>&1; then
    "$workdir/consumer-pc" || fail "the pkg-config consumer ran wrong"
    grep -q libmpi <<< "$(ldd "$workdir/consumer-pc" 2> /dev/null)" &&
      fail "the pkg-config consumer links MPI"
  else
    cat "$workdir/consumer-pc.log"
    fail "the consumer did not build through pkg-config"
  fi
else
  fail "no pkg-config on PATH (Debian package pkg-config)"
fi

[ "$failures" -eq 0 ] && echo "installed to $prefix; find_package and pkg-config consumers ran"
[ "$failures" -eq 0 ]
