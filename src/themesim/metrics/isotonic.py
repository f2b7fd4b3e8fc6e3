"""An isotonic fit applied: scores mapped to P(match) through the breakpoints that
calibration.isotonic_fit writes, re-based to another share of matches. Apart from
calibration.py, which fits with scikit-learn, so the jobs that only put a matrix on the
calibrated scale (metrics, heatmaps, grounding, the verdicts) do not import it."""

from __future__ import annotations

import numpy as np
import pandas as pd


def map_calibrated(S, fit: pd.DataFrame) -> np.ndarray:
    """Scores mapped through an isotonic fit to P(match) (scale: calibrated), re-based to
    the fit's `target_prevalence` when it has one (calibration.with_prevalence)."""
    x, p = fit["score"].to_numpy(float), fit["p_match"].to_numpy(float)
    out = np.interp(np.asarray(S, dtype=np.float64), x, p)
    if "target_prevalence" in fit.columns:
        out = rebase(out, float(fit["prevalence"].iloc[0]), float(fit["target_prevalence"].iloc[0]))
    return out


def rebase(p, prevalence: float, target: float) -> np.ndarray:
    """P(match) re-based from the share of matches it assumes to another (prior shift: the
    scores of matches and of non-matches keep their distributions, only their mix changes):
    odds' = odds · [target / (1 − target)] / [prevalence / (1 − prevalence)]. 0 and 1 stay."""
    p = np.asarray(p, dtype=np.float64)
    if target == prevalence:
        return p.copy()
    ratio = (target / (1 - target)) / (prevalence / (1 - prevalence))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ratio * p / (ratio * p + (1 - p))
    return np.where((p <= 0) | (p >= 1), p, out)
