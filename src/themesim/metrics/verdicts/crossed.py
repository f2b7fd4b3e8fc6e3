"""A generator against human analysts, over runs, analysts and themes (docs/verdicts.md).

The data of one verdict: K >= 2 analysts, each the reference in turn, and R >= 1 runs of
one generator. For reference analyst r and each of its n_r themes t,

- gen[r][t, g]: the strength of the theme's one-to-one partner in run g (1/0: matched at
  the threshold or not; or a continuous strength such as the calibrated P(match));
- hum[r][t, h]: the same in analyst h's set (column r, the analyst itself, is NaN).

The estimand is the difference of two means of the per-reference shares,

    D = mean_r [ mean_{t, g} gen[r][t, g] - mean_{t, h != r} hum[r][t, h] ],

the generator's agreement with an analyst (over runs and reference analysts) minus the
agreement of two analysts (over ordered pairs). Its variance adds one delete-one jackknife
per crossed factor that the study replicates (Cameron, Gelbach and Miller 2011): themes (or
declared theme groups, deleted from every analyst at once); runs (R >= 2); analysts (K >= 3)
as comparators (deleted from the others' human-human means), plus what their own terms as
references vary beyond their themes' noise (themes are nested in their analyst; with declared
groups only the noise within groups, which are shared by every analyst). Each cell's
own noise, held by the theme part and again by the run and comparator parts, is counted once:
the additive fit's residual mean square per reference analyst (the intersection term). The
interval is D +- sqrt(sum_i t_i^2 V_i), each part V_i read at the t quantile of its own
degrees of freedom (Banerjee's conservative form for a sum of variance estimates; the cell
noise taken off at the theme part's). On a [0, 1] scale the interval reaches further on the
side where the generator's or the analysts' mean sits near a bound: each side's own parts
give its Wilson (score) limits, combined by MOVER, never narrower than the symmetric
interval; with two analysts and continuous evidence the analysts' side takes Wedderburn's
variance function mu^2 (1 - mu)^2 instead, and with declared groups at three or more analysts
one between the two, (mu (1 - mu))^1.5 (docs/verdicts.md, "Near a bound"). Runs are a
random factor from three runs on, analysts from three analysts. Which factors a study's
interval carries is part of its result (`covers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from themesim.metrics.verdicts import score_limits

VERDICTS = ("better", "equivalent", "non-inferior", "inconclusive", "worse")
# Declared groups are the units of the theme part: below this many, the interval errs up to
# 0.10 at 0.05 (3-5 groups, docs/validity.md), so the word is withheld.
MIN_GROUPS = 6
CI_METHOD = "crossed jackknife (themes + runs + analysts), each part at its own t (Banerjee)"
# on [0, 1]: the far side of a mean near a bound reaches as its score limit does
BOUNDED = "each side's Wilson limits on [0, 1] (MOVER), never narrower"
# two analysts, continuous evidence: the analysts' side has its themes' spread alone
BOUNDED_TWO = (
    "the generator's Wilson and the analysts' Wedderburn limits on [0, 1] (MOVER), never narrower"
)
# declared groups, 3+ analysts, continuous evidence: the analysts' mean rests on few groups
BOUNDED_GROUPS = (
    "the generator's Wilson limits and the analysts' between Wilson's and Wedderburn's on [0, 1]"
    " (MOVER), never narrower"
)
# Runs are a random factor of the interval from this many: two runs give the run part one
# degree of freedom, and when the two happen to agree Satterthwaite's df run high, so the
# interval erred 0.08 at 0.05 with a large run spread (docs/validity.md). With two runs the
# verdict is about those two runs, as with one it is about that set.
MIN_RANDOM_RUNS = 3
MAX_SETTLE_RUNS = 1000  # runs beyond this are no plan


@dataclass
class Crossed:
    """The result of crossed_difference (every figure of one verdict row)."""

    difference: float
    ci_low: float
    ci_high: float
    level: float
    generator: float  # mean agreement of the generator over runs x reference analysts
    human: float  # mean human-human agreement over ordered pairs of analysts
    se: float
    df: float
    var_themes: float
    var_runs: float
    var_analysts: float
    n_runs: int
    n_analysts: int
    n_themes: int  # reference themes over all reference analysts
    n_clusters: int  # theme units of the jackknife (themes, or declared groups)
    run_sd: float  # SD over runs of the run's agreement (NaN with one run)
    analyst_sd: float  # SD over ordered analyst pairs of their agreement
    covers: tuple[str, ...] = field(default_factory=tuple)
    ci_method: str = CI_METHOD
    withheld: str = ""  # why no verdict word is given ('' when one is)
    var_extra: float = 0.0  # the extra factor's part (transcripts), 0 without one
    df_extra: float = float("inf")  # its degrees of freedom


def _check(gen, hum, clusters):
    k = len(gen)
    if k < 2 or len(hum) != k:
        raise ValueError(f"a crossed verdict needs 2 or more analysts, got {k}")
    gen = [np.asarray(g, dtype=np.float64) for g in gen]
    hum = [np.asarray(h, dtype=np.float64) for h in hum]
    runs = {g.shape[1] for g in gen if g.ndim == 2}
    if len(runs) != 1 or any(g.ndim != 2 for g in gen):
        raise ValueError("every reference analyst needs the same runs: gen[r] is (themes, runs)")
    for r, (g, h) in enumerate(zip(gen, hum, strict=True)):
        if h.shape != (g.shape[0], k):
            raise ValueError(f"hum[{r}] must be (themes, analysts) = {(g.shape[0], k)}")
        if g.shape[0] < 1:
            raise ValueError(f"reference analyst {r} has no themes")
        own = np.delete(h, r, axis=1)
        if not (np.isfinite(g).all() and np.isfinite(own).all()):
            raise ValueError(f"reference analyst {r}: a strength is missing (NaN)")
    if clusters is None:
        offset, clusters = 0, []
        for g in gen:  # each theme its own unit
            clusters.append(np.arange(offset, offset + g.shape[0]))
            offset += g.shape[0]
    clusters = [np.asarray(c) for c in clusters]
    if [c.shape[0] for c in clusters] != [g.shape[0] for g in gen]:
        raise ValueError("clusters[r] must label each theme of reference analyst r")
    return gen, hum, clusters


def _means(gen, hum, keep_runs, keep_analysts):
    """Per kept reference analyst: (per-theme generator mean, per-theme human mean)."""
    out = []
    for r in np.flatnonzero(keep_analysts):
        others = keep_analysts.copy()
        others[r] = False
        out.append((r, gen[r][:, keep_runs].mean(axis=1), hum[r][:, others].mean(axis=1)))
    return out


def _estimate(parts) -> float:
    return float(np.mean([g.mean() - h.mean() for _, g, h in parts]))


def _without_comparator(gen, hum, j: int) -> float:
    """D with analyst j deleted as a comparator only (its themes stay as references)."""
    k = len(gen)
    out = []
    for r in range(k):
        cols = [h for h in range(k) if h not in (r, j)]
        out.append(gen[r].mean() - hum[r][:, cols].mean())
    return float(np.mean(out))


def _reference_part(own: np.ndarray, var_themes: float) -> float:
    """What the reference analysts' own terms vary beyond their themes' noise: the
    delete-one jackknife of their mean, less the theme part (themes are nested in their
    analyst). Unbounded: it can come out below 0, and a caller clips the sum it joins."""
    k = own.size
    return jackknife_variance((own.sum() - own) / (k - 1)) - var_themes


def _nested_noise(parts, clusters, labels) -> list[float]:
    """The variance the themes' noise within their declared groups adds to the mean over
    reference analysts of their theme means: (1 / k^2) sum_r s^2 / n_r, s^2 the pooled
    within-group variance of the per-theme values (difference, generator, analysts)."""
    k = len(parts)
    index = np.concatenate([np.searchsorted(labels, clusters[r]) for r, _, _ in parts])
    size = np.bincount(index, minlength=labels.size)
    df = index.size - np.count_nonzero(size)
    out = []
    for pick in (lambda g, h: g - h, lambda g, h: g, lambda g, h: h):
        values = [pick(g, h) for _, g, h in parts]
        x = np.concatenate(values)
        means = np.bincount(index, x, labels.size) / np.maximum(size, 1)
        s2 = float(((x - means[index]) ** 2).sum() / df) if df > 0 else 0.0
        out.append(sum(s2 / v.size for v in values) / k**2)
    return out


def residual_mean_square(t: np.ndarray) -> float:
    """MS_E of a (themes, columns) table's additive (theme + column) fit: its cells' own
    noise; 0 below two rows or two columns."""
    n, m = t.shape
    if n < 2 or m < 2:
        return 0.0
    resid = t - t.mean(axis=1, keepdims=True) - t.mean(axis=0, keepdims=True) + t.mean()
    return float((resid**2).sum() / ((n - 1) * (m - 1)))


def _cell_noise(tables, k: int) -> float:
    """(1 / k^2) sum_r MS_E,r / (n_r m_r): the variance a table's cell noise adds to the
    mean of means, MS_E the residual mean square of its additive (theme + column) fit."""
    return sum(residual_mean_square(t) / t.size for t in tables) / k**2


def _quantile(df: float, alpha: float) -> float:
    """Student's t upper alpha point on df degrees of freedom (the normal's for inf)."""
    from scipy.special import ndtri, stdtrit  # scipy.stats' t.ppf and norm.ppf, faster

    return float(stdtrit(df, 1 - alpha) if np.isfinite(df) else ndtri(1 - alpha))


def _effective_df(q: float, alpha: float) -> float:
    """The degrees of freedom whose t quantile is q: one t reading of the whole variance
    that gives the same interval (shown as difference_df); inf at or below the normal's."""
    from scipy.special import ndtri, stdtridf

    if q <= ndtri(1 - alpha) * (1 + 1e-12):
        return float("inf")
    return float(stdtridf(1 - alpha, q))


