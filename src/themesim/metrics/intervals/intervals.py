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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.metrics import registry
from themesim.metrics.interval_stats import (
    check_level,
    clopper_pearson,
    effective_n,
    jackknife_interval,
    quartile_intervals,
    quartile_reach,
)
from themesim.metrics.intervals.interval_counts import (
    INTERVAL_PROPS,
    PROP_SIDE,
    CountSample,
    count_intervals,
)
from themesim.metrics.intervals.interval_units import (
    MatchStructure,
    deletion_groups,
    group_codes,
    merged_units,
    twin_labels,
)
from themesim.metrics.sets.coverage import (
    METRIC_COLUMNS,
    best_two,
    check_matrix,
    check_thresholds,
    harmonic,
    hungarian_pairs,
    max_cardinality_pairs,
)
from themesim.metrics.sets.distinctiveness import GAP_COLUMNS
from themesim.metrics.thresholds import check_op, matches

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


def _best_mean_interval(S: np.ndarray, units_rows, units_cols, level: float):
    """Interval of mean_i max_j S[i, j] by a two-sample delete-one-unit jackknife: deleting
    a unit of rows drops its maxima, deleting a unit of columns lowers the maxima it held.
    Student's t with Welch-Satterthwaite degrees of freedom."""
    n_r, n_c = S.shape
    row_max = S.max(axis=1)
    est = float(row_max.mean())
    rows, cols = deletion_groups(units_rows, n_r), deletion_groups(units_cols, n_c)
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
    return jackknife_interval(est, parts, level)


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


@dataclass(frozen=True)
class _Matrix:
    """What every threshold of one matrix shares: interval_table's inputs, read once."""

    S: np.ndarray
    op: str
    gamma: float
    level: float
    hung: tuple  # Hungarian (rows, cols) on S
    side_a: tuple  # (best, gap) of A's themes
    side_b: tuple  # (best, gap) of B's themes
    declared: tuple  # each side's declared group codes, or None
    icc: float | None

    def n_declared(self) -> tuple[int, int]:
        """The number of declared groups of each side (0 where none is declared)."""
        return tuple(0 if lab is None else len(np.unique(lab)) for lab in self.declared)


@dataclass(frozen=True)
class _Samples:
    """The matrix at one threshold: its matches, its deletion units of each side and the
    count samples (all themes, and each delete-one-unit sample of A and of B)."""

    t: float
    M: np.ndarray
    clustered: bool
    by_group: bool
    jk: bool  # a design effect is measured
    pairs: dict
    units: tuple  # each side's unit labels (None: each theme its own)
    groups: tuple  # each side's deletion groups
    full: CountSample
    deleted: list


def _samples(x: _Matrix, t) -> _Samples:
    S = x.S
    n_a, n_b = S.shape
    M = matches(S, t, x.op)
    st = MatchStructure(M)
    lab_a, lab_b = x.declared
    g_a_decl, g_b_decl = x.n_declared()
    by_group = (g_a_decl and g_a_decl < n_a) or (g_b_decl and g_b_decl < n_b)
    # a design effect is measured where matches cluster or themes come in declared groups
    jk = st.clustered or bool(by_group)
    rows, cols = x.hung
    keep = matches(S[rows, cols], t, x.op)
    pairs = {"hungarian": (rows[keep], cols[keep]), "maxcard": max_cardinality_pairs(S, t, x.op)}
    # Themes of one side that match the same themes of the other (a block of themes that
    # all match each other) are one unit, and so are the themes of one declared group (the
    # two joined where they overlap); every other theme is its own.
    units_a = merged_units(twin_labels(M) if st.clustered else None, lab_a) if jk else None
    units_b = merged_units(twin_labels(M.T) if st.clustered else None, lab_b) if jk else None
    groups = (deletion_groups(units_a, n_a), deletion_groups(units_b, n_b))
    all_a, all_b = np.ones(n_a, dtype=bool), np.ones(n_b, dtype=bool)
    full = CountSample(S, M, all_a, all_b, pairs, t, x.op, x.gamma)
    deleted: list[list[CountSample]] = [[], []]
    if jk:
        for side in (0, 1):
            for g in groups[side]:
                ka, kb = all_a.copy(), all_b.copy()
                (ka if side == 0 else kb)[g] = False
                deleted[side].append(CountSample(S, M, ka, kb, pairs, t, x.op, x.gamma))
    return _Samples(
        t, M, st.clustered, bool(by_group), jk, pairs, (units_a, units_b), groups, full, deleted
    )


