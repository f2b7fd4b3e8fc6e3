"""Within-set baselines, seed 000 approaches A-D (names: METRICS.md).

For theme i of A, W = its similarities to the *other* themes of A (the diagonal of W_a is
ignored) and best_cross = max_j S[i, j]. A cross-set match is judged against W:
  A  baseline_adjusted   = best_cross - mean(W)
  B  baseline_z          = (best_cross - mean(W)) / std(W, ddof=1)
  C  baseline_rel_gap    = cross_gap / within_gap (best minus second of S's row and of W)
  D  baseline_percentile = percentile rank of best_cross in W

Choices:
- Percentile: scipy.stats.percentileofscore(W, best_cross, kind="strict"), the share (in %)
  of within-set similarities that best_cross beats outright, the seed's "better than 95 % of
  within-A similarities"; a tie is not a win.
- Fewer than 3 within-set values (a set of 3 themes or fewer) give no spread worth the name:
  std, z, rel_gap and percentile are NaN and the flag says "too_small". The mean and
  baseline_adjusted stay defined as long as there is one other theme; they only average.
- A spread or within-gap below 1e-12 counts as zero (identical values in floating point), so
  z or rel_gap is NaN with flag "zero_spread" / "zero_within_gap", never a huge number.
- S with one column has no runner-up: rel_gap NaN, flag "single_candidate".
The flag is "" when every value is defined, otherwise the reasons joined by ";".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import percentileofscore

from themesim.metrics.sets.coverage import check_matrix
from themesim.metrics.sets.within import (
    MIN_WITHIN,
    ZERO_SPREAD,
    check_within,
    row_others,
    z_against,
)

PERCENTILE_KIND = "strict"

BASELINE_COLUMNS = [
    "best_cross",
    "baseline_mean",
    "baseline_std",
    "baseline_adjusted",
    "baseline_z",
    "baseline_rel_gap",
    "baseline_percentile",
    "baseline_flag",
]
SYMMETRIC_COLUMNS = [
    "a_index",
    "b_index",
    "similarity",
    "baseline_z_a",
    "baseline_z_b",
    "baseline_flag_a",
    "baseline_flag_b",
    "passes_a",
    "passes_b",
    "passes_both",
]


def _best_second(values: np.ndarray) -> tuple[float, float]:
    if values.size < 2:
        return (float(values.max()) if values.size else np.nan), np.nan
    top = np.partition(values, values.size - 2)[-2:]
    return float(top[1]), float(top[0])


def within_baselines(S, W_a) -> pd.DataFrame:
    """Approaches A-D for every row of S against the within-set matrix W_a (n_a x n_a).

    For the themes of B pass S.T and W_b. Columns: BASELINE_COLUMNS, index = row number.
    """
    S = check_matrix(S)
    W_a = check_within(W_a, S.shape[0], "W_a")
    records = []
    for i in range(S.shape[0]):
        within = row_others(W_a, i)
        best, second = _best_second(S[i])
        mean, std, z, flags = z_against(best, within)
        rel_gap = pct = np.nan
        if within.size >= MIN_WITHIN:
            pct = float(percentileofscore(within, best, kind=PERCENTILE_KIND))
            w_best, w_second = _best_second(within)
            if np.isnan(second):
                flags.append("single_candidate")
            elif w_best - w_second < ZERO_SPREAD:
                flags.append("zero_within_gap")
            else:
                rel_gap = (best - second) / (w_best - w_second)
        records.append(
            {
                "best_cross": best,
                "baseline_mean": mean,
                "baseline_std": std,
                "baseline_adjusted": best - mean,
                "baseline_z": z,
                "baseline_rel_gap": rel_gap,
                "baseline_percentile": pct,
                "baseline_flag": ";".join(flags),
            }
        )
    return pd.DataFrame.from_records(records, columns=BASELINE_COLUMNS)


def symmetric_baselines(
    S, W_a, W_b, pairs: tuple[Sequence[int], Sequence[int]], *, z_min: float = 2.0
) -> pd.DataFrame:
    """Judge each assigned pair against both within-set baselines (seed 000 "symmetry").

    `pairs` is (rows, cols) as returned by metrics.hungarian_pairs or max_cardinality_pairs.
    For pair (i, j): baseline_z_a is the z of S[i, j] against the other themes of A seen
    from i (W_a row i), baseline_z_b against the other themes of B seen from j (W_b row j).
    passes_a / passes_b = z > z_min; passes_both = both. These are nullable booleans: NA
    when that z is NaN (see the flag), because "could not be judged" is not "failed";
    passes_both is False as soon as one side fails (Kleene logic).
    """
    S = check_matrix(S)
    W_a = check_within(W_a, S.shape[0], "W_a")
    W_b = check_within(W_b, S.shape[1], "W_b")
    if len(pairs) != 2:
        raise ValueError("pairs must be (rows, cols), e.g. metrics.hungarian_pairs(S)")
    rows = np.asarray(pairs[0], dtype=np.int64).reshape(-1)
    cols = np.asarray(pairs[1], dtype=np.int64).reshape(-1)
    if rows.size != cols.size:
        raise ValueError(f"pairs has {rows.size} rows but {cols.size} columns")
    records = []
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        sim = float(S[i, j])
        _, _, z_a, flags_a = z_against(sim, row_others(W_a, i))
        _, _, z_b, flags_b = z_against(sim, row_others(W_b, j))
        records.append((i, j, sim, z_a, z_b, ";".join(flags_a), ";".join(flags_b)))
    out = pd.DataFrame.from_records(records, columns=SYMMETRIC_COLUMNS[:7])
    for side in ("a", "b"):
        z = out[f"baseline_z_{side}"]
        out[f"passes_{side}"] = pd.array(np.where(z.isna(), None, z > z_min), dtype="boolean")
    out["passes_both"] = out["passes_a"] & out["passes_b"]
    return out


def _median(x: pd.Series) -> float:
    x = x.dropna()
    return float(x.median()) if len(x) else np.nan


def _share(mask: pd.Series, defined: pd.Series) -> float:
    return float(mask[defined].mean()) if defined.any() else np.nan


def baseline_summary(df: pd.DataFrame) -> dict[str, float]:
    """Set-level summary of within_baselines (or symmetric_baselines) output.

    Medians ignore NaN; shares are over the themes (pairs) where the value is defined,
    NaN when none is. From within_baselines: baseline_n_themes, baseline_n_defined_z,
    baseline_z_median, baseline_share_z_gt_2, baseline_share_z_gt_3,
    baseline_adjusted_median, baseline_share_adjusted_gt_0, baseline_rel_gap_median,
    baseline_percentile_median, baseline_share_flagged. From symmetric_baselines:
    baseline_n_pairs, baseline_n_judged_pairs, baseline_share_passes_a,
    baseline_share_passes_b, baseline_share_passes_both.
    """
    out: dict[str, float] = {}
    if "baseline_z" in df:
        z = df["baseline_z"]
        out["baseline_n_themes"] = len(df)
        out["baseline_n_defined_z"] = int(z.notna().sum())
        out["baseline_z_median"] = _median(z)
        out["baseline_share_z_gt_2"] = _share(z > 2, z.notna())
        out["baseline_share_z_gt_3"] = _share(z > 3, z.notna())
        adj = df["baseline_adjusted"]
        out["baseline_adjusted_median"] = _median(adj)
        out["baseline_share_adjusted_gt_0"] = _share(adj > 0, adj.notna())
        out["baseline_rel_gap_median"] = _median(df["baseline_rel_gap"])
        out["baseline_percentile_median"] = _median(df["baseline_percentile"])
        out["baseline_share_flagged"] = (
            float((df["baseline_flag"] != "").mean()) if len(df) else np.nan
        )
    if "passes_both" in df:
        out["baseline_n_pairs"] = len(df)
        both = df["passes_both"]
        out["baseline_n_judged_pairs"] = int(both.notna().sum())
        for name in ("passes_a", "passes_b", "passes_both"):
            col = df[name]
            out[f"baseline_share_{name}"] = _share(col.fillna(False).astype(bool), col.notna())
    if not out:
        raise ValueError("expected the output of within_baselines or symmetric_baselines")
    return out