def jackknife_variance(values: np.ndarray) -> float:
    m = values.size
    return float((m - 1) / m * ((values - values.mean()) ** 2).sum()) if m >= 2 else 0.0


def crossed_difference(gen, hum, clusters=None, alpha: float = 0.05, extra=None) -> Crossed:
    """D and its (1 - 2 alpha) interval (module docstring). clusters[r]: a label per theme
    of reference analyst r (declared groups; the same label across analysts is one unit);
    None: every theme its own unit. extra: (variance, degrees of freedom, name) of one more
    factor the cells' values were computed over (the transcripts of a κ: a delete-one
    jackknife of D), added as a part of its own (its overlap with the theme part is left in:
    the interval errs wide)."""
    gen, hum, clusters = _check(gen, hum, clusters)
    k, n_runs = len(gen), gen[0].shape[1]
    labels = np.unique(np.concatenate(clusters))
    n_themes = int(sum(g.shape[0] for g in gen))
    pairs = [hum[r][:, h].mean() for r in range(k) for h in range(k) if h != r]
    analyst_sd = float(np.std(pairs, ddof=1)) if len(pairs) >= 2 else np.nan
    binary = _binary(gen, hum)
    if k == 2 and n_runs == 1 and extra is None and binary:
        return _one_set_two_analysts(gen, hum, clusters, alpha, analyst_sd)
    all_runs, all_analysts = np.ones(n_runs, bool), np.ones(k, bool)
    parts = _means(gen, hum, all_runs, all_analysts)
    d = _estimate(parts)
    generator = float(np.mean([g.mean() for _, g, _ in parts]))
    human = float(np.mean([h.mean() for _, _, h in parts]))

    # themes (or groups): delete one unit from every reference analyst at once
    sums = np.zeros((2, k, labels.size))  # the generator's, the analysts' strengths
    counts = np.zeros((k, labels.size))
    for r, g, h in parts:
        idx = np.searchsorted(labels, clusters[r])
        np.add.at(sums[0, r], idx, g)
        np.add.at(sums[1, r], idx, h)
        np.add.at(counts[r], idx, 1.0)
    total, n = sums.sum(axis=2, keepdims=True), counts.sum(axis=1, keepdims=True)
    left = n - counts
    # a unit holding all of one analyst's themes leaves that analyst out of the mean
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(left > 0, (total - sums) / left, np.nan)
    if labels.size >= 2:
        theme_sides = np.nanmean(share, axis=1)
    else:
        theme_sides = np.array([[generator], [human]])
    theme_values = theme_sides[0] - theme_sides[1]
    var_t = jackknife_variance(theme_values)
    df_t = max(labels.size - 1, 1)
    # each side's own parts (generator, analysts): for the limits of a bounded scale
    side_t = [jackknife_variance(v) for v in theme_sides]
    # what a reference analyst's own term holds of its themes: with declared groups shared
    # across analysts, only their noise within the groups (the groups' spread is common to
    # every analyst: taking it off the reference part too left `better` at 0 erring 0.056
    # at 0.05 with 6 groups and 4 analysts, docs/validity.md)
    declared = labels.size < n_themes  # declared groups, not one unit per theme
    nested = _nested_noise(parts, clusters, labels) if declared else [var_t, *side_t]

    var_r, df_r, run_sd, side_r = 0.0, np.inf, np.nan, [0.0, 0.0]
    if n_runs >= 2:
        per_run = np.array(
            [np.mean([gen[r][:, j].mean() for r in range(k)]) for j in range(n_runs)]
        )
        run_sd = float(per_run.std(ddof=1))
    if n_runs >= MIN_RANDOM_RUNS:
        values = np.array(
            [_estimate(_means(gen, hum, all_runs & (np.arange(n_runs) != j), all_analysts))
             for j in range(n_runs)]
        )  # fmt: skip
        var_r, df_r = jackknife_variance(values), n_runs - 1
        side_r = [var_r, 0.0]  # deleting a run moves the generator's mean only

    var_a, df_a, side_a = 0.0, np.inf, [0.0, 0.0]
    if k >= 3:
        # as a comparator: each analyst deleted from the others' human-human means
        values = np.array([_without_comparator(gen, hum, j) for j in range(k)])
        # as a reference: a reference analyst's own term, beyond its themes' noise (themes
        # are nested in their analyst, so deleting one holds their noise again: counted once)
        own_g = np.array([gen[r].mean() for r in range(k)])
        own_h = np.array([np.delete(hum[r], r, axis=1).mean() for r in range(k)])
        between = _reference_part(own_g - own_h, nested[0])
        # clipped once, as a whole: clipping the reference part alone at 0 biased the
        # analyst part up (power 0.79 against 0.81 at 10 x 3 x 3, docs/validity.md)
        var_a, df_a = max(jackknife_variance(values) + between, 0.0), k - 1
        # a comparator deleted moves the analysts' mean only: what var_a holds beyond the
        # reference part goes to the analysts' side
        side_a = [
            max(_reference_part(own_g, nested[1]), 0.0),
            max(_reference_part(own_h, nested[2]), 0.0) + var_a - between,
        ]

    # The theme jackknife already holds each cell's own noise, and so does the run (analyst)
    # jackknife: the additive two-way fit's residual mean square, per reference analyst, is
    # that shared part (Cameron, Gelbach and Miller's intersection), counted once.
    side_cells = [0.0, 0.0]
    if n_runs >= MIN_RANDOM_RUNS:
        side_cells[0] = _cell_noise(gen, k)
    if k >= 3:
        side_cells[1] = _cell_noise([np.delete(h, r, axis=1) for r, h in enumerate(hum)], k)
    var_cells = side_cells[0] + side_cells[1]
    var_x, df_x, name_x = extra if extra is not None else (0.0, np.inf, "")
    var = max(var_t + var_r + var_a + var_x - var_cells, var_t, var_r, var_a, var_x)
    terms = [(var_t, df_t), (var_r, df_r), (var_a, df_a), (var_x, df_x)]
    level = 1 - 2 * alpha
    # Each part read at its own t quantile (Banerjee's form): a t at Satterthwaite's df
    # erred 0.07-0.09 at 0.05 where a part with two to four degrees of freedom (3 runs, 5
    # analysts) dominates and happens to come out small (docs/validity.md).
    quantiles = [_quantile(f, alpha) ** 2 for _, f in terms]
    q_cells = _quantile(df_t, alpha) ** 2

    def halfwidth(variances, cells):
        parts = [q * v for q, v in zip(quantiles, variances, strict=True)]
        return float(np.sqrt(max(sum(parts) - q_cells * cells, *parts)))

    half = halfwidth([v for v, _ in terms], var_cells)
    low, high, method = d - half, d + half, CI_METHOD
    unit = _unit_scale(gen, hum)
    if extra is None and unit:
        sides = [halfwidth([side_t[i], side_r[i], side_a[i], 0.0], side_cells[i]) for i in (0, 1)]
        # Two analysts' mean rests on their themes alone, and continuous strengths near a
        # bound are skewed beyond the binomial relation: a study missing the low tail shows a
        # high mean with a small spread (`equivalent` erred 0.065-0.079 at 0.05 with Wilson's
        # limits there; 0.03 with these, docs/validity.md).
        two = k == 2 and not binary
        # Declared groups at 3+ analysts: near a bound their few group means shrink faster
        # than the binomial relation (`equivalent` erred 0.075 at 0.05 with Wilson's limits,
        # with Wedderburn's 0.003 at 1.5 times the width; docs/validity.md)
        grouped = declared and k >= 3 and not binary
        bounded = BOUNDED_TWO if two else BOUNDED_GROUPS if grouped else BOUNDED
        method = f"{CI_METHOD}, {bounded}"
        # 0/1 evidence: a side whose themes all agree has no spread, yet its share rests on
        # that many themes (without this room `worse` erred 0.06-0.083 at 0.05 at 11 themes
        # x 2 runs x 2 analysts, p 0.9: docs/validity.md)
        wilson = partial(score_limits.wilson, least=quantiles[0] / labels.size if binary else 0.0)
        human_side = score_limits.wedderburn if two else score_limits.between if grouped else wilson
        low, high = score_limits.bounded_sides(
            d, generator, human, half, sides, low, high, (wilson, human_side)
        )
    df = _effective_df(half / np.sqrt(var), alpha) if var > 0 else float(df_t)
    covers = ("themes",) + (("runs",) if n_runs >= MIN_RANDOM_RUNS else ())
    covers += ("analysts",) if k >= 3 else ()
    covers += (name_x,) if extra is not None else ()
    return Crossed(
        difference=d,
        ci_low=max(low, -1.0) if unit else low,
        ci_high=min(high, 1.0) if unit else high,
        level=level,
        generator=generator,
        human=human,
        se=float(np.sqrt(var)),
        df=float(df),
        var_themes=var_t,
        var_runs=var_r,
        var_analysts=var_a,
        n_runs=n_runs,
        n_analysts=k,
        n_themes=n_themes,
        n_clusters=int(labels.size),
        run_sd=run_sd,
        analyst_sd=analyst_sd,
        covers=covers,
        ci_method=method,
        withheld=_withheld(labels.size, n_themes),
        var_extra=var_x,
        df_extra=float(df_x),
    )