def _count_context(x: _Matrix, smp: _Samples) -> tuple[dict, tuple]:
    """Each count's effective number of units and count_intervals' context."""
    n_a, n_b = x.S.shape
    m = min(n_a, n_b)
    M, jk = smp.M, smp.jk
    loo = [
        np.array([d.values for d in side]).reshape(-1, len(INTERVAL_PROPS)) for side in smp.deleted
    ]
    n_pairs = int(M.sum())
    # Matched cells: out of min(n_a, n_b) while every theme has at most one partner, else out
    # of all n_a * n_b cells with their design effect.
    one_to_one = not smp.clustered and n_pairs <= m
    cells_scale = m if one_to_one else n_a * n_b
    themes = {"a": n_a, "b": n_b, "m": m}
    units = {name: themes[side] for name, side in PROP_SIDE.items()} | {"cells": cells_scale}
    g_a, g_b = len(smp.groups[0]), len(smp.groups[1])
    side_units = {"a": g_a, "b": g_b, "m": min(g_a, g_b)}
    values = {
        name: (n_pairs / units[name] if name == "cells" else float(smp.full.values[i]))
        for i, name in enumerate(INTERVAL_PROPS)
    }
    n_eff: dict[str, float] = {}
    for i, name in enumerate(INTERVAL_PROPS):
        n, p = units[name], values[name]
        n_eff[name] = float(n)
        if jk:
            n_eff[name] = effective_n(p, n, loo[0][:, i], loo[1][:, i], x.level)
            if p in (0.0, 1.0):
                # A share at 0 or 1 shows no variance when its themes come in units (a block
                # that all match, a declared group that is all found or all missed): it
                # counts on no more units than its side has.
                n_eff[name] = min(n_eff[name], float(side_units[PROP_SIDE[name]]))
    if jk and one_to_one:
        # one to one, the matched cells are the matched pairs (max-cardinality's count)
        n_eff["cells"] = n_eff["maxcard_q"]
    return n_eff, (values, units, cells_scale, one_to_one, n_pairs, M, n_a, n_b, m, x.level)


def _worst_case(x: _Matrix, jk: bool, n_eff: dict, ctx: tuple, out: dict) -> dict:
    """The worst case for structure the sample cannot show (`<metric>_bound_low/_high`,
    never the 95 % interval), widened to hold each count's interval `out`."""
    _, units, _, _, n_pairs, _, _, _, m, _ = ctx
    # With no match seen, two themes of each side that all match each other (the smallest
    # many-to-many overlap) may be one unit, so shares count on half the smaller side; pairs
    # seen one to one may come from themes that split or join in the population, so the pair
    # count reaches as far as either side's matched count does.
    worst = dict(n_eff)
    if not jk and n_pairs == 0:
        worst = {name: float(min(units[name], m / 2)) for name in INTERVAL_PROPS}
    # With no match seen and groups declared, a matched theme may match a whole declared
    # group of the other side (a block as large as the largest group: 3 x 3 blocks with
    # their groups declared, 9 x 12 at pi 0.5, covered 0.88 on the 2 x 2 rule).
    largest = tuple(1 if lab is None else int(np.bincount(lab).max()) for lab in x.declared)
    bound = count_intervals(worst, ctx, worst_case=True, group_sizes=largest)
    return {k: (min(bound[k][0], out[k][0]), max(bound[k][1], out[k][1])) for k in bound}


def _icc_intervals(x: _Matrix, ctx: tuple) -> dict:
    """The sensitivity at an intraclass correlation icc (`<metric>_icc_low/_high`): each
    count out of n / (1 + (c - 1) icc) units, c the mean size of a side's declared groups,
    or the whole side where none is declared (every two themes correlated at icc)."""
    n_a, n_b = x.S.shape
    g_a_decl, g_b_decl = x.n_declared()
    units = ctx[1]
    sizes = {
        "a": n_a / g_a_decl if g_a_decl else float(n_a),
        "b": n_b / g_b_decl if g_b_decl else float(n_b),
    }
    deff = {side: 1 + (c - 1) * x.icc for side, c in sizes.items()}
    deff["m"] = max(deff["a"], deff["b"])
    icc_n = {name: units[name] / deff[PROP_SIDE[name]] for name in INTERVAL_PROPS}
    return count_intervals(icc_n, ctx)


def _mean_intervals(x: _Matrix, smp: _Samples, shares: dict, out: dict) -> None:
    """Means into `out`: a two-sample jackknife (A's themes and B's themes are two samples;
    themes of one side that match each other are one unit). similarity_f1: the harmonic
    mean of the two intervals at half the error each (valid whatever their correlation)."""
    S, t, op, level = x.S, smp.t, x.op, x.level
    (best_a, _), (best_b, _) = x.side_a, x.side_b
    units_a, units_b = smp.units
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

    M = smp.M
    half = 1 - (1 - level) / 2
    for lvl, keys in ((level, ("bidir_max_sim_a", "bidir_max_sim_b")), (half, ("ia", "ib"))):
        out[keys[0]] = mean_interval(S, M, best_a, "hit_rate", units_a, units_b, lvl)
        out[keys[1]] = mean_interval(S.T, M.T, best_b, "precision", units_b, units_a, lvl)
    ia, ib = out.pop("ia"), out.pop("ib")
    est = float(harmonic(best_a.mean(), best_b.mean()))
    # the harmonic mean rises with both means where they are positive
    out["similarity_f1"] = (
        min(float(harmonic(ia[0], ib[0])), est),
        max(float(harmonic(ia[1], ib[1])), est),
    )


