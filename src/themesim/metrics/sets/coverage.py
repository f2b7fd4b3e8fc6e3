"""Coverage and one-to-one metrics of one similarity matrix (names: METRICS.md).

S is n_a x n_b, rows = set A (the reference), columns = set B. A pair matches when
S op threshold, with op "ge" (S >= t, the seeds' definition) or "gt" (S > t).
Every function here takes a whole list of thresholds at once: the work that does not
depend on the threshold (sorting, the max-sum assignment) is done once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_bipartite_matching

from themesim.metrics import columns
from themesim.metrics.thresholds import check_op, matches

# The family's columns: one list each, in metrics/columns.py (the report reads them too).
COVERAGE_COLUMNS = columns.COVERAGE_COLUMNS
ONE_TO_ONE_COLUMNS = columns.ONE_TO_ONE_COLUMNS
METRIC_COLUMNS = columns.METRIC_COLUMNS


def check_matrix(S) -> np.ndarray:
    """Return S as a finite 2-D float64 array with at least one row and column."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] == 0:
        raise ValueError(f"similarity matrix must be 2-D and non-empty, got shape {S.shape}")
    if not np.isfinite(S).all():
        i, j = np.argwhere(~np.isfinite(S))[0]
        raise ValueError(f"similarity matrix has a non-finite value at row {i}, column {j}")
    return S


def check_thresholds(thresholds: Sequence[float]) -> np.ndarray:
    """The thresholds as a 1-D float64 array: at least one, all finite."""
    t = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    if t.size == 0:
        raise ValueError("at least one threshold is needed")
    if not np.isfinite(t).all():
        raise ValueError(f"thresholds must be finite numbers, got {list(thresholds)}")
    return t


def _count_matching(sorted_values: np.ndarray, thresholds: np.ndarray, op: str) -> np.ndarray:
    """How many of the (ascending) values satisfy `value op t`, for every t."""
    side = "left" if op == "ge" else "right"
    return sorted_values.size - np.searchsorted(sorted_values, thresholds, side=side)


def harmonic(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 2 * a * b / np.where(total > 0, total, 1), 0.0)


def hungarian_pairs(S) -> tuple[np.ndarray, np.ndarray]:
    """Max-sum one-to-one assignment on the rectangular matrix (no padding)."""
    S = check_matrix(S)
    return linear_sum_assignment(S, maximize=True)


def max_cardinality_pairs(S, threshold: float, op: str = "ge") -> tuple[np.ndarray, np.ndarray]:
    """Assignment with the most matching pairs, ties broken by the larger total similarity.

    Only pairs that match are returned.
    """
    S = check_matrix(S)
    M = matches(S, threshold, op)
    if not M.any():
        return np.array([], dtype=int), np.array([], dtype=int)
    # A bonus larger than any possible difference in summed similarity makes one more
    # match always win; among equal counts the similarity total decides.
    m = min(S.shape)
    bonus = m * (np.abs(S).max() * 2 + 1) + 1
    W = np.where(M, bonus + S, 0.0)
    rows, cols = linear_sum_assignment(W, maximize=True)
    keep = M[rows, cols]
    return rows[keep], cols[keep]


def max_cardinality_count(M: np.ndarray) -> int:
    """Size of a maximum matching in the bipartite match graph (Hopcroft-Karp)."""
    if not M.any():
        return 0

    # CSR built by hand: scipy's dense-to-sparse conversion costs more than the matching.
    cols = np.flatnonzero(M) % M.shape[1]
    indptr = np.concatenate([[0], np.cumsum(np.count_nonzero(M, axis=1))])
    graph = csr_array((np.ones(cols.size, dtype=np.int8), cols, indptr), shape=M.shape)
    matched = maximum_bipartite_matching(graph, perm_type="column")
    return int((matched >= 0).sum())


