"""Score limits of a mean on [0, 1] and the interval of a difference of two such means
built from them (MOVER): the far side of a mean near a bound reaches as its score limit
does. Read by the crossed interval (metrics.crossed) on its generator's and analysts' sides.
"""

from __future__ import annotations

import numpy as np


def wilson(p: float, half: float, least: float = 0.0) -> tuple[float, float]:
    """Score (Wilson) limits of a share p on [0, 1] whose symmetric half-width is half:
    the variance taken as proportional to mu (1 - mu) and read at the limit itself, so that
    a share near a bound is given room on its open side (Wilson 1927; with a survey share's
    effective sample size, Kott 2017). least: c = quantile^2 / effective size for a share
    of 0 or 1, whose spread is 0 (quantile^2 / units: the size its units give it), so that
    it has room on its open side; elsewhere the spread gives c."""
    spread = p * (1 - p)
    c = half**2 / spread if spread > 1e-12 else least
    if c <= 0:
        return p - half, p + half
    root = np.sqrt(c * spread + c * c / 4)
    return (p + c / 2 - root) / (1 + c), (p + c / 2 + root) / (1 + c)


def wedderburn(p: float, half: float) -> tuple[float, float]:
    """Score limits of a mean p on [0, 1] whose symmetric half-width is half, with the
    variance taken as proportional to mu^2 (1 - mu)^2 (Wedderburn 1974, "Quasi-likelihood
    functions, generalized linear models, and the Gauss-Newton method", Biometrika 61:
    439-447: continuous proportions; constant variance on the logit scale) and read at the
    limit: L solves p - L = half L (1 - L) / (p (1 - p)), U likewise above."""
    spread = p * (1 - p)
    if half <= 0 or spread <= 1e-12:
        return p - half, p + half
    c = half / spread
    lo = ((c + 1) - np.sqrt((c + 1) ** 2 - 4 * c * p)) / (2 * c)
    hi = (-(1 - c) + np.sqrt((1 - c) ** 2 + 4 * c * p)) / (2 * c)
    return float(lo), float(hi)


def between(p: float, half: float) -> tuple[float, float]:
    """Score limits of a mean p on [0, 1] whose symmetric half-width is half, with the
    variance taken as proportional to (mu (1 - mu))^1.5: the geometric mean of Wilson's
    binomial relation and Wedderburn's, read at the limit: L solves
    p - L = half (L (1 - L) / (p (1 - p)))^0.75, U likewise above."""
    from scipy.optimize import brentq

    spread = p * (1 - p)
    if half <= 0 or spread <= 1e-12:
        return p - half, p + half

    def gap(x):
        return half * (x * (1 - x) / spread) ** 0.75

    lo = brentq(lambda x: p - x - gap(x), 0.0, p)
    hi = brentq(lambda x: x - p - gap(x), p, 1.0)
    return float(lo), float(hi)


def bounded_sides(d, generator, human, half, sides, low, high, limits) -> tuple[float, float]:
    """The interval of D on a [0, 1] scale, widened where a side sits near a bound: MOVER
    (Zou and Donner 2008) from each side's limits (limits: the generator's and the
    analysts' functions of mean and half-width), with the two sides' correlation
    that reproduces the symmetric half-width, never narrower than the symmetric interval.
    Near a bound a mean's spread shrinks with its distance to the bound, so the symmetric
    interval errs on the far side (the estimate and its spread move together)."""
    h_g, h_h = sides
    if h_g <= 0 or h_h <= 0:
        corr = 0.0
    else:
        corr = float(np.clip((h_g**2 + h_h**2 - half**2) / (2 * h_g * h_h), -1.0, 1.0))
    lo_g, hi_g = limits[0](generator, h_g)
    lo_h, hi_h = limits[1](human, h_h)

    def reach(a, b):
        return float(np.sqrt(max(a * a + b * b - 2 * corr * a * b, 0.0)))

    down = reach(generator - lo_g, hi_h - human)
    up = reach(hi_g - generator, human - lo_h)
    return min(low, d - down), max(high, d + up)
