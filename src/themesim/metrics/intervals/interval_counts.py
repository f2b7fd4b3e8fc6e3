"""The counts' intervals at one threshold (metrics/intervals/intervals.py): every share of themes
or pairs on a sample of the themes (the full sets, or one unit deleted), and Clopper-Pearson on each
share's effective number of units, with the metrics that are functions of one count."""

from __future__ import annotations

import numpy as np

from themesim.metrics.interval_stats import clopper_pearson
from themesim.metrics.sets.coverage import best_two, harmonic
from themesim.metrics.sets.distinctiveness import CATEGORIES, categorise, is_distinct
from themesim.metrics.thresholds import matches


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


INTERVAL_PROPS = (
    ["cells", "hit_rate", "precision", "f1"]
    + [f"{p}_{x}" for p in ("hungarian", "maxcard") for x in ("q", "coverage_a", "coverage_b")]
    + [
        f"{name}_{side}"
        for side in ("a", "b")
        for name in ["unique_match_rate"] + [f"share_{c}" for c in CATEGORIES]
    ]
)


# The side whose themes each proportion counts: A's, B's, or "m" (min(n_a, n_b)).
PROP_SIDE = (
    {"cells": "m", "hit_rate": "a", "precision": "b", "f1": "m"}
    | {f"{p}_q": "m" for p in ("hungarian", "maxcard")}
    | {name: name[-1] for name in INTERVAL_PROPS if name.endswith(("_a", "_b"))}
)


def _codes(S: np.ndarray, t, op, gamma) -> tuple[np.ndarray, np.ndarray]:
    """Each row's category code and gap (best - second)."""
    if S.shape[1] == 0:
        return np.full(S.shape[0], 3), np.full(S.shape[0], np.nan)
    _, best, second = best_two(S)
    gap = best - second
    return categorise(matches(best, t, op), is_distinct(gap, gamma)), gap


class CountSample:
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
        v["f1"] = float(harmonic(v["hit_rate"], v["precision"])) if m else np.nan
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
        self.values = np.array([v[name] for name in INTERVAL_PROPS], dtype=np.float64)
        self.sims = {prefix: (keep_a[pr] & keep_b[pc]) for prefix, (pr, pc) in pairs.items()}


def count_intervals(n_eff: dict, ctx, worst_case: bool = False, group_sizes=(1, 1)) -> dict:
    """Clopper-Pearson of every count (a share p of `units` themes counted on n_eff units)
    and the metrics that are functions of one count; worst_case: the pair count also
    reaches as far as either side's matched count (themes that split or join unseen) and,
    with no match seen, as far as each matched theme matching a whole declared group of
    the other side (group_sizes: the largest declared group of A and of B)."""
    values, units, cells_scale, one_to_one, n_pairs, M, n_a, n_b, m, level = ctx
    cp = _Requests()
    req = {name: cp.add(values[name] * n_eff[name], n_eff[name]) for name in INTERVAL_PROPS}
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
