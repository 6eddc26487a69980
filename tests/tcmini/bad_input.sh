#!/usr/bin/env bash
# bad_input.sh: bad decks and command lines must give one clear error line,
# the documented non-zero exit status on every rank (no hang: each run has a
# time limit), and no results file.
# Usage: bad_input.sh WORKDIR DECK TCMINI MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 deck=$2 tcmini=$3 mpiexec=$4
shift 4
mpi=("$mpiexec" -n 2 "$@")
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
printf '[mesh]\ncells = 4 4 4\nnxx = 3\n' > unknown_key.in
printf '[mesh]\ncells = 4 0 4\n' > zero_cells.in
printf '[mesh]\ncells = 4 4\n' > short_triple.in
printf '[meshes]\ncells = 4 4 4\n' > unknown_section.in
printf '[run]\nbackend = fortran\n' > bad_backend.in
mkdir -p not_a_dir_parent && touch not_a_dir_parent/file
failures=0

# expect STATUS PATTERN -- tcmini arguments
expect() {
  local status=$1 pattern=$2
  shift 3
  rm -f out.h5 out.xmf out.yaml
  timeout 60 "${mpi[@]}" "$tcmini" output.path=out.h5 output.report=out.yaml "$@" \
    > stdout.txt 2> stderr.txt
  local got=$?
  local lines
  lines=$(grep -c 'tcmini: error' stderr.txt)
  if [ "$got" -ne "$status" ] || ! grep -q -- "$pattern" stderr.txt || [ "$lines" -ne 1 ] \
     || [ -e out.h5 ] || [ -e out.xmf ] || [ -e out.yaml ]; then
    echo "FAIL: tcmini $* -> status $got (want $status), $lines error lines, want /$pattern/:"
    cat stderr.txt
    failures=$((failures + 1))
  else
    echo "ok: tcmini $* -> $got: $(grep 'tcmini: error' stderr.txt)"
  fi
}

expect 2 "unknown_key.in:3: unknown key 'nxx' in \[mesh\]" -- unknown_key.in
expect 2 "zero_cells.in:2" -- zero_cells.in
expect 2 "short_triple.in:2" -- short_triple.in
expect 2 "unknown_section.in:1" -- unknown_section.in
expect 2 "bad_backend.in:2" -- bad_backend.in
expect 2 "missing.in" -- missing.in
expect 2 "command line: 'mesh.cels=3'" -- "$deck" mesh.cels=3
expect 2 "unknown option" -- --frobnicate "$deck"
expect 2 "ranks" -- "$deck" mesh.cells=1,1,1
expect 2 "" -- "$deck" mesh.cells=4,4,4 mesh.distortion=0.3
expect 1 "not_a_dir_parent/file" -- "$deck" mesh.cells=4,4,4 output.path=not_a_dir_parent/file/out.h5
echo "$failures failed"
[ "$failures" -eq 0 ]
