#!/usr/bin/env python3
"""scripts/collect.py: tcmini YAML run reports -> one CSV and PNG plots of a
weak or strong scaling study (time per phase, parallel efficiency and
throughput against ranks). Definitions: docs/scaling.md.

usage: scripts/collect.py [--study auto|weak|strong] [--csv FILE] [--plots DIR]
                          [--no-plots] REPORT_OR_DIRECTORY...

Runs are grouped into series (same label, backend, precision, threads per
rank); each series is measured against its smallest rank count N0, using the
assembly loop's time t (from the "assembly loop" cells/s figure: t = cells *
steps / (cells/s)):
  speedup    S(N) = (cells/s at N) / (cells/s at N0)
  efficiency E(N) = S(N) * N0 / N
which is t(N0) / t(N) for weak scaling (cells per rank fixed) and
t(N0) * N0 / (t(N) * N) for strong scaling (total cells fixed). With several
runs at N0 the fastest is the reference. Needs PyYAML; plots need matplotlib
(without it the CSV is still written, with a warning).
Exit status: 0 success, 1 unreadable or inconsistent reports, 2 bad usage.
"""
import argparse
import csv
import math
import os
import re
import sys

import yaml

KERNELS = [
    "FieldFieldScalar", "FieldFieldVector", "FieldFieldTensor",
    "DataFieldScalar", "DataFieldVector", "DataFieldTensor",
    "DataDataScalar", "DataDataVector", "DataDataTensor",
]
# The contractions' phases and figures: the nine kernels, and the fused
# products (run.inputs = fused) that run them with their inputs built on chip.
CONTRACTIONS = KERNELS + ["fused_diffusion", "fused_elasticity"]
LOOP_FIGURE = "assembly loop"
# Phases of the run that are not kernels, drawn in the phase plot's left panel
# ("total" is drawn thicker; "checks" and "output" are outside the loop).
RUN_PHASES = ["mesh", "geometry", "basis", "assemble", "exchange", "checks", "output", "total"]
SERIES_KEYS = ("label", "backend", "precision", "threads_per_rank")


class ReportError(Exception):
    """A report that cannot be read, or reports that do not form a study."""


def deck_values(text):
    """Parses the deck text of a report: {(section, key): value string}."""
    values = {}
    section = ""
    for line in text.splitlines():
        line = re.sub(r'("[^"]*")|[#;].*', lambda m: m.group(1) or "", line).strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif "=" in line:
            key, value = line.split("=", 1)
            values[(section, key.strip())] = value.strip().strip('"')
    return values


def number(value, what, path):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ReportError(f"{path}: {what} is not a number: {value!r}")
    return float(value)


def read_report(path):
    """One report as a flat dict of the values a row needs."""
    try:
        with open(path, encoding="utf-8") as stream:
            report = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError) as error:
        raise ReportError(f"{path}: cannot read: {error}") from error
    except UnicodeDecodeError as error:
        raise ReportError(f"{path}: not a text file (a YAML report is)") from error
    if not isinstance(report, dict) or not isinstance(report.get("run"), dict):
        raise ReportError(f"{path}: not a tcmini run report (no 'run' mapping)")
    if report.get("format") != 1:
        print(f"collect.py: warning: {path}: report format {report.get('format')!r}, "
              "this collector reads format 1", file=sys.stderr)
    run = report["run"]
    # The deck is a top-level key in format 1; accept it inside run too.
    deck = deck_values(report.get("deck") or run.get("deck") or "")
    try:
        cells_xyz = [int(n) for n in re.split(r"[\s,]+", deck[("mesh", "cells")].strip())]
        steps = int(deck[("run", "steps")])
    except (KeyError, ValueError) as error:
        raise ReportError(f"{path}: the deck in the report has no valid [mesh] cells "
                          f"or [run] steps ({error})") from error
    if len(cells_xyz) != 3:
        raise ReportError(f"{path}: [mesh] cells is not three integers")
    figures = {f.get("name"): f for f in report.get("figures_of_merit") or []}
    if LOOP_FIGURE not in figures:
        raise ReportError(f"{path}: no '{LOOP_FIGURE}' figure of merit (did the run finish?)")
    cells = cells_xyz[0] * cells_xyz[1] * cells_xyz[2]
    cells_per_s = number(figures[LOOP_FIGURE].get("value"), f"'{LOOP_FIGURE}'", path)
    if cells_per_s <= 0:
        raise ReportError(f"{path}: '{LOOP_FIGURE}' is {cells_per_s}, not positive")
    ranks = int(number(run.get("ranks"), "run.ranks", path))
    phases = {}
    for name, stats in (report.get("phases") or {}).items():
        phases[name] = {k: number(stats.get(k), f"phase {name} {k}", path)
                        for k in ("min_s", "avg_s", "max_s")}
    return {
        "report": path,
        "label": str(run.get("label", "")),
        "backend": str(run.get("backend", "")),
        "precision": str(run.get("precision", "")),
        "layout": str(run.get("layout", "")),
        "ranks": ranks,
        "threads_per_rank": int(run.get("threads_per_rank", 0)),
        "box": "x".join(str(n) for n in cells_xyz),
        "cells": cells,
        "cells_per_rank": cells / ranks,
        "steps": steps,
        "loop_s": cells * steps / cells_per_s,
        "cells_per_s": cells_per_s,
        "gflops": {k: figures[k]["value"] for k in CONTRACTIONS if k in figures},
        "phases": phases,
        "verdict": str(report.get("verdict", "")),
    }


