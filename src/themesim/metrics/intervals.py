"""Set-level intervals that hold their level (METRICS.md "Intervals", docs/metrics.md).

The population value of a metric is what another sample of themes from the same analysts
would give on average. Resampling A and B independently (the last round's theme-level
bootstrap) breaks matched pairs apart and covered that value in only 80-88 % of draws, so
each metric family gets the interval its sampling distribution calls for, and the validation
suite (themesim.validate.intervals) measures the coverage on designs with known values:

- counts of themes or pairs (hit rate, precision, F1, the one-to-one and max-cardinality
  families, matched pairs, unique-match rate and category shares): Clopper-Pearson on the count
  out of its natural number of units (A's themes, B's themes, or min(n_a, n_b) for a
  one-to-one count): exact under its model, themes independent. A count that is a function of
  one count (F1 = 2k / (n_a + n_b), true Jaccard = k / (n_a + n_b - k)) takes the image of
  its count's interval. 5 of 5 gives [0.48, 1], never [1, 1].
- means of per-theme values (bidirectional max-similarity): a two-sample jackknife (A's
  themes and B's themes are two samples) with Student's t, reaching also as far as the share
  of matched rows' own interval moves the mean (a sample without a matched row shows no
  spread); their harmonic mean (similarity_f1) from the two intervals at half the error each.
- quartiles (matched similarities, gaps): distribution-free order-statistic intervals at the
  quantile numpy's percentile estimates in expectation (1/(k+1) and k/(k+1) for the minimum
  and maximum of k values), bounded by the values the metric can take. Their target is the
  mean of the sample statistic over samples of k themes, not the population's quartile.

Themes that match several themes (a join, a split, two themes of one topic) are not
independent units. Where the match graph at the threshold (A-B links S op t) has a component
holding two themes of one side, each count's design effect is measured by a two-sample
delete-one jackknife (A's themes and B's themes are two samples: deleting a B theme takes
away the hits, pairs and best matches it gave), and Clopper-Pearson runs on the effective
count (Korn & Graubard 1998), with Welch-Satterthwaite degrees of freedom; at a share of 0 or
1, on as many units as make it reach as far as the jackknife's t-interval. Themes of one
side that match the same themes of the other (a block that all match each other, a join)
are one deletion unit, a share at 0 or 1 counts on no more units than its side has, and a
count of pairs also reaches as far as either side's matched share moves it. A one-to-one
structure has design effect 1: a matched pair is one unit, not two independent themes.

Declared groups (theme files' `group`) are deletion units too, so the intervals are
cluster-robust by group; `icc` adds each count's interval on n / (1 + (c - 1) icc) units (c the
mean declared group size, or the whole side). What no sample can show is a worst case, never
the 95 % interval (`<count>_bound_low/_high`): with no match seen, shares counted on half the
smaller side's themes (2 x 2 blocks); pairs seen one to one reaching as far as either side's
matched themes do (splits and joins).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from themesim.metrics import registry
from themesim.metrics.coverage import (
    METRIC_COLUMNS,
    _best_two,
    _check_op,
    _harmonic,
    check_matrix,
    check_thresholds,
    hungarian_pairs,
    matches,
    max_cardinality_pairs,
)
from themesim.metrics.distinctiveness import CATEGORIES, GAP_COLUMNS, _categorise, _distinct

# The metrics with an interval (the registry's `interval`), in comparisons.csv's order.
SCORE_CI_METRICS = [c for c in METRIC_COLUMNS if registry.BY_COLUMN[c].interval]
CI_METRICS = SCORE_CI_METRICS + GAP_COLUMNS
CI_COLUMNS = [f"{m}_ci_{end}" for m in CI_METRICS for end in ("low", "high")]

# The counts (Clopper-Pearson family): each has a worst-case bound and an ICC sensitivity.
COUNT_METRICS = [
    m
    for m in CI_METRICS
    if not m.startswith(("bidir_max_sim", "similarity_f1", "matched_sim_", "gap_abs_"))
]
BOUND_COLUMNS = [f"{m}_bound_{end}" for m in COUNT_METRICS for end in ("low", "high")]
ICC_COLUMNS = [f"{m}_icc_{end}" for m in COUNT_METRICS for end in ("low", "high")]

# ci_method: the model each interval assumes, then its recipe.
_RECIPE = (
    "clopper-pearson (counts); two-sample jackknife-t with the matched share's reach (means); "
    "order statistics (quartiles)"
)
METHOD_ONE_TO_ONE = "themes independent: " + _RECIPE
METHOD_CLUSTERED = (
    "themes independent but for the match clusters seen: "
    + _RECIPE
    + "; design effect from a two-sample jackknife"
)
METHOD_GROUPS = (
    "clustered by declared group: "
    + _RECIPE
    + "; design effect from a two-sample delete-one-group jackknife"
)


def metric_method(metric: str) -> str:
    """The interval method of one metric of CI_METRICS (docs/metrics.md, "Intervals"): the
    registry's, or for the per-theme gap quartiles and shares, by their name."""
    if metric in registry.BY_COLUMN:
        return registry.BY_COLUMN[metric].interval
    if metric.startswith("gap_abs_"):
        return registry.ORDER_STATISTICS
    return registry.CLOPPER_PEARSON


