"""check_report: parses a YAML run report written by test_deck_report and
checks its fields against what that test put in.

usage: check_report.py REPORT.yaml RANKS VERSION
"""
import math
import sys

import yaml


def main():
    path, ranks, version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path, encoding="utf-8") as stream:
        report = yaml.safe_load(stream)
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    build, run = report["build"], report["run"]
    expect(report["format"] == 1, "format")
    expect(build["version"] == version, "version %r" % build["version"])
    for key in ("git_revision", "compiler", "compiler_version", "build_type", "c_flags"):
        expect(isinstance(build[key], str) and build[key], "build.%s" % key)
    expect("serial" in build["backends"], "backends %r" % build["backends"])
    expect(isinstance(build["hdf5"], bool), "hdf5")
    expect(run["ranks"] == ranks, "ranks")
    expect(run["label"] == "report test", "label")
    expect(run["backend"] == "serial" and run["layout"] == "right", "backend/layout")
    expect(run["precision"] == "double" and run["threads_per_rank"] == 1, "precision")
    expect(run["checks"] is True and run["tolerance"] == 1e-9, "checks/tolerance")
    expect(run["variants"] == {"FieldFieldScalar": "reference", "DataDataVector": "auto"},
           "variants %r" % run["variants"])
    expect([d["rank"] for d in run["devices"]] == list(range(ranks)), "device ranks")
    expect(all(d["device"] == 'test device "%d" of rank %d' % (r, r)
               for r, d in enumerate(run["devices"])), "device descriptions")
    expect(run["workset"] == {"cells_per_batch": 7, "batches_per_step": 3, "chosen_by": "loop",
                              "rule": "a test's rule"}, "workset %r" % run.get("workset"))
    deck = report["deck"]
    expect("[mesh]\n" in deck and "\ncells = 4 4 4\n" in deck, "deck text")
    expect('\nlabel = "report test"\n' in deck, "deck label")
    phases = report["phases"]
    expect(len(phases) == 29 and "FieldFieldTensor" in phases and "total" in phases, "phases")
    assemble = phases["assemble"]
    expect(assemble["min_s"] == 1.0 and assemble["max_s"] == float(ranks), "assemble min/max")
    expect(abs(assemble["avg_s"] - (ranks + 1) / 2) < 1e-12, "assemble avg")
    expect(phases["total"]["count"] == 1 and phases["mesh"]["count"] == 0, "counts")
    figures = report["figures_of_merit"]
    expect([f["name"] for f in figures] ==
           ["assembly rate", 'weird: "quoted" \\ name\t#', "not a number", "infinite"],
           "figure names %r" % [f["name"] for f in figures])
    expect(figures[0]["value"] == 1.5e6 and figures[0]["unit"] == "cells/s", "figure 0")
    expect(isinstance(figures[1]["value"], float) and figures[1]["value"] == 1e-9, "1e-9")
    expect(math.isnan(figures[2]["value"]) and figures[2]["unit"] == "", "nan")
    expect(figures[3]["value"] == -math.inf, "-inf")
    roofline = report["roofline"]
    expect(roofline["ceilings"] == {"measured": True, "copy_GB_s": 50.0, "fma_GFLOP_s": 100.0,
                                    "source": "given by the test"}, "ceilings %r" % roofline)
    expect(list(roofline["phases"]) == ["FieldFieldScalar", "loop"], "roofline rows")
    row = roofline["phases"]["FieldFieldScalar"]
    expect(row["bytes_per_cell"] == 4000.0 and row["flops_per_cell"] == 3500.0 and
           row["seconds"] == 0.5 and row["GB_s"] == 25.0 and row["GFLOP_s"] == 10.0, "row %r" % row)
    expect(row["copy_fraction"] == 0.5 and row["fma_fraction"] == 0.1, "fractions %r" % row)
    checks = report["checks"]
    expect([c["passed"] for c in checks] == [True, False, False], "check outcomes")
    expect([c["skipped"] for c in checks] == [False, True, False], "skipped checks")
    expect(checks[0]["value"] == 1 + 1e-10 and checks[0]["reference"] == 1.0, "check values")
    expect(checks[1]["note"] == 'quadrature: "1 point" is not exact', "skip note")
    expect("note" not in checks[0], "no note on a check that ran")
    expect(checks[2]["tolerance"] == 1e-9 and checks[2]["scale"] == 2.0, "tolerance, scale")
    expect(report["verdict"] == "failed", "verdict")
    for failure in failures:
        print("FAILED:", failure)
    print("%s: %s" % (path, "FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
