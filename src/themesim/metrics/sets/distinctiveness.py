"""Gap-based distinctiveness and two-condition matching (seed 000 "future exploration").

Per theme (row of S): is its best match clearly better than the runner-up? Quality is
`best op threshold` (the same test as metrics.matches, so "has a match" and "passes quality"
never disagree); distinctiveness is `gap_abs >= gamma`. Names: METRICS.md.

Choices the seed leaves open:
- gap_rel = gap_abs / best is NaN when best <= 0: a ratio against a zero or negative base is
  not an "x % better than the runner-up".
- gap_angle_rel = (angle(second) - angle(best)) / angle(second) = 1 - angle(best)/angle(second),
  a Lowe-style ratio in [0, 1]. The seed's (θ_best - θ_second) / θ_best is negative and blows up
  for a perfect match (θ_best = 0); angle(second) is 0 only when best = second = 1 (then NaN).
- A theme with a single candidate (S has one column) has no runner-up: second and all gaps are
  NaN, and it counts as distinctive (a lone candidate is unambiguous).
- gap_abs >= gamma is tested with a 1e-12 slack so that 0.60 - 0.45 (0.14999999999999997 in
  floating point) counts as the 0.15 it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from themesim.metrics.sets.coverage import best_two, check_matrix, check_thresholds
from themesim.metrics.thresholds import check_op, matches

CATEGORIES = ("confident_unique", "ambiguous", "clear_but_poor", "no_good_match")
THEME_GAP_COLUMNS = [
    "best",
    "second",
    "gap_abs",
    "gap_rel",
    "gap_norm",
    "best_angle_deg",
    "second_angle_deg",
    "gap_angle_deg",
    "gap_angle_rel",
    "category",
]
_SIDE_COLUMNS = [
    "unique_match_rate",
    "gap_abs_min",
    "gap_abs_q1",
    "gap_abs_median",
    "gap_abs_q3",
    "gap_abs_max",
] + [f"share_{c}" for c in CATEGORIES]
GAP_COLUMNS = [f"{c}_{side}" for side in ("a", "b") for c in _SIDE_COLUMNS]

_GAP_SLACK = 1e-12


def angle_deg(S) -> np.ndarray:
    """Angle between the embeddings in degrees: degrees(arccos(clip(S, -1, 1)))."""
    return np.degrees(np.arccos(np.clip(np.asarray(S, dtype=np.float64), -1.0, 1.0)))


def angular_sim(S) -> np.ndarray:
    """soak's angular similarity 1 - arccos(clip(S, -1, 1)) / pi, in [0, 1]."""
    return 1.0 - np.arccos(np.clip(np.asarray(S, dtype=np.float64), -1.0, 1.0)) / np.pi


def _ratio(num: np.ndarray, den: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """num / den where ok, NaN elsewhere (no inf, no warnings)."""
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=ok)
    return out


def is_distinct(gap_abs: np.ndarray, gamma: float) -> np.ndarray:
    # NaN gap = lone candidate, which is unambiguous.
    return np.isnan(gap_abs) | (gap_abs >= gamma - _GAP_SLACK)


def categorise(good: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Category codes (indices into CATEGORIES); broadcasts."""
    return np.where(good, np.where(distinct, 0, 1), np.where(distinct, 2, 3))


def theme_gaps(S, *, threshold: float, op: str = "ge", gamma: float = 0.15) -> pd.DataFrame:
    """Distinctiveness of every row of S (pass S.T for the themes of B).

    Columns: THEME_GAP_COLUMNS, index = row number.
    """
    check_op(op)
    S = check_matrix(S)
    _, best, second = best_two(S)
    gap = best - second
    with np.errstate(invalid="ignore"):
        gap_rel = _ratio(gap, best, best > 0)
        scale = np.fmax(np.abs(best), np.abs(second))
        gap_norm = _ratio(gap, scale, scale > 0)
    a_best, a_second = angle_deg(best), angle_deg(second)
    gap_angle = a_second - a_best
    gap_angle_rel = _ratio(gap_angle, a_second, np.nan_to_num(a_second) > 0)
    codes = categorise(matches(best, threshold, op), is_distinct(gap, gamma))
    return pd.DataFrame(
        {
            "best": best,
            "second": second,
            "gap_abs": gap,
            "gap_rel": gap_rel,
            "gap_norm": gap_norm,
            "best_angle_deg": a_best,
            "second_angle_deg": a_second,
            "gap_angle_deg": gap_angle,
            "gap_angle_rel": gap_angle_rel,
            "category": np.asarray(CATEGORIES, dtype=object)[codes],
        }
    )


def side_summary(
    best: np.ndarray, gap: np.ndarray, t: np.ndarray, op: str, gamma: float
) -> np.ndarray:
    """The _SIDE_COLUMNS of one side for every threshold.

    best, gap: (..., n) over the n themes of the side; leading axes are a batch (the
    bootstrap passes many resamples at once). Returns (..., len(t), 10).
    Gap quartiles: numpy default percentiles; NaN propagates, and gaps are NaN only when
    there is a single candidate, for every theme of the side at once.
    """
    b = best[..., None, :]
    good = matches(b, t[:, None], op)
    codes = categorise(good, is_distinct(gap, gamma)[..., None, :])
    shares = np.stack([(codes == c).mean(axis=-1) for c in range(len(CATEGORIES))], axis=-1)
    quart = np.moveaxis(np.percentile(gap, [0, 25, 50, 75, 100], axis=-1), 0, -1)
    quart = np.broadcast_to(quart[..., None, :], shares.shape[:-1] + (5,))
    return np.concatenate([shares[..., :1], quart, shares], axis=-1)


def gap_summary(
    S, thresholds: Sequence[float], op: str = "ge", gamma: float = 0.15
) -> pd.DataFrame:
    """Set-level distinctiveness, one row per threshold: `threshold` then GAP_COLUMNS.

    The gap quartiles do not depend on the threshold; they repeat on every row.
    """
    check_op(op)
    S = check_matrix(S)
    t = check_thresholds(thresholds)
    blocks = []
    for M in (S, S.T):
        _, best, second = best_two(M)
        blocks.append(side_summary(best, best - second, t, op, gamma))
    out = pd.DataFrame(np.hstack(blocks), columns=GAP_COLUMNS)
    out.insert(0, "threshold", t)
    return out