QUARTILES = ("min", "q1", "median", "q3", "max")


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def clopper_pearson(x, n, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval for x successes of n (x may be a fractional effective count).

    Broadcasts; n must be positive. x = 0 gives a lower end 0, x = n an upper end 1.
    """
    from scipy.stats import beta

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
    from scipy.stats import binom

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


def _quartile_intervals(values, level: float, lower: float, upper: float, n_eff_of=None):
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


class _Structure:
    """The match graph at one threshold: its components and whether any holds two themes
    of one side (then matches cluster and counts need their design effect)."""

    def __init__(self, M: np.ndarray):
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        n_a, n_b = M.shape
        adj = np.zeros((n_a + n_b, n_a + n_b), dtype=bool)
        adj[:n_a, n_a:] = M
        self.n_comp, labels = connected_components(csr_matrix(adj), directed=False)
        size_a = np.bincount(labels[:n_a], minlength=self.n_comp)
        size_b = np.bincount(labels[n_a:], minlength=self.n_comp)
        self.clustered = bool((size_a > 1).any() or (size_b > 1).any())


def _jackknife_var(loo: np.ndarray) -> tuple[float, int]:
    loo = np.asarray(loo, dtype=np.float64)
    loo = loo[np.isfinite(loo)]
    g = loo.size
    if g < 2:
        return 0.0, 0
    return (g - 1) / g * float(np.sum((loo - loo.mean()) ** 2)), g - 1


def _effective_n(p_hat: float, n: float, loo_a, loo_b, level: float) -> float:
    """n divided by the design effect: the two-sample jackknife variance of the proportion
    (delete one theme of A, then one of B) over its binomial variance, where it exceeds 1;
    then by (t_df / t_{n-1})^2, df the jackknife's Welch-Satterthwaite degrees of freedom
    (Korn & Graubard 1998). n itself where the binomial variance is not exceeded."""
    from scipy.stats import t

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


def _groups(units, n: int) -> list[np.ndarray]:
    """The deletion units of one side: each theme alone, or the themes sharing a label."""
    if units is None:
        return [np.array([i]) for i in range(n)]
    return [np.flatnonzero(units == u) for u in np.unique(units)]


def _best_mean_interval(S: np.ndarray, units_rows, units_cols, level: float):
    """Interval of mean_i max_j S[i, j] by a two-sample delete-one-unit jackknife: deleting
    a unit of rows drops its maxima, deleting a unit of columns lowers the maxima it held.
    Student's t with Welch-Satterthwaite degrees of freedom."""
    n_r, n_c = S.shape
    row_max = S.max(axis=1)
    est = float(row_max.mean())
    rows, cols = _groups(units_rows, n_r), _groups(units_cols, n_c)
    parts = []
    if len(rows) > 1:
        total = row_max.sum()
        loo = np.array([(total - row_max[g].sum()) / (n_r - g.size) for g in rows])
        parts.append(loo)
    if len(cols) > 1:
        k = min(n_c, max(g.size for g in cols) + 1)
        top = np.argsort(-S, axis=1, kind="stable")[:, :k]
        top_vals = np.take_along_axis(S, top, axis=1)
        loo = []
        for g in cols:
            drop = np.isin(top, g)
            first = np.argmax(~drop, axis=1)  # first of the top values not dropped
            loo.append(float(top_vals[np.arange(n_r), first].mean()))
        parts.append(np.array(loo))
    return _jackknife_interval(est, parts, level)


def _share_bounds(X, MX, best, t, op, share_ci, top):
    """Where the mean of row maxima can go as the share of matched rows moves over its
    interval: mean = m0 + h (m1 - m0), h the share of rows whose maximum matches, m1 and m0
    the mean maxima of matched and unmatched rows as seen. A sample without a matched row
    says nothing of m1 (taken as the scale's top, a bound); one without an unmatched row
    takes m0 from each row's largest value that does not match (its maximum without its
    matches: a theme that matches two others has a second best that matches too)."""
    hit = matches(best, t, op)
    k, n = int(hit.sum()), hit.size
    if n == 0:
        return np.nan, np.nan
    m1 = float(best[hit].mean()) if k else max(float(top), float(t))
    if k < n:
        m0 = float(best[~hit].mean())
    else:
        rest = np.where(MX, -np.inf, X).max(axis=1)
        rest = rest[np.isfinite(rest)]
        if rest.size == 0:
            return np.nan, np.nan
        m0 = float(rest.mean())
    ends = [m0 + h * (m1 - m0) for h in share_ci]
    return min(ends), max(ends)


def _quartile_reach(values, matched, share_ci, lower: float, upper: float):
    """Where the mean of the sample's min, quartiles and max goes as the share h of matched
    rows moves over its interval. Matched rows' gaps are large and unmatched rows' small, so
    a sample's quartile jumps between the two groups with the count of matched rows it
    draws, and its mean over samples lies between them: the mean over k ~ Bin(n, h) of the
    statistic of k matched and n - k unmatched values (each group's values at evenly spaced
    quantiles of its own). A group the sample lacks takes the bound (upper for matched rows,
    lower for unmatched ones). Returns (5,) lows and highs of min, q1, median, q3, max."""
    from scipy.stats import binom

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


def _jackknife_interval(est: float, samples: list[np.ndarray], level: float):
    """est ± t · se, se² the sum over samples of each one's delete-one jackknife variance,
    degrees of freedom by Welch-Satterthwaite; (est, est) when nothing varies."""
    from scipy.stats import t as student

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
    estimate from either side): delete one theme of A, then one of B (_jackknife_interval)."""
    est = float(stat(rows.sum(axis=0)))
    samples = []
    for parts in (rows, cols):
        total = parts.sum(axis=0)
        samples.append(np.array([stat(total - p) for p in parts], dtype=np.float64))
    return _jackknife_interval(est, samples, level)


class _Requests:
    """Clopper-Pearson requests of one threshold, answered in one vectorised call."""

    def __init__(self):
        self.x: list[float] = []
        self.n: list[float] = []

    def add(self, x: float, n: float) -> int:
        self.x.append(float(x))
        self.n.append(float(n))
        return len(self.x) - 1

    def solve(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        return clopper_pearson(np.array(self.x), np.array(self.n), level)


_PROPS = (
    ["cells", "hit_rate", "precision", "f1"]
    + [f"{p}_{x}" for p in ("hungarian", "maxcard") for x in ("q", "coverage_a", "coverage_b")]
    + [
        f"{name}_{side}"
        for side in ("a", "b")
        for name in ["unique_match_rate"] + [f"share_{c}" for c in CATEGORIES]
    ]
)


# The side whose themes each proportion counts: A's, B's, or "m" (min(n_a, n_b)).
_SIDE = (
    {"cells": "m", "hit_rate": "a", "precision": "b", "f1": "m"}
    | {f"{p}_q": "m" for p in ("hungarian", "maxcard")}
    | {name: name[-1] for name in _PROPS if name.endswith(("_a", "_b"))}
)


def _codes(S: np.ndarray, t, op, gamma) -> tuple[np.ndarray, np.ndarray]:
    """Each row's category code and gap (best - second)."""
    if S.shape[1] == 0:
        return np.full(S.shape[0], 3), np.full(S.shape[0], np.nan)
    _, best, second = _best_two(S)
    gap = best - second
    return _categorise(matches(best, t, op), _distinct(gap, gamma)), gap


