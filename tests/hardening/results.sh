#!/usr/bin/env bash
# results.sh: a results pair (out.h5, out.xmf) is never lost. Each case runs
# tcmini in a fresh directory holding a good pair from an earlier run, makes
# something go wrong, and requires that every rank exits with status 1 (no
# signal, no crash), that stderr holds exactly one "tcmini: error" line
# saying what happened, that the earlier pair is intact, and that no
# temporary, backup, journal or lock file is left.
#
# Usage: results.sh CASE WORKDIR SHIM TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
#   full-N        the file system fills up at N ranks (LD_PRELOAD SHIM: writes
#                 to the temporary results file fail with ENOSPC past 64 KiB),
#                 once where the space can be reserved up front (fallocate
#                 fails) and once where it cannot (the writes fail, and the
#                 MPI-IO layer may not say so); Open MPI's default MPI-IO
#   full-N-romio  the same with Open MPI's ROMIO (skipped, status 77, where
#                 it is not built)
#   xmf           the XDMF file's rename fails (overwrite) or its link fails
#                 (a new path, no overwrite)
#   killed        a run killed while publishing (the next run finishes the
#                 publication, or undoes it when the new XDMF file is gone),
#                 killed while writing (mpirun or the ranks get SIGKILL: the
#                 temporary file goes, at once or at the next run)
#   concurrent    a second run on the path of a running one fails at once
#   checks        a run whose checks fail (a wrong kernel, status 3) writes
#                 its results beside the pair (out.failed.h5, out.failed.xmf),
#                 and a second such run replaces them
#   durable       strace: the files and the directory are fsync'ed before
#                 the renames and the directory after them (skipped, status
#                 77, without a working strace)
set -uo pipefail
case=$1 workdir=$2 shim=$3 tcmini=$4 hex=$5 mpiexec=$6
shift 6
mpi_flags=("$@")
limit=${TC_RESULTS_TIMEOUT:-60}
export OMPI_MCA_orte_abort_on_non_zero_status=0
failures=0
# Each rank records its exit status (a signal shows as 128 + its number).
rank_wrapper='cd "$0" || exit 1; "$@"; status=$?
echo "$status" > "status.${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}"
exit "$status"'

fail() {
  failures=$((failures + 1))
  echo "FAIL $*"
  [ -f "$dir/stderr.txt" ] && sed 's/^/    /' "$dir/stderr.txt" | head -20
}

# tcmini_in DIR RANKS [VAR=value ...] -- tcmini arguments: runs tcmini in DIR.
tcmini_in() {
  local in=$1 ranks=$2 environment=()
  shift 2
  while [ "$1" != -- ]; do environment+=(-x "$1"); shift; done
  shift
  rm -f "$in"/status.*
  timeout -k 5 "$limit" "$mpiexec" -n "$ranks" "${mpi_flags[@]}" "${environment[@]}" \
    bash -c "$rank_wrapper" "$in" "$tcmini" "$hex" output.path=out.h5 output.report=none \
    output.overwrite=true verify.checks=off "$@" < /dev/null > "$in/stdout.txt" 2> "$in/stderr.txt"
}

# The statuses of the ranks as "count status" pairs, e.g. " 3 1 ".
statuses() { cat "$1"/status.* 2> /dev/null | sort | uniq -c | tr -s ' \n' ' '; }

# Files in DIR besides the pair and the test's own.
debris() { (cd "$1" && ls -A | grep -v '^out\.h5$\|^out\.xmf$\|^std\(out\|err\)\.txt$\|^status\.\|^pair\.md5$\|^shim\.log$' | tr '\n' ' '); }

# fresh NAME RANKS [tcmini arguments]: a directory with a good pair.
fresh() {
  dir="$workdir/$1"
  rm -rf "$dir" && mkdir -p "$dir" || exit 1
  tcmini_in "$dir" "$2" -- mesh.cells=8,8,8 "${@:3}"
  [ "$(statuses "$dir")" = " $2 0 " ] || { fail "$1: the first run failed"; return 1; }
  (cd "$dir" && md5sum out.h5 out.xmf > pair.md5)
}

# Whether the pair is as pair.md5 says (empty: there is no pair).
intact() {
  if [ -s "$dir/pair.md5" ]; then (cd "$dir" && md5sum --quiet -c pair.md5 > /dev/null 2>&1)
  else [ ! -e "$dir/out.h5" ] && [ ! -e "$dir/out.xmf" ]; fi
}

