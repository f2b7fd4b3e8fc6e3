"""Every metric family of one comparison (METRICS.md), as table rows.

One function per output table; each family stays in its own module. Nothing here is averaged
across methods: a call sees one method's matrices only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .methods import DEFAULT_METRICS
from .metrics import hungarian_pairs, score, theme_table


@dataclass
class Settings:
    """Study-wide family settings (config `metrics:`) plus one method's threshold options."""

    thresholds: list[float]
    op: str = "ge"
    gamma: float = DEFAULT_METRICS["gamma"]
    baseline_z: float = DEFAULT_METRICS["baseline_z"]
    bootstrap: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["bootstrap"]))
    null_model: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["null_model"]))
    transport: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["transport"]))
    scale: str = "cosine"
    clamp: bool = False


def on_scale(S, settings: Settings) -> np.ndarray | None:
    """The matrix on the scale the thresholds refer to (angular, clamped or as is)."""
    if S is None:
        return None
    from .distinctiveness import angular_sim

    S = np.asarray(S, dtype=np.float64)
    if settings.clamp:
        S = np.clip(S, 0.0, 1.0)
    return angular_sim(S) if settings.scale == "angular" else S


def _suffixed(d: dict, suffix: str) -> dict:
    return {f"{k}{suffix}": v for k, v in d.items()}


def comparison_rows(
    S,
    settings: Settings,
    *,
    thresholds=None,
    W_a=None,
    W_b=None,
    null_best=None,
    with_bootstrap: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """One row per threshold: every set-level metric. Also returns the transport plan etc.

    S, W_a, W_b and null_best must already be on the method's scale (see on_scale).
    """
    from .baselines import baseline_summary, symmetric_baselines, within_baselines
    from .distinctiveness import gap_summary
    from .nulls import null_table, significant_match_rate
    from .transport import transport_summary, unbalanced_plan

    thresholds = settings.thresholds if thresholds is None else thresholds
    op = settings.op
    table = score(S, thresholds, op)
    gaps = gap_summary(S, thresholds, op, settings.gamma)
    table = pd.concat([table, gaps.drop(columns=["threshold"])], axis=1)

    extra: dict = {}
    for W, M, suffix in ((W_a, S, "_a"), (W_b, S.T, "_b")):
        if W is not None:
            extra |= _suffixed(baseline_summary(within_baselines(M, W)), suffix)
    if W_a is not None and W_b is not None:
        sym = symmetric_baselines(S, W_a, W_b, hungarian_pairs(S), z_min=settings.baseline_z)
        extra |= baseline_summary(sym)
    if null_best is not None and len(null_best):
        nt = null_table(S.max(axis=1), null_best, settings.null_model["alpha"])
        extra["significant_match_rate"] = significant_match_rate(
            nt["null_q"].to_numpy(), settings.null_model["alpha"]
        )
    else:
        extra["significant_match_rate"] = np.nan
    tr = settings.transport
    plan = unbalanced_plan(S, reg=tr["reg"], reg_m=tr["reg_m"])
    extra |= transport_summary(plan, S, min_share=tr["min_share"])
    for k, v in extra.items():
        table[k] = v

    boot = settings.bootstrap
    if with_bootstrap and boot["n"] > 0:
        from .bootstrap import bootstrap_table

        ci = bootstrap_table(
            S, thresholds, op, n_boot=boot["n"], seed=boot["seed"], gamma=settings.gamma
        )
        table = pd.concat([table, ci.drop(columns=["threshold"], errors="ignore")], axis=1)
    return table, {"plan": plan}


def theme_rows(
    S,
    settings: Settings,
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    W_a=None,
    W_b=None,
    null_best=None,
) -> pd.DataFrame:
    """One row per theme of A and of B: best match, gaps, category, baselines, null p-value."""
    from .baselines import symmetric_baselines, within_baselines
    from .distinctiveness import theme_gaps
    from .nulls import null_table

    base = theme_table(S, a["theme_id"], a["name"], b["theme_id"], b["name"])
    theta = settings.thresholds[0]
    parts = []
    for side, M, W in (("a", S, W_a), ("b", S.T, W_b)):
        # best/second and best_cross repeat theme_table's best_similarity/second_similarity.
        g = theme_gaps(M, threshold=theta, op=settings.op, gamma=settings.gamma)
        g = g.drop(columns=["best", "second"])
        g.insert(0, "category_threshold", theta)
        if W is not None:
            g = pd.concat([g, within_baselines(M, W).drop(columns=["best_cross"])], axis=1)
        if side == "a" and null_best is not None and len(null_best):
            nt = null_table(M.max(axis=1), null_best, settings.null_model["alpha"])
            g = pd.concat([g, nt], axis=1)
        parts.append(g)
    out = pd.concat([base, pd.concat(parts, ignore_index=True)], axis=1)
    if W_a is not None and W_b is not None:
        # Symmetric baseline of each Hungarian pair, on the row of its A theme.
        sym = symmetric_baselines(S, W_a, W_b, hungarian_pairs(S), z_min=settings.baseline_z)
        by_a = sym.set_index("a_index")  # A rows come first in `out`, in A order
        for col in ("baseline_z_a", "baseline_z_b", "passes_both"):
            out[f"sym_{col}"] = by_a[col].reindex(range(len(out))).to_numpy()
    return out