class _Sample:
    """Every count of one threshold on a sample of the themes (keep_a, keep_b): the full
    sets, or the sets with one unit deleted. Matchings are not recomputed: a pair stays
    while both its themes do."""

    def __init__(self, S, M, keep_a, keep_b, pairs, t, op, gamma):
        sub, msub = S[np.ix_(keep_a, keep_b)], M[np.ix_(keep_a, keep_b)]
        n_a, n_b = sub.shape
        m = min(n_a, n_b)
        v = {}

        def div(x, n):
            return x / n if n else np.nan

        v["cells"] = div(msub.sum(), n_a * n_b)
        v["hit_rate"] = div(msub.any(axis=1).sum(), n_a)
        v["precision"] = div(msub.any(axis=0).sum(), n_b)
        v["f1"] = float(_harmonic(v["hit_rate"], v["precision"])) if m else np.nan
        for prefix, (pr, pc) in pairs.items():
            k = int((keep_a[pr] & keep_b[pc]).sum())
            v[f"{prefix}_q"], v[f"{prefix}_coverage_a"] = div(k, m), div(k, n_a)
            v[f"{prefix}_coverage_b"] = div(k, n_b)
        self.gaps = {}
        for side, X in (("a", sub), ("b", sub.T)):
            codes, self.gaps[side] = _codes(X, t, op, gamma)
            v[f"unique_match_rate_{side}"] = (codes == 0).mean() if codes.size else np.nan
            for c, cat in enumerate(CATEGORIES):
                v[f"share_{cat}_{side}"] = (codes == c).mean() if codes.size else np.nan
        self.values = np.array([v[name] for name in _PROPS], dtype=np.float64)
        self.sims = {prefix: (keep_a[pr] & keep_b[pc]) for prefix, (pr, pc) in pairs.items()}


