"""Unbalanced optimal transport between two theme sets: plan, splits and joins (soak's form).

Cost = 1 − S. Unbalanced (KL-relaxed marginals) so a theme with no good partner can leave part
of its mass untransported instead of being forced onto a poor match. The moved mass is a soft
average of similarities (0.61 for unrelated 5 × 5 sets at S = 0, 0.89 for a perfect diagonal),
so it is reported with the mass the same plan moves between unrelated sets (the floor) and
between identical sets (the ceiling), and splits and joins count only partners at or above the
threshold.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

from themesim.metrics.interval_stats import two_sample_jackknife
from themesim.metrics.settings import DEFAULT_METRICS
from themesim.metrics.thresholds import matches

_TRANSPORT = DEFAULT_METRICS["transport"]  # the schema's metrics.transport
DEFAULT_MIN_SHARE = _TRANSPORT["min_share"]

PLAN_LONG_COLUMNS = ["a_id", "b_id", "mass", "share_of_a", "share_of_b"]
SPLIT_JOIN_COLUMNS = ["kind", "theme_id", "partners", "shares", "n_partners"]
SUMMARY_KEYS = [
    "ot_total_mass",
    "ot_mass_a_frac",
    "ot_mass_b_frac",
    "ot_n_splits",
    "ot_n_joins",
    "ot_cost",
]
# ot_mass_a_frac and ot_mass_b_frac equal ot_total_mass under the uniform marginals the
# pipeline uses; they stay one release as aliases (docs/metrics.md).
REFERENCE_KEYS = ["ot_mass_floor", "ot_mass_ceiling", "ot_mass_scaled"]


def _as_matrix(S) -> np.ndarray:
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or 0 in S.shape:
        raise ValueError(f"S must be a non-empty 2-D matrix, got shape {S.shape}")
    if not np.isfinite(S).all():
        raise ValueError("S contains NaN or infinite values")
    return S


def _marginal(w, n: int, name: str) -> np.ndarray:
    if w is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"{name} must be {n} non-negative finite weights with a positive sum")
    return w


def _pot():
    """POT with its PyTorch backend off (seconds to import; this numpy code never uses it).
    `import ot` also loads scikit-learn's clustering and networkx, which POT's low-rank and
    Gromov solvers import when they can: about 1 s more, paid only by a job that transports."""
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    import ot

    return ot


def unbalanced_plan(
    S,
    *,
    reg: float = _TRANSPORT["reg"],
    reg_m: float = _TRANSPORT["reg_m"],
    a=None,
    b=None,
    max_iter: int = 10_000,
    stop_thr: float = 1e-9,
) -> np.ndarray:
    """Unbalanced entropic OT plan (n_a × n_b, float64) on cost 1 − S.

    POT's generalised Sinkhorn (`ot.sinkhorn_unbalanced`, KL regulariser against a·bᵀ, KL
    marginal penalty reg_m on both sides). a, b default to uniform weights summing to 1.
    Large reg_m approaches balanced OT (and needs more iterations); small reg_m lets more mass
    stay behind. Deterministic: plain matrix scaling from fixed starting values.
    """
    ot = _pot()
    S = _as_matrix(S)
    n_a, n_b = S.shape
    a = _marginal(a, n_a, "a")
    b = _marginal(b, n_b, "b")
    if not (reg > 0 and reg_m > 0):
        raise ValueError(f"reg and reg_m must be > 0 (got reg={reg}, reg_m={reg_m})")
    hint = f"the Sinkhorn kernel exp(-(1 - S)/reg) underflowed at reg={reg}; use a larger reg"
    # POT reports underflow as a warning and silently returns stale scalings (an all-zero plan),
    # so its warnings are caught and turned into an error here.
    with (
        warnings.catch_warnings(record=True) as caught,
        np.errstate(divide="ignore", invalid="ignore"),
    ):
        warnings.simplefilter("always")
        plan = ot.sinkhorn_unbalanced(
            a, b, 1.0 - S, reg, reg_m, numItermax=max_iter, stopThr=stop_thr
        )
    plan = np.asarray(plan, dtype=np.float64)
    for w in caught:
        if "Numerical errors" in str(w.message):
            raise ValueError(f"unbalanced OT failed: {hint}")
        warnings.warn(str(w.message), w.category, stacklevel=2)
    if not np.isfinite(plan).all():
        raise ValueError(f"unbalanced OT returned NaN/inf: {hint}")
    if plan.sum() <= 0:  # an entropic plan is strictly positive; zero mass means underflow
        raise ValueError(f"unbalanced OT returned an all-zero plan: {hint}")
    return plan


def _check_ids(plan: np.ndarray, a_ids, b_ids) -> tuple[list[str], list[str]]:
    a_ids, b_ids = [str(x) for x in a_ids], [str(x) for x in b_ids]
    if plan.shape != (len(a_ids), len(b_ids)):
        raise ValueError(
            f"plan shape {plan.shape} does not match {len(a_ids)} A ids × {len(b_ids)} B ids"
        )
    return a_ids, b_ids


def _shares(plan: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row- and column-normalised plan; a theme that sends/receives nothing gets share 0."""
    plan = np.asarray(plan, dtype=np.float64)
    row = plan.sum(axis=1, keepdims=True)
    col = plan.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        share_a = np.where(row > 0, plan / row, 0.0)
        share_b = np.where(col > 0, plan / col, 0.0)
    return share_a, share_b


