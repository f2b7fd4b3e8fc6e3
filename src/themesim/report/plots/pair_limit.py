"""Figures that grow with the number of comparisons, above `plots.max_pair_panels`.

Below the limit every comparison keeps its own panel, row or line. Above it, only the
reference's comparisons (the first ``limit`` of them) are drawn one by one, and one panel,
row or band summarises every comparison of the method, its count named; the figure's size
stays bounded however many sets a study has.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from themesim.report.pair_limit import over_limit, shown_pairs

__all__ = ["over_limit", "quartiles_by_threshold", "shown_pairs", "summary_title"]


def quartiles_by_threshold(sweep: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Per threshold and column: q1, median and q3 across comparisons (linear interpolation,
    numpy's default); columns ``{col}_q1``, ``{col}_median``, ``{col}_q3``, by threshold."""
    values = sweep[["threshold", *columns]].apply(pd.to_numeric, errors="coerce")
    grouped = values.groupby("threshold", sort=True)
    out = {}
    for col in columns:
        for name, q in (("q1", 0.25), ("median", 0.5), ("q3", 0.75)):
            out[f"{col}_{name}"] = grouped[col].quantile(q)
    return pd.DataFrame(out).reset_index()


def summary_title(n: int) -> str:
    """What a summary panel covers, its count named."""
    return f"all {n:,} comparisons\n(median and interquartile band)"
