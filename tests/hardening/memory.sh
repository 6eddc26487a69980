#!/usr/bin/env bash
# memory.sh: the memory check (src/loop/tc_memory.c) refuses, before
# anything large is allocated, a run that does not fit under the limits its
# ranks run under, and lets one that fits run. Under an address-space limit
# (ulimit -v) of LIMIT_KB on the rank:
#   - an 80^3-cell run is refused: status 2 on every rank, one error line
#     naming the estimate and the limit;
#   - the same run with run.memory_check = false really does not fit: it
#     fails with status 1 and an out-of-memory message in the user's terms
#     (so the refusal was right, and the message names no variable);
#   - a 32^3-cell run passes the check and completes (status 0).
# Where this process may create a memory cgroup (v1 or v2), the 80^3 run is
# also refused under a cgroup limit of the same size.
# Usage: memory.sh WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 hex=$3 mpiexec=$4
shift 4
mpi_flags=("$@")
limit_kb=${TC_MEMORY_LIMIT_KB:-1500000}
export OMPI_MCA_orte_abort_on_non_zero_status=0
failures=0
mkdir -p "$workdir" || exit 1
cd "$workdir" || exit 1
# AddressSanitizer reserves terabytes of address space for its shadow memory:
# nothing starts under a small ulimit -v (scripts/test-sanitizers.sh).
# (The listings are read whole: grep -q would stop reading early, and
# pipefail would take the writer's SIGPIPE as a failed pipeline.)
libraries=$(ldd "$tcmini" 2> /dev/null)
symbols=$(nm -D "$tcmini" 2> /dev/null)
if grep -q 'libasan\|libtsan' <<< "$libraries" || grep -q ' __asan_init$\| __tsan_init$' <<< "$symbols"; then
  echo "skipped: a sanitizer's shadow memory does not fit under ulimit -v"
  exit 77
fi

# run NAME WANT_STATUS PATTERN PREFIX -- tcmini arguments: PREFIX is shell
# text run on the rank before tcmini (a ulimit).
run() {
  local name=$1 want=$2 pattern=$3 prefix=$4
  shift 5
  rm -f status.*
  timeout -k 5 120 "$mpiexec" -n 1 "${mpi_flags[@]}" bash -c \
    "$prefix; \"\$@\"; s=\$?; echo \$s > status.\${OMPI_COMM_WORLD_RANK:-0}; exit \$s" \
    tcmini "$tcmini" "$hex" output.path=none output.report=none run.steps=1 "$@" \
    < /dev/null > stdout.txt 2> stderr.txt
  local got errors problem=""
  got=$(cat status.* 2> /dev/null)
  errors=$(grep -ac '^tcmini: error' stderr.txt)
  if [ "$got" != "$want" ]; then problem="status '$got', want $want"
  elif [ "$want" != 0 ] && [ "$errors" -ne 1 ]; then problem="$errors error lines, want 1"
  elif [ -n "$pattern" ] && ! grep -a '^tcmini: error' stderr.txt | grep -aqE -- "$pattern"; then
    problem="the error line does not match /$pattern/"
  elif grep -aq '\*array\|for \*' stderr.txt; then problem="the message names a variable"
  fi
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "FAIL $name: $problem"
    sed 's/^/    /' stderr.txt | head -10
  else
    echo "ok   $name -> $got $(grep -a '^tcmini: error' stderr.txt | cut -c1-200)"
  fi
}

ulimit_prefix="ulimit -v $limit_kb"
run "80^3 under ulimit -v ${limit_kb} KiB: refused" 2 \
  "cells = 80 80 80 \\(order 1\\) on 1 rank needs about .* GiB per rank, more than the .* its address-space limit leaves \\(ulimit -v of" \
  "$ulimit_prefix" -- mesh.cells=80,80,80
run "80^3 under the same limit, run.memory_check = false: does not fit" 1 \
  "out of memory: .* more could not be allocated" "$ulimit_prefix" -- mesh.cells=80,80,80 \
  run.memory_check=false
run "32^3 under the same limit: fits" 0 "" "$ulimit_prefix" -- mesh.cells=32,32,32

# A memory cgroup of the same size, where this process may make one.
cgroup_line=$(grep -m1 '^0::\|:memory:' /proc/self/cgroup)
cgroup_path=${cgroup_line##*:}
group=""
if [[ "$cgroup_line" == *:memory:* ]] && [ -w "/sys/fs/cgroup/memory$cgroup_path" ]; then
  group="/sys/fs/cgroup/memory$cgroup_path/tcmini-test-$$"
  mkdir "$group" 2> /dev/null && echo $((limit_kb * 1024)) > "$group/memory.limit_in_bytes" ||
    group=""
elif [[ "$cgroup_line" == 0::* ]] && [ -w "/sys/fs/cgroup$cgroup_path" ] &&
  grep -qw memory "/sys/fs/cgroup$cgroup_path/cgroup.subtree_control" 2> /dev/null; then
  group="/sys/fs/cgroup$cgroup_path/tcmini-test-$$"
  mkdir "$group" 2> /dev/null && echo $((limit_kb * 1024)) > "$group/memory.max" || group=""
fi
if [ -n "$group" ]; then
  rm -f status.*
  (echo "$BASHPID" > "$group/cgroup.procs" &&
    exec timeout -k 5 120 "$mpiexec" -n 1 "${mpi_flags[@]}" bash -c \
      '"$@"; s=$?; echo $s > status.${OMPI_COMM_WORLD_RANK:-0}; exit $s' tcmini "$tcmini" "$hex" \
      output.path=none output.report=none run.steps=1 mesh.cells=80,80,80 \
      < /dev/null > stdout.txt 2> stderr.txt)
  if [ "$(cat status.* 2> /dev/null)" = 2 ] &&
    grep -aq "more than the .* the memory cgroup's limit leaves" stderr.txt; then
    echo "ok   80^3 in a memory cgroup of ${limit_kb} KiB: refused: $(grep -a '^tcmini: error' stderr.txt | cut -c1-200)"
  else
    failures=$((failures + 1))
    echo "FAIL 80^3 in a memory cgroup of ${limit_kb} KiB: not refused"
    sed 's/^/    /' stderr.txt | head -10
  fi
  rmdir "$group" 2> /dev/null
else
  echo "(no memory cgroup can be made here: the cgroup case is left out)"
fi
echo "$failures failed"
[ "$failures" -eq 0 ]
