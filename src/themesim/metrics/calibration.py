"""Calibration of one method's scores against hand-rated theme pairs (docs/thresholds.md).

From (score, label) pairs: ROC AUC with a score-type interval widened by the rated pairs'
clustering by theme, an isotonic fit of P(match | score), and the thresholds that maximise F1
and Youden's J, each with a bootstrap interval. A threshold is one of the observed scores,
used as `score >= t`.

The ROC curve, its AUC and the isotonic fit are scikit-learn's (roc_curve, roc_auc_score,
IsotonicRegression). The thresholds are read from the true and false positives at each
observed score, counted once per resample (:func:`_curve`): the F1 of a threshold is a ratio
of those counts, so equal F1s are equal floats and a tie goes to the highest threshold.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import auc, roc_auc_score, roc_curve

from themesim.errors import InputError
from themesim.io.rated_pairs import read_pairs_csv
from themesim.metrics.isotonic import rebase
from themesim.metrics.settings import DEFAULT_CALIBRATION
from themesim.metrics.thresholds import (  # noqa: F401 (moved there)
    CALIBRATED,
    resolve_thresholds,
)

SUMMARY_COLUMNS = [
    "n_pairs",
    "n_positive",
    "auc",
    "auc_ci_low",
    "auc_ci_high",
    "f1_threshold",
    "f1_threshold_ci_low",
    "f1_threshold_ci_high",
    "f1_max",
    "youden_threshold",
    "youden_threshold_ci_low",
    "youden_threshold_ci_high",
    "youden_j",
    "prevalence",
    "ci_method",
]
MIN_PER_LABEL = 2
# Resampling of the rated pairs for the thresholds: within each label, their themes (the
# texts on either side) drawn with replacement, a pair counted as often as both its themes
# were drawn.
CI_METHOD = "stratified_theme_bootstrap"
# The AUC's interval (:func:`auc_interval`): Newcombe's score-type interval, its variance
# scaled by the design effect of a two-way (A theme, B theme) clustered DeLong variance.
AUC_CI_METHOD = "newcombe_score_theme_deff"
SCHEMES = ("stratified_theme", "stratified_oneway", "stratified", "pairs")
AUC_METHODS = ("score", "percentile")


def read_rated_pairs(path, positive_from=None) -> pd.DataFrame:
    """text_a, text_b, label (0/1) from a CSV with `label` or an ordinal `rating`.

    A rating counts as a match from `positive_from` up (calibration.positive_from).
    """
    where = str(path)
    df = read_pairs_csv(path)
    missing = [c for c in ("text_a", "text_b") if c not in df.columns]
    if missing:
        raise InputError(
            where, f"lacks column(s) {', '.join(missing)}", "Give text_a, text_b and label"
        )
    if "label" in df.columns:
        col, raw = "label", df["label"].str.strip()
        bad = ~raw.isin(["0", "1"])
        values = pd.to_numeric(raw.where(~bad), errors="coerce")
        fix = "Labels are 0 (no match) or 1 (match)"
    elif "rating" in df.columns:
        if positive_from is None:
            raise InputError(
                where,
                "has ratings but calibration.positive_from is not set",
                "Set calibration.positive_from to the lowest rating that counts as a match",
            )
        col = "rating"
        values = pd.to_numeric(df["rating"].str.strip(), errors="coerce")
        bad = values.isna()
        values = (values >= positive_from).astype(float).where(~bad)
        fix = "Ratings are numbers"
    else:
        raise InputError(where, "has neither a label nor a rating column", "Add label (0/1)")
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{where} row {i + 2}", f"{col} {df[col].iloc[i]!r} is not valid", fix)
    empty = (df["text_a"].str.strip() == "") | (df["text_b"].str.strip() == "")
    if empty.any():
        i = int(np.flatnonzero(empty.to_numpy())[0])
        raise InputError(f"{where} row {i + 2}", "has an empty text", "Fill in both texts")
    out = pd.DataFrame(
        {"text_a": df["text_a"], "text_b": df["text_b"], "label": values.astype(int)}
    )
    for label in (0, 1):
        if (out["label"] == label).sum() < MIN_PER_LABEL:
            raise InputError(
                where,
                f"has fewer than {MIN_PER_LABEL} pairs labelled {label}",
                "Rate pairs of both kinds: matches and non-matches",
            )
    return out


def _check(scores, labels) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    if s.size != y.size:
        raise ValueError(f"{s.size} scores but {y.size} labels")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite")
    if set(np.unique(y).tolist()) != {0, 1}:
        raise ValueError("labels must contain both 0 and 1")
    return s, y


def f1_threshold(scores, labels) -> tuple[float, float]:
    """(t, F1) maximising F1 of `score >= t` over the observed scores; ties: the highest t."""
    s, y = _check(scores, labels)
    thr, tps, fps = _curve(s, y)
    f1 = _f1(tps, fps, y)
    best = _first_max(f1)  # scores descend: first = highest t
    return float(thr[best]), float(f1[best])


def youden_threshold(scores, labels) -> tuple[float, float]:
    """(t, J) maximising TPR - FPR of `score >= t` (sklearn roc_curve); ties: the highest t."""
    s, y = _check(scores, labels)
    thr, tps, fps = _curve(s, y)
    j = _youden(tps, fps)
    best = _first_max(j)
    return float(thr[best]), float(j[best])


def roc_points(scores, labels) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) of sklearn.metrics.roc_curve(labels, scores): collinear points dropped,
    (0, 0) first."""
    s, y = _check(scores, labels)
    fpr, tpr, _ = roc_curve(y, s)
    return fpr, tpr


