"""Cohen's κ of many 2×2 tables at once, from their counts: the one arithmetic of the
grounding tables, the verdicts' segments route and the coders' agreement (a module of its
own, so the report's job does not depend on the coverage code metrics.grounding.grounding_stats
imports)."""

from __future__ import annotations

import numpy as np


def kappa_counts_array(n_both, n_a, n_b, n: int) -> np.ndarray:
    """:func:`kappa_counts` of many 2×2 tables at once, with statsmodels' arithmetic step for
    step (equal bit for bit; tests/test_grounding.py): the bootstrap's κ of every text pair
    of a resample in a few array operations instead of a statsmodels call per pair."""
    both = np.asarray(n_both, dtype=float)
    n_a, n_b = np.asarray(n_a, dtype=float), np.asarray(n_b, dtype=float)
    cells = np.stack([both, n_a - both, n_b - both, n - n_a - n_b + both])
    agree = cells[0] + cells[3]
    with np.errstate(divide="ignore", invalid="ignore"):  # no units: NaN
        row0, row1 = (cells[0] + cells[1]) / n, (cells[2] + cells[3]) / n
        col0, col1 = (cells[0] + cells[2]) / n, (cells[1] + cells[3]) / n
        expected = col0 * row0 + col1 * row1
        out = (agree / n - expected) / (1 - expected)
    # κ undefined: both labelings constant and equal (one non-empty cell, on the diagonal)
    one = (cells > 0).sum(axis=0) == 1
    return np.where(one & ((cells[0] > 0) | (cells[3] > 0)), np.nan, out)


def kappa_counts(both, only_a, only_b, neither) -> np.ndarray:
    """Cohen's κ of two binary codings from their 2×2 counts (arrays broadcast); NaN where
    chance agreement is 1 (both codings constant and equal) or there are no units."""
    both, only_a, only_b, neither = (
        np.asarray(x, dtype=float) for x in (both, only_a, only_b, neither)
    )
    return kappa_counts_array(both, both + only_a, both + only_b, both + only_a + only_b + neither)