def plan_long(plan, a_ids, b_ids) -> pd.DataFrame:
    """The plan in long form, A-major: a_id, b_id, mass, share_of_a, share_of_b."""
    plan = np.asarray(plan, dtype=np.float64)
    a_ids, b_ids = _check_ids(plan, a_ids, b_ids)
    share_a, share_b = _shares(plan)
    n_a, n_b = plan.shape
    return pd.DataFrame(
        {
            "a_id": np.repeat(np.array(a_ids, dtype=object), n_b),
            "b_id": np.tile(np.array(b_ids, dtype=object), n_a),
            "mass": plan.ravel(),
            "share_of_a": share_a.ravel(),
            "share_of_b": share_b.ravel(),
        },
        columns=PLAN_LONG_COLUMNS,
    )


def _substantial(shares: np.ndarray, min_share: float, good=None) -> list[np.ndarray]:
    """Per row of `shares`: indices of partners with share ≥ min_share (and, with `good`, a
    match: S op threshold), in set order."""
    ok = shares >= min_share
    if good is not None:
        ok &= good
    return [np.flatnonzero(r) for r in ok]


def _good(S, threshold, op: str):
    if threshold is None:
        return None
    return matches(S, threshold, op)


def splits_and_joins(
    plan,
    a_ids,
    b_ids,
    *,
    min_share: float = DEFAULT_MIN_SHARE,
    S=None,
    threshold: float | None = None,
    op: str = "ge",
) -> pd.DataFrame:
    """Splits (an A theme sending ≥ min_share of its mass to each of ≥ 2 B themes) and joins
    (a B theme receiving ≥ min_share of its mass from each of ≥ 2 A themes). With S and a
    threshold, only partners that match (S op threshold) count: a theme that spreads its
    mass over poor partners has no good partner, which is not a split.

    Rows: splits in A order, then joins in B order. partners/shares are ';'-joined in the
    partner set's own order (not by size), shares rounded to 3 decimals.
    """
    plan = np.asarray(plan, dtype=np.float64)
    a_ids, b_ids = _check_ids(plan, a_ids, b_ids)
    share_a, share_b = _shares(plan)
    good = None if S is None else _good(_as_matrix(S), threshold, op)
    rows = []
    for kind, own_ids, partner_ids, shares, ok in (
        ("split", a_ids, b_ids, share_a, good),
        ("join", b_ids, a_ids, share_b.T, None if good is None else good.T),
    ):
        for i, idx in enumerate(_substantial(shares, min_share, ok)):
            if len(idx) >= 2:
                rows.append(
                    {
                        "kind": kind,
                        "theme_id": own_ids[i],
                        "partners": ";".join(partner_ids[j] for j in idx),
                        "shares": ";".join(f"{shares[i, j]:.3f}" for j in idx),
                        "n_partners": len(idx),
                    }
                )
    df = pd.DataFrame(rows, columns=SPLIT_JOIN_COLUMNS)
    return df.astype({"n_partners": "int64"})


def split_join_counts(
    plan, S, thresholds, op: str = "ge", min_share: float = DEFAULT_MIN_SHARE
) -> tuple[np.ndarray, np.ndarray]:
    """ot_n_splits and ot_n_joins at each threshold (partners that match only)."""
    plan = np.asarray(plan, dtype=np.float64)
    S = _as_matrix(S)
    share_a, share_b = _shares(plan)
    splits, joins = [], []
    for t in np.atleast_1d(thresholds):
        good = _good(S, float(t), op)
        splits.append(sum(len(i) >= 2 for i in _substantial(share_a, min_share, good)))
        joins.append(sum(len(i) >= 2 for i in _substantial(share_b.T, min_share, good.T)))
    return np.array(splits, dtype=np.int64), np.array(joins, dtype=np.int64)


