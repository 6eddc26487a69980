#!/usr/bin/env python3
"""read_output.py: docs/output.md is right about a main-job results file.

Runs the h5py example of the doc's "Reading it" section on FILE (in FILE's
directory, under the name the example uses), then checks that the file holds
exactly the node and cell fields the doc's field table lists, each with the
shape and the non-empty units the table gives.

Usage: read_output.py DOC FILE
"""
import contextlib
import io
import os
import re
import sys

import h5py


def example(doc_text):
    """The first python block after '## Reading it'."""
    section = doc_text[doc_text.index("## Reading it"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    return match.group(1)


def field_table(doc_text):
    """{dataset: (shape text, units)} from the doc's field table."""
    section = doc_text[doc_text.index("## The fields of the main job"):doc_text.index("## Reading it")]
    fields = {}
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) == 4 and cells[0].startswith("`/"):
            fields[cells[0].strip("`").lstrip("/")] = (cells[1], cells[2])
    return fields


def main():
    doc_path, file_path = sys.argv[1], os.path.abspath(sys.argv[2])
    text = open(doc_path, encoding="utf-8").read()
    failures = []

    code = example(text)
    name = re.search(r'h5py\.File\("([^"]+)"', code).group(1)
    os.chdir(os.path.dirname(file_path))
    if os.path.basename(file_path) != name:
        code = code.replace(f'"{name}"', f'"{os.path.basename(file_path)}"')
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output):
            exec(compile(code, "docs/output.md example", "exec"), {})
        print(f"the doc's example ran ({len(output.getvalue().splitlines())} lines of output)")
    except Exception as error:  # the doc's example must run as written
        failures.append(f"the doc's h5py example fails: {type(error).__name__}: {error}")

    table = field_table(text)
    with h5py.File(file_path, "r") as f:
        cells, nodes = f["cells/volume"].shape[0], f["mesh/coordinates"].shape[0]
        written = {f"{group}/{n}" for group in ("cells", "nodes") for n in f[group]}
        listed = {k for k in table if not k.startswith("element_matrices/")}
        for missing in sorted(listed - written):
            failures.append(f"{missing} is in the doc's table but not in the file")
        for extra in sorted(written - listed):
            failures.append(f"{extra} is in the file but not in the doc's table")
        for dataset in sorted(written & listed):
            shape_text, units = table[dataset]
            count = cells if dataset.startswith("cells/") else nodes
            expected = (count,) if shape_text in ("[cells]", "[nodes]") else (count, 3)
            found_units = f[dataset].attrs.get("units", b"")
            found_units = found_units.decode() if isinstance(found_units, bytes) else found_units
            if f[dataset].shape != expected:
                failures.append(f"{dataset} has shape {f[dataset].shape}, the doc says {shape_text}")
            if not found_units:
                failures.append(f"{dataset} has no units")
            elif found_units != units:
                failures.append(f"{dataset} has units '{found_units}', the doc says '{units}'")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"{len(written)} fields, each as docs/output.md lists it, with its units")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