# expect_failure NAME RANKS PATTERN: the last run failed as it must.
expect_failure() {
  local name=$1 ranks=$2 pattern=$3 problem=""
  local errors
  errors=$(grep -ac '^tcmini: error' "$dir/stderr.txt")
  if [ "$(statuses "$dir")" != " $ranks 1 " ]; then
    problem="exit status (count status) of the ranks:$(statuses "$dir"), want 1 on all $ranks"
  elif grep -aqiE 'segmentation|signal [0-9]|backtrace|core dumped' "$dir/stderr.txt"; then
    problem="a crash was reported"
  elif [ "$errors" -ne 1 ]; then problem="$errors error lines, want 1"
  elif ! grep -a '^tcmini: error' "$dir/stderr.txt" | grep -aqE -- "$pattern"; then
    problem="the error line does not match /$pattern/"
  elif ! intact; then problem="the earlier pair changed"
  elif [ -n "$(debris "$dir")" ]; then problem="files left: $(debris "$dir")"
  fi
  if [ -n "$problem" ]; then fail "$name: $problem"; else
    echo "ok   $name: $(grep -a '^tcmini: error' "$dir/stderr.txt" | cut -c1-160)"
  fi
}

# full_disk RANKS [VAR=value]: the extra setting (an MPI-IO component) goes
# to every run.
full_disk() {
  local ranks=$1 setting=${2:-}
  local io=(${setting:+"$setting"}) what="$ranks ranks${setting:+, $setting}"
  fresh "full_reserved_$ranks$setting" "$ranks" || return
  tcmini_in "$dir" "$ranks" "${io[@]}" LD_PRELOAD="$preload" TC_SHIM_PATH=out.h5.tmp. \
    TC_SHIM_FULL_AFTER=65536 TC_SHIM_LOG="$dir/shim.log" -- mesh.cells=8,8,8
  expect_failure "full disk, space reserved up front, $what" "$ranks" \
    "no room for the results file 'out.h5' .*No space left on device"

  fresh "full_unreserved_$ranks$setting" "$ranks" || return
  tcmini_in "$dir" "$ranks" "${io[@]}" LD_PRELOAD="$preload" TC_SHIM_PATH=out.h5.tmp. \
    TC_SHIM_FULL_AFTER=65536 TC_SHIM_NO_FALLOCATE=1 TC_SHIM_LOG="$dir/shim.log" -- mesh.cells=8,8,8
  expect_failure "full disk, no reservation, $what" "$ranks" \
    "writing 'out.h5.tmp[^']*' failed|'out.h5' read back differs from what was written"
  grep -q ENOSPC "$dir/shim.log" 2> /dev/null || fail "full disk, $what: no write failed"
}

xmf_publish() {
  fresh xmf_rename 1 || return
  tcmini_in "$dir" 1 LD_PRELOAD="$preload" TC_SHIM_FAIL_RENAME==out.xmf -- mesh.cells=6,6,6
  expect_failure "the XDMF file's rename fails" 1 "cannot rename 'out.xmf.tmp[^']*' to 'out.xmf'"

  fresh xmf_link 1 || return
  rm "$dir/out.h5" "$dir/out.xmf" && (cd "$dir" && : > pair.md5) # no pair before: none after
  tcmini_in "$dir" 1 LD_PRELOAD="$preload" TC_SHIM_FAIL_RENAME==out.xmf -- mesh.cells=6,6,6 \
    output.overwrite=false
  expect_failure "the XDMF file's link fails (no overwrite)" 1 "cannot link 'out.xmf.tmp[^']*'"
  [ ! -e "$dir/out.h5" ] || fail "the XDMF file's link fails: a lone out.h5 remains"
}

# cells_of FILE: the cell count an XDMF file or a results file declares.
cells_of() {
  case "$1" in
    *.xmf) sed -n 's/.*NumberOfElements="\([0-9]*\)".*/\1/p' "$1" ;;
    *) h5dump -a /mesh/global_cells "$1" 2> /dev/null | sed -n 's/ *(0): \([0-9]*\), \([0-9]*\), \([0-9]*\)/\1 \2 \3/p' |
         awk '{print $1 * $2 * $3}' ;;
  esac
}

killed() {
  if sanitized; then
    echo "(killed while publishing: left out, the sanitizer's interceptors come before the shim)"
  else
    killed_publishing
  fi
  killed_writing
}

