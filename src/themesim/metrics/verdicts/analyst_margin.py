"""The verdict's margin from the analysts' own spread (docs/verdicts.md, "The margin").

With K >= 3 analysts each the reference in turn, A[r, h] is analyst h's agreement with
reference r's themes (the mean over r's themes of hum[r][:, h]). A two-way model

    A[r, h] = mu + rho_r + gamma_h + e_rh,

rho_r the reference (fixed), gamma_h the comparator, gamma ~ (0, sigma^2): sigma is how far
one analyst's agreement differs from another's on the same themes, the spread a generator is
held to. e_rh is the cell's own noise over themes, its variance MS_E,r / n_r (the residual
mean square of reference r's theme + comparator fit, which holds the themes' own effects out).
With SS the comparators' sum of squares after the references (K - 1 degrees of freedom) and
M the projection it is read through,

    E[SS] = tr(M Sigma) + sigma^2 tr(Z' M Z),

so sigma^2 = (SS - tr(M Sigma)) / tr(Z' M Z) (0 below), and the one-sided (1 - alpha)
lower bound reads SS at chi^2 on K - 1 degrees of freedom (Satterthwaite's approximation of
SS as a scaled chi^2): the margin is that bound, so a margin drawn from three to five
analysts errs small, never large, in 1 - alpha of studies.
"""

from __future__ import annotations

import numpy as np

from themesim.metrics.verdicts.crossed import residual_mean_square

MARGIN_ANALYSTS = "analysts"  # margin_source of a margin read from the analysts' spread
MARGIN_FROM = (MARGIN_ANALYSTS, "convention")  # equivalence.margin_from
MIN_ANALYSTS = 3


def _cells(hum):
    """(A values, reference index, comparator index, noise variance) per ordered pair."""
    k = len(hum)
    values, refs, comps, noise = [], [], [], []
    for r, h in enumerate(hum):
        t = np.delete(np.asarray(h, dtype=np.float64), r, axis=1)
        n = t.shape[0]
        ms = residual_mean_square(t)
        for j, c in enumerate(x for x in range(k) if x != r):
            values.append(t[:, j].mean())
            refs.append(r)
            comps.append(c)
            noise.append(ms / n)
    return np.array(values), np.array(refs), np.array(comps), np.array(noise)


def _projection(x: np.ndarray) -> np.ndarray:
    return x @ np.linalg.pinv(x)


def analysts_spread(hum, alpha: float = 0.05) -> tuple[float, float]:
    """(sigma, its one-sided (1 - alpha) lower bound) of the module docstring; NaN, NaN
    below three analysts. hum[r]: (themes, analysts), column r NaN."""
    from scipy.special import chdtri  # chi^2 upper quantile (scipy.stats' chi2.isf)

    k = len(hum)
    if k < MIN_ANALYSTS:
        return float("nan"), float("nan")
    a, refs, comps, noise = _cells(hum)
    rows = np.eye(k)[refs]
    z = np.eye(k)[comps]
    x_row = np.column_stack([np.ones(a.size), rows[:, 1:]])
    x_full = np.column_stack([x_row, z[:, 1:]])
    m = _projection(x_full) - _projection(x_row)
    ss = float(a @ m @ a)
    nu = k - 1
    floor = float(np.trace(m * noise[None, :]))  # tr(M Sigma), Sigma diagonal
    scale = float(np.trace(z.T @ m @ z))
    point = max((ss - floor) / scale, 0.0)
    low = max((ss * nu / chdtri(nu, alpha) - floor) / scale, 0.0)
    return float(np.sqrt(point)), float(np.sqrt(low))
