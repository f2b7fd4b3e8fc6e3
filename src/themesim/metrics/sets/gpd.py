"""Generalized Pareto tails at location 0 for the null model (metrics/sets/nulls.py): fits and
their goodness-of-fit check.

`fit_mle` (what the null model uses): the maximum-likelihood fit as a one-dimensional search
(Grimshaw's profile likelihood), at least the likelihood of scipy.stats.genpareto.fit at a
few per cent of its cost (tests/test_gpd.py). `anderson_darling` and `ad_critical`: the
check of a fit against Choulakian & Stephens' table. `fit_scale`: the scale at a fixed shape.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.stats import genpareto

# Choulakian & Stephens (2001, Technometrics 43:478, Table 2, case 3: shape and scale both
# estimated by maximum likelihood): upper-tail percentage points of the Anderson–Darling A²
# by shape. Their k is -shape; rows here are in scipy's shape ξ, heaviest tail first. A Monte
# Carlo check of the orientation (1500 fits of 40 exceedances): 95th percentile of A² 0.823
# at ξ = 0.5 (table 0.830), 0.929 at ξ = 0 (0.974), 1.268 at ξ = -0.4 (1.221).
AD_SHAPES = np.array([0.9, 0.5, 0.2, 0.1, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5])
AD_LEVELS = np.array([0.5, 0.25, 0.1, 0.05, 0.025, 0.01, 0.005, 0.001])
AD_CRITICAL = np.array(
    [
        [0.339, 0.471, 0.641, 0.771, 0.905, 1.086, 1.226, 1.559],
        [0.356, 0.499, 0.685, 0.830, 0.978, 1.180, 1.336, 1.707],
        [0.376, 0.534, 0.741, 0.903, 1.069, 1.296, 1.471, 1.893],
        [0.386, 0.550, 0.766, 0.935, 1.110, 1.348, 1.532, 1.966],
        [0.397, 0.569, 0.796, 0.974, 1.158, 1.409, 1.603, 2.064],
        [0.410, 0.591, 0.831, 1.020, 1.215, 1.481, 1.687, 2.176],
        [0.426, 0.617, 0.873, 1.074, 1.283, 1.567, 1.788, 2.314],
        [0.445, 0.649, 0.924, 1.140, 1.365, 1.672, 1.909, 2.475],
        [0.468, 0.688, 0.985, 1.221, 1.465, 1.799, 2.058, 2.674],
        [0.496, 0.735, 1.061, 1.321, 1.590, 1.958, 2.243, 2.922],
    ]
)


def anderson_darling(x, shape: float, scale: float) -> float:
    """A² of the exceedances x against the GPD (shape, loc 0, scale); inf when a point lies
    at or beyond the fitted support's ends (the fit cannot be trusted there)."""
    z = np.sort(genpareto.cdf(np.asarray(x, dtype=np.float64), shape, loc=0.0, scale=scale))
    n = z.size
    if n == 0 or z[0] <= 0.0 or z[-1] >= 1.0:
        return float("inf")
    j = np.arange(1, n + 1)
    return float(-n - np.mean((2 * j - 1) * (np.log(z) + np.log1p(-z[::-1]))))


def ad_critical(shape: float, level: float = 0.05) -> float:
    """Critical A² at `level` for a fitted shape, linear in the shape between table rows;
    beyond the table the nearest row (for ξ < -0.5 a smaller value than the exact one, so
    the check is stricter there, never looser)."""
    cols = np.flatnonzero(np.isclose(AD_LEVELS, level))
    if not cols.size:
        raise ValueError(f"level must be one of {AD_LEVELS.tolist()}, got {level}")
    col = int(cols[0])
    # np.interp needs increasing x: the rows run from the heaviest tail down.
    return float(np.interp(shape, AD_SHAPES[::-1], AD_CRITICAL[::-1, col]))


def fit_scale(x, shape: float) -> float:
    """Maximum-likelihood scale of a GPD at location 0 with the shape held at `shape` >= 0
    (the mean for the exponential, shape 0)."""
    data = np.asarray(x, dtype=np.float64)
    if shape < 0:
        raise ValueError(f"shape must be >= 0, got {shape}")
    if shape == 0:
        return float(data.mean())

    def nll(log_scale: float) -> float:
        s = np.exp(log_scale)
        return data.size * log_scale + (1 + 1 / shape) * np.log1p(shape * data / s).sum()

    mean = float(data.mean())
    res = optimize.minimize_scalar(
        nll, bounds=(np.log(mean) - 8, np.log(mean) + 2), method="bounded", options={"xatol": 1e-10}
    )
    return float(np.exp(res.x))


def _profile(t: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shape and profile log-likelihood of a GPD at each t = shape / scale (t > -1/max x):
    at fixed t the likelihood peaks at shape = mean(log1p(t·x)), scale = shape / t
    (Grimshaw 1993), so the fit is a search over t alone. t = 0 is the exponential."""
    n = x.size
    with np.errstate(divide="ignore", invalid="ignore"):
        shape = np.log1p(np.multiply.outer(t, x)).mean(axis=-1)
        ll = -n * (np.log(shape / t) + 1.0 + shape)
    zero = t == 0
    shape[zero] = 0.0
    ll[zero] = -n * (np.log(x.mean()) + 1.0)
    ll[~np.isfinite(ll) | (shape < -1.0)] = -np.inf  # below -1 the likelihood is unbounded
    return shape, ll


def fit_mle(x) -> tuple[float, float]:
    """(shape, scale) maximising the GPD likelihood at location 0 over shape >= -1: a grid
    over t = shape / scale refined by Brent's method. It reaches at least scipy's
    likelihood (tests/test_gpd.py) at a few per cent of genpareto.fit's cost; the null model fits
    a tail per theme and comparison, and the validation suite thousands."""
    data = np.asarray(x, dtype=np.float64).ravel()
    if not np.isfinite(data).all():
        raise ValueError("The data contains non-finite values.")
    if data.size < 2 or not np.ptp(data) > 0 or data.min() < 0:
        raise ValueError("a GPD fit needs at least two distinct non-negative values")
    top = data.max()
    # t · top runs over (-1, 1e4]: bounded tails near -1, heavy ones far above 0.
    near = np.geomspace(1e-6, 1e4, 100)
    s = np.unique(np.r_[-(1 - np.geomspace(1e-9, 0.5, 40)), -near[near < 1], 0.0, near])
    t = s / top
    _, ll = _profile(t, data)
    j = int(np.argmax(ll))
    lo, hi = t[max(j - 1, 0)], t[min(j + 1, t.size - 1)]

    def neg(v: float) -> float:
        ll = float(_profile(np.array([v]), data)[1][0])
        return -ll if np.isfinite(ll) else 1e300

    res = optimize.minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12 / top})  # fmt: skip
    best = res.x if -res.fun >= ll[j] else t[j]
    shape = float(_profile(np.array([best]), data)[0][0])
    scale = float(shape / best) if best != 0 else float(data.mean())
    return shape, scale
