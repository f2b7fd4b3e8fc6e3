"""Word-salad null model: how good is a best match if B's words are scrambled?

A salad text keeps B's vocabulary and a theme's length but destroys which words belong
together, so a real match must beat what the same words achieve by chance. Each B set gets
one seeded pool of P salad texts; a theme's null best is the maximum of n_b draws from that
pool, so its p-value follows from the theme's similarities to the pool (docs/nulls.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.embed.texts import word_salad_pool, word_salad_sets  # noqa: F401 (moved there)
from themesim.metrics.settings import MIN_NULL_POOL as MIN_POOL

NULL_TABLE_COLUMNS = ["null_p", "null_q", "null_significant", "null_best_median"]
# Share of the pool above the tail threshold: the exceedances the tail is fitted on.
TAIL_SHARE = 0.2
MIN_TAIL = 10  # fewest exceedances a tail is fitted on


def _tail_fit(exceedances: np.ndarray) -> tuple[float, float] | None:
    """(shape, scale) of a generalized Pareto fit to the exceedances, shape held at >= 0.

    Maximum likelihood (scipy.stats.genpareto's fit at location 0, computed by metrics.gpd).
    Similarities are bounded, so the free fit often has a negative shape and a finite end
    point, beyond which p would be 0; such a fit is replaced by the exponential tail (shape 0,
    scale = mean exceedance), the lightest tail that never rules a value out. None when the
    exceedances have no spread.
    """
    from themesim.metrics import gpd

    x = np.asarray(exceedances, dtype=np.float64)
    if x.size < 2 or not np.ptp(x) > 0:
        return None
    shape, _, scale = gpd.fit(x)
    if not (np.isfinite(shape) and np.isfinite(scale)) or shape < 0 or scale <= 0:
        return 0.0, float(x.mean())
    return float(shape), float(scale)


def pool_survival(obs: float, pool: np.ndarray) -> float:
    """P(one salad text's similarity >= obs) for one A theme: empirical, fitted tail beyond.

    Below the tail threshold u (the pool value with TAIL_SHARE of the pool above it) the
    share of pool values >= obs; above u, (N_u / P) · GPD survival of obs − u, fitted to the
    N_u exceedances. Without spread in the exceedances, 1 / (P + 1) above u.
    """
    pool = np.sort(np.asarray(pool, dtype=np.float64))
    size = pool.size
    n_tail = min(size - 1, max(MIN_TAIL, round(TAIL_SHARE * size)))
    u = pool[size - n_tail - 1]
    if obs <= u:
        return float((pool >= obs).sum() / size)
    fit = _tail_fit(pool[size - n_tail :] - u)
    if fit is None:  # the top of the pool is one value, and obs is above it
        return 1.0 / (size + 1)
    from scipy.stats import genpareto

    shape, scale = fit
    return float(n_tail / size * genpareto.sf(obs - u, shape, loc=0.0, scale=scale))


def null_pvalues(observed_best, pool_sims, n_b: int) -> np.ndarray:
    """Per-theme p = 1 − (1 − S_i(obs_i))^n_b, S_i = pool_survival of theme i's pool row.

    observed_best: (n_a,), max_j S[i, j] for the real B. pool_sims: (n_a, P), theme i's
    similarity to each salad text of B's pool. The null best is the maximum of n_b draws
    from the pool, so P(null best >= obs) = 1 − P(all n_b draws < obs).
    """
    obs = np.asarray(observed_best, dtype=np.float64)
    sims = np.asarray(pool_sims, dtype=np.float64)
    if obs.ndim != 1:
        raise ValueError(f"observed_best must be 1-D, got shape {obs.shape}")
    if sims.ndim != 2 or sims.shape[0] != obs.shape[0] or sims.shape[1] < MIN_POOL:
        raise ValueError(
            f"pool_sims must have shape ({obs.shape[0]}, P >= {MIN_POOL}), got {sims.shape}"
        )
    if n_b < 1:
        raise ValueError(f"n_b must be >= 1, got {n_b}")
    if not (np.isfinite(obs).all() and np.isfinite(sims).all()):
        raise ValueError("observed_best and pool_sims must be finite")
    surv = np.array([pool_survival(o, row) for o, row in zip(obs, sims, strict=True)])
    # 1 − (1 − s)^n without cancellation when s is tiny; s = 1 gives log1p(-1) = -inf, p = 1.
    with np.errstate(divide="ignore"):
        return np.clip(-np.expm1(n_b * np.log1p(-np.minimum(surv, 1.0))), 0.0, 1.0)


def null_best_median(pool_sims, n_b: int) -> np.ndarray:
    """Median of each theme's null best: its pool's quantile at 0.5^(1/n_b)."""
    sims = np.asarray(pool_sims, dtype=np.float64)
    return np.quantile(sims, 0.5 ** (1.0 / n_b), axis=1)


def bh_qvalues(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (statsmodels fdr_bh), in the input order."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {p.shape}")
    if p.size == 0:
        return p.copy()
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError("p-values must be finite and in [0, 1]")
    return np.asarray(multipletests(p, method="fdr_bh")[1], dtype=np.float64)


def significant_match_rate(q, alpha: float = 0.05) -> float:
    """Share of themes with q ≤ alpha; NaN for an empty set (never a made-up 0)."""
    q = np.asarray(q, dtype=np.float64)
    return float(np.mean(q <= alpha)) if q.size else float("nan")


def null_table(observed_best, pool_sims, n_b: int, alpha: float = 0.05) -> pd.DataFrame:
    """Per A theme (row i = theme i of A, RangeIndex): null_p, null_q, null_significant,
    null_best_median (median of that theme's null best, the maximum of n_b pool draws)."""
    p = null_pvalues(observed_best, pool_sims, n_b)
    q = bh_qvalues(p)
    return pd.DataFrame(
        {
            "null_p": p,
            "null_q": q,
            "null_significant": q <= alpha,
            "null_best_median": null_best_median(pool_sims, n_b),
        },
        columns=NULL_TABLE_COLUMNS,
    )
