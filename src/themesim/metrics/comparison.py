"""Every metric family of one comparison (METRICS.md), as table rows.

One function per output table; each family stays in its own module. Nothing here is averaged
across methods: a call sees one method's matrices only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from themesim.metrics.coverage import hungarian_pairs, score, theme_table
from themesim.metrics.settings import DEFAULT_METRICS


@dataclass
class Settings:
    """Study-wide family settings (config `metrics:`) plus one method's threshold options."""

    thresholds: list[float]
    op: str = "ge"
    gamma: float = DEFAULT_METRICS["gamma"]["cosine"]  # on the method's scale (gamma_for)
    baseline_z: float = DEFAULT_METRICS["baseline_z"]
    z_alpha: float = DEFAULT_METRICS["z_alpha"]
    bootstrap: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["bootstrap"]))
    null_model: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["null_model"]))
    transport: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["transport"]))
    scale: str = "cosine"
    clamp: bool = False


def on_scale(S, settings: Settings) -> np.ndarray | None:
    """The matrix on the scale the thresholds refer to (angular, clamped or as is).

    Under `scale: z` this is the base (cosine, maybe clamped) matrix: the z scale needs the
    within-set matrices too (metrics.scales.z_scale).
    """
    if S is None:
        return None
    from themesim.metrics.distinctiveness import angular_sim

    S = np.asarray(S, dtype=np.float64)
    if settings.clamp:
        S = np.clip(S, 0.0, 1.0)
    return angular_sim(S) if settings.scale == "angular" else S


def _parts(parts: dict | None, S, settings: Settings, W_a=None, W_b=None) -> dict:
    """The per-theme tables of one comparison that several families read: within-set
    baselines of each side and the symmetric baselines of the Hungarian pairs, computed once
    (`parts` from comparison_rows' extra, or built here)."""
    from themesim.metrics.baselines import symmetric_baselines, within_baselines

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
) -> tuple[pd.DataFrame, dict]:
    """One row per threshold: every set-level metric. Also returns the transport plan, the
    per-theme null table (`null`, None without a pool) and baselines (`parts`), which
    theme_rows can reuse.

    S, W_a, W_b and null_pool (n_a x P) must already be on the method's scale (see on_scale).
    plan: S's transport plan when the caller has it (the same S scored on other thresholds).
    """
    from themesim.metrics.baselines import baseline_summary
    from themesim.metrics.distinctiveness import gap_summary
    from themesim.metrics.nulls import null_table, significant_match_rate
    from themesim.metrics.transport import transport_summary, unbalanced_plan

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
        from themesim.metrics.scales import size_aware_columns, z_fpr

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
    table = _with_constants(table, extra)

    boot = settings.bootstrap
    if with_bootstrap and boot["n"] > 0:
        from themesim.metrics.bootstrap import bootstrap_table

        ci = bootstrap_table(
            S, thresholds, op, n_boot=boot["n"], seed=boot["seed"], gamma=settings.gamma
        )
        table = pd.concat([table, ci.drop(columns=["threshold"], errors="ignore")], axis=1)
        per_theme = theme_level_intervals(
            S, settings, W_a=W_a, W_b=W_b, null_q=null_q, plan=plan, parts=parts
        )
        table = _with_constants(table, per_theme)
    return table, {"plan": plan, "null": nt, "parts": parts}


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
    from themesim.metrics.distinctiveness import theme_gaps
    from themesim.metrics.nulls import null_table

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


def _nan_share(mask: np.ndarray, defined: np.ndarray) -> np.ndarray:
    n = defined.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (mask & defined).sum(axis=1) / np.where(n > 0, n, 1), np.nan)


def _nan_median(x: np.ndarray) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN resample gives NaN
        return np.nanmedian(x, axis=1)


