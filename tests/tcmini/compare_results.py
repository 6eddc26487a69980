#!/usr/bin/env python3
"""compare_results.py: compares tcmini results files written at different
rank counts. Usage: compare_results.py TOLERANCE REFERENCE.h5 OTHER.h5 ...

Mesh coordinates and connectivity must match exactly (they are generated from
global indices). Every /cells, /nodes and /element_matrices dataset must match
normwise:
max|a - b| <= TOLERANCE * max|a|, since sums over cells shared by several
ranks are formed in a different order. /mesh/partition is expected to differ.
Exits 1 naming each dataset that does not match."""
import sys

import h5py
import numpy as np


def datasets(group, prefix=""):
    for name, item in group.items():
        path = f"{prefix}/{name}"
        if isinstance(item, h5py.Dataset):
            yield path, item
        elif isinstance(item, h5py.Group):
            yield from datasets(item, path)


def compare(tolerance, reference_path, other_path):
    failures = []
    with h5py.File(reference_path, "r") as ref, h5py.File(other_path, "r") as other:
        compared = 0
        for path, dataset in datasets(ref):
            if not (path.startswith(("/cells/", "/nodes/", "/element_matrices/"))
                    or path in ("/mesh/coordinates", "/mesh/connectivity")):
                continue
            if path not in other:
                failures.append(f"{other_path}: {path} is missing")
                continue
            a, b = dataset[()], other[path][()]
            if a.shape != b.shape:
                failures.append(f"{other_path}: {path} has shape {b.shape}, expected {a.shape}")
                continue
            compared += 1
            if path.startswith("/mesh/"):
                if not np.array_equal(a, b):
                    failures.append(f"{other_path}: {path} differs")
                continue
            scale = float(np.max(np.abs(a))) if a.size else 0.0
            error = float(np.max(np.abs(a - b))) if a.size else 0.0
            print(f"{other_path}: {path}: max|a-b| = {error:.3e}, max|a| = {scale:.3e}")
            if not error <= tolerance * scale:
                failures.append(f"{other_path}: {path}: max|a-b| = {error:.3e} exceeds "
                                f"{tolerance:g} * {scale:.3e}")
        if compared == 0:
            failures.append(f"{reference_path}: no datasets to compare")
    return failures


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tolerance = float(sys.argv[1])
    failures = []
    for other in sys.argv[3:]:
        failures += compare(tolerance, sys.argv[2], other)
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
