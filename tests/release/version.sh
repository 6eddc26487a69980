#!/usr/bin/env bash
# version.sh: the release version, set once in CMake's project(), reaches every
# place a user reads it: `tcmini --version`, `tcmini-bench --version`, the run
# report (build.version), the results file (/run@version), and the project
# files that repeat it (CITATION.cff, the newest CHANGELOG.md entry).
# Usage: version.sh VERSION SOURCE_DIR WORKDIR TCMINI BENCH MPIEXEC [MPI FLAGS...]
set -uo pipefail
version=$1 source_dir=$2 workdir=$3 tcmini=$4 bench=$5 mpiexec=$6
shift 6
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

first=$("$tcmini" --version | head -1)
[[ "$first" == "tcmini $version (git "* ]] || fail "tcmini --version says '$first'"
first=$("$bench" --version | head -1)
[[ "$first" == "tcmini-bench $version (git "* ]] || fail "tcmini-bench --version says '$first'"

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
results=output.path=run.h5 # (TC_NO_RESULTS_FILE=1: a build without HDF5 writes none)
[ "${TC_NO_RESULTS_FILE:-0}" = 1 ] && results=output.path=none
"$mpiexec" -n 1 "$@" "$tcmini" "$source_dir/inputs/quick.in" "$results" \
  output.report=run.yaml > run.txt 2>&1 || fail "the quick deck failed: $(tail -3 run.txt)"
grep -q "^  version: \"$version\"$" run.yaml || fail "run.yaml has no build version $version"
if [ ! -f run.h5 ]; then
  echo "note: no results file (a build without HDF5), so its version is not checked"
elif command -v h5dump > /dev/null; then
  h5dump -a /run/version run.h5 | grep -q "\"$version\"" || fail "run.h5 /run@version is not $version"
else
  echo "note: no h5dump, the results file's version is not checked"
fi

grep -q "^version: $version$" "$source_dir/CITATION.cff" || fail "CITATION.cff does not say version: $version"
newest=$(grep -m1 '^## ' "$source_dir/CHANGELOG.md")
[[ "$newest" == "## [$version]"* ]] || fail "CHANGELOG.md's newest entry is '$newest', not $version"

[ "$failures" -eq 0 ] && echo "version $version everywhere"
[ "$failures" -eq 0 ]
