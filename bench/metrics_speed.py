"""How long a full threshold sweep takes on a large matrix (the issue's speed requirement).

Times metrics.score (coverage + one-to-one) and distinctiveness.gap_summary over the 101
thresholds of threshold_grid() on a seeded n x n matrix, against a straightforward
loop-per-threshold reference written here, checks that both give the same numbers, and
prints seconds and the speed-up. Also times interval_table on a 12 x 12 matrix.
A benchmark, not a test: nothing here asserts a time.

    .venv/bin/python bench/metrics_speed.py [--n 1000] [--seed 0] [--no-reference]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_bipartite_matching

from themesim.metrics.intervals.intervals import interval_table
from themesim.metrics.sets.coverage import score, threshold_grid
from themesim.metrics.sets.distinctiveness import gap_summary


def diagonal_heavy(n: int, seed: int) -> np.ndarray:
    """Unrelated pairs 0.0-0.6; each row has one partner 0.2-0.4 higher, in shuffled columns."""
    rng = np.random.default_rng(seed)
    S = rng.uniform(0.0, 0.6, size=(n, n))
    S[np.arange(n), rng.permutation(n)] += rng.uniform(0.2, 0.4, size=n)
    return np.clip(S, -1, 1)


def low_rank(n: int, seed: int, dim: int = 16) -> np.ndarray:
    """Cosines of random unit vectors in few dimensions: many near-ties, so the bounds that
    let score() skip matchings meet less often (its harder case)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, dim))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X[:n] @ X[n:].T


def _harmonic(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b > 0 else 0.0


def matching_count(M: np.ndarray) -> int:
    """One Hopcroft-Karp matching from the dense matrix, as score() first did per threshold."""
    if not M.any():
        return 0
    matched = maximum_bipartite_matching(csr_array(M.astype(np.int8)), perm_type="column")
    return int((matched >= 0).sum())


def reference_score(S: np.ndarray, thresholds) -> pd.DataFrame:
    """Everything recomputed for every threshold, as a first implementation would."""
    n_a, n_b = S.shape
    out = []
    for t in thresholds:
        M = S >= t
        recall, precision = M.any(axis=1).mean(), M.any(axis=0).mean()
        rows, cols = linear_sum_assignment(S, maximize=True)
        kept = np.sort(S[rows, cols][M[rows, cols]])
        k = kept.size
        maxcard = matching_count(M)
        q = np.percentile(kept, [0, 25, 50, 75, 100]) if k else np.full(5, np.nan)
        out.append(
            {
                "threshold": t,
                "n_match_pairs": int(M.sum()),
                "raza_jaccard": M.sum() / (n_a * n_b),
                "recall": recall,
                "precision": precision,
                "f1": _harmonic(precision, recall),
                "hungarian_n_matched": k,
                "true_jaccard": k / (n_a + n_b - k),
                "matched_sim_median": q[2],
                "maxcard_n_matched": maxcard,
            }
        )
    return pd.DataFrame(out)


def reference_gaps(S: np.ndarray, thresholds, gamma: float = 0.15) -> pd.DataFrame:
    out = []
    for t in thresholds:
        row = {"threshold": t}
        for side, M in (("a", S), ("b", S.T)):
            top = np.sort(M, axis=1)[:, -2:]
            gap = top[:, 1] - top[:, 0]
            good, distinct = top[:, 1] >= t, gap >= gamma - 1e-12
            row[f"unique_match_rate_{side}"] = (good & distinct).mean()
            row[f"share_no_good_match_{side}"] = (~good & ~distinct).mean()
            row[f"gap_abs_median_{side}"] = np.median(gap)
        out.append(row)
    return pd.DataFrame(out)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000, help="matrix size n x n (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-reference", action="store_true", help="skip the slow reference loop")
    args = p.parse_args()

    grid = threshold_grid()
    for kind, make in (("diagonal-heavy", diagonal_heavy), ("low-rank", low_rank)):
        S = make(args.n, args.seed)
        print(f"{kind} matrix {args.n} x {args.n}, {grid.size} thresholds (op ge)")
        t_score, fast = timed(score, S, grid)
        t_gap, fast_gap = timed(gap_summary, S, grid)
        t_old, _ = timed(lambda S=S: [matching_count(S >= t) for t in grid])
        print(f"  score (coverage + one-to-one)  {t_score:8.3f} s")
        print(f"  gap_summary (distinctiveness)  {t_gap:8.3f} s")
        print(f"  whole sweep                    {t_score + t_gap:8.3f} s")
        print(f"  (one matching per threshold, the old bottleneck of score: {t_old:.3f} s)")
        if args.no_reference:
            continue
        t_ref, ref = timed(reference_score, S, grid)
        t_ref_gap, ref_gap = timed(reference_gaps, S, grid)
        pd.testing.assert_frame_equal(fast[ref.columns], ref, check_dtype=False)
        pd.testing.assert_frame_equal(fast_gap[ref_gap.columns], ref_gap, check_dtype=False)
        print("  reference loop per threshold (same numbers, checked):")
        print(f"    score        {t_ref:8.3f} s   speed-up x{t_ref / t_score:6.1f}")
        print(f"    gap_summary  {t_ref_gap:8.3f} s   speed-up x{t_ref_gap / t_gap:6.1f}")
        total = t_ref + t_ref_gap
        print(f"    whole sweep  {total:8.3f} s   speed-up x{total / (t_score + t_gap):6.1f}")

    small = diagonal_heavy(12, args.seed)
    t_ci, _ = timed(interval_table, small, [0.5, 0.7])
    print(f"interval_table 12 x 12, 2 thresholds  {t_ci:6.3f} s")


if __name__ == "__main__":
    main()
