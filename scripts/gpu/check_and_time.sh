#!/usr/bin/env bash
# scripts/gpu/check_and_time.sh: on a GPU node, build tcmini for sm_90, run the
# CUDA tests and the whole suite, then run the mini-app on the CUDA backend and
# on the CPU cores and compare the two results files. Logs go to $OUT (default
# ./gpu-out). Environment: BUILD (default /tmp/tcmini-gpu-build), JOBS,
# CELLS (default 64,64,64 for the timed runs), CUDA_ARCH (default 90).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-/tmp/tcmini-gpu-build}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/../.." && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
mpi_args=()
if [ -x /usr/bin/mpicc.openmpi ]; then
  mpi_args=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi)
fi
cmake -S "$root" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  "${mpi_args[@]}" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" > "$OUT/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
(cd "$BUILD" && ctest -L cuda --output-on-failure) > "$OUT/ctest_cuda.log" 2>&1
tail -8 "$OUT/ctest_cuda.log"
(cd "$BUILD" && ctest -j 8 --timeout 400 -LE cuda) > "$OUT/ctest_all.log" 2>&1
tail -12 "$OUT/ctest_all.log"

mpirun=(mpirun -n 1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
tcmini=("$BUILD/bin/tcmini" "$root/inputs/hex.in" output.overwrite=true)
cd "$OUT" || exit 1
for backend in cuda openmp; do
  threads=$([ $backend = openmp ] && nproc || echo 0)
  echo "== default deck, $backend"
  "${mpirun[@]}" "${tcmini[@]}" run.backend=$backend run.threads="$threads" \
    output.path=default-$backend.h5 output.report=default-$backend.yaml > default-$backend.txt 2>&1
  echo "rc=$?"; grep -E 'verdict|FAIL|error' default-$backend.txt
done
python3 "$root/tests/tcmini/compare_results.py" 1e-12 default-openmp.h5 default-cuda.h5 | tail -12
for precision in double float; do
  for backend in cuda openmp; do
    threads=$([ $backend = openmp ] && nproc || echo 0)
    name=timed-$backend-$precision
    "${mpirun[@]}" "${tcmini[@]}" run.backend=$backend run.threads="$threads" mesh.cells="${CELLS:-64,64,64}" \
      run.precision=$precision run.steps=5 output.path=none output.report=$name.yaml > $name.txt 2>&1
    echo "== $name rc=$?"
    grep -E 'basis|geometry|assemble|FieldField|DataField|DataData|total|assembly loop|verdict' $name.txt
  done
done