def _maxcard_sweep(
    S: np.ndarray, t: np.ndarray, op: str, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """max_cardinality_count(matches(S, t_i, op)) for every t_i, running few matchings.

    The count is non-increasing in t and lies between `lower` (the max-sum assignment's
    count, itself a matching) and `upper` (min of rows and columns with any match). On the
    sorted thresholds, bisect: a threshold whose bounds meet needs no matching, and a run
    whose two ends agree takes that value throughout.
    """
    uniq, inverse = np.unique(t, return_inverse=True)
    lo = np.zeros(uniq.size, dtype=np.int64)
    hi = np.zeros(uniq.size, dtype=np.int64)
    # Duplicated thresholds share bounds; keep the tightest of each.
    np.maximum.at(lo, inverse, lower)
    hi[:] = np.iinfo(np.int64).max
    np.minimum.at(hi, inverse, upper)
    # Fold in monotonicity: f(t_i) <= hi of every smaller t, >= lo of every larger t.
    hi = np.minimum.accumulate(hi)
    lo = np.maximum.accumulate(lo[::-1])[::-1]
    vals = np.full(uniq.size, -1, dtype=np.int64)

    def solve(i: int, j: int, above: int, below: int) -> None:
        # f on uniq[i:j] lies in [below, above].
        while i < j:
            if above == below:
                vals[i:j] = above
                return
            mid = (i + j) // 2
            a, b = min(hi[mid], above), max(lo[mid], below)
            v = b if a == b else max_cardinality_count(matches(S, uniq[mid], op))
            vals[mid] = v
            solve(i, mid, above, v)
            i, above = mid + 1, v

    solve(0, uniq.size, int(hi[0]), int(lo[-1]))
    return vals[inverse]


def score(S, thresholds: Sequence[float], op: str = "ge") -> pd.DataFrame:
    """Every coverage and one-to-one metric of S, one row per threshold.

    Columns: `threshold` then METRIC_COLUMNS, in the order of `thresholds`.
    """
    out = pd.DataFrame(score_arrays(S, thresholds, op))
    int_cols = ["n_a", "n_b", "n_match_pairs", "hungarian_n_matched", "maxcard_n_matched"]
    return out.astype({c: "int64" for c in int_cols})


def score_arrays(S, thresholds: Sequence[float], op: str = "ge") -> dict:
    """score()'s columns as arrays (no table: the validation suite scores many matrices)."""
    check_op(op)
    S = check_matrix(S)
    t = check_thresholds(thresholds)
    n_a, n_b = S.shape

    # Coverage family.
    n_pairs = _count_matching(np.sort(S, axis=None), t, op)
    row_max, col_max = S.max(axis=1), S.max(axis=0)
    rows_hit = _count_matching(np.sort(row_max), t, op)
    cols_hit = _count_matching(np.sort(col_max), t, op)
    recall, precision = rows_hit / n_a, cols_hit / n_b
    bidir_a, bidir_b = float(row_max.mean()), float(col_max.mean())

    # One-to-one family: the max-sum assignment does not depend on the threshold.
    rows, cols = hungarian_pairs(S)
    assigned = np.sort(S[rows, cols])
    k = _count_matching(assigned, t, op)
    quartiles = np.full((t.size, 5), np.nan)
    for idx, kk in enumerate(k):
        if kk:
            # The matching pairs are the kk largest assigned similarities.
            quartiles[idx] = np.percentile(assigned[assigned.size - kk :], [0, 25, 50, 75, 100])

    maxcard = _maxcard_sweep(S, t, op, lower=k, upper=np.minimum(rows_hit, cols_hit))

    return {
        "threshold": t,
        "n_a": n_a,
        "n_b": n_b,
        "n_match_pairs": n_pairs,
        "raza_jaccard": n_pairs / (n_a * n_b),
        "hit_rate": recall,
        "recall": recall,
        "precision": precision,
        "f1": harmonic(precision, recall),
        "bidir_max_sim_a": bidir_a,
        "bidir_max_sim_b": bidir_b,
        "similarity_f1": float(harmonic(bidir_a, bidir_b)),
        "hungarian_n_matched": k,
        "hungarian_coverage_a": k / n_a,
        "hungarian_coverage_b": k / n_b,
        "hungarian_f1": harmonic(k / n_a, k / n_b),
        "true_jaccard": k / (n_a + n_b - k),
        "matched_sim_min": quartiles[:, 0],
        "matched_sim_q1": quartiles[:, 1],
        "matched_sim_median": quartiles[:, 2],
        "matched_sim_q3": quartiles[:, 3],
        "matched_sim_max": quartiles[:, 4],
        "maxcard_n_matched": maxcard,
        "maxcard_coverage_a": maxcard / n_a,
        "maxcard_coverage_b": maxcard / n_b,
        "maxcard_f1": harmonic(maxcard / n_a, maxcard / n_b),
        "maxcard_true_jaccard": maxcard / (n_a + n_b - maxcard),
    }


def threshold_grid(start: float = 0.0, stop: float = 1.0, step: float = 0.01) -> np.ndarray:
    """Inclusive grid, rounded so that 0.07 is 0.07 and not 0.07000000000000001."""
    if step <= 0 or stop < start:
        raise ValueError(f"sweep needs step > 0 and stop >= start, got {start}, {stop}, {step}")
    n = int(round((stop - start) / step)) + 1
    decimals = max(0, -int(np.floor(np.log10(step)))) + 2
    return np.round(start + step * np.arange(n), decimals)


def best_two(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: index of the best column (first on ties), best and second-best value."""
    best_idx = np.argmax(S, axis=1)
    best = S[np.arange(S.shape[0]), best_idx]
    if S.shape[1] < 2:
        return best_idx, best, np.full(S.shape[0], np.nan)
    second = -np.partition(-S, 1, axis=1)[:, 1]
    return best_idx, best, second


def theme_table(S, a_ids, a_names, b_ids, b_names) -> pd.DataFrame:
    """One row per theme of A and of B: best match, best and second similarity, partner."""
    S = check_matrix(S)
    rows, cols = hungarian_pairs(S)
    partner_a = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    partner_b = dict(zip(cols.tolist(), rows.tolist(), strict=True))
    frames = []
    for side, M, ids, names, other_ids, other_names, partner in (
        ("a", S, a_ids, a_names, b_ids, b_names, partner_a),
        ("b", S.T, b_ids, b_names, a_ids, a_names, partner_b),
    ):
        best_idx, best, second = best_two(M)
        p = [partner.get(i) for i in range(M.shape[0])]
        frames.append(
            pd.DataFrame(
                {
                    "side": side,
                    "theme_id": list(ids),
                    "theme_name": list(names),
                    "best_match_id": [other_ids[j] for j in best_idx],
                    "best_match_name": [other_names[j] for j in best_idx],
                    "best_similarity": best,
                    "second_similarity": second,
                    "hungarian_partner_id": [other_ids[j] if j is not None else None for j in p],
                    "hungarian_partner_name": [
                        other_names[j] if j is not None else None for j in p
                    ],
                    "hungarian_similarity": [
                        M[i, j] if j is not None else np.nan for i, j in enumerate(p)
                    ],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
