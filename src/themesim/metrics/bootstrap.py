"""Bootstrap percentile intervals for set-level metrics (METRICS.md "Corrections and nulls").

One resample draws n_a themes of A (rows) and n_b themes of B (columns) with replacement from
numpy.random.default_rng(seed): all row draws first, shape (n_boot, n_a), then all column
draws, shape (n_boot, n_b). So bootstrap_ci and bootstrap_table see the same resamples for
the same seed and shape.

Read the intervals with care: resampling themes is not sampling from a population of
themes, and matching metrics are biased under it. A theme of A whose only partner in B is
not drawn (probability about 1/e per resample) loses its match, so for a clean diagonal
matrix the resampled hit rate sits near 1 - 1/e = 0.63 while the estimate is 1.0, and the
interval need not contain the estimate. The same holds for the one-to-one coverages and,
more mildly, the max-similarity means. Pair-level means (raza_jaccard) and the quartiles
do not have this problem.

Gap metrics in bootstrap_table: a drawn copy of a theme's best match is not its runner-up;
the candidates are the distinct themes drawn (see _gap_batch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from themesim.metrics.coverage import (
    METRIC_COLUMNS,
    _check_op,
    _count_matching,
    _harmonic,
    _maxcard_sweep,
    check_matrix,
    check_thresholds,
)
from themesim.metrics.distinctiveness import GAP_COLUMNS, _side_summary

SCORE_CI_METRICS = [c for c in METRIC_COLUMNS if c not in ("n_a", "n_b")]
CI_METRICS = SCORE_CI_METRICS + GAP_COLUMNS
CI_COLUMNS = [f"{m}_ci_{end}" for m in CI_METRICS for end in ("low", "high")]


def _resample_indices(n_a: int, n_b: int, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_a, size=(n_boot, n_a)), rng.integers(0, n_b, size=(n_boot, n_b))


def _check_args(n_boot: int, level: float) -> None:
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def _intervals(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """NaN-aware percentile interval along axis 0; NaN where every resample is NaN."""
    q = [50 * (1 - level), 50 * (1 + level)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN
        lo, hi = np.nanpercentile(values, q, axis=0)
    return lo, hi


def bootstrap_ci(
    S,
    statistic: Callable[[np.ndarray], Mapping[str, float]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, tuple[float, float]]:
    """Percentile interval of every value `statistic` returns, over resampled matrices.

    statistic(S_resampled) -> {name: float}; a name missing from some resamples counts as
    NaN there. NaN values are ignored; a name that is NaN in every resample gets (nan, nan).
    """
    S = check_matrix(S)
    _check_args(n_boot, level)
    rows, cols = _resample_indices(*S.shape, n_boot, seed)
    results = [statistic(S[np.ix_(r, c)]) for r, c in zip(rows, cols, strict=True)]
    names = list(dict.fromkeys(k for res in results for k in res))
    values = np.array([[float(res.get(k, np.nan)) for k in names] for res in results])
    lo, hi = _intervals(values, level)
    return {k: (float(a), float(b)) for k, a, b in zip(names, lo, hi, strict=True)}


_Q = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
# Resamples per batch: about this many matrix cells in memory at once.
_BATCH_CELLS = 2_000_000
# Up to this many cells the pure-Python incremental matching beats scipy's per-call cost.
_KUHN_CELLS = 10_000


def _top_quartiles(sorted_values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """np.percentile(top `count` values, [0, 25, 50, 75, 100]) per count; NaN for count 0.

    sorted_values (B, m) ascending, counts (B, T) -> (B, T, 5). Bit-identical to numpy's
    default "linear" method (same virtual index, same two-sided lerp), in one call.
    """
    m = sorted_values.shape[1]
    n = np.asarray(counts, dtype=np.int64)[..., None]
    virtual = (n - 1) * _Q
    prev = np.floor(virtual)
    gamma = virtual - prev
    lo = np.clip(m - n + prev.astype(np.int64), 0, m - 1)
    hi = np.clip(m - n + np.minimum(prev.astype(np.int64) + 1, n - 1), 0, m - 1)
    rows = np.arange(sorted_values.shape[0])[:, None, None]
    a, b = sorted_values[rows, lo], sorted_values[rows, hi]
    diff = b - a
    out = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    return np.where(n > 0, out, np.nan)


def _augment(root: int, adj: list, col_of: list, row_of: list, seen: list) -> bool:
    """Kuhn's augmenting path from free row `root` (iterative depth-first search)."""
    rows, ptr, cols = [root], [0], []
    while rows:
        nbrs = adj[rows[-1]]
        while ptr[-1] < len(nbrs):
            c = nbrs[ptr[-1]]
            ptr[-1] += 1
            if seen[c]:
                continue
            seen[c] = True
            cols.append(c)
            if row_of[c] == -1:
                # Flip the path: rows[k] takes cols[k].
                for r, cc in zip(rows, cols, strict=True):
                    col_of[r], row_of[cc] = cc, r
                return True
            rows.append(row_of[c])
            ptr.append(0)
            break
        else:
            rows.pop()
            ptr.pop()
            if cols:
                cols.pop()
    return False


