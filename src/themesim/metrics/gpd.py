"""Maximum-likelihood fit of a generalized Pareto tail at location 0, to the last bit the
result of scipy.stats.genpareto.fit(x, floc=0.0), about twenty times faster.

scipy's generic fit minimises the penalised negative log-likelihood with Nelder-Mead
(scipy.optimize.fmin) from genpareto's own starting point; most of its time goes to the
generic machinery around each of the ~100 likelihood evaluations of one fit (argument
broadcasting, support masks, apply_where). `nnlf` below evaluates the same expression with
the same numpy and scipy.special operations on the same arrays, so every value fmin sees, and
hence the fit, is the same. The null model fits one tail per theme and comparison: the
metrics rule of a large all-pairs study spent most of its time there.
tests/test_gpd.py checks the fits and the likelihood values against scipy's.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special
from scipy.stats import genpareto
from scipy.stats._constants import _LOGXMAX  # the penalty scipy's fit uses per bad point
from scipy.stats._warnings_errors import FitError


def nnlf(theta, data: np.ndarray) -> float:
    """scipy's _penalized_nnlf of genpareto at (shape, loc 0, scale) = (theta[0], 0, theta[1])."""
    c, scale = theta[0], theta[1]
    if not np.isfinite(c) or scale <= 0:
        return np.inf
    x = (data - 0.0) / scale
    n_log_scale = len(x) * np.log(scale)
    # scipy's support mask; x is finite, so no comparison warns
    inside = (0.0 <= x) & (x <= (-1.0 / c if c < 0 else np.inf))
    n_bad = x.size - np.count_nonzero(inside)
    if n_bad > 0:
        x = x[inside]
    logpdf = -special.xlog1py(c + 1.0, c * x) / c if c != 0 else -x
    finite = np.isfinite(logpdf)
    bad = finite.size - np.count_nonzero(finite)
    total = np.sum(logpdf[finite])
    return -(0 + total) + (n_bad + bad) * _LOGXMAX * 100 + n_log_scale


def fit(x) -> tuple[float, float, float]:
    """(shape, loc, scale) as genpareto.fit(x, floc=0.0) returns them."""
    data = np.asarray(x).ravel()
    if not np.isfinite(data).all():
        raise ValueError("The data contains non-finite values.")
    start = genpareto._fitstart(data)
    x0 = [start[0], start[-1]]  # loc fixed at 0: Nelder-Mead over shape and scale
    c, scale = optimize.fmin(nnlf, x0, args=(data,), disp=0)
    if not (np.isfinite(c) and scale > 0):
        raise FitError(
            "Optimization converged to parameters that are outside the range allowed by "
            "the distribution."
        )
    return c, 0.0, scale