def _woodruff(x: _Matrix, smp: _Samples, values_of):
    """n_eff_of(flags, q) for quartile_intervals (None without a design effect): the share
    of values at or below the estimate (the flagged ones), its design effect from the
    deleted samples (Woodruff's interval on the effective number of units)."""

    def n_eff_of(flags, q):
        full_values = values_of(smp.full)
        e = np.nanmax(np.where(flags, full_values, np.nan)) if flags.any() else -np.inf

        def share(sample):
            v = values_of(sample)
            v = v[~np.isnan(v)]
            return (v <= e).mean() if v.size else np.nan

        la = np.array([share(d) for d in smp.deleted[0]])
        lb = np.array([share(d) for d in smp.deleted[1]])
        n = int((~np.isnan(full_values)).sum())
        return effective_n(float(flags.sum() / max(n, 1)), max(n, 1), la, lb, x.level)

    return n_eff_of if smp.jk else None


def _quartile_intervals(x: _Matrix, smp: _Samples, out: dict) -> None:
    """Quartiles into `out`: matched similarities (at least t) and gaps (at least 0)."""
    S, t, level, pairs = x.S, smp.t, x.level, smp.pairs
    top = max(1.0, float(S.max()))
    q_lo, q_hi = quartile_intervals(
        S[pairs["hungarian"]],
        level,
        float(t),
        max(1.0, float(S.max())),
        _woodruff(x, smp, lambda d: np.where(d.sims["hungarian"], S[pairs["hungarian"]], np.nan)),
    )
    for i, q in enumerate(QUARTILES):
        out[f"matched_sim_{q}"] = (q_lo[i], q_hi[i])
    # A gap is at most the scale's top less the lowest similarity seen (not the spread seen:
    # a sample without a clear match shows no large gap, and its population may).
    spread = max(top - float(S.min()), 0.0)
    (best_a, gap_a), (best_b, gap_b) = x.side_a, x.side_b
    for side, g_, best, share in (
        ("a", gap_a, best_a, "hit_rate"),
        ("b", gap_b, best_b, "precision"),
    ):
        q_lo, q_hi = quartile_intervals(
            g_, level, 0.0, spread, _woodruff(x, smp, lambda d, side=side: d.gaps[side])
        )
        r_lo, r_hi = quartile_reach(g_, matches(best, t, x.op), out[share], 0.0, spread)
        q_lo, q_hi = np.fmin(q_lo, r_lo), np.fmax(q_hi, r_hi)
        for i, q in enumerate(QUARTILES):
            out[f"gap_abs_{q}_{side}"] = (q_lo[i], q_hi[i])


def _one_threshold(x: _Matrix, t) -> tuple[list[float], str]:
    smp = _samples(x, t)
    n_eff, ctx = _count_context(x, smp)
    out = count_intervals(n_eff, ctx)
    bound = _worst_case(x, smp.jk, n_eff, ctx, out)
    icc_out = _icc_intervals(x, ctx) if x.icc else None
    values = ctx[0]
    shares = {name: (values[name], n_eff[name]) for name in INTERVAL_PROPS}
    _mean_intervals(x, smp, shares, out)
    _quartile_intervals(x, smp, out)
    if smp.by_group:
        method = METHOD_GROUPS
    else:
        method = METHOD_CLUSTERED if smp.jk else METHOD_ONE_TO_ONE
    flat = [float(v) for name in CI_METRICS for v in out[name]]
    flat += [float(v) for name in COUNT_METRICS for v in bound[name]]
    nan = (np.nan, np.nan)
    flat += [float(v) for name in COUNT_METRICS for v in (icc_out or {}).get(name, nan)]
    return flat, method


def interval_table(
    S,
    thresholds: Sequence[float],
    op: str = "ge",
    gamma: float = 0.15,
    level: float = 0.95,
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
    delete-one-group jackknife's design effect). Deterministic: no resampling. The within-set
    matrices are not read: linking themes of one side that match each other into one unit
    made units of whole sets on real embeddings (on-topic themes of one analyst meet at
    MiniLM's threshold), and intervals of [0, 1].
    """
    check_op(op)
    check_level(level)
    S = check_matrix(S)
    t = check_thresholds(thresholds)
    hung = hungarian_pairs(S)
    _, best_a, second_a = best_two(S)
    _, best_b, second_b = best_two(S.T)
    side_a = (best_a, best_a - second_a)
    side_b = (best_b, best_b - second_b)
    declared = (group_codes(groups_a, S.shape[0]), group_codes(groups_b, S.shape[1]))
    if icc is not None and not 0 <= icc < 1:
        raise ValueError(f"icc must be in [0, 1), got {icc}")
    matrix = _Matrix(S, op, gamma, level, hung, side_a, side_b, declared, icc or None)
    rows, methods = [], []
    for x in t:
        values, method = _one_threshold(matrix, x)
        rows.append(values)
        methods.append(method)
    columns = CI_COLUMNS + BOUND_COLUMNS + ICC_COLUMNS
    table = pd.DataFrame(np.array(rows, dtype=np.float64).reshape(t.size, -1), columns=columns)
    table.insert(0, "threshold", t)
    table["ci_method"] = methods
    return table
