#!/usr/bin/env python3
"""tests/slurm/check_outputs.py: checks what a tcmini job under Slurm wrote.

usage: check_outputs.py run STEM RANKS NX,NY,NZ LX,LY,LZ
         STEM.yaml (run report) and STEM.h5 (results file) of one run on RANKS
         ranks over a box of NX x NY x NZ cells and LX x LY x LZ extents: the
         report says RANKS ranks, every check ran and passed, verdict passed; the
         results file has every cell once, cell volumes that sum to LX*LY*LZ, and
         a partition naming ranks 0 .. RANKS-1 (so the ranks formed one job, not
         RANKS jobs of one rank each).
       check_outputs.py csv FILE RANKS...
         scaling.csv of scripts/collect.py: one passed weak-scaling row per rank
         count given, in that order, efficiency 1 at the first.
Needs PyYAML, h5py and numpy. Exit status 0 when all holds, 1 otherwise.
"""
import csv
import math
import sys

import h5py
import numpy as np
import yaml


def check_run(stem, ranks, cells, lengths):
    try:
        return check_files(stem, ranks, cells, lengths)
    except (OSError, KeyError, TypeError, yaml.YAMLError) as error:
        return [f"{stem}: cannot read the report or results file: {error}"]


def check_files(stem, ranks, cells, lengths):
    failures = []
    with open(f"{stem}.yaml", encoding="utf-8") as stream:
        report = yaml.safe_load(stream)
    if report["run"]["ranks"] != ranks:
        failures.append(f"{stem}.yaml: run.ranks is {report['run']['ranks']}, expected {ranks}")
    checks = report.get("checks") or []
    ran = [c for c in checks if not c["skipped"]]
    if not ran:
        failures.append(f"{stem}.yaml: no check ran")
    failures += [f"{stem}.yaml: check failed: {c['name']}" for c in ran if not c["passed"]]
    if report.get("verdict") != "passed":
        failures.append(f"{stem}.yaml: verdict is {report.get('verdict')!r}, expected 'passed'")

    with h5py.File(f"{stem}.h5", "r") as results:
        volume = results["/cells/volume"][()]
        partition = results["/mesh/partition"][()]
    count = math.prod(cells)
    if volume.shape != (count,):
        failures.append(f"{stem}.h5: /cells/volume has shape {volume.shape}, expected ({count},)")
    expected = math.prod(lengths)
    if not abs(float(np.sum(volume)) - expected) <= 1e-9 * expected:
        failures.append(f"{stem}.h5: cell volumes sum to {float(np.sum(volume))!r}, expected {expected}")
    owners = sorted(set(int(p) for p in partition))
    if owners != list(range(ranks)):
        failures.append(f"{stem}.h5: /mesh/partition names ranks {owners}, expected 0..{ranks - 1}")
    if not failures:
        print(f"{stem}: {ranks} ranks, {count} cells, {len(ran)} checks passed, "
              f"volume {float(np.sum(volume)):.12g}")
    return failures


def check_csv(path, rank_counts):
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            rows = list(csv.DictReader(stream))
    except OSError as error:
        return [f"{path}: cannot read: {error}"]
    got = [int(row["ranks"]) for row in rows]
    if got != rank_counts:
        return [f"{path}: rows of {got} ranks, expected {rank_counts}"]
    failures = [f"{path}: row of {row['ranks']} ranks: {key} is {row[key]!r}, expected {value!r}"
                for row in rows
                for key, value in (("study", "weak"), ("verdict", "passed"))
                if row[key] != value]
    if float(rows[0]["efficiency"]) != 1.0:
        failures.append(f"{path}: efficiency at {rows[0]['ranks']} ranks is "
                        f"{rows[0]['efficiency']}, expected 1")
    if not failures:
        print(f"{path}: rows of {got} ranks, all passed")
    return failures


def triple(text):
    values = [float(v) for v in text.split(",")]
    if len(values) != 3:
        sys.exit(f"check_outputs.py: expected three numbers, got '{text}'")
    return values


def main():
    args = sys.argv[1:]
    if len(args) == 5 and args[0] == "run":
        failures = check_run(args[1], int(args[2]), [int(v) for v in triple(args[3])],
                             triple(args[4]))
    elif len(args) >= 3 and args[0] == "csv":
        failures = check_csv(args[1], [int(v) for v in args[2:]])
    else:
        sys.exit(__doc__)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
