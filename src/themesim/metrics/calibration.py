"""Calibration of one method's scores against hand-rated theme pairs (docs/thresholds.md).

From (score, label) pairs: ROC AUC with a seeded bootstrap interval, an isotonic fit of
P(match | score), and the thresholds that maximise F1 and Youden's J, each with a bootstrap
interval. A threshold is one of the observed scores, used as `score >= t`.

The ROC curve, its AUC and the isotonic fit are scikit-learn's arithmetic (roc_curve,
roc_auc_score, IsotonicRegression on scipy's isotonic_regression) written out here:
importing scikit-learn cost a calibration job about 0.5 CPU-s. tests/test_calibration.py
checks every result bit for bit against scikit-learn.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from themesim.errors import InputError

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
]
MIN_PER_LABEL = 2


def read_rated_pairs(path, positive_from=None) -> pd.DataFrame:
    """text_a, text_b, label (0/1) from a CSV with `label` or an ordinal `rating`.

    A rating counts as a match from `positive_from` up (calibration.positive_from).
    """
    from themesim.io.rated_pairs import read_pairs_csv

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
    _, tps, fps = _curve(s, y)
    return _roc(tps, fps)


def _curve(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, descending, and the true and false positives of `score >= t` at each
    (scikit-learn's _binary_clf_curve: float cumulative sums, fps = rank + 1 - tps)."""
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
    (0, 0) point with threshold inf is left out: it is never the maximum's first)."""
    return tps / tps[-1] - fps / fps[-1]


def _first_max(v: np.ndarray) -> int:
    return int(np.flatnonzero(v == v.max())[0])


def _roc(tps: np.ndarray, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) as roc_curve gives them: collinear points dropped, (0, 0) prepended."""
    fps, tps = _drop_collinear(fps, tps)
    fps, tps = np.r_[0.0, fps], np.r_[0.0, tps]
    return fps / fps[-1], tps / tps[-1]


def _drop_collinear(fps: np.ndarray, tps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """roc_curve's drop_intermediate: points on a straight segment add nothing."""
    if fps.size > 2:
        keep = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        return fps[keep], tps[keep]
    return fps, tps


def isotonic_fit(scores, labels) -> pd.DataFrame:
    """Breakpoints of the isotonic fit of P(match | score): columns score, p_match.

    Between breakpoints P is linear, beyond them constant (sklearn's predict with
    out_of_bounds="clip"); map_calibrated applies it. The fit is IsotonicRegression(y_min=0,
    y_max=1)'s: pairs sorted by (score, label), scores within float64 resolution of a run's
    first one pooled to their mean label, scipy's isotonic_regression weighted by the pooled
    counts, clipped to [0, 1], and the points inside a flat run dropped.
    """
    from scipy.optimize import isotonic_regression

    s, y = _check(scores, labels)
    order = np.lexsort((y, s))
    x, t = s[order], y[order].astype(np.float64)
    eps = np.finfo(np.float64).resolution
    starts = [0]
    for k in range(1, x.size):
        if x[k] - x[starts[-1]] >= eps:
            starts.append(k)
    weights = np.diff(np.r_[starts, x.size]).astype(np.float64)
    x = x[starts]
    p = np.asarray(isotonic_regression(np.add.reduceat(t, starts) / weights, weights=weights).x)
    np.clip(p, 0.0, 1.0, out=p)
    keep = np.ones(p.size, dtype=bool)
    keep[1:-1] = np.logical_or(p[1:-1] != p[:-2], p[1:-1] != p[2:])
    return pd.DataFrame({"score": x[keep], "p_match": p[keep]})


def map_calibrated(S, fit: pd.DataFrame) -> np.ndarray:
    """Scores mapped through an isotonic fit to P(match) (scale: calibrated)."""
    x, p = fit["score"].to_numpy(float), fit["p_match"].to_numpy(float)
    return np.interp(np.asarray(S, dtype=np.float64), x, p)


def _resample_stats(s: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(AUC, F1 threshold, Youden threshold) of checked arrays with both labels, from one sort.

    The bootstrap's inner loop and the point estimates: the same float operations as
    roc_auc_score, f1_threshold and youden_threshold (scikit-learn's curve arithmetic, its
    drop of collinear points before the trapezoid), without per-call input checks.
    tests/test_calibration.py checks the bits against scikit-learn.
    """
    thr, tps, fps = _curve(s, y)
    t_f1 = thr[_first_max(_f1(tps, fps, y))]
    t_j = thr[_first_max(_youden(tps, fps))]
    fpr, tpr = _roc(tps, fps)
    auc = float(np.trapezoid(tpr, fpr))  # roc_auc_score
    return auc, float(t_f1), float(t_j)


def calibrate(scores, labels, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """SUMMARY_COLUMNS for one method: AUC, F1 and Youden thresholds, bootstrap intervals.

    Resamples draw pairs with replacement (numpy default_rng(seed)); a resample with a single
    label has no AUC or threshold and is skipped.
    """
    s, y = _check(scores, labels)
    out = {"n_pairs": int(s.size), "n_positive": int(y.sum())}
    out["auc"] = _resample_stats(s, y)[0]
    out["f1_threshold"], out["f1_max"] = f1_threshold(s, y)
    out["youden_threshold"], out["youden_j"] = youden_threshold(s, y)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, s.size, size=(n_boot, s.size))
    boot = np.full((n_boot, 3), np.nan)
    for b, idx in enumerate(draws):
        yb = y[idx]
        if yb.min() == yb.max():
            continue
        boot[b] = _resample_stats(s[idx], yb)
    q = [50 * (1 - level), 50 * (1 + level)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(boot, q, axis=0)
    for k, name in enumerate(("auc", "f1_threshold", "youden_threshold")):
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = float(lo[k]), float(hi[k])
    return {c: out[c] for c in SUMMARY_COLUMNS}


CALIBRATED = "calibrated"


def resolve_thresholds(thresholds, summary: dict, fit: pd.DataFrame | None = None):
    """Thresholds with `calibrated` replaced by the F1-maximising threshold; with a fit
    (scale: calibrated) that threshold is mapped to its P(match). Also the source of each."""
    out, source = [], []
    for t in thresholds:
        if t == CALIBRATED:
            value = float(summary["f1_threshold"])
            if fit is not None:
                value = float(map_calibrated(value, fit))
            out.append(value)
            source.append("calibrated (F1-max)")
        else:
            out.append(float(t))
            source.append("config")
    return out, source


def shown_thresholds(thresholds, comparisons_csv=None) -> list[float]:
    """Configured thresholds as numbers: `calibrated` ones as the metrics rule resolved them
    (the thresholds of comparisons.csv, in configured order)."""
    if all(t != CALIBRATED for t in thresholds):
        return [float(t) for t in thresholds]
    if comparisons_csv is None:
        raise ValueError("a calibrated threshold needs the method's comparisons.csv")
    return [float(t) for t in pd.unique(pd.read_csv(comparisons_csv)["threshold"])]