def find_reports(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, name) for name in os.listdir(path)
                            if name.endswith((".yaml", ".yml")))
        else:
            files.append(path)
    return files


def same(a, b):
    return math.isclose(a, b, rel_tol=1e-12)


def series_of(rows):
    """{series key: rows sorted by ranks}, in order of first appearance."""
    series = {}
    for row in rows:
        series.setdefault(tuple(row[k] for k in SERIES_KEYS), []).append(row)
    return {key: sorted(members, key=lambda r: (r["ranks"], r["report"]))
            for key, members in series.items()}


def infer_study(series):
    """weak if every series keeps cells per rank, strong if it keeps total cells."""
    def keeps(field):
        return all(same(r[field], members[0][field])
                   for members in series.values() for r in members)
    if all(len({r["ranks"] for r in members}) == 1 for members in series.values()):
        raise ReportError("every series has a single rank count: nothing to scale")
    if keeps("cells"):
        return "strong"
    if keeps("cells_per_rank"):
        return "weak"
    raise ReportError("the reports keep neither the total cells (strong) nor the cells per "
                      "rank (weak) within a series; give --study, or collect fewer reports")


def add_efficiency(series, study):
    field = "cells_per_rank" if study == "weak" else "cells"
    for members in series.values():
        base_ranks = members[0]["ranks"]
        base = [r for r in members if r["ranks"] == base_ranks]
        reference = max(base, key=lambda r: r["cells_per_s"])
        for row in members:
            if not same(row[field], reference[field]):
                raise ReportError(
                    f"{row['report']}: {field.replace('_', ' ')} {row[field]:g} differs from "
                    f"{reference[field]:g} in {reference['report']}: not a {study}-scaling study")
            row["study"] = study
            row["speedup"] = row["cells_per_s"] / reference["cells_per_s"]
            row["efficiency"] = row["speedup"] * base_ranks / row["ranks"]


def phase_names(rows):
    names = []
    for row in rows:
        names += [name for name in row["phases"] if name not in names]
    return names