def _twins(M: np.ndarray) -> np.ndarray:
    """A unit label per row: rows that match the same nonempty set of columns share one (no
    count can tell them apart); every other row is its own."""
    labels = np.arange(M.shape[0])
    seen: dict[bytes, int] = {}
    for i, row in enumerate(M):
        if row.any():
            labels[i] = seen.setdefault(np.packbits(row).tobytes(), i)
    return labels


def _merged_units(twins, declared) -> np.ndarray | None:
    """One unit label per theme: themes sharing a twin label or a declared group are one
    unit (transitively); None when neither is given."""
    if twins is None and declared is None:
        return None
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    labels = [np.asarray(x) for x in (twins, declared) if x is not None]
    n = labels[0].size
    rows, cols = [], []
    for lab in labels:
        _, first = np.unique(lab, return_inverse=True)
        # link every theme to the first theme of its label
        head = np.full(first.max() + 1, -1)
        for i, g in enumerate(first):
            if head[g] < 0:
                head[g] = i
            rows.append(i)
            cols.append(head[g])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _count_intervals(n_eff: dict, ctx, worst_case: bool = False, group_sizes=(1, 1)) -> dict:
    """Clopper-Pearson of every count (a share p of `units` themes counted on n_eff units)
    and the metrics that are functions of one count; worst_case: the pair count also
    reaches as far as either side's matched count (themes that split or join unseen) and,
    with no match seen, as far as each matched theme matching a whole declared group of
    the other side (group_sizes: the largest declared group of A and of B)."""
    values, units, cells_scale, one_to_one, n_pairs, M, n_a, n_b, m, level = ctx
    cp = _Requests()
    req = {name: cp.add(values[name] * n_eff[name], n_eff[name]) for name in _PROPS}
    lo, hi = cp.solve(level)
    out: dict[str, tuple[float, float]] = {k: (lo[i], hi[i]) for k, i in req.items()}
    c_lo, c_hi = out.pop("cells")
    c_lo, c_hi = c_lo * cells_scale, c_hi * cells_scale
    if one_to_one and worst_case:
        c_hi = max(c_hi, n_a * out["hit_rate"][1], n_b * out["precision"][1])
        if n_pairs == 0:
            c_hi = max(c_hi, 2 * m * out["f1"][1])  # m / 2 blocks of up to 4 pairs each
            c_hi = max(
                c_hi,
                n_a * out["hit_rate"][1] * group_sizes[1],
                n_b * out["precision"][1] * group_sizes[0],
            )
    elif not one_to_one and n_pairs:
        # With clusters, pairs are matched themes times the pairs each holds: the count also
        # reaches as far as either side's matched share moves it at the pairs per theme seen
        # (a sample whose every theme matches shows no variance in its share of cells).
        for share, side in (("hit_rate", M.any(axis=1)), ("precision", M.any(axis=0))):
            per = n_pairs / side.sum()
            c_lo = min(c_lo, side.size * out[share][0] * per)
            c_hi = max(c_hi, side.size * out[share][1] * per)
    out["n_match_pairs"] = (c_lo, c_hi)
    out["raza_jaccard"] = (c_lo / (n_a * n_b), c_hi / (n_a * n_b))
    out["recall"] = out["hit_rate"]
    for prefix, jaccard in (("hungarian", "true_jaccard"), ("maxcard", "maxcard_true_jaccard")):
        q_lo, q_hi = out.pop(f"{prefix}_q")
        k_lo, k_hi = q_lo * m, q_hi * m
        out[f"{prefix}_n_matched"] = (k_lo, k_hi)
        out[f"{prefix}_f1"] = (2 * k_lo / (n_a + n_b), 2 * k_hi / (n_a + n_b))
        out[jaccard] = (k_lo / (n_a + n_b - k_lo), k_hi / (n_a + n_b - k_hi))
    return out


