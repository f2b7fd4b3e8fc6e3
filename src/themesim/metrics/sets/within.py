"""A theme's spread within its own set, and the within-set z scale built on it
(docs/thresholds.md): S_z[i, j] = min((S[i, j] - mu_A,i) / sd_A,i, (S[i, j] - mu_B,j) / sd_B,j),
mu and sd (ddof=1) of a theme's similarities to the other themes of its set.

Apart from scales.py (the size-aware cut, scipy.stats) and baselines.py (the percentiles):
the heatmap jobs put matrices on the z scale with this module alone (metrics.method_scale).
"""

from __future__ import annotations

import numpy as np

from themesim.metrics.sets.coverage import check_matrix

MIN_WITHIN = 3  # fewest other themes a spread is taken over
ZERO_SPREAD = 1e-12  # a standard deviation below this is zero


def check_within(W, n: int, name: str) -> np.ndarray:
    W = check_matrix(W)
    if W.shape != (n, n):
        raise ValueError(f"{name} must be {n} x {n} to match the similarity matrix, got {W.shape}")
    return W


def row_others(W: np.ndarray, i: int) -> np.ndarray:
    return np.delete(W[i], i)


def z_against(x: float, within: np.ndarray) -> tuple[float, float, float, list[str]]:
    """mean, std (ddof=1), z of x against `within`, and the reasons for any NaN."""
    mean = float(within.mean()) if within.size else np.nan
    if within.size < MIN_WITHIN:
        return mean, np.nan, np.nan, ["too_small"]
    std = float(within.std(ddof=1))
    if std < ZERO_SPREAD:
        return mean, std, np.nan, ["zero_spread"]
    return mean, std, (x - mean) / std, []


def within_spread(W) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per theme: mean and std (ddof=1) of its similarities to the other themes of its set,
    and the reason ("" if none) when the std is undefined."""
    W = check_matrix(W)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"within-set matrix must be square, got {W.shape}")
    mu, sd, flags = [], [], []
    for i in range(W.shape[0]):
        mean, std, z, reasons = z_against(0.0, row_others(W, i))
        mu.append(mean)
        sd.append(std if np.isfinite(z) else np.nan)
        flags.append(";".join(reasons))
    return np.array(mu), np.array(sd), flags


def z_scale(S, W_a, W_b) -> tuple[np.ndarray, str]:
    """S_z and a flag ("" when every cell is defined) naming the undefined themes' reasons."""
    S = check_matrix(S)
    W_a = check_within(W_a, S.shape[0], "W_a")
    W_b = check_within(W_b, S.shape[1], "W_b")
    mu_a, sd_a, fa = within_spread(W_a)
    mu_b, sd_b, fb = within_spread(W_b)
    with np.errstate(invalid="ignore"):
        Z = np.minimum((S - mu_a[:, None]) / sd_a[:, None], (S - mu_b[None, :]) / sd_b[None, :])
    reasons = sorted({f"{side}:{r}" for side, f in (("a", fa), ("b", fb)) for r in f if r})
    return Z, ";".join(reasons)
