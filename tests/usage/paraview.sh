#!/usr/bin/env bash
# paraview.sh: what docs/output.md says about ParaView holds where ParaView is
# installed (Debian: paraview, python3-paraview, xvfb; skipped, 77, without
# pvbatch or xvfb-run): pvbatch under xvfb-run opens the main job's .xmf given
# with a directory (./tcmini.xmf), finds every node and cell field of the
# results file, and saves a screenshot.
# Usage: paraview.sh WORKDIR TCMINI HEX_DECK MPIEXEC [MPI FLAGS...]
set -uo pipefail
workdir=$1 tcmini=$2 hex=$3 mpiexec=$4
shift 4
for tool in pvbatch xvfb-run; do
  command -v $tool > /dev/null || { echo "skipped: no $tool"; exit 77; }
done
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
"$mpiexec" -n 2 "$@" "$tcmini" "$hex" mesh.cells=4,4,4 run.steps=1 > run.txt 2>&1 ||
  { echo "FAIL: the run: $(tail -3 run.txt)"; exit 1; }
cat > shot.py << 'PY'
from paraview.simple import OpenDataFile, Show, ColorBy, Render, SaveScreenshot
reader = OpenDataFile("./tcmini.xmf")
reader.UpdatePipeline()
print("point fields:", " ".join(sorted(reader.PointData.keys())))
print("cell fields:", " ".join(sorted(reader.CellData.keys())))
ColorBy(Show(reader), ("POINTS", "load"))
Render()
SaveScreenshot("load.png", ImageResolution=[400, 300])
PY
# A loaded machine can start Xvfb too late for pvbatch ("bad X server
# connection"): that, and only that, is tried again.
for try in 1 2 3; do
  timeout 300 xvfb-run -a pvbatch shot.py > shot.txt 2>&1 && break
  grep -q "bad X server connection\|Xvfb failed to start" shot.txt && [ "$try" -lt 3 ] ||
    { echo "FAIL: pvbatch: $(grep -m3 'ERR\|Error\|error' shot.txt)"; exit 1; }
  echo "note: the X server was not ready (try $try); again"
done
expected_points="elasticity_diagonal flux_load internal_force load lumped_mass stiffness_diagonal"
expected_cells="integral_grad_u2 integral_stress_strain integral_u2 partition volume"
grep -qx "point fields: $expected_points" shot.txt && grep -qx "cell fields: $expected_cells" shot.txt ||
  { echo "FAIL: ParaView's fields differ:"; cat shot.txt; exit 1; }
[ -s load.png ] || { echo "FAIL: no screenshot"; exit 1; }
echo "ParaView $(pvbatch --version 2>/dev/null | head -1): every field, screenshot $(stat -c %s load.png) bytes"