def _one_threshold(S, t, op, gamma, level, hung, side_a, side_b, declared=(None, None), icc=None):
    n_a, n_b = S.shape
    m = min(n_a, n_b)
    M = matches(S, t, op)
    st = _Structure(M)
    lab_a, lab_b = declared
    g_a_decl = 0 if lab_a is None else len(np.unique(lab_a))
    g_b_decl = 0 if lab_b is None else len(np.unique(lab_b))
    by_group = (g_a_decl and g_a_decl < n_a) or (g_b_decl and g_b_decl < n_b)
    # a design effect is measured where matches cluster or themes come in declared groups
    jk = st.clustered or bool(by_group)
    (best_a, gap_a), (best_b, gap_b) = side_a, side_b
    rows, cols = hung
    keep = matches(S[rows, cols], t, op)
    pairs = {"hungarian": (rows[keep], cols[keep]), "maxcard": max_cardinality_pairs(S, t, op)}
    # Themes of one side that match the same themes of the other (a block of themes that
    # all match each other) are one unit, and so are the themes of one declared group (the
    # two joined where they overlap); every other theme is its own.
    units_a = _merged_units(_twins(M) if st.clustered else None, lab_a) if jk else None
    units_b = _merged_units(_twins(M.T) if st.clustered else None, lab_b) if jk else None
    groups = (_groups(units_a, n_a), _groups(units_b, n_b))
    all_a, all_b = np.ones(n_a, dtype=bool), np.ones(n_b, dtype=bool)
    full = _Sample(S, M, all_a, all_b, pairs, t, op, gamma)
    deleted: list[list[_Sample]] = [[], []]
    if jk:
        for side in (0, 1):
            for g in groups[side]:
                ka, kb = all_a.copy(), all_b.copy()
                (ka if side == 0 else kb)[g] = False
                deleted[side].append(_Sample(S, M, ka, kb, pairs, t, op, gamma))
    loo = [np.array([d.values for d in side]).reshape(-1, len(_PROPS)) for side in deleted]

    n_pairs = int(M.sum())
    # Matched cells: out of min(n_a, n_b) while every theme has at most one partner, else out
    # of all n_a * n_b cells with their design effect.
    one_to_one = not st.clustered and n_pairs <= m
    cells_scale = m if one_to_one else n_a * n_b
    themes = {"a": n_a, "b": n_b, "m": m}
    units = {name: themes[side] for name, side in _SIDE.items()} | {"cells": cells_scale}
    g_a, g_b = len(groups[0]), len(groups[1])
    side_units = {"a": g_a, "b": g_b, "m": min(g_a, g_b)}
    values = {
        name: (n_pairs / units[name] if name == "cells" else float(full.values[i]))
        for i, name in enumerate(_PROPS)
    }
    n_eff: dict[str, float] = {}
    for i, name in enumerate(_PROPS):
        n, p = units[name], values[name]
        n_eff[name] = float(n)
        if jk:
            n_eff[name] = _effective_n(p, n, loo[0][:, i], loo[1][:, i], level)
            if p in (0.0, 1.0):
                # A share at 0 or 1 shows no variance when its themes come in units (a block
                # that all match, a declared group that is all found or all missed): it
                # counts on no more units than its side has.
                n_eff[name] = min(n_eff[name], float(side_units[_SIDE[name]]))
    if jk and one_to_one:
        # one to one, the matched cells are the matched pairs (max-cardinality's count)
        n_eff["cells"] = n_eff["maxcard_q"]
    ctx = (values, units, cells_scale, one_to_one, n_pairs, M, n_a, n_b, m, level)
    out = _count_intervals(n_eff, ctx)
    shares = {name: (values[name], n_eff[name]) for name in _PROPS}

    # The worst case for structure the sample cannot show (`<metric>_bound_low/_high`, never
    # the 95 % interval): with no match seen, two themes of each side that all match each
    # other (the smallest many-to-many overlap) may be one unit, so shares count on half the
    # smaller side; pairs seen one to one may come from themes that split or join in the
    # population, so the pair count reaches as far as either side's matched count does.
    worst = dict(n_eff)
    if not jk and n_pairs == 0:
        worst = {name: float(min(units[name], m / 2)) for name in _PROPS}
    # With no match seen and groups declared, a matched theme may match a whole declared
    # group of the other side (a block as large as the largest group; issue 33: 3 x 3
    # blocks with their groups declared, 9 x 12 at pi 0.5, covered 0.88 on the 2 x 2 rule).
    largest = tuple(1 if lab is None else int(np.bincount(lab).max()) for lab in declared)
    bound = _count_intervals(worst, ctx, worst_case=True, group_sizes=largest)
    bound = {k: (min(bound[k][0], out[k][0]), max(bound[k][1], out[k][1])) for k in bound}

    # The sensitivity at an intraclass correlation icc (`<metric>_icc_low/_high`): each
    # count out of n / (1 + (c - 1) icc) units, c the mean size of a side's declared groups,
    # or the whole side where none is declared (every two themes correlated at icc).
    icc_out = None
    if icc:
        sizes = {
            "a": n_a / g_a_decl if g_a_decl else float(n_a),
            "b": n_b / g_b_decl if g_b_decl else float(n_b),
        }
        deff = {side: 1 + (c - 1) * icc for side, c in sizes.items()}
        deff["m"] = max(deff["a"], deff["b"])
        icc_n = {name: units[name] / deff[_SIDE[name]] for name in _PROPS}
        icc_out = _count_intervals(icc_n, ctx)

    # Means: a two-sample jackknife (A's themes and B's themes are two samples; themes of
    # one side that match each other are one unit). similarity_f1: the harmonic mean of the
    # two intervals at half the error each (valid whatever their correlation).
    # The scale's range bounds a mean of similarities (cosine -1..1; wider scales their own).
    floor, top = min(-1.0, float(S.min())), max(1.0, float(S.max()))

    def clip(ci):
        return max(ci[0], floor), min(ci[1], top)

    # A jackknife sees only the spread a sample shows: where few rows (or none) match, the
    # matched rows' maxima are missing from it, so each interval also reaches as far as
    # the share of matched rows' own interval moves the mean (_share_bounds).
    def mean_interval(X, MX, best, share, units_r, units_c, lvl):
        jk_lo, jk_hi = _best_mean_interval(X, units_r, units_c, lvl)
        p, n_eff = shares[share]
        h = clopper_pearson(p * n_eff, n_eff, lvl)
        s_lo, s_hi = _share_bounds(X, MX, best, t, op, (float(h[0]), float(h[1])), top)
        return clip((np.nanmin([jk_lo, s_lo]), np.nanmax([jk_hi, s_hi])))

    half = 1 - (1 - level) / 2
    for lvl, keys in ((level, ("bidir_max_sim_a", "bidir_max_sim_b")), (half, ("ia", "ib"))):
        out[keys[0]] = mean_interval(S, M, best_a, "hit_rate", units_a, units_b, lvl)
        out[keys[1]] = mean_interval(S.T, M.T, best_b, "precision", units_b, units_a, lvl)
    ia, ib = out.pop("ia"), out.pop("ib")
    est = float(_harmonic(best_a.mean(), best_b.mean()))
    # the harmonic mean rises with both means where they are positive
    out["similarity_f1"] = (
        min(float(_harmonic(ia[0], ib[0])), est),
        max(float(_harmonic(ia[1], ib[1])), est),
    )

    # Quartiles: matched similarities (at least t) and gaps (at least 0); with clusters,
    # Woodruff's interval on the effective number of units of the share at or below each.
    sims = S[pairs["hungarian"]]

    def woodruff(values_of):
        """n_eff_of(flags, q) for _quartile_intervals: the share of values at or below the
        estimate (the flagged ones), its design effect from the deleted samples."""

        def n_eff_of(flags, q):
            full_values = values_of(full)
            e = np.nanmax(np.where(flags, full_values, np.nan)) if flags.any() else -np.inf

            def share(sample):
                x = values_of(sample)
                x = x[~np.isnan(x)]
                return (x <= e).mean() if x.size else np.nan

            la = np.array([share(d) for d in deleted[0]])
            lb = np.array([share(d) for d in deleted[1]])
            n = int((~np.isnan(full_values)).sum())
            return _effective_n(float(flags.sum() / max(n, 1)), max(n, 1), la, lb, level)

        return n_eff_of if jk else None

    q_lo, q_hi = _quartile_intervals(
        sims,
        level,
        float(t),
        max(1.0, float(S.max())),
        woodruff(lambda smp: np.where(smp.sims["hungarian"], S[pairs["hungarian"]], np.nan)),
    )
    for i, q in enumerate(QUARTILES):
        out[f"matched_sim_{q}"] = (q_lo[i], q_hi[i])
    # A gap is at most the scale's top less the lowest similarity seen (not the spread seen:
    # a sample without a clear match shows no large gap, and its population may).
    spread = max(top - float(S.min()), 0.0)
    for side, g_, best, share in (
        ("a", gap_a, best_a, "hit_rate"),
        ("b", gap_b, best_b, "precision"),
    ):
        q_lo, q_hi = _quartile_intervals(
            g_, level, 0.0, spread, woodruff(lambda smp, side=side: smp.gaps[side])
        )
        r_lo, r_hi = _quartile_reach(g_, matches(best, t, op), out[share], 0.0, spread)
        q_lo, q_hi = np.fmin(q_lo, r_lo), np.fmax(q_hi, r_hi)
        for i, q in enumerate(QUARTILES):
            out[f"gap_abs_{q}_{side}"] = (q_lo[i], q_hi[i])
    if by_group:
        method = METHOD_GROUPS
    else:
        method = METHOD_CLUSTERED if jk else METHOD_ONE_TO_ONE
    values = [float(v) for name in CI_METRICS for v in out[name]]
    values += [float(v) for name in COUNT_METRICS for v in bound[name]]
    nan = (np.nan, np.nan)
    values += [float(v) for name in COUNT_METRICS for v in (icc_out or {}).get(name, nan)]
    return values, method


