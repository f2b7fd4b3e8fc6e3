"""The estimators the set-level intervals (metrics/intervals/intervals.py) build on:
Clopper-Pearson, distribution-free order-statistic intervals of quantiles (Woodruff's on effective
units), the two-sample delete-one jackknife and the effective number of units it gives.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta, binom, t
from scipy.stats import t as student


def check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def clopper_pearson(x, n, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval for x successes of n (x may be a fractional effective count).

    Broadcasts; n must be positive. x = 0 gives a lower end 0, x = n an upper end 1.
    """
    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    a = (1 - level) / 2
    x = np.clip(x, 0, n)
    with np.errstate(invalid="ignore"):
        lo = np.where(x > 0, beta.ppf(a, np.maximum(x, 1e-300), n - x + 1), 0.0)
        hi = np.where(x < n, beta.ppf(1 - a, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    return lo, hi


def quantile_intervals(values, qs, level: float, lower: float, upper: float, n_eff=None):
    """Distribution-free intervals [x_(l), x_(u)] for the qs-quantiles of the values'
    population: (lows, highs), one per q.

    l and u are order-statistic ranks from Binomial(n, q) (each tail at most (1-level)/2);
    a rank beyond the sample is replaced by the bound the metric can reach (lower, upper).
    With n_eff (per q, the values being clustered) Woodruff's interval: the Clopper-Pearson
    interval of the share below the quantile on n_eff units, read back as ranks of the n.
    NaN values are dropped; no values gives NaN.
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    x = x[~np.isnan(x)]
    qs = np.asarray(qs, dtype=np.float64)
    n = x.size
    if n == 0:
        return np.full(qs.shape, np.nan), np.full(qs.shape, np.nan)
    a = (1 - level) / 2
    if n_eff is None:
        lo_rank = binom.ppf(a, n, qs).astype(np.int64)  # P(Bin < lo_rank) <= a
        hi_rank = binom.ppf(1 - a, n, qs).astype(np.int64) + 1  # P(Bin >= hi_rank) <= a
    else:
        n_eff = np.asarray(n_eff, dtype=np.float64)
        p_lo, p_hi = clopper_pearson(qs * n_eff, n_eff, level)
        lo_rank = np.floor(p_lo * n + 1e-9).astype(np.int64)
        hi_rank = np.ceil(p_hi * n - 1e-9).astype(np.int64) + 1
    lo = np.where(lo_rank >= 1, x[np.clip(lo_rank - 1, 0, n - 1)], lower)
    hi = np.where(hi_rank <= n, x[np.clip(hi_rank - 1, 0, n - 1)], upper)
    return lo, hi


def quartile_intervals(values, level: float, lower: float, upper: float, n_eff_of=None):
    """Intervals of numpy's min, q1, median, q3, max of the values: (5,) lows, (5,) highs.

    numpy's q-th percentile of k values sits at rank q (k - 1) + 1, whose expected quantile
    is (q (k - 1) + 1) / (k + 1): 1/(k+1) for the minimum, k/(k+1) for the maximum, and a
    first quartile above 0.25. The target is the statistic's mean over samples of k (the
    suite's population value), which sits at that quantile exactly for uniform values and
    approximately otherwise; not the population's quartile.
    n_eff_of(flags, q): the effective number of units for the share of values flagged
    (at or below the estimate), where the values are clustered.
    """
    v = np.asarray(values, dtype=np.float64)
    defined = ~np.isnan(v)
    k = int(defined.sum())
    if k == 0:
        return np.full(5, np.nan), np.full(5, np.nan)
    qs = (np.array([0.0, 0.25, 0.5, 0.75, 1.0]) * (k - 1) + 1) / (k + 1)
    est = np.percentile(v[defined], [0, 25, 50, 75, 100])
    n_eff = None
    if n_eff_of is not None:
        n_eff = np.array([n_eff_of(defined & (v <= e), q) for e, q in zip(est, qs, strict=True)])
    lo, hi = quantile_intervals(v[defined], qs, level, lower, upper, n_eff)
    return np.minimum(lo, est), np.maximum(hi, est)


def _jackknife_var(loo: np.ndarray) -> tuple[float, int]:
    loo = np.asarray(loo, dtype=np.float64)
    loo = loo[np.isfinite(loo)]
    g = loo.size
    if g < 2:
        return 0.0, 0
    return (g - 1) / g * float(np.sum((loo - loo.mean()) ** 2)), g - 1


def effective_n(p_hat: float, n: float, loo_a, loo_b, level: float) -> float:
    """n divided by the design effect: the two-sample jackknife variance of the proportion
    (delete one theme of A, then one of B) over its binomial variance, where it exceeds 1;
    then by (t_df / t_{n-1})^2, df the jackknife's Welch-Satterthwaite degrees of freedom
    (Korn & Graubard 1998). n itself where the binomial variance is not exceeded."""
    ref = p_hat * (1 - p_hat) / n
    (va, da), (vb, db) = _jackknife_var(loo_a), _jackknife_var(loo_b)
    var = va + vb
    if var <= ref or var <= 0:
        return float(n)
    den = (va * va / da if da else 0.0) + (vb * vb / db if db else 0.0)
    df = max(var * var / den if den > 0 else 1.0, 1.0)
    a = (1 - level) / 2
    if ref <= 0:
        # At 0 or 1 the binomial variance vanishes and no ratio exists: the units are as
        # many as make the exact interval reach as far as the jackknife's t-interval.
        reach = t.ppf(1 - a, df) * np.sqrt(var)
        if reach >= 1:
            return 1e-9
        return float(min(n, np.log(a) / np.log1p(-reach)))
    df_ratio = (t.ppf(1 - a, max(n - 1, 1)) / t.ppf(1 - a, df)) ** 2
    return float(n * ref / var * min(df_ratio, 1.0))


def quartile_reach(values, matched, share_ci, lower: float, upper: float):
    """Where the mean of the sample's min, quartiles and max goes as the share h of matched
    rows moves over its interval. Matched rows' gaps are large and unmatched rows' small, so
    a sample's quartile jumps between the two groups with the count of matched rows it
    draws, and its mean over samples lies between them: the mean over k ~ Bin(n, h) of the
    statistic of k matched and n - k unmatched values (each group's values at evenly spaced
    quantiles of its own). A group the sample lacks takes the bound (upper for matched rows,
    lower for unmatched ones). Returns (5,) lows and highs of min, q1, median, q3, max."""
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    v, hit = v[ok], np.asarray(matched, dtype=bool)[ok]
    n = v.size
    if n == 0:
        return np.full(5, np.nan), np.full(5, np.nan)
    m1 = v[hit] if hit.any() else np.array([upper])
    m0 = v[~hit] if not hit.all() else np.array([lower])

    def spread(group, size):
        return np.quantile(group, (np.arange(size) + 0.5) / size) if size else group[:0]

    ks = np.arange(n + 1)
    stats = np.array(
        [
            np.percentile(np.concatenate([spread(m1, k), spread(m0, n - k)]), [0, 25, 50, 75, 100])
            for k in ks
        ]
    )
    ends = np.array([binom.pmf(ks, n, h) @ stats for h in share_ci])
    return ends.min(axis=0), ends.max(axis=0)


def jackknife_interval(est: float, samples: list[np.ndarray], level: float):
    """est ± t · se, se² the sum over samples of each one's delete-one jackknife variance,
    degrees of freedom by Welch-Satterthwaite; (est, est) when nothing varies."""
    var, dfs = [], []
    for loo in samples:
        loo = loo[np.isfinite(loo)]
        g = loo.size
        if g < 2:
            continue
        var.append((g - 1) / g * float(np.sum((loo - loo.mean()) ** 2)))
        dfs.append(g - 1)
    total_var = sum(var)
    if not np.isfinite(est) or total_var <= 0:
        return est, est
    den = sum(v * v / d for v, d in zip(var, dfs, strict=True))
    df = total_var**2 / den if den > 0 else 1.0
    half = student.ppf(1 - (1 - level) / 2, max(df, 1.0)) * np.sqrt(total_var)
    return est - half, est + half


def two_sample_jackknife(stat, rows: np.ndarray, cols: np.ndarray, level: float = 0.95):
    """Interval of a statistic of two samples of themes, each theme contributing a row of
    additive parts (rows: A's themes, cols: B's themes; stat(sum of a side's parts) is the
    estimate from either side): delete one theme of A, then one of B (jackknife_interval)."""
    est = float(stat(rows.sum(axis=0)))
    samples = []
    for parts in (rows, cols):
        total = parts.sum(axis=0)
        samples.append(np.array([stat(total - p) for p in parts], dtype=np.float64))
    return jackknife_interval(est, samples, level)