def _withheld(n_groups: int, n_themes: int) -> str:
    if n_groups < n_themes and n_groups < MIN_GROUPS:
        return f"{n_groups} declared groups, under the {MIN_GROUPS} its interval needs"
    return ""


def _binary(gen, hum) -> bool:
    return all(np.isin(g, (0.0, 1.0)).all() for g in gen) and all(
        np.isin(np.delete(h, r, axis=1), (0.0, 1.0)).all() for r, h in enumerate(hum)
    )


def _one_set_two_analysts(gen, hum, clusters, alpha: float, analyst_sd: float) -> Crossed:
    """One set, two analysts, 0/1 evidence: the pooled paired table over both analysts'
    themes (each theme: matched by the set, matched by the other analyst) with the SCAS
    paired interval the one-analyst verdict uses (metrics.equivalence). A t interval on so
    few 0/1 differences errs in its tail (type-I 0.083 at 8 themes per analyst, p 0.8).
    With declared groups the table's counts are divided by the design effect (Rao and Scott
    1981: the delete-a-group jackknife variance of the difference over the delete-a-theme
    one, at least 1), so the interval keeps the score's skew correction and carries the
    groups. (Reading the score at t's quantile on groups - 1 degrees of freedom as well took
    the errors from 0.05-0.07 to 0.004 on the grid's declared one-set designs: too much.)"""
    from scipy.special import ndtri

    from themesim.metrics.verdicts.paired import CI_METHOD as SCAS
    from themesim.metrics.verdicts.paired import paired_counts, paired_interval

    x = np.concatenate([g[:, 0] for g in gen]).astype(bool)
    y = np.concatenate([np.delete(h, r, axis=1)[:, 0] for r, h in enumerate(hum)]).astype(bool)
    labels = np.concatenate(clusters)
    groups = np.unique(labels)
    counts = np.asarray(paired_counts(x, y), dtype=np.float64)
    d = float((counts[1] - counts[2]) / counts.sum())
    level, method = 1 - 2 * alpha, f"pooled paired table, {SCAS}"
    n_clusters = int(x.size)
    if groups.size < x.size:  # declared groups
        diff = x.astype(float) - y.astype(float)
        total, n = diff.sum(), diff.size

        def jack(units):
            sums = np.array([diff[units == u].sum() for u in np.unique(units)])
            sizes = np.array([(units == u).sum() for u in np.unique(units)])
            return jackknife_variance((total - sums) / (n - sizes))

        indep = jack(np.arange(n))
        deff = max(jack(labels) / indep, 1.0) if indep > 0 else 1.0
        # no fewer than three effective themes: the score needs two (its interval is then wide)
        counts = counts / min(deff, counts.sum() / 3)
        method = f"pooled paired table, {SCAS}, design effect {deff:.2f} over {groups.size} groups"
        n_clusters = int(groups.size)
    lo, hi = (float(v) for v in paired_interval(*counts, level))
    se = (hi - lo) / (2 * ndtri(1 - alpha))
    return Crossed(
        difference=d, ci_low=lo, ci_high=hi, level=1 - 2 * alpha,
        generator=float(x.mean()), human=float(y.mean()), se=float(se), df=float("inf"),
        var_themes=float(se**2), var_runs=0.0, var_analysts=0.0, n_runs=1, n_analysts=2,
        n_themes=int(x.size), n_clusters=n_clusters, run_sd=float("nan"),
        analyst_sd=analyst_sd, covers=("themes",), ci_method=method,
        withheld=_withheld(n_clusters, int(x.size)),
    )  # fmt: skip


