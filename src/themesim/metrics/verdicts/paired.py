"""The paired difference of two shares over the same units and its score interval: the
2 x 2 table (both, only the first, only the second, neither) and Tango's (1998) score with
the bias (N / (N - 1)) and skewness corrections of Laud (ratesci's `pairbinci`, "SCAS"),
and a continuity adjustment. Read by metrics.verdicts.equivalence: one set against one second
analyst, paired on the reference's themes.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

# ratesci's continuity adjustment gamma (its cc; the conventional one is 0.5): without it the
# verdicts' exact error at the margin reaches 0.098 (equivalent) and 0.062 (worse) for
# 6-30 themes; with 0.25 their largest over a grid of every null table is 0.038 and 0.045
# for 6-80 themes (docs/metrics.md).
CONTINUITY = 0.25
CI_METHOD = (
    "paired score (Tango) with bias, skewness (SCAS, Laud) and continuity (0.25) corrections"
)
_EDGE = 1e-12  # the difference is searched on (-1, 1): at +-1 a cell probability is 0
_STEPS = 64  # bisection steps: the interval to below 1e-18, far under any printed digit


def paired_counts(x, y) -> tuple[int, int, int, int]:
    """(both, only x, only y, neither) of two flag vectors over the same units."""
    x, y = np.asarray(x, dtype=bool), np.asarray(y, dtype=bool)
    if x.shape != y.shape:
        raise ValueError(f"paired flags need the same units, got {x.shape} and {y.shape}")
    return int((x & y).sum()), int((x & ~y).sum()), int((~x & y).sum()), int((~x & ~y).sum())


def _score(theta, a, b, c, d, cc=0.0):
    """Laud's skewness-corrected Tango score of the paired difference theta (vectorised):
    decreasing in theta, 0 at the estimate (b - c) / n; cc: ratesci's continuity
    adjustment gamma (the score's numerator b - c - n theta moves 2 gamma towards 0)."""
    n = a + b + c + d
    lam = n / (n - 1)
    s = (b - c - n * theta) / n
    corr = 2 * cc * np.sign(s) / n
    qa = 2 * n
    qb = -b - c + (2 * n - b + c) * theta
    qc = -c * theta * (1 - theta)
    root = -qb + np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    p21 = np.where(root == 0, 0.0, root / (2 * qa))  # restricted MLE of P(only y)
    p12 = p21 + theta
    with np.errstate(invalid="ignore", divide="ignore"):
        p11 = np.where(a == 0, 0.0, a / (a + d) * (1 - p12 - p21))
    p22 = 1 - p11 - p12 - p21
    p2d = np.clip(p21 + p11, 0.0, 1.0)
    p1d = p2d + theta
    v = np.maximum(0.0, (p1d * (1 - p1d) + p2d * (1 - p2d) - 2 * (p11 * p22 - p12 * p21)) / n)
    v = v * lam
    mu3 = (
        p1d * (1 - p1d) * (1 - 2 * p1d)
        - p2d * (1 - p2d) * (1 - 2 * p2d)
        - 3 * (p11 * (1 - p1d) ** 2 + p21 * p1d**2 - p1d * p2d * (1 - p1d))
        + 3 * (p11 * (1 - p2d) ** 2 + p12 * p2d**2 - p1d * p2d * (1 - p2d))
    ) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        plain = np.where(np.abs(s) <= np.abs(corr), 0.0, (s - corr) / np.sqrt(v))  # +-inf: v 0
        skew = np.where(np.abs(mu3) < 1e-10, 0.0, mu3 / (6 * v**1.5))
        skew = np.where(np.isfinite(skew), skew, 0.0)
        disc = np.maximum(0.0, 1 + 4 * skew * (plain + skew))
        corrected = (-1 + np.sqrt(disc)) / (2 * skew)
    return np.where((skew == 0) | ~np.isfinite(plain), plain, corrected)


def paired_interval(
    a, b, c, d, level: float = 0.90, cc: float = CONTINUITY
) -> tuple[np.ndarray, np.ndarray]:
    """Interval of the paired difference (b - c) / n at `level` (two-sided), n = a+b+c+d,
    a: both, b: only the first, c: only the second, d: neither. Broadcasts; n < 2 gives NaN.
    cc: the continuity adjustment (0: ratesci's pairbinci default, SCAS without it).

    Each end is where the score reaches -+z (bisection on the score, which falls with the
    difference): 0.9 gives the interval a TOST at 0.05 reads.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    a, b, c, d = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, c, d)))
    n = a + b + c + d
    z = norm.ppf(1 - (1 - level) / 2)
    est = np.where(n > 0, (b - c) / np.maximum(n, 1), 0.0)
    ok = n >= 2

    def solve(lo, hi, target, keep_low):
        # keep_low(score at mid): the end lies above mid
        for _ in range(_STEPS):
            mid = (lo + hi) / 2
            up = keep_low(_score(mid, a, b, c, d, cc), target)
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        return (lo + hi) / 2

    with np.errstate(invalid="ignore", divide="ignore"):
        bottom = np.full(a.shape, -1 + _EDGE)
        top = np.full(a.shape, 1 - _EDGE)
        low = solve(bottom, np.maximum(est, bottom), z, lambda s, t: s >= t)
        low = np.where(_score(bottom, a, b, c, d, cc) < z, -1.0, low)
        high = solve(np.minimum(est, top), top, -z, lambda s, t: s > t)
        high = np.where(_score(top, a, b, c, d, cc) > -z, 1.0, high)
    low = np.where(ok, np.minimum(low, est), np.nan)
    high = np.where(ok, np.maximum(high, est), np.nan)
    return low, high
