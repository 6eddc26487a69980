#!/usr/bin/env python3
"""check_phases.py: every second of a tcmini run is in a named phase, and the
results file holds the final phase times. Usage:
check_phases.py REPORT.yaml RESULTS.h5

- The phases other than "total" add up to "total" (the mean rank's seconds,
  avg) within 2%, or within 5 ms for a run so short that 2% is less.
- No phase is negative; the run's set-up phases (startup, device, mesh,
  setup) and the output were timed.
- /run/phases of the results file lists the report's phases in its order
  with the same min, avg and max (the report prints round-trip digits), so
  output and total are the final values, not the ones of the moment the file
  was written.
- The loop's roofline (run.roofline = true) has a row per modelled phase and
  one for the whole loop, whose bytes and flops per cell are the phases'
  sums (with run.inputs = fused, a fused_diffusion row for the scalar
  problem's six kernels and a fused_elasticity row for the elasticity trio,
  and no basis row, as no input is built; with batches in flight, one
  batches row for them all); FieldFieldTensor's bytes per cell are those of its
  shape (Q1, 27 points, double: two 24 x 27 x 9 inputs and a 24 x 24
  output, 97920 B);
  the ceilings were measured and every fraction is positive.
Exits 1 naming each failure."""
import sys

import h5py
import yaml

RELATIVE, ABSOLUTE = 0.02, 0.005


def check_roofline(roofline, fused, failures):
    rows = roofline.get("phases") or {}
    expected = ["geometry", "basis", "FieldFieldScalar", "FieldFieldVector", "FieldFieldTensor",
                "DataFieldScalar", "DataFieldVector", "DataFieldTensor", "DataDataScalar",
                "DataDataVector", "DataDataTensor", "assemble", "loop"]
    if fused:  # every kernel runs in one of the two fused products
        expected = ["geometry", "fused_diffusion", "fused_elasticity", "assemble", "loop"]
    if "batches" in rows:  # batches in flight: their phases timed together
        expected = ["batches", "loop"]
    if list(rows) != expected:
        failures.append(f"roofline rows {list(rows)}, expected {expected}")
        return
    for key in ("bytes_per_cell", "flops_per_cell"):
        parts = sum(row[key] for name, row in rows.items() if name != "loop")
        if abs(parts - rows["loop"][key]) > 1e-9 * parts:
            failures.append(f"roofline {key}: the phases sum to {parts}, the loop has "
                            f"{rows['loop'][key]}")
    if not fused and "FieldFieldTensor" in rows and rows["FieldFieldTensor"]["bytes_per_cell"] != 8.0 * (2 * 24 * 27 * 9 + 24 * 24):
        failures.append(f"FieldFieldTensor bytes per cell {rows['FieldFieldTensor']}")
    ceilings = roofline.get("ceilings") or {}
    if not ceilings.get("measured") or not ceilings.get("copy_GB_s", 0) > 0:
        failures.append(f"roofline ceilings not measured: {ceilings}")
    for name, row in rows.items():
        if not (row["copy_fraction"] > 0 and row["fma_fraction"] > 0 and row["GB_s"] > 0):
            failures.append(f"roofline row {name}: {row}")


def main():
    report_path, results_path = sys.argv[1], sys.argv[2]
    with open(report_path, encoding="utf-8") as stream:
        report = yaml.safe_load(stream)
    phases = report["phases"]
    failures = []
    check_roofline(report.get("roofline") or {}, report["run"]["inputs"] == "fused", failures)
    total = phases["total"]["avg_s"]
    accounted = sum(p["avg_s"] for name, p in phases.items() if name != "total")
    slack = max(RELATIVE * total, ABSOLUTE)
    if abs(accounted - total) > slack:
        failures.append(f"phases add up to {accounted:.6f} s, total is {total:.6f} s "
                        f"(allowed {slack:.6f} s)")
    for name, p in phases.items():
        if min(p["min_s"], p["avg_s"], p["max_s"]) < 0:
            failures.append(f"phase {name} is negative: {p}")
    for name in ("startup", "device", "mesh", "setup", "output", "total"):
        timed = phases.get(name, {"count": 0, "max_s": 0})
        if timed["count"] < 1 or timed["max_s"] <= 0:
            failures.append(f"phase {name} was not timed: {timed}")
    with h5py.File(results_path, "r") as results:
        table = results["/run/phases"][:]
    names = [row["name"].decode() for row in table]
    if names != list(phases):
        failures.append(f"/run/phases lists {names}, the report {list(phases)}")
    for row in table:
        name = row["name"].decode()
        if name not in phases:
            continue
        stored = (row["min_seconds"], row["avg_seconds"], row["max_seconds"])
        reported = (phases[name]["min_s"], phases[name]["avg_s"], phases[name]["max_s"])
        if tuple(float(x) for x in stored) != reported:
            failures.append(f"/run/phases {name} holds {stored}, the report {reported}")
    for failure in failures:
        print("FAILED:", failure)
    print(f"{report_path}: phases add up to {accounted:.6f} s of total {total:.6f} s: "
          f"{'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
