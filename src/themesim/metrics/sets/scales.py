"""The within-set z scale and the decisions it changes (docs/thresholds.md).

S_z[i, j] = min((S[i, j] - mu_A,i) / sd_A,i, (S[i, j] - mu_B,j) / sd_B,j), where mu and sd
(ddof=1) are those of baselines.within_baselines: a theme's similarities to the other themes
of its own set. A pair scores high only when it stands out against both sets' own spreads,
the symmetric baseline of seed 000 as a scale every metric family can run on.

A theme whose set is too small for a spread (fewer than 3 other themes) or whose spread is
zero has no z; its row (column) of S_z is NaN and the flag names why, as in the baselines.

Size-aware cut. "z > 2" does not mean one thing at every set size: a cell that is no match
(exchangeable with the m = n - 1 other similarities of its theme's row, all normal) has
(S - mean) / sd ~ sqrt(1 + 1/m) t_(m-1), so z > 2 is passed by 0.11 of such cells with 4
themes, 0.047 with 10 and 0.033 with 20. z_fpr gives that rate, z_cut the z whose rate is
alpha, z_pvalues a cell's p on both sides (docs/thresholds.md, the suite's area zscale).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t

from themesim.metrics.sets.coverage import check_matrix, hungarian_pairs
from themesim.metrics.sets.within import (  # noqa: F401 (z_scale moved there)
    MIN_WITHIN,
    check_within,
    within_spread,
    z_scale,
)
from themesim.metrics.settings import DEFAULT_METRICS
from themesim.metrics.thresholds import check_op, matches

# The sweep of a z-scale method: z values, not cosines.
Z_SWEEP = {"start": -3.0, "stop": 8.0, "step": 0.05}
DECISION_COLUMNS = [
    "raw_threshold",
    "z_threshold",
    "n_raw",
    "n_z",
    "n_both",
    "n_only_raw",
    "n_only_z",
    "share_changed",
    "only_raw_pairs",
    "only_z_pairs",
    "z_flag",
    "z_fpr_a",
    "z_fpr_b",
    "z_cut_a",
    "z_cut_b",
]


def z_fpr(z, n_others) -> np.ndarray:
    """P(one side's z > z) for a cell that is no match, against n_others within-set values:
    the t prediction bound, sf of t_(m-1) at z / sqrt(1 + 1/m); NaN below MIN_WITHIN others."""
    z = np.asarray(z, dtype=np.float64)
    m = np.asarray(n_others, dtype=np.float64)
    ok = m >= MIN_WITHIN
    mm = np.where(ok, m, MIN_WITHIN)
    with np.errstate(invalid="ignore"):
        out = t.sf(z / np.sqrt(1.0 + 1.0 / mm), mm - 1.0)
    return np.where(ok, out, np.nan)


def z_cut(n_others, alpha: float = DEFAULT_METRICS["z_alpha"]) -> np.ndarray:
    """The z a non-matching cell passes with probability alpha against n_others within-set
    values (normal model): sqrt(1 + 1/m) · t_(m-1) upper alpha point; NaN below MIN_WITHIN."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    m = np.asarray(n_others, dtype=np.float64)
    ok = m >= MIN_WITHIN
    mm = np.where(ok, m, MIN_WITHIN)
    return np.where(ok, np.sqrt(1.0 + 1.0 / mm) * t.isf(alpha, mm - 1.0), np.nan)


def z_pvalues(S, W_a, W_b) -> np.ndarray:
    """Per cell, the p of its symmetric z: max of the two sides' z_fpr (a cell passes only
    when it stands out on both sides, an intersection-union test, so no correction for the
    two sides is needed). NaN where a side's z is undefined."""
    S = check_matrix(S)
    W_a = check_within(W_a, S.shape[0], "W_a")
    W_b = check_within(W_b, S.shape[1], "W_b")
    mu_a, sd_a, _ = within_spread(W_a)
    mu_b, sd_b, _ = within_spread(W_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a = z_fpr((S - mu_a[:, None]) / sd_a[:, None], S.shape[0] - 1)
        p_b = z_fpr((S - mu_b[None, :]) / sd_b[None, :], S.shape[1] - 1)
    return np.maximum(p_a, p_b)


def size_aware_columns(n_a: int, n_b: int, baseline_z: float, alpha: float) -> dict:
    """comparisons.csv's size-aware z columns: the false-positive rate of z > baseline_z on
    each side (n - 1 other themes) and the z cut whose rate is alpha."""
    out = {}
    for side, n in (("a", n_a), ("b", n_b)):
        out[f"baseline_z_fpr_{side}"] = float(z_fpr(baseline_z, n - 1))
        out[f"z_cut_{side}"] = float(z_cut(n - 1, alpha))
    return out


def _kept(S: np.ndarray, threshold: float, op: str) -> set[tuple[int, int]]:
    rows, cols = hungarian_pairs(S)
    keep = matches(S[rows, cols], threshold, op)
    return set(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True))


def decision_changes(
    S_raw,
    scaled: tuple,
    raw_thresholds,
    z_thresholds,
    op: str = "ge",
    a_ids=None,
    b_ids=None,
    z_alpha: float = DEFAULT_METRICS["z_alpha"],
) -> pd.DataFrame:
    """Hungarian pairs kept on the raw scale and on the z scale: both, only raw, only z.

    scaled: (Z, z_flag), S_raw on the z scale and why it is undefined where it is, as
    :func:`z_scale` gives them. Each scale runs its own max-sum assignment and keeps its
    pairs at its own threshold; one row per (raw threshold, z threshold). With an undefined
    z (NaN cells) the z columns are NaN and z_flag says why. z_fpr_a, z_fpr_b: the
    false-positive rate of the z threshold on each side at its set's size; z_cut_a,
    z_cut_b: the z whose rate is z_alpha.
    """
    check_op(op)
    S_raw = check_matrix(S_raw)
    Z, z_flag = scaled
    Z = np.asarray(Z, dtype=np.float64)
    a_ids = list(range(S_raw.shape[0])) if a_ids is None else list(a_ids)
    b_ids = list(range(S_raw.shape[1])) if b_ids is None else list(b_ids)

    def names(pairs: set) -> str:
        return "; ".join(f"{a_ids[i]}:{b_ids[j]}" for i, j in sorted(pairs))

    records = []
    for tr in raw_thresholds:
        raw = _kept(S_raw, tr, op)
        for tz in z_thresholds:
            rec = {"raw_threshold": float(tr), "z_threshold": float(tz), "n_raw": len(raw)}
            if np.isfinite(Z).all():
                z = _kept(Z, tz, op)
                union = raw | z
                rec |= {
                    "n_z": len(z),
                    "n_both": len(raw & z),
                    "n_only_raw": len(raw - z),
                    "n_only_z": len(z - raw),
                    "share_changed": len(union ^ (raw & z)) / len(union) if union else 0.0,
                    "only_raw_pairs": names(raw - z),
                    "only_z_pairs": names(z - raw),
                    "z_flag": "",
                }
            else:
                rec |= {k: np.nan for k in DECISION_COLUMNS[3:8]}
                rec |= {"only_raw_pairs": "", "only_z_pairs": "", "z_flag": z_flag or "nan"}
            for side, n in (("a", S_raw.shape[0]), ("b", S_raw.shape[1])):
                rec[f"z_fpr_{side}"] = float(z_fpr(float(tz), n - 1))
                rec[f"z_cut_{side}"] = float(z_cut(n - 1, z_alpha))
            records.append(rec)
    return pd.DataFrame.from_records(records, columns=DECISION_COLUMNS)
