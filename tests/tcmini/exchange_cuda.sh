#!/usr/bin/env bash
# exchange_cuda.sh: the shared-node sums on the GPU give bitwise the results
# of the host exchange, on 4 ranks sharing the GPUs (a 2 x 2 rank grid, so
# edge nodes sum the terms of 4 ranks), over 3 steps (the peer copies' two
# outboxes each used, and one again): run.exchange=device (pack and sum
# kernels, messages through host buffers), peer (the packed values copied
# GPU to GPU through CUDA IPC), and auto (peer where the ranks can map each
# other's buffers, else device with the reason in the report), with the
# checks on and off (the results then reach the host for the output alone).
# Exits 77 (skipped) where the CUDA backend finds no GPU.
# Usage: exchange_cuda.sh WORKDIR TCMINI DECK MPIEXEC [MPI FLAGS...]
# TC_PYTHON names a Python with h5py and numpy (default python3).
set -euo pipefail
workdir=$1 tcmini=$2 deck=$3 mpiexec=$4
shift 4
script_dir=$(cd "$(dirname "$0")" && pwd)
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir"
# device-nochecks: the results reach the host for the output alone (no
# checks read them first).
# auto-mixed: rank 1 cannot share its buffers (TCMINI_FAULT=peer_map), so
# its three pairs send messages through host buffers while the other three
# copy GPU to GPU.
runs=(host device device-nochecks peer peer-nochecks auto auto-mixed)
for run in "${runs[@]}"; do
  exchange=${run%-nochecks} checks=auto fault=
  exchange=${exchange%-mixed}
  [[ $run == *-nochecks ]] && checks=off
  [[ $run == *-mixed ]] && fault=peer_map:rank=1
  if ! TCMINI_FAULT=$fault "$mpiexec" -n 4 "$@" "$tcmini" "$deck" mesh.cells=6,6,3 run.steps=3 \
    run.backend=cuda run.gpu_sharing=true run.exchange=$exchange verify.checks=$checks \
    output.path="$run.h5" output.report="$run.yaml" >"$run.log" 2>&1; then
    if grep -q "no CUDA GPU" "$run.log"; then
      echo "skipped: $(grep -m1 'no CUDA GPU' "$run.log")"
      exit 77
    fi
    cat "$run.log"
    exit 1
  fi
done
for run in device peer; do
  grep -q "^  exchange: \"$run\"\$" $run.yaml || { echo "$run.yaml does not record exchange: $run"; exit 1; }
done
# auto: the peer copies, or the host buffers with the reason
if ! grep -q '^  exchange: "peer"$' auto.yaml; then
  grep -q '^  exchange_fallback: ' auto.yaml || { echo "auto.yaml: no peer copies and no reason"; exit 1; }
fi
if grep -q '^  exchange: "peer"$' peer.yaml; then
  grep -q '^  exchange: "peer+device"$' auto-mixed.yaml &&
    grep -q '^  exchange_fallback: "rank 0: rank 1 cannot share its GPU buffers' auto-mixed.yaml || {
    echo "auto-mixed.yaml: expected peer+device and rank 1's reason"
    grep '^  exchange' auto-mixed.yaml
    exit 1
  }
  # run.exchange = peer where rank 1 cannot: one line naming it, no results
  if TCMINI_FAULT=peer_map:rank=1 "$mpiexec" -n 4 "$@" "$tcmini" "$deck" mesh.cells=6,6,3 \
    run.steps=1 run.backend=cuda run.gpu_sharing=true run.exchange=peer output.path=refused.h5 \
    output.report=refused.yaml >refused.log 2>&1; then
    echo "run.exchange=peer ran although rank 1 could not share its buffers"
    exit 1
  fi
  grep -q "tcmini: error: rank 0: run.exchange = peer: rank 1 cannot share its GPU buffers" \
    refused.log || { cat refused.log; exit 1; }
  [[ ! -e refused.h5 ]] || { echo "refused run left refused.h5"; exit 1; }
fi
for run in "${runs[@]:1}"; do
  "${TC_PYTHON:-python3}" "$script_dir/compare_results.py" 0 host.h5 $run.h5
done
