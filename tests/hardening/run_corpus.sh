#!/usr/bin/env bash
# run_corpus.sh: runs every bad input of corpus.txt through tcmini and checks
# that it fails cleanly: the expected exit status, exactly one "tcmini: error"
# line matching the expected message, finished within the time limit on every
# rank (no hang), and no file left behind (results, XDMF, report, temporary).
# The same runner takes the injected faults of faults.txt.
# Usage: run_corpus.sh CORPUS DECKS_DIR WORKDIR "RANK COUNTS" TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
#   RANK COUNTS: rank counts to run each case at, when its line names none
#   ("1 3"); a case's own rank counts are intersected with these.
set -uo pipefail
corpus=$1 decks=$2 workdir=$3 wanted_ranks=$4 tcmini=$5 hex=$6 mpiexec=$7
shift 7
mpi_flags=("$@")
limit=${TC_CORPUS_TIMEOUT:-30}
# Each rank records its own exit status, and mpirun does not kill the other
# ranks when one exits with an error (Open MPI), so a rank that would hang
# runs into the time limit instead of being killed by mpirun.
export OMPI_MCA_orte_abort_on_non_zero_status=0
rank_wrapper='cd "$0" || exit 1; status_dir=$1; shift; "$@"; status=$?
echo "$status" > "$status_dir/status.${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-0}}}"
exit "$status"'

# The directory every case starts from.
make_fixture() {
  rm -rf "$1" && mkdir -p "$1/parent_is_file" "$1/a_directory.in" || return 1
  ln -s "$decks" "$1/bad_decks"
  touch "$1/parent_is_file/file"
  echo "an earlier run's results" > "$1/existing.h5"
  ln -s nowhere/x.h5 "$1/dangling.h5"
  mkfifo "$1/a_fifo"
  printf '[mesh]\ncells = 4 4 4\n\0\n' > "$1/nul.in"
  head -c 1100000 /dev/zero | tr '\0' '#' > "$1/big.in"
}
snapshot() { (cd "$1" && find . -mindepth 1 -print0 | sort -z | xargs -0 ls -ld --time-style=+%s.%N; md5sum existing.h5) 2>&1; }

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

cases=0 runs=0 failures=0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in '#'* | '') continue ;; esac
  # args | status | pattern (may hold '|') [| rank counts]
  [[ "$line" =~ ^([^|]*)\|([^|]*)\|(.*)$ ]] || { echo "bad corpus line: $line"; exit 1; }
  args=$(trim "${BASH_REMATCH[1]}") status=$(trim "${BASH_REMATCH[2]}") pattern=${BASH_REMATCH[3]}
  ranks=""
  if [[ "$pattern" =~ ^(.*)\|\ *([0-9][0-9\ ]*)$ ]]; then
    pattern=${BASH_REMATCH[1]} ranks=$(trim "${BASH_REMATCH[2]}")
  fi
  pattern=$(trim "$pattern")
  cases=$((cases + 1))
  read -r -a words <<< "${args//@HEX/$hex}"
  environment=() argv=()
  for word in "${words[@]}"; do
    if [ ${#argv[@]} -eq 0 ] && [[ "$word" =~ ^[A-Z_][A-Z0-9_]*= ]]; then
      environment+=("$word")
    else
      argv+=("$word")
    fi
  done
  for n in ${ranks:-$wanted_ranks}; do
    [[ " $wanted_ranks " == *" $n "* ]] || continue
    runs=$((runs + 1))
    dir="$workdir/case"
    make_fixture "$dir" || exit 1
    before=$(snapshot "$dir")
    start=$(date +%s.%N)
    rm -f "$workdir"/status.*
    env "${environment[@]}" timeout -k 5 "$limit" "$mpiexec" -n "$n" "${mpi_flags[@]}" bash -c "$rank_wrapper" \
      "$dir" "$workdir" "$tcmini" output.path=out.h5 output.report=out.yaml "${argv[@]}" \
      < /dev/null > "$workdir/stdout.txt" 2> "$workdir/stderr.txt"
    got=$?
    statuses=$(cat "$workdir"/status.* 2> /dev/null | sort | uniq -c | tr -s ' \n' ' ')
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    errors=$(grep -ac '^tcmini: error' "$workdir/stderr.txt")
    message=$(grep -a '^tcmini: error' "$workdir/stderr.txt" | head -1)
    after=$(snapshot "$dir")
    problem=""
    if [ "$got" -eq 124 ] || [ "$got" -eq 137 ]; then problem="timed out after ${limit} s (hang?)"
    elif [ "$statuses" != " $n $status " ]; then problem="exit status (count status) of the ranks:$statuses, want $status on all $n"
    elif [ "$errors" -ne 1 ]; then problem="$errors error lines, want 1"
    elif ! grep -aqE -- "$pattern" <<< "$message"; then problem="message does not match /$pattern/"
    elif [ "$before" != "$after" ]; then problem="files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
    fi
    if [ -n "$problem" ]; then
      failures=$((failures + 1))
      echo "FAIL [$n ranks, ${seconds} s] tcmini $args: $problem"
      sed 's/^/    /' "$workdir/stderr.txt" | head -20
    else
      echo "ok   [$n ranks, ${seconds} s] tcmini $args ->$statuses: $message"
    fi
  done
done < "$corpus"
rm -rf "$workdir/case"
echo "$cases cases, $runs runs, $failures failed"
[ "$failures" -eq 0 ] && [ "$runs" -gt 0 ]
