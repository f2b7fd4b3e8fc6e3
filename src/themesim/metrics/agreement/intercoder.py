"""Intercoder statistics of two codings of the same texts, as CAQDAS tools report them.

A coding is, per unit (a character of a transcript, or a transcript segment) and code, whether
the coder applied the code there. From the 2×2 table of a code (both coders, only A, only B,
neither) over a set of units come:

- percent agreement: (both + neither) / units (NVivo's and QualCoder's "agreement %");
- Cohen's κ of the two binary codings (NVivo's per code × source κ at character level);
- Krippendorff's α, nominal, of the two binary codings with every unit a unit of analysis
  (`themesim agree` calls it `alpha_binary_char`: every character a unit of analysis; it is
  not Krippendorff's unitizing α, which metrics/agreement/unitizing.py computes).

"Without uncoded text" restricts the units to those at least one coder coded with some code:
the stretches nobody coded (greetings, the interviewer's questions) inflate percent agreement
and κ's observed agreement alike. Every figure comes from summed counts, so pooling over
transcripts and leaving one transcript out (the jackknife) are sums and differences of
tables. κ is the one arithmetic of many 2×2 tables of metrics/kappa.py, α the two-coder case
of metrics/agreement/multicoder.py (tests/test_intercoder.py checks them against
scikit-learn and the `krippendorff` package).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import t

from themesim.metrics.agreement.multicoder import multi_stats
from themesim.metrics.kappa import kappa_counts

SCOPES = ("all", "coded")  # every unit; only units some coder coded with some code
COUNT_COLUMNS = ["group", "code", "scope", "units", "both", "only_a", "only_b", "neither"]
STAT_COLUMNS = [
    "units",
    "coded_a",
    "coded_b",
    "both",
    "prevalence_a",
    "prevalence_b",
    "percent_agreement",
    "kappa",
    "alpha",
]
ALL = "(all)"  # the group (transcript) or code label of a pooled row
CI_METHOD = "jackknife over transcripts"


def alpha_counts(both, only_a, only_b, neither) -> np.ndarray:
    """Krippendorff's α (nominal) of two binary codings without missing values, from their 2×2
    counts: the two-coder histogram (neither, one of them, both) of multicoder.multi_stats.
    NaN when only one value occurs (no expected disagreement)."""
    h = np.stack(np.broadcast_arrays(neither, np.add(only_a, only_b), both), axis=-1)
    return multi_stats(h)["alpha_binary_char"]


def percent_counts(both, only_a, only_b, neither) -> np.ndarray:
    """Percent agreement: (both + neither) / units × 100; NaN without units."""
    both, only_a, only_b, neither = (
        np.asarray(x, dtype=float) for x in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, 100 * (both + neither) / n, np.nan)


def unit_counts(
    A: np.ndarray, B: np.ndarray, groups: Sequence, codes: Sequence[str]
) -> pd.DataFrame:
    """COUNT_COLUMNS of two boolean units × codes codings: per group (transcript), code and
    scope the 2×2 counts. Groups in first-seen order."""
    A, B = np.asarray(A, dtype=bool), np.asarray(B, dtype=bool)
    if A.shape != B.shape or A.shape[1] != len(codes) or A.shape[0] != len(groups):
        raise ValueError(
            f"codings {A.shape} and {B.shape} do not fit {len(groups)} units × {len(codes)} codes"
        )
    groups = np.asarray(groups, dtype=object)
    rows = []
    for g in dict.fromkeys(groups.tolist()):
        at = groups == g
        rows += group_counts(g, A[at], B[at], codes)
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def group_counts(group, A: np.ndarray, B: np.ndarray, codes) -> list[tuple]:
    """The count rows of one group's units (both scopes)."""
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    coded = (A | B).any(axis=1)
    rows = []
    for scope, keep in (("all", np.ones(len(A), dtype=bool)), ("coded", coded)):
        a, b = Ai[keep], Bi[keep]
        n = int(keep.sum())
        both = (a & b).sum(axis=0)
        ca, cb = a.sum(axis=0), b.sum(axis=0)
        for j, code in enumerate(codes):
            rows.append(
                (
                    group,
                    code,
                    scope,
                    n,
                    int(both[j]),
                    int(ca[j] - both[j]),
                    int(cb[j] - both[j]),
                    int(n - ca[j] - cb[j] + both[j]),
                )
            )
    return rows


