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
    thresholds=None,
    W_a=None,
    W_b=None,
    null_pool=None,
    with_bootstrap: bool = True,
    plan=None,
    mass_ceiling: float = 1.0,
    references: dict | None = None,
    groups_a=None,
    groups_b=None,
) -> tuple[pd.DataFrame, dict]:
    """One row per threshold: every set-level metric. Also returns the transport plan, the
    per-theme null table (`null`, None without a pool) and baselines (`parts`), which
    theme_rows can reuse.

    S, W_a, W_b and null_pool (n_a x P) must already be on the method's scale (see on_scale).
    plan: S's transport plan when the caller has it (the same S scored on other thresholds).
    mass_ceiling: the similarity of identical themes on this scale for ot_mass_ceiling (1, or
    the paraphrase ceiling's median where it is measured). references: the mass floor and
    ceiling when the caller has them (the same S on other thresholds).
    """
    thresholds = settings.thresholds if thresholds is None else thresholds
    op = settings.op
    table = score(S, thresholds, op)
    gaps = gap_summary(S, thresholds, op, settings.gamma)
    table = pd.concat([table, gaps.drop(columns=["threshold"])], axis=1)

    extra: dict = {}
    parts = _parts(None, S, settings, W_a, W_b)
    for W, side in ((W_a, "a"), (W_b, "b")):
        if W is not None:
            extra |= _suffixed(baseline_summary(parts[f"within_{side}"]), f"_{side}")
    if W_a is not None and W_b is not None:
        extra |= baseline_summary(parts["sym"])
        extra |= size_aware_columns(S.shape[0], S.shape[1], settings.baseline_z, settings.z_alpha)
        if settings.scale == "z":  # the false-positive rate of each row's z threshold
            for side, n in (("a", S.shape[0]), ("b", S.shape[1])):
                table[f"z_fpr_{side}"] = z_fpr(table["threshold"].to_numpy(float), n - 1)
    null_q = nt = None
    if null_pool is not None and len(null_pool):
        nt = null_table(S.max(axis=1), null_pool, S.shape[1], settings.null_model["alpha"])
        null_q = nt["null_q"].to_numpy()
        extra["significant_match_rate"] = significant_match_rate(
            null_q, settings.null_model["alpha"]
        )
    else:
        extra["significant_match_rate"] = np.nan
    tr = settings.transport
    if plan is None:
        plan = unbalanced_plan(S, reg=tr["reg"], reg_m=tr["reg_m"])
    extra |= transport_summary(plan, S, min_share=tr["min_share"])
    if references is None:
        references = mass_references(
            S, extra["ot_total_mass"], reg=tr["reg"], reg_m=tr["reg_m"], ceiling=mass_ceiling
        )
    extra |= references
    table = _with_constants(table, extra)
    # splits and joins among matching partners: one count per threshold
    table["ot_n_splits"], table["ot_n_joins"] = split_join_counts(
        plan, S, table["threshold"].to_numpy(), op, tr["min_share"]
    )

    boot = settings.bootstrap
    if with_bootstrap and boot["n"] > 0:
        icc = (settings.intervals or {}).get("icc") or None
        ci = interval_table(
            S,
            thresholds,
            op,
            gamma=settings.gamma,
            groups_a=groups_a,
            groups_b=groups_b,
            icc=icc,
        )
        table = pd.concat([table, ci.drop(columns=["threshold"], errors="ignore")], axis=1)
        per_theme = theme_level_intervals(
            S, settings, W_a=W_a, W_b=W_b, null_q=null_q, plan=plan, parts=parts
        )
        table = _with_constants(table, per_theme)
        n_a, n_b = S.shape
        for col, n in (("ot_n_splits", n_a), ("ot_n_joins", n_b)):
            lo, hi = clopper_pearson(table[col].to_numpy(float), n)
            table[f"{col}_ci_low"], table[f"{col}_ci_high"] = lo * n, hi * n
    if with_bootstrap:
        # Run-time flags: the rows outside what the validation suite certified.
        table["contract"] = contract_flags(
            S.shape[0],
            S.shape[1],
            table["threshold"].to_numpy(float),
            table["n_match_pairs"].to_numpy(float),
            W_a=W_a,
            W_b=W_b,
            op=op,
            gamma=settings.gamma,
        )
    refs = {k: extra[k] for k in ("ot_mass_floor", "ot_mass_ceiling", "ot_mass_scaled")}
    return table, {"plan": plan, "null": nt, "parts": parts, "references": refs}


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
    null=None,
    parts=None,
) -> pd.DataFrame:
    """One row per theme of A and of B: best match, gaps, category, baselines, null p-value.

    null, parts: the null table and baselines comparison_rows returned for this S, W_a, W_b
    and null_pool (not computed again).
    """
    base = theme_table(S, a["theme_id"], a["name"], b["theme_id"], b["name"])
    theta = settings.thresholds[0]
    parts = _parts(parts, S, settings, W_a, W_b)
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
