"""Unbalanced optimal transport between two theme sets: plan, splits and joins (soak's form).

Cost = 1 − S. Unbalanced (KL-relaxed marginals) so a theme with no good partner can leave part
of its mass untransported instead of being forced onto a poor match.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pandas as pd

DEFAULT_MIN_SHARE = 0.2

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
    """POT without what this numpy code never uses: its torch backend (seconds to import) and
    scikit-learn, which `ot.lowrank` imports for an optional k-means start (~0.3 s)."""
    if "ot" in sys.modules:
        return sys.modules["ot"]
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    blocked = "sklearn.cluster" not in sys.modules
    if blocked:
        sys.modules["sklearn.cluster"] = None  # `import sklearn.cluster` raises ImportError
    try:
        import ot
    finally:
        if blocked:
            del sys.modules["sklearn.cluster"]
    return ot


def unbalanced_plan(
    S,
    *,
    reg: float = 0.05,
    reg_m: float = 1.0,
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


def _substantial(shares: np.ndarray, min_share: float) -> list[np.ndarray]:
    """Per row of `shares`: indices of partners with share ≥ min_share, in set order."""
    return [np.flatnonzero(r >= min_share) for r in shares]


def splits_and_joins(plan, a_ids, b_ids, *, min_share: float = DEFAULT_MIN_SHARE) -> pd.DataFrame:
    """Splits (an A theme sending ≥ min_share of its mass to each of ≥ 2 B themes) and joins
    (a B theme receiving ≥ min_share of its mass from each of ≥ 2 A themes).

    Rows: splits in A order, then joins in B order. partners/shares are ';'-joined in the
    partner set's own order (not by size), shares rounded to 3 decimals.
    """
    plan = np.asarray(plan, dtype=np.float64)
    a_ids, b_ids = _check_ids(plan, a_ids, b_ids)
    share_a, share_b = _shares(plan)
    rows = []
    for kind, own_ids, partner_ids, shares in (
        ("split", a_ids, b_ids, share_a),
        ("join", b_ids, a_ids, share_b.T),
    ):
        for i, idx in enumerate(_substantial(shares, min_share)):
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


def transport_summary(
    plan, S, *, a=None, b=None, min_share: float = DEFAULT_MIN_SHARE
) -> dict[str, float | int]:
    """Set-level OT numbers. a, b = the marginals given to unbalanced_plan (default uniform)."""
    plan = np.asarray(plan, dtype=np.float64)
    S = _as_matrix(S)
    if plan.shape != S.shape:
        raise ValueError(f"plan shape {plan.shape} does not match S shape {S.shape}")
    n_a, n_b = plan.shape
    a = _marginal(a, n_a, "a")
    b = _marginal(b, n_b, "b")
    total = float(plan.sum())
    share_a, share_b = _shares(plan)
    return {
        "ot_total_mass": total,
        "ot_mass_a_frac": total / float(a.sum()),
        "ot_mass_b_frac": total / float(b.sum()),
        "ot_n_splits": sum(len(i) >= 2 for i in _substantial(share_a, min_share)),
        "ot_n_joins": sum(len(i) >= 2 for i in _substantial(share_b.T, min_share)),
        # mass-weighted mean cost of what was actually moved
        "ot_cost": float((plan * (1.0 - S)).sum() / total) if total > 0 else float("nan"),
    }
