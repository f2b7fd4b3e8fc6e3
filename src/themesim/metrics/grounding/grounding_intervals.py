"""Intervals of the grounding statistics: the delete-one-transcript jackknife (the transcript,
not the segment, is the sampled unit), the IoU intervals grounded Hungarian F1 is bounded by,
and the intervals withheld where the jackknife is biased (docs/grounding.md)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from themesim.metrics.grounding.grounding_stats import (
    f1_score,
    grounded_hungarian,
    iou_from_counts,
    iou_matrix,
    summary_row,
)
from themesim.metrics.grounding.labelings import Labelings

# The metrics with intervals, in column order, and the interval each is clipped to (never
# past the estimate).
CI_BOUNDS = {
    "data_coverage_a": (0.0, 1.0),
    "data_coverage_b": (0.0, 1.0),
    "ami": (-1.0, 1.0),
    "ari": (-1.0, 1.0),
    "grounded_hungarian_f1": (0.0, 1.0),
    "text_pairs_median_kappa": (-1.0, 1.0),
    "text_pairs_krippendorff_alpha": (-1.0, 1.0),
    "text_data_spearman": (-1.0, 1.0),
}
CI_METRICS = list(CI_BOUNDS)
CI_METHOD = "transcript_jackknife"
# Intervals withheld (NaN) below this many transcripts: noise in a few transcripts' IoU and κ
# pulls these statistics towards 0, which a jackknife (spread) does not see, and no interval
# the suite tried held 0.93 there (docs/validity.md, "Grounding inference"). ρ: never given.
BIASED_CI_MIN_TRANSCRIPTS = {"text_pairs_median_kappa": 20, "text_data_spearman": math.inf}
NOT_GIVEN = "not given: biased by segment noise, see docs/validity.md"


def jackknife_interval(
    estimate: float, replicates, level: float = 0.95, bounds=(-math.inf, math.inf)
) -> tuple[float, float]:
    """The delete-one-group jackknife interval θ̂ ± t(G' − 1) · se of a statistic θ, with
    se² = (G' − 1) / G' · Σ (θ_(g) − θ_(·))² over the G' replicates θ_(g) that are defined
    (each leaves one transcript out; θ_(·) their mean), clipped to the statistic's `bounds`
    but never past θ̂: it always contains the estimate. NaN with fewer than 2 replicates."""
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not np.isfinite(estimate) or r.size < 2:
        return math.nan, math.nan
    g = r.size
    se = math.sqrt((g - 1) / g * float(np.sum((r - r.mean()) ** 2)))
    h = float(student_t.ppf(0.5 * (1 + level), g - 1)) * se
    lo, hi = bounds
    return min(estimate, max(estimate - h, lo)), max(estimate, min(estimate + h, hi))


def _loo_iou(A, B, transcripts) -> np.ndarray:
    """IoU of every theme pair with each transcript left out: (G, n_a, n_b)."""
    groups = np.unique(transcripts)
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    both, n_a, n_b = Ai.T @ Bi, Ai.sum(axis=0), Bi.sum(axis=0)
    out = np.empty((len(groups), A.shape[1], B.shape[1]))
    for g, t in enumerate(groups):
        m = transcripts == t
        out[g] = iou_from_counts(
            both - Ai[m].T @ Bi[m], n_a - Ai[m].sum(axis=0), n_b - Bi[m].sum(axis=0)
        )
    return out


def iou_intervals(A, B, transcripts, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per theme pair an interval for its IoU, a share of the segments either theme labels
    (n = that union): Wilson's score interval (statsmodels proportion_confint) on the
    effective size n / deff, deff = the transcript jackknife's variance over the binomial
    one (at least 1: never narrower than independent segments). Wilson's interval is not
    empty where the IoU is 0 or 1 in the sample, as the jackknife's would be. A pair that
    neither theme ever labels: [0, 0]."""
    both, n_a, n_b, iou = iou_matrix(A, B)
    union = (n_a[:, None] + n_b[None, :] - both).astype(float)
    reps = _loo_iou(A, B, transcripts)
    g = reps.shape[0]
    v_jk = (g - 1) / g * ((reps - reps.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v_bin = iou * (1 - iou) / union
        deff = np.where(v_bin > 0, np.maximum(v_jk / v_bin, 1.0), 1.0)
    n_eff = np.where(union > 0, union / deff, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = proportion_confint(iou * n_eff, n_eff, alpha=1 - level, method="wilson")
    empty = union == 0
    lo, hi = np.where(empty, 0.0, np.minimum(lo, iou)), np.where(empty, 0.0, np.maximum(hi, iou))
    return lo, hi


def grounded_f1_interval(A, B, transcripts, min_iou: float, level: float = 0.95):
    """grounded_hungarian_f1 counts pairs past min_iou, which a jackknife of the count itself
    cannot bound (it jumps). From each pair's IoU interval [lo, hi] (:func:`iou_intervals`):
    the low end counts the estimate's matched pairs whose lo passes min_iou, the high end
    the most pairs that can be matched one-to-one among those whose hi passes (scipy
    maximum_bipartite_matching); 2k / (n_a + n_b) of each."""
    _, _, _, iou = iou_matrix(A, B)
    lo, hi = iou_intervals(A, B, transcripts, level)
    matched = grounded_hungarian(iou, min_iou)
    k_lo = sum(1 for i, j in matched if lo[i, j] >= min_iou and lo[i, j] > 0)
    ok = (hi >= min_iou) & (hi > 0)
    match = maximum_bipartite_matching(csr_matrix(ok.astype(np.int8)), perm_type="column")
    k_hi = int((match >= 0).sum())
    return f1_score(k_lo, A.shape[1], B.shape[1]), f1_score(k_hi, A.shape[1], B.shape[1])


def jackknife_intervals(lab: Labelings, transcripts, row: dict, level: float) -> dict:
    """CI_METRICS' jackknife intervals: each replicate is the full statistic on the segments
    of every transcript but one (no segment ever repeats); grounded_hungarian_f1 from its
    pairs' IoU intervals (:func:`grounded_f1_interval`)."""
    A, B, top_a, top_b = lab.A, lab.B, lab.top_a, lab.top_b
    S, tpairs, min_iou = lab.S, lab.tpairs, lab.min_iou
    groups = np.unique(transcripts)
    reps = np.full((len(groups), len(CI_METRICS)), np.nan)
    if len(groups) >= 2:
        for g, t in enumerate(groups):
            keep = transcripts != t
            res, _ = summary_row(
                A[keep], B[keep], top_a[keep], top_b[keep], S, tpairs, min_iou, fast=True
            )
            reps[g] = [res[m] for m in CI_METRICS]
    out: dict = {}
    for k, m in enumerate(CI_METRICS):
        lo, hi = jackknife_interval(row[m], reps[:, k], level, CI_BOUNDS[m])
        out[f"{m}_ci_low"], out[f"{m}_ci_high"] = lo, hi
    if len(groups) >= 2:
        lo, hi = grounded_f1_interval(A, B, transcripts, min_iou, level)
        f1 = row["grounded_hungarian_f1"]
        out["grounded_hungarian_f1_ci_low"] = min(lo, f1)
        out["grounded_hungarian_f1_ci_high"] = max(hi, f1)
    out["ci_method"] = CI_METHOD if len(groups) >= 2 else "none (one transcript)"
    return out


def withheld_intervals(row: dict) -> dict:
    """The jackknife row's intervals that BIASED_CI_MIN_TRANSCRIPTS withholds at its
    n_transcripts, set to NaN, and a ci_method naming them and why (never a silent NaN)."""
    if not str(row.get("ci_method", "")).startswith(CI_METHOD):
        return {}  # one transcript: no interval at all, and ci_method already says so
    g = row["n_transcripts"]
    names = [
        m if math.isinf(g_min) else f"{m} (under {g_min} transcripts)"
        for m, g_min in BIASED_CI_MIN_TRANSCRIPTS.items()
        if g < g_min
    ]
    out: dict = {
        f"{m}_ci_{end}": math.nan
        for m, g_min in BIASED_CI_MIN_TRANSCRIPTS.items()
        if g < g_min
        for end in ("low", "high")
    }
    out["ci_method"] = f"{CI_METHOD}; {', '.join(names)}: {NOT_GIVEN}" if names else CI_METHOD
    return out
