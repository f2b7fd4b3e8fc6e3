"""Every metric family of one comparison (METRICS.md), as table rows.

One function per output table; each family stays in its own module. Nothing here is averaged
across methods: a call sees one method's matrices only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.metrics.contract import contract_flags
from themesim.metrics.interval_stats import clopper_pearson, quantile_intervals
from themesim.metrics.intervals.intervals import interval_table
from themesim.metrics.sets.baselines import baseline_summary, symmetric_baselines, within_baselines
from themesim.metrics.sets.coverage import hungarian_pairs, score, theme_table
from themesim.metrics.sets.distinctiveness import gap_summary, theme_gaps
from themesim.metrics.sets.nulls import null_table, significant_match_rate
from themesim.metrics.sets.scales import size_aware_columns, z_fpr
from themesim.metrics.sets.transport import (
    mass_references,
    split_join_counts,
    transport_interval_columns,
    transport_summary,
    unbalanced_plan,
)
from themesim.metrics.settings import Settings


def _parts(parts: dict | None, S, settings: Settings, W_a=None, W_b=None) -> dict:
    """The per-theme tables of one comparison that several families read: within-set
    baselines of each side and the symmetric baselines of the Hungarian pairs, computed once
    (`parts` from comparison_rows' extra, or built here)."""
    parts = {} if parts is None else parts
    for W, M, side in ((W_a, S, "a"), (W_b, S.T, "b")):
        if W is not None and f"within_{side}" not in parts:
            parts[f"within_{side}"] = within_baselines(M, W)
    if W_a is not None and W_b is not None and "sym" not in parts:
        pairs = hungarian_pairs(S)
        parts["sym"] = symmetric_baselines(S, W_a, W_b, pairs, z_min=settings.baseline_z)
    return parts


def _suffixed(d: dict, suffix: str) -> dict:
    return {f"{k}{suffix}": v for k, v in d.items()}


def comparison_rows(
    S,
    settings: Settings,
    *,
    W_a=None,
    W_b=None,
    null_pool=None,
    mass_ceiling: float = 1.0,
    groups_a=None,
    groups_b=None,
) -> tuple[pd.DataFrame, dict]:
    """One row per threshold of settings.thresholds: every set-level metric, its interval
    (where settings.bootstrap's n > 0) and the run-time contract flags. Also returns the
    transport plan, the per-theme null table (`null`, None without a pool), baselines
    (`parts`), which theme_rows can reuse, and the mass references, which sweep_rows can.

    S, W_a, W_b and null_pool (n_a x P) must already be on the method's scale (see on_scale).
    mass_ceiling: the similarity of identical themes on this scale for ot_mass_ceiling (1, or
    the paraphrase ceiling's median where it is measured). groups_a, groups_b: each theme's
    declared group (cluster-robust intervals, see interval_table).
    """
    parts = _parts(None, S, settings, W_a, W_b)
    table, columns, nt = _point_rows(S, settings, settings.thresholds, parts, null_pool)
    table, plan = _with_transport(table, S, settings, columns, ceiling=mass_ceiling)
    extra = _returned(plan, nt, parts, columns)
    if settings.bootstrap["n"] > 0:
        table = _with_intervals(table, S, settings, extra, (W_a, W_b), (groups_a, groups_b))
    # Run-time flags: the rows outside what the validation suite certified.
    table["contract"] = contract_flags(
        S.shape[0],
        S.shape[1],
        table["threshold"].to_numpy(float),
        table["n_match_pairs"].to_numpy(float),
        W_a=W_a,
        W_b=W_b,
        op=settings.op,
        gamma=settings.gamma,
    )
    return table, extra


def sweep_rows(
    S, settings: Settings, thresholds, *, plan=None, references: dict | None = None
) -> tuple[pd.DataFrame, dict]:
    """One row per threshold of `thresholds`: the set-level metrics without intervals,
    baselines or null model (sweep.csv), and what comparison_rows returns beside them.
    plan: S's transport plan when the caller has it (the same S scored on other
    thresholds); references: the mass floor and ceiling when the caller has them.
    """
    table, columns, nt = _point_rows(S, settings, thresholds, {}, None)
    table, plan = _with_transport(table, S, settings, columns, plan, references)
    return table, _returned(plan, nt, {}, columns)


def _point_rows(S, settings: Settings, thresholds, parts: dict, null_pool) -> tuple:
    """The set-level metrics, the baselines of each side with a within-set matrix (the
    sides in `parts`) and the null model's match rate: the table, the columns with one
    value for every row (not yet in the table) and the null table (None without a pool)."""
    op = settings.op
    table = score(S, thresholds, op)
    gaps = gap_summary(S, thresholds, op, settings.gamma)
    table = pd.concat([table, gaps.drop(columns=["threshold"])], axis=1)

    extra: dict = {}
    for side in ("a", "b"):
        if f"within_{side}" in parts:
            extra |= _suffixed(baseline_summary(parts[f"within_{side}"]), f"_{side}")
    if "sym" in parts:
        extra |= baseline_summary(parts["sym"])
        extra |= size_aware_columns(S.shape[0], S.shape[1], settings.baseline_z, settings.z_alpha)
        if settings.scale == "z":  # the false-positive rate of each row's z threshold
            for side, n in (("a", S.shape[0]), ("b", S.shape[1])):
                table[f"z_fpr_{side}"] = z_fpr(table["threshold"].to_numpy(float), n - 1)
    nt = None
    if null_pool is not None and len(null_pool):
        nt = null_table(S.max(axis=1), null_pool, S.shape[1], settings.null_model["alpha"])
        extra["significant_match_rate"] = significant_match_rate(
            nt["null_q"].to_numpy(), settings.null_model["alpha"]
        )
    else:
        extra["significant_match_rate"] = np.nan
    return table, extra, nt


def _with_transport(
    table, S, settings: Settings, columns: dict, plan=None, references=None, ceiling=1.0
) -> tuple:
    """The table with the constant columns, the transport family's among them, and the
    transport plan. plan, references: taken over from an earlier call on the same S (None:
    computed here); ceiling: the similarity of identical themes for ot_mass_ceiling."""
    tr = settings.transport
    if plan is None:
        plan = unbalanced_plan(S, reg=tr["reg"], reg_m=tr["reg_m"])
    columns |= transport_summary(plan, S, min_share=tr["min_share"])
    if references is None:
        references = mass_references(
            S, columns["ot_total_mass"], reg=tr["reg"], reg_m=tr["reg_m"], ceiling=ceiling
        )
    columns |= references
    table = _with_constants(table, columns)
    # splits and joins among matching partners: one count per threshold
    table["ot_n_splits"], table["ot_n_joins"] = split_join_counts(
        plan, S, table["threshold"].to_numpy(), settings.op, tr["min_share"]
    )
    return table, plan


def _with_intervals(table, S, settings: Settings, extra: dict, within: tuple, groups: tuple):
    """The table with the interval of every set-level metric (interval_table), of the
    baseline, null and transport columns and of the split and join counts."""
    W_a, W_b = within
    icc = (settings.intervals or {}).get("icc") or None
    ci = interval_table(
        S,
        settings.thresholds,
        settings.op,
        gamma=settings.gamma,
        groups_a=groups[0],
        groups_b=groups[1],
        icc=icc,
    )
    table = pd.concat([table, ci.drop(columns=["threshold"], errors="ignore")], axis=1)
    null_q = None if extra["null"] is None else extra["null"]["null_q"].to_numpy()
    per_theme = theme_level_intervals(
        S, settings, W_a=W_a, W_b=W_b, null_q=null_q, plan=extra["plan"], parts=extra["parts"]
    )
    table = _with_constants(table, per_theme)
    n_a, n_b = S.shape
    for col, n in (("ot_n_splits", n_a), ("ot_n_joins", n_b)):
        lo, hi = clopper_pearson(table[col].to_numpy(float), n)
        table[f"{col}_ci_low"], table[f"{col}_ci_high"] = lo * n, hi * n
    return table


def _returned(plan, nt, parts: dict, columns: dict) -> dict:
    """What comparison_rows and sweep_rows return beside the table."""
    refs = {k: columns[k] for k in ("ot_mass_floor", "ot_mass_ceiling", "ot_mass_scaled")}
    return {"plan": plan, "null": nt, "parts": parts, "references": refs}


def _with_constants(table: pd.DataFrame, values: dict) -> pd.DataFrame:
    """The table with one column per key, the same value on every row."""
    return pd.concat([table, pd.DataFrame([values] * len(table), index=table.index)], axis=1)


def theme_rows(
    S,
    settings: Settings,
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    W_a=None,
    W_b=None,
    null_pool=None,
    reused: dict | None = None,
) -> pd.DataFrame:
    """One row per theme of A and of B: best match, gaps, category, baselines, null p-value.

    reused: what comparison_rows returned beside its table for this S, W_a, W_b and
    null_pool: its null table and baselines are taken over (not computed again).
    """
    base = theme_table(S, a["theme_id"], a["name"], b["theme_id"], b["name"])
    theta = settings.thresholds[0]
    reused = reused or {}
    null = reused.get("null")
    parts = _parts(reused.get("parts"), S, settings, W_a, W_b)
    sides = []
    for side, M, W in (("a", S, W_a), ("b", S.T, W_b)):
        # best/second and best_cross repeat theme_table's best_similarity/second_similarity.
        g = theme_gaps(M, threshold=theta, op=settings.op, gamma=settings.gamma)
        g = g.drop(columns=["best", "second"])
        g.insert(0, "category_threshold", theta)
        if W is not None:
            g = pd.concat([g, parts[f"within_{side}"].drop(columns=["best_cross"])], axis=1)
        if side == "a" and null_pool is not None and len(null_pool):
            nt = null
            if nt is None:
                nt = null_table(M.max(axis=1), null_pool, M.shape[1], settings.null_model["alpha"])
            g = pd.concat([g, nt], axis=1)
        sides.append(g)
    out = pd.concat([base, pd.concat(sides, ignore_index=True)], axis=1)
    if W_a is not None and W_b is not None:
        # Symmetric baseline of each Hungarian pair, on the row of its A theme.
        by_a = parts["sym"].set_index("a_index")  # A rows come first in `out`, in A order
        for col in ("baseline_z_a", "baseline_z_b", "passes_both"):
            out[f"sym_{col}"] = by_a[col].reindex(range(len(out))).to_numpy()
    return out


def _share_ci(flags, defined, level: float) -> tuple[float, float]:
    """Clopper-Pearson interval of the share of flagged among the defined values."""
    flags, defined = np.asarray(flags, dtype=bool), np.asarray(defined, dtype=bool)
    n = int(defined.sum())
    if n == 0:
        return np.nan, np.nan
    lo, hi = clopper_pearson(int((flags & defined).sum()), n, level)
    return float(lo), float(hi)


def _median_ci(values, level: float) -> tuple[float, float]:
    """Order-statistic interval of the median (NaN dropped), widened to hold the estimate;
    beyond the sample's ends it takes the extreme value seen."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan, np.nan
    lo, hi = quantile_intervals(v, [0.5], level, float(v.min()), float(v.max()))
    est = float(np.median(v))
    return min(float(lo[0]), est), max(float(hi[0]), est)


def theme_level_intervals(
    S, settings: Settings, *, W_a=None, W_b=None, null_q=None, plan=None, parts=None
) -> dict[str, float]:
    """`<metric>_ci_low/_ci_high` of the baseline, null and transport columns.

    Shares of themes (or pairs): Clopper-Pearson over the themes where the value is
    defined; medians: order-statistic intervals; the transported mass: the two-sample
    jackknife of metrics.interval_stats over each theme's share of it (docs/metrics.md).
    parts: see theme_rows.
    """
    level = 0.95
    out: dict[str, tuple[float, float]] = {}
    parts = _parts(parts, S, settings, W_a, W_b)
    for W, side in ((W_a, "a"), (W_b, "b")):
        if W is None:
            continue
        df = parts[f"within_{side}"]
        z = df["baseline_z"].to_numpy(float)
        adj = df["baseline_adjusted"].to_numpy(float)
        zd, ad = ~np.isnan(z), ~np.isnan(adj)
        with np.errstate(invalid="ignore"):
            out[f"baseline_share_z_gt_2_{side}"] = _share_ci(z > 2, zd, level)
            out[f"baseline_share_z_gt_3_{side}"] = _share_ci(z > 3, zd, level)
            out[f"baseline_share_adjusted_gt_0_{side}"] = _share_ci(adj > 0, ad, level)
        out[f"baseline_z_median_{side}"] = _median_ci(z, level)
        out[f"baseline_adjusted_median_{side}"] = _median_ci(adj, level)
        out[f"baseline_rel_gap_median_{side}"] = _median_ci(df["baseline_rel_gap"], level)
        out[f"baseline_percentile_median_{side}"] = _median_ci(df["baseline_percentile"], level)
        flagged = df["baseline_flag"].to_numpy() != ""
        out[f"baseline_share_flagged_{side}"] = _share_ci(flagged, np.ones(len(df), bool), level)
    if W_a is not None and W_b is not None:
        by_a = parts["sym"]
        for side in ("a", "b", "both"):
            passes = by_a[f"passes_{side}"]
            out[f"baseline_share_passes_{side}"] = _share_ci(
                passes.fillna(False).to_numpy(bool), passes.notna().to_numpy(), level
            )
    if null_q is not None:
        sig = np.asarray(null_q) <= settings.null_model["alpha"]
        out["significant_match_rate"] = _share_ci(sig, np.ones(sig.size, bool), level)
    else:  # the column exists (NaN) for every method, so its interval does too
        out["significant_match_rate"] = (np.nan, np.nan)
    if plan is not None:
        out |= transport_interval_columns(plan, S, level)
    flat: dict[str, float] = {}
    for k, (low, high) in out.items():
        flat[f"{k}_ci_low"], flat[f"{k}_ci_high"] = float(low), float(high)
    return flat