def _maxcard_counts(S: np.ndarray, t: np.ndarray, op: str) -> np.ndarray:
    """metrics.max_cardinality_count(matches(S, t_i, op)) for every t_i, in one pass.

    Edges are added from the highest threshold down; a matching stays valid when edges are
    added, so it is only augmented (Kuhn: one pass over the free rows restores maximality).
    Pure Python, for bootstrap-sized matrices, where scipy's per-call cost dominates.
    """
    n_a, n_b = S.shape
    flat = S.ravel()
    order = np.argsort(-flat, kind="stable")
    n_edges = _count_matching(np.sort(flat), t, op)
    edge_rows, edge_cols = (x.tolist() for x in np.divmod(order[: n_edges.max()], n_b))
    adj: list[list[int]] = [[] for _ in range(n_a)]
    col_of, row_of = [-1] * n_a, [-1] * n_b
    size = added = 0
    out = np.zeros(t.size, dtype=np.int64)
    for idx in np.argsort(n_edges, kind="stable"):
        if n_edges[idx] > added:
            for k in range(added, n_edges[idx]):
                adj[edge_rows[k]].append(edge_cols[k])
            added = int(n_edges[idx])
            seen = [False] * n_b
            for r in range(n_a):
                if col_of[r] == -1 and adj[r] and _augment(r, adj, col_of, row_of, seen):
                    size += 1
                    seen = [False] * n_b
        out[idx] = size
    return out


def _count_batch(values: np.ndarray, t: np.ndarray, op: str) -> np.ndarray:
    """(B, n) values -> (B, T) counts of `value op t`."""
    v = values[:, None, :]
    return (v >= t[:, None] if op == "ge" else v > t[:, None]).sum(axis=-1)


def _score_batch(Sb: np.ndarray, t: np.ndarray, op: str) -> np.ndarray:
    """metrics.score(Sb[i], t, op)[SCORE_CI_METRICS] for a stack Sb (B, n_a, n_b).

    Same arithmetic as score(), value for value (tests check equality); (B, T, 25).
    """
    n_boot, n_a, n_b = Sb.shape
    n_pairs = np.empty((n_boot, t.size), dtype=np.int64)
    assigned = np.empty((n_boot, min(n_a, n_b)))
    for b in range(n_boot):
        n_pairs[b] = _count_matching(np.sort(Sb[b], axis=None), t, op)
        r, c = linear_sum_assignment(Sb[b], maximize=True)
        assigned[b] = Sb[b][r, c]
    assigned.sort(axis=1)
    row_max, col_max = Sb.max(axis=2), Sb.max(axis=1)
    rows_hit, cols_hit = _count_batch(row_max, t, op), _count_batch(col_max, t, op)
    recall, precision = rows_hit / n_a, cols_hit / n_b
    bidir_a, bidir_b = row_max.mean(axis=1), col_max.mean(axis=1)
    k = _count_batch(assigned, t, op)
    quartiles = _top_quartiles(assigned, k)
    # lower (a max-sum matching) <= maxcard <= upper: run a matching only where they differ.
    maxcard = k.copy()
    upper = np.minimum(rows_hit, cols_hit)
    for b in np.flatnonzero((k < upper).any(axis=1)):
        if n_a * n_b <= _KUHN_CELLS:
            maxcard[b] = _maxcard_counts(Sb[b], t, op)
        else:
            maxcard[b] = _maxcard_sweep(Sb[b], t, op, lower=k[b], upper=upper[b])
    per_set = np.broadcast_to(
        np.stack([bidir_a, bidir_b, _harmonic(bidir_a, bidir_b)], axis=-1)[:, None, :],
        (n_boot, t.size, 3),
    )
    return np.concatenate(
        [
            np.stack(
                [
                    n_pairs,
                    n_pairs / (n_a * n_b),
                    recall,
                    recall,
                    precision,
                    _harmonic(precision, recall),
                ],
                axis=-1,
            ),
            per_set,
            np.stack(
                [k, k / n_a, k / n_b, _harmonic(k / n_a, k / n_b), k / (n_a + n_b - k)],
                axis=-1,
            ),
            quartiles,
            np.stack(
                [
                    maxcard,
                    maxcard / n_a,
                    maxcard / n_b,
                    _harmonic(maxcard / n_a, maxcard / n_b),
                    maxcard / (n_a + n_b - maxcard),
                ],
                axis=-1,
            ),
        ],
        axis=-1,
    )