def transport_summary(
    plan,
    S,
    *,
    a=None,
    b=None,
    min_share: float = DEFAULT_MIN_SHARE,
    threshold: float | None = None,
    op: str = "ge",
) -> dict[str, float | int]:
    """Set-level OT numbers. a, b = the marginals given to unbalanced_plan (default uniform).
    With a threshold, splits and joins count matching partners only."""
    plan = np.asarray(plan, dtype=np.float64)
    S = _as_matrix(S)
    if plan.shape != S.shape:
        raise ValueError(f"plan shape {plan.shape} does not match S shape {S.shape}")
    n_a, n_b = plan.shape
    a = _marginal(a, n_a, "a")
    b = _marginal(b, n_b, "b")
    total = float(plan.sum())
    share_a, share_b = _shares(plan)
    good = _good(S, threshold, op)
    return {
        "ot_total_mass": total,
        "ot_mass_a_frac": total / float(a.sum()),
        "ot_mass_b_frac": total / float(b.sum()),
        "ot_n_splits": sum(len(i) >= 2 for i in _substantial(share_a, min_share, good)),
        "ot_n_joins": sum(
            len(i) >= 2
            for i in _substantial(share_b.T, min_share, None if good is None else good.T)
        ),
        # mass-weighted mean cost of what was actually moved
        "ot_cost": float((plan * (1.0 - S)).sum() / total) if total > 0 else float("nan"),
    }


def mass_references(
    S,
    mass: float,
    *,
    reg: float = _TRANSPORT["reg"],
    reg_m: float = _TRANSPORT["reg_m"],
    ceiling: float = 1.0,
    shuffles=3,
) -> dict[str, float]:
    """Where the moved mass sits between unrelated and identical sets of these sizes.

    floor: the mean mass over `shuffles` seeded random placements of S's own values (the
    same similarities, no structure: what unrelated sets with this method's spread give);
    ceiling: the same placements with min(n_a, n_b) one-to-one cells at `ceiling` (the
    similarity of identical themes); ot_mass_scaled = (mass - floor) / (ceiling - floor),
    NaN where the ceiling is not above the floor.
    """
    S = _as_matrix(S)
    n_a, n_b = S.shape
    rng = np.random.default_rng(0)
    k = min(n_a, n_b)
    floors, ceils = [], []
    for _ in range(shuffles):
        shuffled = rng.permutation(np.sort(S, axis=None)).reshape(S.shape)  # order-free
        floors.append(unbalanced_plan(shuffled, reg=reg, reg_m=reg_m).sum())
        shuffled[np.arange(k), np.arange(k)] = ceiling
        ceils.append(unbalanced_plan(shuffled, reg=reg, reg_m=reg_m).sum())
    floor, ceil = float(np.mean(floors)), float(np.mean(ceils))
    scaled = (mass - floor) / (ceil - floor) if ceil > floor else float("nan")
    return {"ot_mass_floor": floor, "ot_mass_ceiling": ceil, "ot_mass_scaled": scaled}


def transport_interval_columns(plan, S, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Intervals of ot_total_mass (and its aliases) and ot_cost: a two-sample delete-one-theme
    jackknife over each theme's part of the plan (the plan is not recomputed), Student's t
    with Welch-Satterthwaite degrees of freedom."""
    plan = np.asarray(plan, dtype=np.float64)
    S = _as_matrix(S)
    n_a, n_b = plan.shape
    cost = plan * (1.0 - S)
    rows = np.column_stack([plan.sum(axis=1) * n_a, cost.sum(axis=1), plan.sum(axis=1)])
    cols = np.column_stack([plan.sum(axis=0) * n_b, cost.sum(axis=0), plan.sum(axis=0)])

    def mass(part):
        return part[0] / part[3]

    def mean_cost(part):
        return part[1] / part[2] if part[2] > 0 else np.nan

    def add_count(x):
        return np.column_stack([x, np.ones(len(x))])

    out = {}
    ra, cb = add_count(rows), add_count(cols)
    out["ot_total_mass"] = two_sample_jackknife(mass, ra, cb, level)
    out["ot_mass_a_frac"] = out["ot_mass_b_frac"] = out["ot_total_mass"]
    out["ot_cost"] = two_sample_jackknife(mean_cost, ra, cb, level)
    return out