killed_publishing() {
  # Killed between the two renames: out.h5 is new (216 cells), out.xmf old.
  fresh killed_publishing 1 || return
  tcmini_in "$dir" 1 LD_PRELOAD="$preload" TC_SHIM_KILL_RENAME==out.xmf -- mesh.cells=6,6,6
  [ "$(statuses "$dir")" = " 1 137 " ] || fail "killed while publishing: the run was not killed ($(statuses "$dir"))"
  tcmini_in "$dir" 1 -- mesh.cells=4,4,4 output.overwrite=false
  if ! grep -aq "finished publishing the results of an earlier run" "$dir/stderr.txt"; then
    fail "killed while publishing: the next run did not finish the publication"
  elif [ "$(cells_of "$dir/out.h5")" != 216 ] || [ "$(cells_of "$dir/out.xmf")" != 216 ]; then
    fail "killed while publishing: the pair holds $(cells_of "$dir/out.h5") and $(cells_of "$dir/out.xmf") cells, want 216 and 216"
  elif [ -n "$(debris "$dir")" ]; then fail "killed while publishing: files left: $(debris "$dir")"
  else echo "ok   killed while publishing: the next run finished it (216 cells in both files)"; fi

  # The same, with the new XDMF file lost as well: the old pair comes back.
  fresh killed_publishing_lost 1 || return
  tcmini_in "$dir" 1 LD_PRELOAD="$preload" TC_SHIM_KILL_RENAME==out.xmf -- mesh.cells=6,6,6
  rm -f "$dir"/out.xmf.tmp.*
  tcmini_in "$dir" 1 -- mesh.cells=4,4,4 output.overwrite=false
  if ! grep -aq "undid the half-done publication" "$dir/stderr.txt"; then
    fail "killed while publishing, XDMF lost: the next run did not undo the publication"
  elif ! intact; then fail "killed while publishing, XDMF lost: the earlier pair is not back"
  elif [ -n "$(debris "$dir")" ]; then fail "killed while publishing, XDMF lost: files left: $(debris "$dir")"
  else echo "ok   killed while publishing, XDMF lost: the next run put the earlier pair back"; fi
}

killed_writing() {
  # SIGKILL to mpirun, then to the ranks themselves, while the temporary
  # results file is being written.
  local target
  for target in mpirun ranks; do
    fresh "killed_writing_$target" 3 || return
    # (mpirun's default: when a rank dies, it ends the job; told otherwise,
    # Open MPI 4.1's mpirun waits forever once all its ranks are killed.)
    (cd "$dir" && unset OMPI_MCA_orte_abort_on_non_zero_status &&
      exec "$mpiexec" -n 3 "${mpi_flags[@]}" "$tcmini" "$hex" output.path=out.h5 \
      output.report=none output.overwrite=true verify.checks=off mesh.cells=36,36,36 run.steps=1 \
      output.element_matrices=true < /dev/null > stdout.txt 2> stderr.txt) &
    local launcher=$! waited=0
    until compgen -G "$dir/out.h5.tmp.*" > /dev/null; do
      kill -0 "$launcher" 2> /dev/null && [ "$waited" -lt 1200 ] || break
      sleep 0.05
      waited=$((waited + 1))
    done
    if ! kill -0 "$launcher" 2> /dev/null; then
      fail "killed while writing ($target): the run ended before the kill"; continue
    fi
    local ranks
    ranks=$(pgrep -P "$launcher" -x "$(basename "$tcmini")" | tr '\n' ' ')
    if [ "$target" = mpirun ]; then kill -KILL "$launcher"; else kill -KILL $ranks; fi
    wait "$launcher" 2> /dev/null
    local deadline=$((SECONDS + 20))
    for pid in $ranks; do
      while kill -0 "$pid" 2> /dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    done
    local left
    left=$(debris "$dir")
    if ! intact; then fail "killed while writing ($target): the earlier pair changed"; continue; fi
    tcmini_in "$dir" 1 -- mesh.cells=4,4,4
    if [ "$(statuses "$dir")" != " 1 0 " ]; then fail "killed while writing ($target): the next run failed"
    elif [ -n "$(debris "$dir")" ]; then fail "killed while writing ($target): files left: $(debris "$dir")"
    elif [[ "$left" == *tmp* ]] && ! grep -aq "^tcmini: note: removed '.*out.h5.tmp" "$dir/stderr.txt"; then
      fail "killed while writing ($target): the next run removed '$left' without a note"
    else
      echo "ok   killed while writing ($target): left '${left% }', the next run: $(grep -a '^tcmini: note' "$dir/stderr.txt" | cut -c1-120)"
    fi
  done
}