def _best_two_masked(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best and second along the last axis, absent candidates being -inf; NaN second
    when fewer than two candidates are present."""
    if X.shape[-1] < 2:
        return X[..., 0], np.full(X.shape[:-1], np.nan)
    top = np.partition(X, X.shape[-1] - 2, axis=-1)[..., -2:]
    second = top[..., 0]
    return top[..., 1], np.where(np.isneginf(second), np.nan, second)


def _gap_batch(
    S: np.ndarray, rows: np.ndarray, cols: np.ndarray, t: np.ndarray, op: str, gamma: float
) -> np.ndarray:
    """gap_summary columns for the resamples (rows (B, n_a), cols (B, n_b)): (B, T, 20).

    The themes being judged keep their multiplicity, but the candidates are the distinct
    themes drawn: a copy of a theme's best match is the same theme, not a runner-up (with
    copies as candidates the gap would be 0 in about a quarter of the draws).
    """
    n_boot = rows.shape[0]
    batch = np.arange(n_boot)[:, None]
    has_col = np.zeros((n_boot, S.shape[1]), dtype=bool)
    has_col[batch, cols] = True
    has_row = np.zeros((n_boot, S.shape[0]), dtype=bool)
    has_row[batch, rows] = True
    side_a = np.where(has_col[:, None, :], S[rows], -np.inf)
    side_b = np.where(has_row[:, None, :], S[:, cols].transpose(1, 2, 0), -np.inf)
    blocks = []
    for X in (side_a, side_b):
        best, second = _best_two_masked(X)
        blocks.append(_side_summary(best, best - second, t, op, gamma))
    return np.concatenate(blocks, axis=-1)


def bootstrap_table(
    S,
    thresholds: Sequence[float],
    op: str = "ge",
    n_boot: int = 1000,
    seed: int = 0,
    gamma: float = 0.15,
    level: float = 0.95,
) -> pd.DataFrame:
    """Intervals for every set-level metric of metrics.score and distinctiveness.gap_summary.

    One row per threshold: `threshold`, then `<metric>_ci_low`, `<metric>_ci_high` for each
    metric of CI_METRICS (CI_COLUMNS). Same resamples as bootstrap_ci for the same seed.
    """
    _check_op(op)
    S = check_matrix(S)
    _check_args(n_boot, level)
    t = check_thresholds(thresholds)
    all_rows, all_cols = _resample_indices(*S.shape, n_boot, seed)
    values = np.empty((n_boot, t.size, len(CI_METRICS)))
    # Per resample: the resampled matrix and its two masked copies, plus (T, n) boolean work.
    step = max(1, _BATCH_CELLS // (3 * S.size + 8 * t.size * sum(S.shape)))
    n_score = len(SCORE_CI_METRICS)
    for lo in range(0, n_boot, step):
        rows, cols = all_rows[lo : lo + step], all_cols[lo : lo + step]
        Sb = S[rows[:, :, None], cols[:, None, :]]
        values[lo : lo + step, :, :n_score] = _score_batch(Sb, t, op)
        values[lo : lo + step, :, n_score:] = _gap_batch(S, rows, cols, t, op, gamma)
    low, high = _intervals(values, level)
    out = np.empty((t.size, len(CI_COLUMNS)))
    out[:, 0::2], out[:, 1::2] = low, high
    table = pd.DataFrame(out, columns=CI_COLUMNS)
    table.insert(0, "threshold", t)
    return table
