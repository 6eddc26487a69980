#!/usr/bin/env bash
# signals.sh: SIGTERM and SIGINT stop a run promptly and leave no results,
# report or temporary file. Three cases on 3 ranks: SIGTERM, then SIGINT, sent
# to mpirun in the middle of the steps, once rank 0 has reached the third step
# (a TCMINI_FAULT mark point: no fixed sleep, so a loaded machine's slow
# start-up does not matter; mpirun passes SIGTERM to the ranks, which stop
# after the current step); and SIGTERM sent straight to the ranks
# while the results file is being written under its temporary name (the
# handler deletes it; the write then fails).
# Usage: signals.sh WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 hex=$3 mpiexec=$4
shift 4
mpi_flags=("$@")
failures=0

# Waits up to $2 seconds for process $1 to end; false if it is still there.
wait_gone() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# signal_case NAME SIGNAL TARGET(mpirun|ranks) WHEN(steps|write) -- tcmini arguments
signal_case() {
  local name=$1 signal=$2 target=$3 when=$4
  shift 5
  local dir="$workdir/$name"
  rm -rf "$dir" && mkdir -p "$dir" || exit 1
  local fault=""
  [ "$when" = steps ] && fault=step:rank=0:at=3:mark=reached.step
  (cd "$dir" && TCMINI_FAULT=$fault exec "$mpiexec" -n 3 "${mpi_flags[@]}" "$tcmini" "$hex" \
      output.path=out.h5 output.report=out.yaml "$@" < /dev/null > stdout.txt 2> stderr.txt) &
  local mpirun=$! problem="" waited=0
  # Until rank 0 is in its third step, or the temporary results file exists
  # (at most 5 minutes: start-up is slow under sanitizers).
  local sign="$dir/out.h5.tmp.*"
  [ "$when" = steps ] && sign="$dir/reached.step"
  until compgen -G "$sign" > /dev/null; do
    kill -0 "$mpirun" 2> /dev/null && [ "$waited" -lt 6000 ] || break
    sleep 0.05
    waited=$((waited + 1))
  done
  rm -f "$dir/reached.step"
  kill -0 "$mpirun" 2> /dev/null || problem="the run ended before the signal (make it longer)"
  local sent=$SECONDS
  if [ -z "$problem" ]; then
    if [ "$target" = mpirun ]; then
      kill -s "$signal" "$mpirun"
    else
      pkill -"$signal" -P "$mpirun" -x "$(basename "$tcmini")" # the ranks mpirun started
    fi
    wait_gone "$mpirun" 10 || { problem="still running 10 s after SIG$signal"; kill -KILL "$mpirun"; }
  fi
  wait "$mpirun"
  local status=$? seconds=$((SECONDS - sent))
  local left
  left=$(cd "$dir" && ls -A | grep -v '^std\(out\|err\)\.txt$' | tr '\n' ' ')
  if [ -z "$problem" ] && [ "$status" -eq 0 ]; then problem="exit status 0"; fi
  if [ -z "$problem" ] && [ -n "$left" ]; then problem="files left: $left"; fi
  if [ -z "$problem" ] && ! grep -aq "^tcmini: error: .*interrupted by SIG\|^tcmini: error: .*out.h5" "$dir/stderr.txt"; then
    problem="no error line naming the signal or the results file"
  fi
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "FAIL $name: $problem"
    sed 's/^/    /' "$dir/stderr.txt" | head -20
  else
    echo "ok   $name: SIG$signal to $target during the $when: exit $status within $seconds s," \
         "no files left: $(grep -a '^tcmini: error' "$dir/stderr.txt" | head -1)"
  fi
}

signal_case term_steps TERM mpirun steps -- mesh.cells=16,16,16 run.steps=1000 verify.checks=off
signal_case int_steps INT mpirun steps -- mesh.cells=16,16,16 run.steps=1000 verify.checks=off
signal_case term_write TERM ranks write -- mesh.cells=36,36,36 run.steps=1 verify.checks=off \
  output.element_matrices=true
echo "$failures failed"
[ "$failures" -eq 0 ]
