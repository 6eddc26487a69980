#!/usr/bin/env python3
"""h5_identical.py: requires two tcmini results files to hold bitwise-identical
datasets under /cells, /nodes and /mesh, and under /element_matrices where
either file holds them (output.element_matrices = true): same names, shapes,
types and bytes; no tolerance. Usage: h5_identical.py A.h5 B.h5. Exits 1
naming each difference, with the largest |a-b| of a floating-point dataset
that differs."""
import sys

import h5py
import numpy as np

GROUPS = ("cells", "nodes", "mesh")
OPTIONAL_GROUPS = ("element_matrices",)


def datasets(group, prefix):
    for name, item in group.items():
        path = f"{prefix}/{name}"
        if isinstance(item, h5py.Dataset):
            yield path, item
        elif isinstance(item, h5py.Group):
            yield from datasets(item, path)


def main(a_path, b_path):
    failures, compared = [], 0
    with h5py.File(a_path, "r") as a_file, h5py.File(b_path, "r") as b_file:
        optional = [g for g in OPTIONAL_GROUPS if g in a_file or g in b_file]
        for group in GROUPS + tuple(optional):
            if group not in a_file or group not in b_file:
                failures.append(f"/{group} is missing from one of the files")
                continue
            a_sets = dict(datasets(a_file[group], f"/{group}"))
            b_sets = dict(datasets(b_file[group], f"/{group}"))
            if sorted(a_sets) != sorted(b_sets):
                failures.append(f"/{group} holds different datasets: {sorted(a_sets)} vs {sorted(b_sets)}")
            for path in sorted(set(a_sets) & set(b_sets)):
                a, b = a_sets[path][()], b_sets[path][()]
                compared += 1
                if a.dtype != b.dtype or a.shape != b.shape:
                    failures.append(f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
                elif a.tobytes() != b.tobytes():
                    detail = ""
                    if np.issubdtype(a.dtype, np.floating):
                        detail = f", max|a-b| = {float(np.max(np.abs(a - b))):.3e}"
                    failures.append(f"{path}: not bitwise identical{detail}")
    for failure in failures:
        print(f"{a_path} vs {b_path}: {failure}")
    print(f"{a_path} vs {b_path}: {compared} datasets compared, {len(failures)} differences")
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
