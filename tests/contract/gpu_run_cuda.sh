#!/bin/bash
# gpu_run_cuda.sh: one batch for a GPU machine: build the CUDA backend's
# targets (sm_90, no HDF5), run the CUDA tests, the timing table of every
# variant x kernel x layout at the preset shapes (tcmini-bench --backend cuda
# --variant all, ~1 GB per case, each row checked on 64 cells), and a
# compute-sanitizer pass over the CUDA test (SANITIZE=seconds,
# SANITIZE_TOOL=memcheck|racecheck|...). BENCH_ARGS: more tcmini-bench
# options for the table (e.g. --kernel FieldFieldTensor --precision float).
# Writes logs and the table under $OUT (default /tmp/out).
# Run from the repository root. If the machine has no MPI, Open MPI .debs
# carried in build-cuda/mpidebs are unpacked first.
set -uo pipefail
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-/tmp/build-cuda}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
mpi_args=()
if ! command -v mpicc >/dev/null; then
  echo "no MPI on this machine: unpacking the carried Open MPI"
  for f in build-cuda/mpidebs/*.deb; do dpkg -x "$f" /; done
  ldconfig
  mpi_args=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi)
fi
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B "$BUILD" -DCMAKE_CUDA_ARCHITECTURES=90 -DTCMINI_ENABLE_HDF5=OFF "${mpi_args[@]}" \
  >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j16 --target test_contract_cuda tcmini_bench \
  >"$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
# The backend-generic conformance, API and hand-worked tests also run the CUDA
# backend; build them when they build.
for target in test_contract_conformance test_contract_api test_contract_hand; do
  cmake --build "$BUILD" -j16 --target $target >>"$OUT/build.log" 2>&1 ||
    echo "$target did not build (see build.log)"
done
(cd "$BUILD" && ctest -L 'cuda|contract' --output-on-failure) 2>&1 | tee "$OUT/ctest.log" | tail -25
# shellcheck disable=SC2086
"$BUILD"/bin/tcmini-bench --backend cuda --variant all --layout all --memory 954 --reps 15 \
  --check-cells 64 --csv "$OUT/bench.csv" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
# A second table, e.g. FLOAT_BENCH_ARGS="--precision float --layout right".
if [ -n "${FLOAT_BENCH_ARGS:-}" ]; then
  # shellcheck disable=SC2086
  "$BUILD"/bin/tcmini-bench --backend cuda --variant all --memory 954 --reps 15 --check-cells 64 \
    --csv "$OUT/bench_float.csv" $FLOAT_BENCH_ARGS >"$OUT/bench_float.txt" 2>&1
  echo "second table rc=$?"
fi
if [ -n "${SANITIZE:-}" ]; then
  timeout "${SANITIZE}" compute-sanitizer --tool "${SANITIZE_TOOL:-memcheck}" --print-limit 5 "$BUILD"/bin/test_contract_cuda \
    >"$OUT/sanitizer.log" 2>&1
  echo "compute-sanitizer rc=$?"; tail -5 "$OUT/sanitizer.log"
fi