def _curve(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, descending, and the true and false positives of `score >= t` at each
    (float cumulative sums, fps = rank + 1 - tps, as roc_curve counts them)."""
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    idx = np.flatnonzero(np.r_[s_sorted[1:] != s_sorted[:-1], True])
    tps = np.cumsum(y_sorted.astype(np.float64))[idx]
    return s_sorted[idx], tps, 1 + idx.astype(np.float64) - tps


def _f1(tps: np.ndarray, fps: np.ndarray, y: np.ndarray) -> np.ndarray:
    """F1 of `score >= t` at each threshold: the predicted positives are tps + fps."""
    return 2 * tps / (tps + fps + y.sum())


def _youden(tps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """TPR - FPR at each threshold, as roc_curve(drop_intermediate=False) divides them (its
    (0, 0) point with threshold inf left out: it is never the maximum's first)."""
    return tps / tps[-1] - fps / fps[-1]


def _first_max(v: np.ndarray) -> int:
    return int(np.flatnonzero(v == v.max())[0])


def isotonic_fit(scores, labels) -> pd.DataFrame:
    """Breakpoints of the isotonic fit of P(match | score): columns score, p_match.

    Between breakpoints P is linear, beyond them constant (scikit-learn's
    IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip"), whose breakpoints these
    are); map_calibrated applies it.
    """
    s, y = _check(scores, labels)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, y)
    return pd.DataFrame({"score": iso.X_thresholds_, "p_match": iso.y_thresholds_})


def resample_stats(s: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(AUC, F1 threshold, Youden threshold) of checked arrays with both labels."""
    return float(roc_auc_score(y, s)), *resample_thresholds(s, y)


def resample_thresholds(s: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(F1 threshold, Youden threshold) of checked arrays with both labels, from one sort:
    the bootstrap's inner loop, as f1_threshold and youden_threshold choose them."""
    return _curve_thresholds(*_curve(s, y), y)


def curve_stats(s: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """resample_stats for the bootstrap's inner loop, from resample_thresholds' one sort:
    the AUC is sklearn.metrics.auc over that curve's (FPR, TPR) from (0, 0), within about
    1e-16 of roc_auc_score at a tenth of its cost (whose input checks dominate a resample)."""
    thr, tps, fps = _curve(s, y)
    area = auc(np.r_[0.0, fps / fps[-1]], np.r_[0.0, tps / tps[-1]])
    return float(area), *_curve_thresholds(thr, tps, fps, y)


def _curve_thresholds(thr, tps, fps, y) -> tuple[float, float]:
    t_f1 = thr[_first_max(_f1(tps, fps, y))]
    t_j = thr[_first_max(_youden(tps, fps))]
    return float(t_f1), float(t_j)


def theme_ids(texts) -> np.ndarray:
    """One id per distinct theme text (runs of white space as one space): the clusters of
    the rated pairs on one side."""
    norm = [" ".join(str(t).split()) for t in texts]
    return np.unique(np.asarray(norm, dtype=object), return_inverse=True)[1].reshape(-1)


def _stratum_draw(rng, a: np.ndarray, b: np.ndarray, scheme: str) -> np.ndarray:
    """How often each pair of one label is drawn. stratified_theme: the stratum's A themes
    and B themes are each drawn with replacement (as many draws as there are themes) and a
    pair counts m_a · m_b times (the two-way "pigeonhole" bootstrap, Owen 2007: pairs that
    share a theme move together); drawn again in the rare case no pair is kept.
    stratified: the stratum's pairs with replacement."""
    n = a.size
    if scheme == "stratified":
        return np.bincount(rng.integers(0, n, n), minlength=n)
    if scheme == "stratified_oneway":
        side = a if np.unique(a).size <= np.unique(b).size else b
        u, inv = np.unique(side, return_inverse=True)
        return np.bincount(rng.integers(0, u.size, u.size), minlength=u.size)[inv]
    ua, ia = np.unique(a, return_inverse=True)
    ub, ib = np.unique(b, return_inverse=True)
    while True:
        ma = np.bincount(rng.integers(0, ua.size, ua.size), minlength=ua.size)
        mb = np.bincount(rng.integers(0, ub.size, ub.size), minlength=ub.size)
        w = ma[ia] * mb[ib]
        if w.any():
            return w


def resample_indices(rng, y: np.ndarray, a=None, b=None, scheme: str = "stratified_theme"):
    """One resample of the rated pairs as indices (a pair repeated as often as drawn).
    pairs: all pairs with replacement (may hold one label only); stratified: within each
    label; stratified_theme: within each label by theme (:func:`_stratum_draw`). a, b: each
    pair's theme ids on either side (None: every pair its own themes)."""
    n = y.size
    if scheme == "pairs":
        return rng.integers(0, n, n)
    a = np.arange(n) if a is None else np.asarray(a)
    b = np.arange(n) if b is None else np.asarray(b)
    parts = []
    for label in (0, 1):
        idx = np.flatnonzero(y == label)
        w = _stratum_draw(rng, a[idx], b[idx], scheme)
        parts.append(np.repeat(idx, w))
    return np.concatenate(parts)


@dataclass(frozen=True)
class IntervalProcedure:
    """How :func:`calibrate` draws its intervals: scheme, the resampling of the rated pairs
    (:func:`resample_indices`, one of SCHEMES); smooth, the smoothed bootstrap's bandwidth
    factor (0: scores as drawn); auc_method, the AUC's interval (one of AUC_METHODS)."""

    scheme: str = "stratified_theme"
    smooth: float = 1.0
    auc_method: str = "score"


DEFAULT_PROCEDURE = IntervalProcedure()


def calibrate(
    scores,
    labels,
    *,
    n_boot: int = DEFAULT_CALIBRATION["bootstrap"]["n"],
    seed: int = DEFAULT_CALIBRATION["bootstrap"]["seed"],
    level: float = 0.95,
    themes_a=None,
    themes_b=None,
    procedure: IntervalProcedure = DEFAULT_PROCEDURE,
) -> dict:
    """SUMMARY_COLUMNS for one method: AUC, F1 and Youden thresholds and their intervals.

    The AUC's interval (auc_method "score", the default) is :func:`auc_interval`: no
    resampling. The thresholds' come from resamples (numpy default_rng(seed)) that keep the
    labels apart and the pairs of a theme together (:func:`resample_indices`; themes_a,
    themes_b: each pair's theme ids, e.g. :func:`theme_ids` of its texts); 95 % percentile
    intervals. A threshold is the argmax of a step function, whose plain bootstrap is too
    narrow, so the thresholds of a resample come from its scores plus normal noise of sd
    h = smooth · (pooled within-label sd) · n^(−1/5) (a smoothed bootstrap). auc_method
    "percentile": the AUC's percentile interval over the same resamples, scores as drawn
    (before issue 23; the validation suite's baseline). Every interval is widened to hold its
    estimate where the resamples' percentiles miss it. `prevalence` is the rated pairs'
    share of matches, the share the isotonic P(match) assumes. scheme, smooth, auc_method:
    the `procedure`'s.
    """
    scheme, smooth, auc_method = procedure.scheme, procedure.smooth, procedure.auc_method
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if auc_method not in AUC_METHODS:
        raise ValueError(f"auc_method must be one of {AUC_METHODS}, got {auc_method!r}")
    s, y = _check(scores, labels)
    out = {"n_pairs": int(s.size), "n_positive": int(y.sum())}
    out["auc"] = resample_stats(s, y)[0]
    out["f1_threshold"], out["f1_max"] = f1_threshold(s, y)
    out["youden_threshold"], out["youden_j"] = youden_threshold(s, y)
    out["prevalence"] = float(y.mean())
    h = smooth * _within_sd(s, y) * s.size**-0.2
    rng = np.random.default_rng(seed)
    boot = np.full((n_boot, 3), np.nan)
    for k in range(n_boot):
        idx = resample_indices(rng, y, themes_a, themes_b, scheme)
        yb = y[idx]
        if yb.min() == yb.max():  # only where scheme "pairs" draws one label
            continue
        if h <= 0 or auc_method == "percentile":
            boot[k] = curve_stats(s[idx], yb)
        if h > 0:
            boot[k, 1:] = resample_thresholds(s[idx] + h * rng.standard_normal(idx.size), yb)
    q = [50 * (1 - level), 50 * (1 + level)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(boot, q, axis=0)
    for k, name in enumerate(("auc", "f1_threshold", "youden_threshold")):
        lo_k, hi_k, est = float(lo[k]), float(hi[k]), out[name]
        if np.isfinite(lo_k) and np.isfinite(hi_k):  # a smoothed resample can miss the estimate
            lo_k, hi_k = min(lo_k, est), max(hi_k, est)
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = lo_k, hi_k
    boot_method = {"stratified_theme": CI_METHOD}.get(scheme, f"{scheme}_bootstrap")
    if auc_method == "score":
        out["auc_ci_low"], out["auc_ci_high"] = auc_interval(
            s, y, themes_a, themes_b, level=level, estimate=out["auc"]
        )
        out["ci_method"] = f"auc: {AUC_CI_METHOD}; thresholds: {boot_method}"
    else:
        out["ci_method"] = boot_method
    return {c: out[c] for c in SUMMARY_COLUMNS}


def placements(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values: per match, the share of non-matches it out-scores (ties
    count half); per non-match, the share of matches that out-score it. Each averages to
    the AUC."""
    pos, neg = s[y == 1], s[y == 0]
    wins = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return wins.mean(axis=1), wins.mean(axis=0)


def delong_variance(s: np.ndarray, y: np.ndarray) -> float:
    """DeLong's variance of the AUC for independent pairs: S10 / m + S01 / n, S10 and S01
    the sample variances (ddof 1) of the matches' and non-matches' placements."""
    v10, v01 = placements(s, y)
    return sum(float(v.var(ddof=1)) / v.size for v in (v10, v01) if v.size > 1)


def clustered_auc_variance(s: np.ndarray, y: np.ndarray, a=None, b=None) -> float:
    """The AUC's variance with the rated pairs clustered by A theme and by B theme (two-way
    cluster-robust, Cameron, Gelbach & Miller 2011, on DeLong's linearisation as Obuchowski
    1997 does for one-way clusters): each pair's influence ψ = (placement − AUC) / m for a
    match, / n for a non-match; V_side = C/(C − 1) Σ_clusters (Σ ψ)² for the A themes, the
    B themes and the (A, B) cells; V = V_A + V_B − V_AB (max(V_A, V_B) where that is not
    positive). a, b None: every pair its own theme. A side with one theme adds nothing."""
    v10, v01 = placements(s, y)
    auc = float(v10.mean())
    psi = np.empty(s.size)
    psi[y == 1] = (v10 - auc) / v10.size
    psi[y == 0] = (v01 - auc) / v01.size
    a = _codes(np.arange(s.size) if a is None else a)
    b = _codes(np.arange(s.size) if b is None else b)

    def one_way(codes) -> float:
        sums = np.bincount(_codes(codes), weights=psi)
        c = sums.size
        return c / (c - 1) * float((sums**2).sum()) if c > 1 else 0.0

    v_a, v_b, v_ab = one_way(a), one_way(b), one_way(a * (b.max() + 1) + b)
    v = v_a + v_b - v_ab
    return v if v > 0 else max(v_a, v_b)


def _codes(ids) -> np.ndarray:
    """0..k−1 for the k distinct ids (any labels), in sorted order."""
    return np.unique(np.asarray(ids).reshape(-1), return_inverse=True)[1].reshape(-1)


def hanley_mcneil_variance(theta: float, m: int, n: int) -> float:
    """The AUC's variance at θ for m matches and n non-matches (Hanley & McNeil 1982 with
    Newcombe's 2006 N* = (m + n)/2: the same weight on both sides):
    θ(1 − θ)[1 + (N* − 1)(1 − θ)/(2 − θ) + (N* − 1)θ/(1 + θ)] / (m n)."""
    k = (m + n) / 2 - 1
    spread = 1 + k * (1 - theta) / (2 - theta) + k * theta / (1 + theta)
    return theta * (1 - theta) * spread / (m * n)


def auc_interval(scores, labels, themes_a=None, themes_b=None, *, level=0.95, estimate=None):
    """The AUC's interval: Newcombe's (2006, method 5) score-type interval, the θ with
    (θ̂ − θ)² ≤ z² · deff · V_HM(θ) (:func:`hanley_mcneil_variance`), whose variance follows
    θ: it does not shrink to a point where θ̂ is 1, as a bootstrap of a perfect separation
    does. deff = max(1, V_cl / min(V_DL, V_HM(θ̂))): the clustered variance
    (:func:`clustered_auc_variance`, pairs sharing a theme move together) over the smaller
    of DeLong's independent-pair variance and the model's at θ̂, so the interval is at least
    as wide as the clustering and the data's own spread ask. estimate: the AUC (default
    from the scores); the interval always contains it."""
    s, y = _check(scores, labels)
    theta = resample_stats(s, y)[0] if estimate is None else float(estimate)
    m, n = int(y.sum()), int(y.size - y.sum())
    v_cl = clustered_auc_variance(s, y, themes_a, themes_b)
    base = min(delong_variance(s, y), hanley_mcneil_variance(theta, m, n))
    deff = max(1.0, v_cl / base) if base > 0 else 1.0
    c2 = float(norm.ppf(0.5 * (1 + level))) ** 2 * deff

    def gap(t: float) -> float:  # > 0 outside the interval
        return (theta - t) ** 2 - c2 * hanley_mcneil_variance(t, m, n)

    eps = 1e-12  # V_HM is 0 at 0 and 1: each end is searched strictly inside
    lo = 0.0 if theta <= eps else brentq(gap, 0.0, min(theta, 1 - eps), xtol=1e-14)
    hi = 1.0 if theta >= 1 - eps else brentq(gap, max(theta, eps), 1.0, xtol=1e-14)
    return min(lo, theta), max(hi, theta)


def _within_sd(s: np.ndarray, y: np.ndarray) -> float:
    """Pooled within-label standard deviation of the scores (ddof 1 per label)."""
    parts = [s[y == label] for label in (0, 1)]
    ss = sum(float(((p - p.mean()) ** 2).sum()) for p in parts)
    dof = sum(p.size - 1 for p in parts)
    return float(np.sqrt(ss / dof)) if dof > 0 else 0.0


def with_prevalence(fit: pd.DataFrame, prevalence: float, target: float | None) -> pd.DataFrame:
    """The isotonic fit with the share of matches its P assumes (`prevalence`), the share
    it is re-based to (`target_prevalence`: calibration.prevalence, or the same) and its
    breakpoints re-based (`p_match_at_target`); map_calibrated applies the re-basing."""
    target = prevalence if target is None else float(target)
    return fit.assign(
        prevalence=prevalence,
        target_prevalence=target,
        p_match_at_target=rebase(fit["p_match"].to_numpy(float), prevalence, target),
    )