def _unit_scale(gen, hum) -> bool:
    lo = min(min(np.nanmin(g) for g in gen), min(np.nanmin(h) for h in hum))
    hi = max(max(np.nanmax(g) for g in gen), max(np.nanmax(h) for h in hum))
    return lo >= 0 and hi <= 1


def verdict(low: float, high: float, margin: float) -> str:
    """The word for a (1 - 2 alpha) interval of the difference (docs/verdicts.md):
    inside +-margin is `equivalent` (the difference is too small to matter, even when the
    interval also lies above or below 0); else wholly above 0 `better`, wholly below 0
    `worse`, above -margin `non-inferior`, otherwise `inconclusive`. '' without one."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    if -margin < low and high < margin:
        return "equivalent"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if low > -margin:
        return "non-inferior"
    return "inconclusive"


def word(res: Crossed, margin: float) -> str:
    """The verdict of one result: `inconclusive` when withheld (too few declared groups for
    the interval to hold its level), else verdict() of its interval."""
    w = verdict(res.ci_low, res.ci_high, margin)
    return "inconclusive" if w and res.withheld else w


def settle(res: Crossed, margin: float, alpha: float = 0.05) -> dict:
    """What would settle an open verdict at the same difference and variance parts: the
    word within reach (equivalent while |D| is nearer 0 than the margin, else worse or
    better) and about how many reference themes per analyst (runs as they are), or runs
    (themes as they are), its interval would need, each part read at its own t quantile
    as the interval reads it. The theme part of the variance falls with the themes, the run
    part with the runs (and its quantile with their degrees of freedom); the analyst and
    transcript parts stay. NaN: no number of that factor alone reaches it (or, below three
    runs, the run part is unknown)."""
    d = res.difference
    to_equal, to_sign = margin - abs(d), abs(d)
    aim = "equivalent" if to_equal >= to_sign else ("worse" if d < 0 else "better")
    target = max(to_equal, to_sign)
    room = target**2
    per = res.n_themes / res.n_analysts
    q_t = _quantile(max(res.n_clusters - 1, 1), alpha) ** 2
    q_r = _quantile(res.n_runs - 1, alpha) ** 2 if res.var_runs > 0 else 0.0
    fixed = res.var_extra * _quantile(res.df_extra, alpha) ** 2 if res.var_extra > 0 else 0.0
    if res.var_analysts > 0:  # parts neither more themes nor runs shrink
        fixed += res.var_analysts * _quantile(res.n_analysts - 1, alpha) ** 2
    themes = runs = np.nan
    if room > q_r * res.var_runs + fixed and res.var_themes > 0:
        themes = float(np.ceil(per * q_t * res.var_themes / (room - q_r * res.var_runs - fixed)))
    if res.n_runs >= MIN_RANDOM_RUNS and res.var_runs > 0 and room > q_t * res.var_themes + fixed:
        left = room - q_t * res.var_themes - fixed
        for n in range(res.n_runs + 1, MAX_SETTLE_RUNS + 1):
            if _quantile(n - 1, alpha) ** 2 * res.var_runs * res.n_runs / n <= left:
                runs = float(n)
                break
    return {"settle_verdict": aim, "settle_themes": themes, "settle_runs": runs}
