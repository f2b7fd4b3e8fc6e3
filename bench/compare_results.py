"""Compare two runs' tables: every CSV and parquet file under both results/ folders, cell by
cell. A number matches when it is equal or within --tol (absolute, and relative to its size
above 1); any other cell must be equal. Prints each column whose numbers differ in the last
bits, and every difference beyond the tolerance; exits 1 when there is one, or when a table
is in one folder only.

    python bench/compare_results.py BEFORE/results AFTER/results [--tol 1e-12]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def tables(root: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(root)): p
        for p in sorted(root.rglob("*"))
        if p.suffix in (".csv", ".parquet") and not p.name.startswith(".")
    }


def read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)


def compare(a: pd.DataFrame, b: pd.DataFrame, tol: float) -> tuple[list[str], list[str]]:
    """(columns within tol but not bit-identical, problems beyond tol)."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return [], [f"shape or columns differ: {a.shape} {list(a.columns)} vs {b.shape}"]
    close, far = [], []
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(np.float64), y.to_numpy(np.float64)
            same = (xv == yv) | (np.isnan(xv) & np.isnan(yv))
            if same.all():
                continue
            ok = same | (np.abs(xv - yv) <= tol * np.maximum(1.0, np.abs(xv)))
            if ok.all():
                gap = np.nanmax(np.abs(xv - yv)[~same])
                close.append(f"{col} (max |diff| {gap:.1e}, {int((~same).sum())} cells)")
            else:
                i = int(np.flatnonzero(~ok)[0])
                far.append(f"{col}: row {i}: {xv[i]!r} vs {yv[i]!r}")
        elif not x.astype(str).equals(y.astype(str)):
            i = int(np.flatnonzero(x.astype(str).to_numpy() != y.astype(str).to_numpy())[0])
            far.append(f"{col}: row {i}: {x.iloc[i]!r} vs {y.iloc[i]!r}")
    return close, far


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--tol", type=float, default=1e-12)
    a = ap.parse_args()
    left, right = tables(a.before), tables(a.after)
    bad = 0
    for name in sorted(set(left) ^ set(right)):
        print(f"only in {'before' if name in left else 'after'}: {name}")
        bad += 1
    identical = 0
    for name in sorted(set(left) & set(right)):
        close, far = compare(read(left[name]), read(right[name]), a.tol)
        identical += not (close or far)
        for c in close:
            print(f"last bits  {name}: {c}")
        for f in far:
            print(f"DIFFERS    {name}: {f}")
        bad += len(far)
    print(f"{identical} of {len(set(left) & set(right))} tables identical; {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