concurrent() {
  fresh concurrent 1 || return
  # The first run takes the lock before its loop and stops itself at its first
  # step (TCMINI_FAULT's stop) until it is sent SIGCONT, so that the second
  # run tries while the first certainly holds the lock, however slow or fast
  # the machine.
  (cd "$dir" && TCMINI_FAULT=step:rank=0:at=1:stop exec "$mpiexec" -n 1 "${mpi_flags[@]}" \
    "$tcmini" "$hex" output.path=out.h5 output.report=none output.overwrite=true \
    mesh.cells=12,12,12 run.steps=1 < /dev/null > first_stdout.txt 2> first_stderr.txt) &
  local launcher=$! waited=0 holder pid="" state=""
  until [ "$state" = T ]; do
    kill -0 "$launcher" 2> /dev/null && [ "$waited" -lt 1200 ] || break
    sleep 0.05
    waited=$((waited + 1))
    holder=$(cat "$dir/out.h5.lock" 2> /dev/null)
    pid=${holder##*.}
    # the third field of /proc/PID/stat (after the name in parentheses)
    [ -n "$pid" ] && state=$(sed 's/^.*) //' "/proc/$pid/stat" 2> /dev/null | cut -d' ' -f1)
  done
  if [ "$state" != T ]; then
    fail "concurrent: the first run did not stop at its first step holding the lock"
    [ -n "$pid" ] && kill -CONT "$pid" 2> /dev/null
    wait "$launcher"; return
  fi
  tcmini_in "$dir" 1 -- mesh.cells=4,4,4
  kill -CONT "$pid"
  wait "$launcher"
  local first=$?
  rm -f "$dir"/first_std*.txt
  (cd "$dir" && md5sum out.h5 out.xmf > pair.md5) # the first run's pair now
  expect_failure "a second run on the path" 1 \
    "output path 'out.h5' is being written by another tcmini run \\(pid $pid on host"
  [ "$first" -eq 0 ] || fail "concurrent: the first run failed (status $first)"
  [ "$(cells_of "$dir/out.h5")" = 1728 ] || fail "concurrent: out.h5 is not the first run's"
}

checks() {
  fresh checks 2 || return
  local cells
  for cells in 6 4; do
    tcmini_in "$dir" 2 TCMINI_FAULT=wrong_FieldFieldTensor -- mesh.cells=$cells,$cells,$cells \
      run.steps=1 verify.checks=on
    local what="checks fail ($cells^3 cells)" problem="" errors
    errors=$(grep -ac '^tcmini: error' "$dir/stderr.txt")
    if [ "$(statuses "$dir")" != " 2 3 " ]; then
      problem="exit status (count status) of the ranks:$(statuses "$dir"), want 3 on both"
    elif [ "$errors" -ne 1 ]; then problem="$errors error lines, want 1"
    elif ! grep -a '^tcmini: error' "$dir/stderr.txt" |
        grep -aq "checks failed: .*; the results are in 'out.failed.h5', not output.path 'out.h5'$"; then
      problem="the error line does not name the failed checks and out.failed.h5"
    elif ! intact; then problem="the earlier pair changed"
    elif [ "$(cells_of "$dir/out.failed.h5")" != $((cells * cells * cells)) ] ||
        [ "$(cells_of "$dir/out.failed.xmf")" != $((cells * cells * cells)) ]; then
      problem="out.failed.h5 and .xmf hold $(cells_of "$dir/out.failed.h5") and $(cells_of "$dir/out.failed.xmf") cells"
    elif ! grep -q 'out\.failed\.h5:/' "$dir/out.failed.xmf"; then
      problem="out.failed.xmf does not read out.failed.h5"
    elif [ "$(debris "$dir" | tr ' ' '\n' | grep -v '^out\.failed\.\(h5\|xmf\)$' | tr -d '\n')" != "" ]; then
      problem="files left: $(debris "$dir")"
    fi
    if [ -n "$problem" ]; then fail "$what: $problem"; else
      echo "ok   $what: $(grep -a '^tcmini: error' "$dir/stderr.txt" | cut -c1-160)"
    fi
  done
}

durable() {
  command -v strace > /dev/null || { echo "skipped: no strace"; exit 77; }
  dir="$workdir/durable"
  rm -rf "$dir" && mkdir -p "$dir" || exit 1
  (cd "$dir" && strace -f -qq -o trace.txt -e trace=openat,fsync,fdatasync,rename,renameat,renameat2 true) ||
    { echo "skipped: strace cannot trace here"; exit 77; }
  fresh durable 1 || return
  (cd "$dir" && timeout -k 5 "$limit" "$mpiexec" -n 1 "${mpi_flags[@]}" strace -f -qq -o trace.txt \
    -e trace=openat,fsync,fdatasync,rename,renameat,renameat2 "$tcmini" "$hex" \
    output.path=out.h5 output.report=none output.overwrite=true verify.checks=off mesh.cells=6,6,6 \
    < /dev/null > stdout.txt 2> stderr.txt) || { fail "durable: the traced run failed"; return; }
  # Replays the trace: which file each descriptor is, what was fsync'ed
  # before the first rename into out.h5, and after the last rename.
  local verdict
  verdict=$(awk '
    { sub(/^[0-9]+ +/, "") }
    /^openat\(/ && match($0, /"[^"]*"/) {
      path = substr($0, RSTART + 1, RLENGTH - 2)
      if (match($0, /= [0-9]+$/)) fd[substr($0, RSTART + 2)] = path
    }
    /^f(data)?sync\(/ {
      n = $0; sub(/^f(data)?sync\(/, "", n); sub(/\).*/, "", n)
      p = fd[n]
      if (p ~ /out\.h5\.tmp\./) what = "h5"; else if (p ~ /out\.xmf\.tmp\./) what = "xmf";
      else if (p == "." || p == "./") what = "dir"; else what = ""
      if (what != "") { if (!renamed) before[what] = 1; else after[what] = 1 }
    }
    /^rename(at2?)?\(/ && /"out\.(h5|xmf)"/ { renamed = 1; after["dir"] = 0 }
    END {
      printf "%s", (before["h5"] && before["xmf"] && before["dir"] && renamed && after["dir"]) ? "ok" : "missing"
      printf " (before the renames: h5 %d, xmf %d, directory %d; renamed %d; directory after %d)\n",
        before["h5"], before["xmf"], before["dir"], renamed, after["dir"]
    }' "$dir/trace.txt")
  if [[ "$verdict" == ok* ]]; then echo "ok   durable: $verdict"; else fail "durable: fsync $verdict"; fi
}

# Under AddressSanitizer (scripts/test-sanitizers.sh) the sanitizer's runtime
# must come first: with GCC's shared runtime it is preloaded ahead of the
# shim; a runtime linked into the program (clang's) has its interceptors of
# write, rename and the rest in front of any preloaded library, so there the
# cases that need the shim are skipped (they run in the ordinary build).
asan_library=$(ldd "$tcmini" 2> /dev/null | awk '/libasan/ {print $3; exit}')
preload=${asan_library:+$asan_library:}$shim
# (nm's listing is read whole: grep -q would stop reading early, and
# pipefail would take nm's SIGPIPE as a failed pipeline.)
sanitized() {
  [ -z "$asan_library" ] && grep -q ' __asan_init$\| __tsan_init$' <<< "$(nm -D "$tcmini" 2> /dev/null)"
}

mkdir -p "$workdir" || exit 1
case "$case" in
  full-* | xmf)
    if sanitized; then echo "skipped: the sanitizer's interceptors come before the shim"; exit 77; fi ;;
esac
case "$case" in
  full-*-romio)
    ompi_info 2> /dev/null | grep -q 'MCA io: romio' || { echo "skipped: no ROMIO"; exit 77; }
    ranks=${case#full-}
    full_disk "${ranks%-romio}" OMPI_MCA_io="$(ompi_info | sed -n 's/.*MCA io: \(romio[0-9]*\).*/\1/p' | head -1)" ;;
  full-*) full_disk "${case#full-}" ;;
  xmf) xmf_publish ;;
  killed) killed ;;
  concurrent) concurrent ;;
  checks) checks ;;
  durable) durable ;;
  *) echo "unknown case '$case'"; exit 2 ;;
esac
echo "$failures failed"
[ "$failures" -eq 0 ]
