"""Word-salad null model: how good is a best match if B's words are scrambled?

A salad text keeps B's vocabulary and a theme's length but destroys which words belong
together, so a real match must beat what the same words achieve by chance. Each B set gets
one seeded pool of P salad texts; a theme's null best is the maximum of n_b draws from that
pool, so its p-value follows from the theme's similarities to the pool (docs/nulls.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import genpareto
from statsmodels.stats.multitest import multipletests

from themesim.embed.texts import word_salad_pool, word_salad_sets  # noqa: F401 (moved there)
from themesim.metrics.sets import gpd
from themesim.metrics.settings import DEFAULT_METRICS
from themesim.metrics.settings import MIN_NULL_POOL as MIN_POOL

NULL_TABLE_COLUMNS = ["null_p", "null_q", "null_significant", "null_best_median", "null_tail"]
MIN_TAIL = 10  # fewest exceedances a tail is fitted on
# Tail sizes tried for the shape, as shares of the pool, largest first: the largest tail whose
# fit passes the goodness-of-fit check gives the shape (Knijnenburg et al. 2009 shrink the
# tail until the fit passes).
TAIL_SHARES = (0.25, 0.2, 0.15, 0.1)
GOF_LEVEL = 0.05  # Anderson–Darling level at which a tail fit is rejected
# The scale is fitted at that shape on the top of the pool, next to where it extrapolates.
SCALE_SHARE = 0.05
# Standard errors added to the fitted shape and scale: a heavier tail than the point fit,
# for the fit's own uncertainty (docs/nulls.md, with the suite's figures).
MARGIN = 1.0

# How a theme's p was made (column null_tail).
EMPIRICAL = "empirical"  # rank of obs among the pool's salad-set bests (exact)
GPD = "gpd"  # beyond every salad-set best: the fitted tail, which passed its check
FLOOR = "floor"  # beyond every salad-set best, no tail passed: p = 1 / (K + 1)


@dataclass(frozen=True)
class Tail:
    """The tail of one theme's pool values: GPD(shape, scale) above u, which n_u of the
    `size` pool values exceed; shape_fit, n_fit, a2: the maximum-likelihood shape of the
    n_fit exceedances whose fit passed the Anderson–Darling check, and its A²."""

    u: float
    n_u: int
    size: int
    shape: float
    scale: float
    shape_fit: float
    n_fit: int
    a2: float

    def survival(self, x) -> np.ndarray:
        """P(one pool text >= x) for x >= u: (n_u / size) · GPD survival of x − u."""
        x = np.asarray(x, dtype=np.float64)
        return self.n_u / self.size * genpareto.sf(x - self.u, self.shape, 0.0, self.scale)


def tail_sizes(size: int, shares=TAIL_SHARES) -> list[int]:
    """The exceedance counts tried for a pool of `size` values, largest first."""
    counts = {min(size - 1, max(MIN_TAIL, round(share * size))) for share in shares}
    return sorted((n for n in counts if n >= MIN_TAIL), reverse=True)


def fit_tail(pool) -> Tail | None:
    """A conservative GPD tail of the pool, or None when no tail passes its check.

    Shape: the maximum-likelihood fit of the largest tail (tail_sizes) that passes the
    Anderson–Darling check at GOF_LEVEL (Choulakian & Stephens 2001), raised by MARGIN
    standard errors ((1 + shape) / sqrt(n)) and to at least 0: an exponential or heavier
    tail, never a finite end point beyond which p would be 0. Scale: maximum likelihood at
    that shape over the top SCALE_SHARE of the pool (at least MIN_TAIL values), raised by
    MARGIN standard errors (a factor 1 + 1 / sqrt(n)).
    """
    x = np.sort(np.asarray(pool, dtype=np.float64))
    size = x.size
    for n_fit in tail_sizes(size):
        exc = x[size - n_fit :] - x[size - n_fit - 1]
        if not np.ptp(exc) > 0:
            continue
        shape, scale = gpd.fit_mle(exc)
        a2 = gpd.anderson_darling(exc, shape, scale)
        if not a2 < gpd.ad_critical(shape, GOF_LEVEL):
            continue
        up = max(0.0, shape + MARGIN * (1.0 + shape) / np.sqrt(n_fit))
        n_u = min(n_fit, max(MIN_TAIL, round(SCALE_SHARE * size)))
        u = x[size - n_u - 1]
        top = x[size - n_u :] - u
        if not np.ptp(top) > 0:  # the very top is tied: the scale from the shape's tail
            n_u, u, top = n_fit, x[size - n_fit - 1], exc
        sigma = gpd.fit_scale(top, up) * (1.0 + MARGIN / np.sqrt(n_u))
        return Tail(float(u), n_u, size, float(up), sigma, float(shape), n_fit, a2)
    return None


def salad_set_bests(pool_sims, n_b: int) -> np.ndarray:
    """Each row's best similarity in every whole salad set of the pool, sorted: columns
    [k·n_b, (k+1)·n_b) are set k; a trailing partial set is left out."""
    sims = np.atleast_2d(np.asarray(pool_sims, dtype=np.float64))
    k = sims.shape[1] // n_b
    return np.sort(sims[:, : k * n_b].reshape(sims.shape[0], k, n_b).max(axis=2), axis=1)


def defined_sets(pool_sims, n_b: int) -> tuple[np.ndarray, int]:
    """The pool's whole salad sets in which every value is finite, and how many were left
    out. Under scale z a salad text without a within-set spread has no z (NaN); a real B set
    like it would not be scored, so the null is the distribution over the sets that are."""
    sims = np.atleast_2d(np.asarray(pool_sims, dtype=np.float64))
    k = sims.shape[1] // n_b
    sets = sims[:, : k * n_b].reshape(sims.shape[0], k, n_b)
    ok = np.isfinite(sets).all(axis=(0, 2))
    return sets[:, ok].reshape(sims.shape[0], -1), int(k - ok.sum())


def theme_pvalues(obs, pool_row, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """p of each value in obs against one theme's pool row, and how each was made.

    K = the pool's whole salad sets (columns in set order), c = #{set bests >= obs}:
    p = (1 + c) / (K + 1) while c >= 1, exact when the real B is exchangeable with a salad
    set. Beyond every set best (c = 0), p = min(1 / (K + 1), n_b · s(obs)) with s the fitted
    tail of one text's similarity (fit_tail, over the whole sets' texts): a union bound over
    B's n_b texts, so no dependence between a set's texts makes it too small. Without a tail
    that passes its check p stays 1 / (K + 1), flagged FLOOR.
    """
    obs = np.atleast_1d(np.asarray(obs, dtype=np.float64))
    row = np.asarray(pool_row, dtype=np.float64)
    k = row.size // n_b
    if k < 1:
        raise ValueError(f"the pool holds no whole salad set of {n_b} texts ({row.size} texts)")
    best = salad_set_bests(row, n_b)[0]
    c = k - np.searchsorted(best, obs, side="left")
    p = (1.0 + c) / (k + 1.0)
    how = np.full(obs.shape, EMPIRICAL, dtype=object)
    beyond = c == 0
    if beyond.any():
        tail = fit_tail(row[: k * n_b])
        if tail is None:
            how[beyond] = FLOOR
        else:
            p[beyond] = np.minimum(1.0 / (k + 1.0), n_b * tail.survival(obs[beyond]))
            how[beyond] = GPD
    return p, how


def _check(obs: np.ndarray, sims: np.ndarray, n_b: int) -> None:
    if obs.ndim != 1:
        raise ValueError(f"observed_best must be 1-D, got shape {obs.shape}")
    if sims.ndim != 2 or sims.shape[0] != obs.shape[0] or sims.shape[1] < MIN_POOL:
        raise ValueError(
            f"pool_sims must have shape ({obs.shape[0]}, P >= {MIN_POOL}), got {sims.shape}"
        )
    if n_b < 1:
        raise ValueError(f"n_b must be >= 1, got {n_b}")
    if sims.shape[1] < n_b:
        raise ValueError(f"pool_sims has {sims.shape[1]} texts, not one salad set of {n_b}")
    if not (np.isfinite(obs).all() and np.isfinite(sims).all()):
        raise ValueError("observed_best and pool_sims must be finite")


def null_pvalues_with_tail(observed_best, pool_sims, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """null_pvalues and, per theme, how its p was made (EMPIRICAL, GPD or FLOOR)."""
    obs = np.asarray(observed_best, dtype=np.float64)
    sims = np.asarray(pool_sims, dtype=np.float64)
    _check(obs, sims, n_b)
    k = sims.shape[1] // n_b
    c = (salad_set_bests(sims, n_b) >= obs[:, None]).sum(axis=1)
    p = (1.0 + c) / (k + 1.0)
    how = np.full(obs.shape, EMPIRICAL, dtype=object)
    for i in np.flatnonzero(c == 0):  # the tail is fitted only where it is needed
        pi, hi = theme_pvalues(obs[i : i + 1], sims[i], n_b)
        p[i], how[i] = pi[0], hi[0]
    return p, how


def null_pvalues(observed_best, pool_sims, n_b: int) -> np.ndarray:
    """Per-theme p that the best match in a word-salad version of B reaches obs_i
    (theme_pvalues; docs/nulls.md).

    observed_best: (n_a,), max_j S[i, j] for the real B. pool_sims: (n_a, P), theme i's
    similarity to each salad text of B's pool, in pool order: P // n_b whole salad sets.
    """
    return null_pvalues_with_tail(observed_best, pool_sims, n_b)[0]


def null_best_median(pool_sims, n_b: int) -> np.ndarray:
    """Median of each theme's null best: its pool's quantile at 0.5^(1/n_b)."""
    sims = np.asarray(pool_sims, dtype=np.float64)
    return np.quantile(sims, 0.5 ** (1.0 / n_b), axis=1)


def bh_qvalues(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (statsmodels fdr_bh), in the input order."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {p.shape}")
    if p.size == 0:
        return p.copy()
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError("p-values must be finite and in [0, 1]")
    return np.asarray(multipletests(p, method="fdr_bh")[1], dtype=np.float64)


def significant_match_rate(q, alpha: float = DEFAULT_METRICS["null_model"]["alpha"]) -> float:
    """Share of themes with q ≤ alpha; NaN for an empty set (never a made-up 0)."""
    q = np.asarray(q, dtype=np.float64)
    return float(np.mean(q <= alpha)) if q.size else float("nan")


def null_table(
    observed_best, pool_sims, n_b: int, alpha: float = DEFAULT_METRICS["null_model"]["alpha"]
) -> pd.DataFrame:
    """Per A theme (row i = theme i of A, RangeIndex): null_p, null_q, null_significant,
    null_best_median (median of that theme's null best, the maximum of n_b pool draws)."""
    p, how = null_pvalues_with_tail(observed_best, pool_sims, n_b)
    q = bh_qvalues(p)
    return pd.DataFrame(
        {
            "null_p": p,
            "null_q": q,
            "null_significant": q <= alpha,
            "null_best_median": null_best_median(pool_sims, n_b),
            "null_tail": how.astype(str),
        },
        columns=NULL_TABLE_COLUMNS,
    )