def write_csv(rows, path):
    phases = phase_names(rows)
    columns = ["study", "label", "backend", "precision", "layout", "ranks", "threads_per_rank",
               "box", "cells", "cells_per_rank", "steps", "loop_s", "cells_per_s",
               "speedup", "efficiency", "verdict"]
    columns += [f"{p}_{s}_s" for p in phases for s in ("max", "avg")]
    columns += [f"{k}_gflops" for k in CONTRACTIONS if any(k in r["gflops"] for r in rows)]
    columns.append("report")
    temporary = f"{path}.tmp.{os.getpid()}"  # renamed into place once whole
    with open(temporary, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            values = dict(row)
            for p in phases:
                for s in ("max", "avg"):
                    values[f"{p}_{s}_s"] = row["phases"].get(p, {}).get(f"{s}_s", "")
            for k in CONTRACTIONS:
                values[f"{k}_gflops"] = row["gflops"].get(k, "")
            writer.writerow([format_value(values[c]) for c in columns])
    os.replace(temporary, path)


def format_value(value):
    if isinstance(value, float):
        return f"{value:.9g}" if value != int(value) or abs(value) >= 1e15 else str(int(value))
    return str(value)


def series_name(key):
    return ", ".join(f"{k}={v}" for k, v in zip(SERIES_KEYS, key) if v != "")


def slug(key):
    return re.sub(r"[^A-Za-z0-9]+", "-", "-".join(str(v) for v in key)).strip("-")


def plot(series, study, directory):
    """Writes the PNG plots; returns their paths (none without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import EngFormatter, FixedLocator, NullLocator, ScalarFormatter
    except ImportError:
        print("collect.py: warning: no matplotlib: wrote the CSV, no plots", file=sys.stderr)
        return []

    all_ranks = sorted({r["ranks"] for members in series.values() for r in members})

    def rank_axis(axis):
        axis.set_xscale("log", base=2)
        axis.xaxis.set_major_locator(FixedLocator(all_ranks))
        axis.xaxis.set_minor_locator(NullLocator())
        axis.xaxis.set_major_formatter(ScalarFormatter())
        axis.set_xlabel("MPI ranks")
        axis.grid(True, which="major", alpha=0.3)

    what = "cells per rank fixed" if study == "weak" else "total cells fixed"
    written = []
    many = len(series) > 1
    for key, members in series.items():
        first = members[0]
        figure, (left, right) = plt.subplots(1, 2, figsize=(12, 6), sharey=True)
        for axis, names in ((left, RUN_PHASES), (right, CONTRACTIONS)):
            for name in names:
                points = [(r["ranks"], r["phases"][name]["max_s"]) for r in members
                          if name in r["phases"] and r["phases"][name]["max_s"] > 0]
                if points:
                    x, y = zip(*points)
                    axis.plot(x, y, marker="o", label=name,
                              linewidth=2.5 if name == "total" else 1.5,
                              color="black" if name == "total" else None)
            axis.set_yscale("log")
            rank_axis(axis)
            axis.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.14))
        left.set_ylabel(f"seconds, slowest rank ({first['steps']} steps summed)")
        left.set_title("run phases")
        right.set_title("contractions")
        figure.suptitle(f"tcmini {study} scaling ({what}): time per phase\n{series_name(key)}")
        figure.tight_layout()
        path = os.path.join(directory, f"scaling-phases{'-' + slug(key) if many else ''}.png")
        figure.savefig(path, dpi=120)
        plt.close(figure)
        written.append(path)

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5))
    for key, members in series.items():
        x = [r["ranks"] for r in members]
        left.plot(x, [r["efficiency"] for r in members], marker="o", label=series_name(key))
        right.plot(x, [r["cells_per_s"] for r in members], marker="o", label=series_name(key))
        base = members[0]
        best = max((r for r in members if r["ranks"] == base["ranks"]),
                   key=lambda r: r["cells_per_s"])
        ideal = [best["cells_per_s"] * n / base["ranks"] for n in all_ranks if n >= base["ranks"]]
        right.plot([n for n in all_ranks if n >= base["ranks"]], ideal, linestyle="--",
                   color="gray", label="ideal (linear)" if key == next(iter(series)) else None)
    left.axhline(1.0, linestyle="--", color="gray", label="ideal")
    top = max(1.1, max(r["efficiency"] for m in series.values() for r in m) * 1.05)
    left.set_ylim(0, top)
    left.set_ylabel("parallel efficiency")
    left.set_title("efficiency of the assembly loop" +
                   (": t(N0) / t(N)" if study == "weak" else ": t(N0) N0 / (t(N) N)"))
    right.set_yscale("log")
    right.yaxis.set_major_formatter(EngFormatter())
    right.yaxis.set_minor_formatter(EngFormatter())
    right.set_ylabel("cells per second (assembly loop, all ranks)")
    right.set_title("throughput")
    for axis in (left, right):
        rank_axis(axis)
        axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    figure.suptitle(f"tcmini {study} scaling ({what})")
    figure.tight_layout()
    path = os.path.join(directory, "scaling-efficiency.png")
    figure.savefig(path, dpi=120)
    plt.close(figure)
    written.append(path)
    return written


def main(argv):
    parser = argparse.ArgumentParser(
        description="tcmini run reports -> scaling CSV and plots (see docs/scaling.md)")
    parser.add_argument("paths", nargs="+", metavar="REPORT_OR_DIRECTORY",
                        help="YAML reports, or directories holding them (*.yaml)")
    parser.add_argument("--study", choices=("auto", "weak", "strong"), default="auto",
                        help="auto: strong if total cells are fixed, weak if cells per rank are")
    parser.add_argument("--csv", help="CSV to write [scaling.csv in the first directory "
                        "given, else in the current one]")
    parser.add_argument("--plots", help="directory for the PNGs [the CSV's directory]")
    parser.add_argument("--no-plots", action="store_true", help="write the CSV only")
    args = parser.parse_args(argv)

    files = find_reports(args.paths)
    if not files:
        parser.error("no reports found in " + " ".join(args.paths))
    directory = next((p for p in args.paths if os.path.isdir(p)), ".")
    csv_path = args.csv or os.path.join(directory, "scaling.csv")
    plot_dir = args.plots or os.path.dirname(csv_path) or "."
    # The destinations, before anything is read or written.
    csv_directory = os.path.dirname(csv_path) or "."
    if os.path.isdir(csv_path) or not os.path.isdir(csv_directory):
        parser.error(f"--csv {csv_path}: " + ("is a directory" if os.path.isdir(csv_path) else
                                               f"no directory '{csv_directory}'"))
    if not args.no_plots and os.path.exists(plot_dir) and not os.path.isdir(plot_dir):
        parser.error(f"--plots {plot_dir}: exists and is not a directory")
    try:
        rows = [read_report(f) for f in files]
        series = series_of(rows)
        study = infer_study(series) if args.study == "auto" else args.study
        add_efficiency(series, study)
    except ReportError as error:
        print(f"collect.py: error: {error}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        print(f"collect.py: error: a report is not a well-formed tcmini report "
              f"({type(error).__name__}: {error})", file=sys.stderr)
        return 1
    for row in rows:
        if row["verdict"] not in ("passed", "not checked"):
            print(f"collect.py: warning: {row['report']}: verdict '{row['verdict']}'",
                  file=sys.stderr)
    ordered = [r for members in series.values() for r in members]
    try:
        write_csv(ordered, csv_path)
    except OSError as error:
        print(f"collect.py: error: cannot write '{csv_path}': {error.strerror}", file=sys.stderr)
        return 1
    print(f"collect.py: {len(rows)} reports, {study} scaling, {len(series)} series -> {csv_path}")
    if not args.no_plots:
        os.makedirs(plot_dir, exist_ok=True)
        for path in plot(series, study, plot_dir):
            print(f"collect.py: plot {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
