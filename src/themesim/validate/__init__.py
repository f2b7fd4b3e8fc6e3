"""The validation suite: coverage of every interval, type-I error, FDR and power of every test,
measured on seeded designs (docs/validity.md).

An area is a module of this package that defines `AREA` (its name) and
`run(grid, seed) -> (detail, summary)` (validate/core.py); `areas()` finds them, so adding an
area is adding a module. `themesim validate` calls `run_suite`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pandas as pd

from themesim.errors import InputError
from themesim.io.files import atomic_path, output_folder
from themesim.validate.core import COVERAGE_FLOOR, SUMMARY_COLUMNS, check_grid
from themesim.validate.figure import summary_figure


def areas() -> dict[str, object]:
    """Every area module of the suite by its AREA name, in name order."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in ("core", "figure", "parallel"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "AREA") and hasattr(mod, "run"):
            found[mod.AREA] = mod
    return dict(sorted(found.items()))


def run_suite(out_dir, grid: str = "small", seed: int = 0, only=None, log=print) -> pd.DataFrame:
    """Run the areas (all, or those named in `only`) and write results/validation/:
    {area}.csv (detail), summary.csv, summary.png and summary.md. Returns the summary."""
    check_grid(grid)
    found = areas()
    # a repeated area runs once (`--only equivalence,equivalence` ran it twice, counted twice)
    names = list(found) if not only else list(dict.fromkeys(only))
    unknown = [n for n in names if n not in found]
    if unknown:
        raise InputError(
            f"--only {','.join(unknown)}", "is not an area of the suite", f"Use {sorted(found)}"
        )
    out = output_folder(out_dir, f"--out {out_dir}")  # before minutes of work, not after
    summaries = []
    for name in names:
        log(f"validate: {name} ({grid} grid, seed {seed})")
        detail, summary = found[name].run(grid, seed)
        with atomic_path(out / f"{name}.csv") as tmp:
            detail.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
        summaries.append(summary)
    table = pd.concat(summaries, ignore_index=True)[SUMMARY_COLUMNS]
    summary_path = out / ("summary.csv" if not only else f"summary_{'_'.join(names)}.csv")
    with atomic_path(summary_path) as tmp:
        table.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")

    summary_figure(table, summary_path.with_suffix(".png"))
    with atomic_path(summary_path.with_suffix(".md")) as tmp:
        Path(tmp).write_text(markdown_table(table), encoding="utf-8")
    return table


def failures(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows where the contract applies and the measured property misses it."""
    judged = summary[summary["passes"].notna()]
    return judged[~judged["passes"].astype(bool)]


def markdown_table(summary: pd.DataFrame) -> str:
    """Per area and property (coverage and contains-the-estimate rows counted apart): how
    many checked rows, how many fail, the worst value and whether all hold (the table
    docs/validity.md quotes), under the level the coverage rows are certified at."""
    lines = [
        f"Coverage is certified at {COVERAGE_FLOOR} (a row passes within two Monte Carlo "
        "standard errors of it), though intervals are printed at their nominal level (95 %).",
        "",
        "| area | property | designs | rows checked | failing | worst | holds |",
        "|---|---|---|---|---|---|---|",
    ]
    for (area, prop), g in summary.groupby(["area", "property"], sort=False):
        judged = g[g["passes"].notna()]
        values = g["value"].astype(float)
        if prop in ("coverage", "contains_estimate", "power", "recovery_f1"):
            worst = values[g["required"].astype(bool)].min() if len(judged) else values.min()
        elif prop in ("type1_error", "fdr"):
            worst = values[g["required"].astype(bool)].max() if len(judged) else values.max()
        else:
            continue
        holds = (
            "yes"
            if len(judged) and judged["passes"].astype(bool).all()
            else ("no" if len(judged) else "–")
        )
        failing = int((~judged["passes"].astype(bool)).sum())
        lines.append(
            f"| {area} | {prop} | {g['design'].nunique()} | {len(judged)} | {failing} "
            f"| {worst:.3f} | {holds} |"
        )
    return "\n".join(lines) + "\n"
