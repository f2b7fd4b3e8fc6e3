"""Theme-level bootstrap percentile intervals for set-level metrics (METRICS.md "Bootstrap").

Every per-theme value is computed ONCE on the full matrix: for each theme of A its hit (any
match in its row), its row match count, whether its Hungarian and max-cardinality partner
matches and with what similarity, its best similarity and gap; the same for each theme of B.
A resample draws n_a A-indices and n_b B-indices with replacement from
numpy.random.default_rng(seed) (all row draws first, shape (n_boot, n_a), then all column
draws, shape (n_boot, n_b)) and re-aggregates those values. No matching is ever recomputed
on a resampled set: a drawn copy is not a new theme, and a resampled B lacks about 1/e of its
themes, which would drag coverage down (a perfect diagonal gave Hungarian F1 1.0 with an
interval of 0.4-0.9 under that earlier scheme).

The interval answers "how far would this figure move had the analysts written another sample
of themes, each matching as it does now". Drawing every theme once reproduces the estimate.

Aggregation (a * marks the drawn values):
  hit_rate = recall = mean hit_i*, precision = mean hit_j*, f1 their harmonic mean;
  n_match_pairs = sum r_i*, raza_jaccard = mean r_i* / n_b;
  coverage_a = sum flag_i* / n_a, coverage_b = sum flag_j* / n_b (Hungarian and max-card),
  their f1 the harmonic mean, true_jaccard = 1 / (1/cov_a + 1/cov_b - 1), 0 when either is 0;
  n_matched = sum flag_i* (the A side: rows are the reference);
  bidir_max_sim_a/_b = mean best*, similarity_f1 their harmonic mean;
  matched_sim quartiles over the drawn A themes' matched similarities;
  gap columns: distinctiveness._side_summary of the drawn (best, gap) of each side.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.metrics.coverage import (
    METRIC_COLUMNS,
    _best_two,
    _check_op,
    _harmonic,
    check_matrix,
    check_thresholds,
    hungarian_pairs,
    matches,
    max_cardinality_pairs,
)
from themesim.metrics.distinctiveness import GAP_COLUMNS, _side_summary

SCORE_CI_METRICS = [c for c in METRIC_COLUMNS if c not in ("n_a", "n_b")]
CI_METRICS = SCORE_CI_METRICS + GAP_COLUMNS
CI_COLUMNS = [f"{m}_ci_{end}" for m in CI_METRICS for end in ("low", "high")]

_Q = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
# Resamples per batch: about this many per-theme values in memory at once.
_BATCH_VALUES = 4_000_000


def _resample_indices(n_a: int, n_b: int, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_a, size=(n_boot, n_a)), rng.integers(0, n_b, size=(n_boot, n_b))


def _check_args(n_boot: int, level: float) -> None:
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def _intervals(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """NaN-aware percentile interval along axis 0; NaN where every resample is NaN."""
    q = [50 * (1 - level), 50 * (1 + level)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN
        lo, hi = np.nanpercentile(values, q, axis=0)
    return lo, hi


def _top_quartiles(sorted_values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """np.percentile(top `count` values, [0, 25, 50, 75, 100]) per count; NaN for count 0.

    sorted_values (B, m) ascending, counts (B, T) -> (B, T, 5). Bit-identical to numpy's
    default "linear" method (same virtual index, same two-sided lerp), in one call.
    """
    m = sorted_values.shape[1]
    n = np.asarray(counts, dtype=np.int64)[..., None]
    virtual = (n - 1) * _Q
    prev = np.floor(virtual)
    gamma = virtual - prev
    lo = np.clip(m - n + prev.astype(np.int64), 0, m - 1)
    hi = np.clip(m - n + np.minimum(prev.astype(np.int64) + 1, n - 1), 0, m - 1)
    rows = np.arange(sorted_values.shape[0])[:, None, None]
    a, b = sorted_values[rows, lo], sorted_values[rows, hi]
    with np.errstate(invalid="ignore"):  # -inf (no partner) only where count 0 masks it
        diff = b - a
        out = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    return np.where(n > 0, out, np.nan)


@dataclass
class ThemeValues:
    """Per-theme values of one matrix at thresholds t (METRICS.md "Bootstrap").

    Shapes: (T, n) for threshold-dependent flags and counts, (n,) otherwise.
    hung_sim_a is the A theme's Hungarian similarity, -inf when it has no partner (so the
    matching partners at t are exactly the drawn values `op t`).
    """

    t: np.ndarray
    op: str
    gamma: float
    hit_a: np.ndarray
    hit_b: np.ndarray
    row_count_a: np.ndarray
    hung_a: np.ndarray
    hung_b: np.ndarray
    hung_sim_a: np.ndarray
    maxcard_a: np.ndarray
    maxcard_b: np.ndarray
    best_a: np.ndarray
    best_b: np.ndarray
    gap_a: np.ndarray
    gap_b: np.ndarray


def theme_values(S, thresholds: Sequence[float], op: str = "ge", gamma: float = 0.15):
    """Every per-theme value the bootstrap resamples, computed once on the full matrix."""
    _check_op(op)
    S = check_matrix(S)
    t = check_thresholds(thresholds)
    n_a, n_b = S.shape
    M = np.stack([matches(S, x, op) for x in t])  # (T, n_a, n_b)
    rows, cols = hungarian_pairs(S)
    hung_sim_a = np.full(n_a, -np.inf)
    hung_sim_a[rows] = S[rows, cols]
    hung_sim_b = np.full(n_b, -np.inf)
    hung_sim_b[cols] = S[rows, cols]
    maxcard_a = np.zeros((t.size, n_a), dtype=bool)
    maxcard_b = np.zeros((t.size, n_b), dtype=bool)
    for k, x in enumerate(t):
        r, c = max_cardinality_pairs(S, x, op)
        maxcard_a[k, r] = True
        maxcard_b[k, c] = True
    _, best_a, second_a = _best_two(S)
    _, best_b, second_b = _best_two(S.T)
    return ThemeValues(
        t=t,
        op=op,
        gamma=gamma,
        hit_a=M.any(axis=2),
        hit_b=M.any(axis=1),
        row_count_a=M.sum(axis=2),
        hung_a=np.stack([matches(hung_sim_a, x, op) for x in t]),
        hung_b=np.stack([matches(hung_sim_b, x, op) for x in t]),
        hung_sim_a=hung_sim_a,
        maxcard_a=maxcard_a,
        maxcard_b=maxcard_b,
        best_a=best_a,
        best_b=best_b,
        gap_a=best_a - second_a,
        gap_b=best_b - second_b,
    )


def _true_jaccard(cov_a: np.ndarray, cov_b: np.ndarray) -> np.ndarray:
    ok = (cov_a > 0) & (cov_b > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / np.where(ok, cov_a, 1) + 1.0 / np.where(ok, cov_b, 1) - 1
        return np.where(ok, 1.0 / inv, 0.0)


def resample_metrics(v: ThemeValues, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """CI_METRICS re-aggregated for the draws rows (B, n_a), cols (B, n_b): (B, T, len)."""
    n_a, n_b = rows.shape[1], cols.shape[1]

    def drawn(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.moveaxis(x[:, idx], 0, 1)  # (T, n) -> (B, T, n)

    hit_a = drawn(v.hit_a, rows).mean(axis=-1)
    hit_b = drawn(v.hit_b, cols).mean(axis=-1)
    n_pairs = drawn(v.row_count_a, rows).sum(axis=-1)
    best_a, best_b = v.best_a[rows].mean(axis=-1), v.best_b[cols].mean(axis=-1)
    bidir = np.stack([best_a, best_b, _harmonic(best_a, best_b)], axis=-1)
    bidir = np.broadcast_to(bidir[:, None, :], (rows.shape[0], v.t.size, 3))

    def one_to_one(fa: np.ndarray, fb: np.ndarray) -> list[np.ndarray]:
        k = drawn(fa, rows).sum(axis=-1)
        cov_a, cov_b = k / n_a, drawn(fb, cols).sum(axis=-1) / n_b
        return [k, cov_a, cov_b, _harmonic(cov_a, cov_b), _true_jaccard(cov_a, cov_b)]

    sims = np.sort(v.hung_sim_a[rows], axis=1)
    k_h = drawn(v.hung_a, rows).sum(axis=-1)
    blocks = [
        np.stack(
            [n_pairs, n_pairs / (n_a * n_b), hit_a, hit_a, hit_b, _harmonic(hit_b, hit_a)],
            axis=-1,
        ),
        bidir,
        np.stack(one_to_one(v.hung_a, v.hung_b), axis=-1),
        _top_quartiles(sims, k_h),
        np.stack(one_to_one(v.maxcard_a, v.maxcard_b), axis=-1),
        _side_summary(v.best_a[rows], v.gap_a[rows], v.t, v.op, v.gamma),
        _side_summary(v.best_b[cols], v.gap_b[cols], v.t, v.op, v.gamma),
    ]
    return np.concatenate([b.astype(np.float64) for b in blocks], axis=-1)


def bootstrap_table(
    S,
    thresholds: Sequence[float],
    op: str = "ge",
    n_boot: int = 1000,
    seed: int = 0,
    gamma: float = 0.15,
    level: float = 0.95,
) -> pd.DataFrame:
    """Intervals for every set-level metric of metrics.score and distinctiveness.gap_summary.

    One row per threshold: `threshold`, then `<metric>_ci_low`, `<metric>_ci_high` for each
    metric of CI_METRICS (CI_COLUMNS). The draws are those of comparison.theme_level_intervals
    for the same seed and shape.
    """
    _check_args(n_boot, level)
    v = theme_values(S, thresholds, op, gamma)
    n_a, n_b = v.best_a.size, v.best_b.size
    all_rows, all_cols = _resample_indices(n_a, n_b, n_boot, seed)
    values = np.empty((n_boot, v.t.size, len(CI_METRICS)))
    step = max(1, _BATCH_VALUES // (4 * v.t.size * (n_a + n_b)))
    for lo in range(0, n_boot, step):
        sl = slice(lo, lo + step)
        values[sl] = resample_metrics(v, all_rows[sl], all_cols[sl])
    low, high = _intervals(values, level)
    out = np.empty((v.t.size, len(CI_COLUMNS)))
    out[:, 0::2], out[:, 1::2] = low, high
    table = pd.DataFrame(out, columns=CI_COLUMNS)
    table.insert(0, "threshold", v.t)
    return table