def _baseline_resamples(df: pd.DataFrame, idx: np.ndarray) -> dict[str, np.ndarray]:
    """baselines.baseline_summary's rates and medians for every resample (rows of idx)."""
    z = df["baseline_z"].to_numpy(float)[idx]
    adj = df["baseline_adjusted"].to_numpy(float)[idx]
    zd, ad = ~np.isnan(z), ~np.isnan(adj)
    return {
        "baseline_z_median": _nan_median(z),
        "baseline_share_z_gt_2": _nan_share(z > 2, zd),
        "baseline_share_z_gt_3": _nan_share(z > 3, zd),
        "baseline_adjusted_median": _nan_median(adj),
        "baseline_share_adjusted_gt_0": _nan_share(adj > 0, ad),
        "baseline_rel_gap_median": _nan_median(df["baseline_rel_gap"].to_numpy(float)[idx]),
        "baseline_percentile_median": _nan_median(df["baseline_percentile"].to_numpy(float)[idx]),
        "baseline_share_flagged": (df["baseline_flag"].to_numpy() != "")[idx].mean(axis=1),
    }


def theme_level_intervals(
    S, settings: Settings, *, W_a=None, W_b=None, null_q=None, plan=None, parts=None
) -> dict[str, float]:
    """`<metric>_ci_low/_ci_high` of the baseline, null and transport columns.

    The theme-level bootstrap of METRICS.md: each theme's value (its z, its q-value, its
    row of the transport plan) is computed once on the full sets and the themes are
    resampled with the same seeded draws as bootstrap.bootstrap_table. parts: see theme_rows.
    """
    from themesim.metrics.bootstrap import _intervals, _resample_indices
    from themesim.metrics.transport import _shares, _substantial

    boot = settings.bootstrap
    n_a, n_b = S.shape
    rows, cols = _resample_indices(n_a, n_b, boot["n"], boot["seed"])
    samples: dict[str, np.ndarray] = {}
    parts = _parts(parts, S, settings, W_a, W_b)
    for W, idx, side in ((W_a, rows, "a"), (W_b, cols, "b")):
        if W is not None:
            for k, v in _baseline_resamples(parts[f"within_{side}"], idx).items():
                samples[f"{k}_{side}"] = v
    if W_a is not None and W_b is not None:
        # A theme without a Hungarian partner contributes no pair to the resample.
        by_a = parts["sym"].set_index("a_index").reindex(range(n_a))
        for side in ("a", "b", "both"):
            passes = by_a[f"passes_{side}"]
            defined = passes.notna().to_numpy()
            value = passes.fillna(False).to_numpy(bool)
            samples[f"baseline_share_passes_{side}"] = _nan_share(value[rows], defined[rows])
    if null_q is not None:
        sig = np.asarray(null_q) <= settings.null_model["alpha"]
        samples["significant_match_rate"] = sig[rows].mean(axis=1)
    else:  # the column exists (NaN) for every method, so its interval does too
        samples["significant_match_rate"] = np.full(boot["n"], np.nan)
    if plan is not None:
        row_mass, col_mass = plan.sum(axis=1), plan.sum(axis=0)
        row_cost = (plan * (1.0 - S)).sum(axis=1)
        share_a, share_b = _shares(plan)
        min_share = settings.transport["min_share"]
        split = np.array([len(i) >= 2 for i in _substantial(share_a, min_share)])
        join = np.array([len(i) >= 2 for i in _substantial(share_b.T, min_share)])
        total = row_mass[rows].sum(axis=1)
        samples["ot_total_mass"] = total
        samples["ot_mass_a_frac"] = total  # uniform marginals: each resample's A mass is 1
        samples["ot_mass_b_frac"] = col_mass[cols].sum(axis=1)
        samples["ot_n_splits"] = split[rows].sum(axis=1).astype(float)
        samples["ot_n_joins"] = join[cols].sum(axis=1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            samples["ot_cost"] = np.where(total > 0, row_cost[rows].sum(axis=1) / total, np.nan)
    names = list(samples)
    lo, hi = _intervals(np.column_stack([samples[k] for k in names]), 0.95)
    out = {}
    for k, low, high in zip(names, lo, hi, strict=True):
        out[f"{k}_ci_low"], out[f"{k}_ci_high"] = float(low), float(high)
    return out