def _stats(both, only_a, only_b, neither) -> dict:
    both, only_a, only_b, neither = (
        np.asarray(x, dtype=np.int64) for x in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    with np.errstate(divide="ignore", invalid="ignore"):
        prev_a = np.where(n > 0, (both + only_a) / np.maximum(n, 1), np.nan)
        prev_b = np.where(n > 0, (both + only_b) / np.maximum(n, 1), np.nan)
    return {
        "units": n,
        "coded_a": both + only_a,
        "coded_b": both + only_b,
        "both": both,
        "prevalence_a": prev_a,
        "prevalence_b": prev_b,
        "percent_agreement": percent_counts(both, only_a, only_b, neither),
        "kappa": kappa_counts(both, only_a, only_b, neither),
        "alpha": alpha_counts(both, only_a, only_b, neither),
    }


def code_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Per scope, code and group the STAT_COLUMNS, then per scope and code the figures pooled
    over every group (group `(all)`): the per code × transcript table CAQDAS tools show."""
    pooled = counts.groupby(["scope", "code"], sort=False)[COUNT_COLUMNS[3:]].sum().reset_index()
    pooled.insert(0, "group", ALL)
    table = pd.concat([counts, pooled[COUNT_COLUMNS]], ignore_index=True)
    stats = _stats(*(table[c].to_numpy() for c in ("both", "only_a", "only_b", "neither")))
    out = table[["scope", "code", "group"]].copy()
    for k, v in stats.items():
        out[k] = v
    order = {s: i for i, s in enumerate(SCOPES)}
    out = out.assign(_s=out["scope"].map(order), _g=(out["group"] == ALL))
    out = out.sort_values(["_s", "_g"], kind="stable").drop(columns=["_s", "_g"])
    return out.reset_index(drop=True)


def _overall(counts: pd.DataFrame) -> dict:
    """Figures over every code of one scope's counts: pooled κ, α and percent agreement over
    every (unit, code) decision, and the median and mean of the per-code κ and α."""
    per_code = counts.groupby("code", sort=False)[COUNT_COLUMNS[4:]].sum()
    cells = [per_code[c].to_numpy() for c in ("both", "only_a", "only_b", "neither")]
    tot = [c.sum() for c in cells]
    k = kappa_counts(*cells)
    a = alpha_counts(*cells)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            "median_kappa": float(np.nanmedian(k)) if np.isfinite(k).any() else math.nan,
            "mean_kappa": float(np.nanmean(k)) if np.isfinite(k).any() else math.nan,
            "median_alpha": float(np.nanmedian(a)) if np.isfinite(a).any() else math.nan,
            "pooled_kappa": float(kappa_counts(*tot)),
            "pooled_alpha": float(alpha_counts(*tot)),
            "percent_agreement": float(percent_counts(*tot)),
        }


OVERALL_METRICS = [
    "median_kappa",
    "mean_kappa",
    "median_alpha",
    "pooled_kappa",
    "pooled_alpha",
    "percent_agreement",
]
OVERALL_COLUMNS = [
    "scope",
    "n_groups",
    "n_codes",
    *OVERALL_METRICS,
    *[f"{m}_ci_{s}" for m in OVERALL_METRICS for s in ("low", "high")],
    "ci_method",
]


def overall_table(counts: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """OVERALL_COLUMNS, one row per scope: the figures of :func:`_overall` with transcript-level
    jackknife intervals (:func:`jackknife_interval`; NaN with fewer than 3 groups)."""
    rows = []
    for scope in SCOPES:
        c = counts[counts["scope"] == scope]
        groups = list(dict.fromkeys(c["group"]))
        full = _overall(c)
        leave_out = [_overall(c[c["group"] != g]) for g in groups]
        row = {"scope": scope, "n_groups": len(groups), "n_codes": c["code"].nunique()} | full
        for m in OVERALL_METRICS:
            lo, hi = jackknife_interval(full[m], [r[m] for r in leave_out], level)
            if m != "percent_agreement":
                lo, hi = max(lo, -1.0), min(hi, 1.0)
            else:  # a share: never below 0 % or above 100 %
                lo, hi = max(lo, 0.0), min(hi, 100.0)
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = lo, hi
        row["ci_method"] = CI_METHOD
        rows.append(row)
    return pd.DataFrame(rows, columns=OVERALL_COLUMNS)


def jackknife_interval(
    estimate: float, leave_one_out: Sequence[float], level: float = 0.95
) -> tuple[float, float]:
    """estimate ± t(level, g − 1) × the jackknife standard error over the g leave-one-group-out
    values (Quenouille–Tukey: SE² = (g − 1)/g Σ (θ₍ᵢ₎ − θ̄)²). NaN when fewer than 3 of them
    are finite: two transcripts give a single degree of freedom and no usable spread."""
    vals = np.asarray([v for v in leave_one_out if v is not None], dtype=float)
    vals = vals[np.isfinite(vals)]
    g = len(vals)
    if g < 3 or not math.isfinite(estimate):
        return math.nan, math.nan
    se = math.sqrt((g - 1) / g * float(((vals - vals.mean()) ** 2).sum()))
    q = float(t.ppf(0.5 + level / 2, g - 1))
    return estimate - q * se, estimate + q * se