def _group_codes(groups, n: int) -> np.ndarray | None:
    """Integer codes of declared groups; a theme without a group is its own (None when no
    theme has one)."""
    if groups is None:
        return None
    g = list(groups)
    if len(g) != n:
        raise ValueError(f"{len(g)} groups given for {n} themes")

    def missing(x):
        return x is None or (not isinstance(x, str) and bool(pd.isna(x))) or not str(x).strip()

    if all(missing(x) for x in g):
        return None
    names = {str(x).strip() for x in g if not missing(x)}
    code = {name: i for i, name in enumerate(sorted(names))}
    own = len(code)
    out = np.empty(n, dtype=np.int64)
    for i, x in enumerate(g):
        if missing(x):
            out[i], own = own, own + 1
        else:
            out[i] = code[str(x).strip()]
    return out


def interval_table(
    S,
    thresholds: Sequence[float],
    op: str = "ge",
    gamma: float = 0.15,
    level: float = 0.95,
    W_a=None,
    W_b=None,
    groups_a=None,
    groups_b=None,
    icc: float | None = None,
) -> pd.DataFrame:
    """Intervals for every set-level metric of metrics.score and distinctiveness.gap_summary.

    One row per threshold: `threshold`, `<metric>_ci_low`, `<metric>_ci_high` for each metric
    of CI_METRICS (CI_COLUMNS); for each count of COUNT_METRICS its worst-case bound
    (`<metric>_bound_low/_high`, BOUND_COLUMNS) and its interval at the intraclass
    correlation `icc` (`<metric>_icc_low/_high`, ICC_COLUMNS; NaN when icc is None or 0);
    then `ci_method`, the model each interval assumes. groups_a, groups_b: each theme's
    declared group (theme files' `group`; None, "" or NaN for a theme without one); where
    groups hold two themes or more, the intervals are cluster-robust by group (a two-sample
    delete-one-group jackknife's design effect). Deterministic: no resampling. W_a, W_b
    (within-set matrices) are accepted and not used: linking themes of one side that match
    each other into one unit made units of whole sets on real embeddings (on-topic themes
    of one analyst meet at MiniLM's threshold), and intervals of [0, 1].
    """
    _check_op(op)
    _check_level(level)
    S = check_matrix(S)
    t = check_thresholds(thresholds)
    hung = hungarian_pairs(S)
    _, best_a, second_a = _best_two(S)
    _, best_b, second_b = _best_two(S.T)
    side_a = (best_a, best_a - second_a)
    side_b = (best_b, best_b - second_b)
    declared = (_group_codes(groups_a, S.shape[0]), _group_codes(groups_b, S.shape[1]))
    if icc is not None and not 0 <= icc < 1:
        raise ValueError(f"icc must be in [0, 1), got {icc}")
    rows, methods = [], []
    for x in t:
        values, method = _one_threshold(
            S, x, op, gamma, level, hung, side_a, side_b, declared, icc or None
        )
        rows.append(values)
        methods.append(method)
    columns = CI_COLUMNS + BOUND_COLUMNS + ICC_COLUMNS
    table = pd.DataFrame(np.array(rows, dtype=np.float64).reshape(t.size, -1), columns=columns)
    table.insert(0, "threshold", t)
    table["ci_method"] = methods
    return table
