"""Word-salad null model (soak's form): how good is a best match if B's words are scrambled?

Each null set keeps B's vocabulary and theme lengths but destroys which words belong together,
so a real match must beat what the same words achieve by chance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

NULL_TABLE_COLUMNS = ["null_p", "null_q", "null_significant", "null_best_median"]


def word_salad_sets(texts: list[str], k: int, seed: int) -> list[list[str]]:
    """K null versions of a theme set: all whitespace tokens pooled and shuffled across themes.

    Salad theme i keeps the word count of texts[i]. One generator (numpy default_rng(seed))
    drives all K shuffles, so the K sets differ from one another and the whole list is
    reproducible from the seed.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    tokens = [str(t).split() for t in texts]
    counts = [len(t) for t in tokens]
    pool = np.array([w for t in tokens for w in t], dtype=object)
    cuts = np.cumsum(counts)[:-1]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        shuffled = pool[rng.permutation(len(pool))]
        out.append([" ".join(part) for part in np.split(shuffled, cuts)])
    return out


def null_pvalues(observed_best: np.ndarray, null_best: np.ndarray) -> np.ndarray:
    """Per-theme permutation p = (1 + #{null best ≥ observed best}) / (K + 1).

    observed_best: (n_a,), max_j S[i, j] for the real B. null_best: (K, n_a), the same for each
    salad set. The +1 counts the observed set as one of the draws, so p is never 0.
    """
    obs = np.asarray(observed_best, dtype=np.float64)
    null = np.asarray(null_best, dtype=np.float64)
    if obs.ndim != 1:
        raise ValueError(f"observed_best must be 1-D, got shape {obs.shape}")
    if null.ndim != 2 or null.shape[1] != obs.shape[0] or null.shape[0] < 1:
        raise ValueError(f"null_best must have shape (K >= 1, {obs.shape[0]}), got {null.shape}")
    if not (np.isfinite(obs).all() and np.isfinite(null).all()):
        raise ValueError("observed_best and null_best must be finite")
    k = null.shape[0]
    return (1.0 + (null >= obs[None, :]).sum(axis=0)) / (k + 1.0)


def bh_qvalues(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (statsmodels fdr_bh), in the input order."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {p.shape}")
    if p.size == 0:
        return p.copy()
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError("p-values must be finite and in [0, 1]")
    return np.asarray(multipletests(p, method="fdr_bh")[1], dtype=np.float64)


def significant_match_rate(q, alpha: float = 0.05) -> float:
    """Share of themes with q ≤ alpha; NaN for an empty set (never a made-up 0)."""
    q = np.asarray(q, dtype=np.float64)
    return float(np.mean(q <= alpha)) if q.size else float("nan")


def null_table(observed_best, null_best, alpha: float = 0.05) -> pd.DataFrame:
    """Per A theme (row i = theme i of A, RangeIndex): null_p, null_q, null_significant,
    null_best_median (median over the K salad sets of that theme's best similarity)."""
    p = null_pvalues(observed_best, null_best)
    q = bh_qvalues(p)
    return pd.DataFrame(
        {
            "null_p": p,
            "null_q": q,
            "null_significant": q <= alpha,
            "null_best_median": np.median(np.asarray(null_best, dtype=np.float64), axis=0),
        },
        columns=NULL_TABLE_COLUMNS,
    )
