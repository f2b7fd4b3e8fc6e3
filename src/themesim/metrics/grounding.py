"""Grounded agreement: do two theme sets label the same transcript segments?

The unit is the transcript segment. Each set's labels are rows (transcript, segment, theme_id,
source[, score]); a segment may carry several themes. Its top-1 theme is the one with the
highest `score` (coded and quote labels score 1, assigned labels their similarity), ties to the
theme listed first in the set. Every statistic comes from a library: scikit-learn (AMI, ARI,
Cohen's κ), krippendorff (α), scipy (Hungarian assignment, Spearman). Formulas:
docs/grounding.md.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence

import krippendorff
import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.stats import spearmanr
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from themesim.metrics.coverage import hungarian_pairs, matches

KAPPA_GOOD = 0.4  # "moderate" agreement (Landis & Koch) — the share of pairs reaching it
PAIR_COLUMNS = ["a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa", "similarity", "text_pair"]
METRIC_COLUMNS = [
    "n_segments",
    "n_both_labelled",
    "data_coverage_a",
    "data_coverage_b",
    "ami",
    "ari",
    "grounded_hungarian_n_matched",
    "grounded_hungarian_f1",
    "text_hungarian_f1",
    "text_pairs",
    "text_pairs_median_kappa",
    "text_pairs_share_kappa_ge_0_4",
    "text_pairs_krippendorff_alpha",
    "text_data_spearman",
]
# Columns that need S on the method's scale: NaN when it is undefined there.
TEXT_METRICS = [c for c in METRIC_COLUMNS if c.startswith("text_")]
CI_METRICS = [
    "data_coverage_a",
    "data_coverage_b",
    "ami",
    "ari",
    "grounded_hungarian_f1",
    "text_pairs_median_kappa",
    "text_pairs_krippendorff_alpha",
    "text_data_spearman",
]


def label_matrix(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Boolean segments × themes: does theme j label segment i? Rows follow `segments`."""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    X = np.zeros((len(segments), len(ids)), dtype=bool)
    for t, s, tid in zip(labels["transcript"], labels["segment"], labels["theme_id"], strict=True):
        i, j = pos.get((t, int(s))), col.get(tid)
        if i is None or j is None:
            raise ValueError(f"label ({t}, {s}, {tid}) is not a known segment and theme")
        X[i, j] = True
    return X


def top1(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Index into `ids` of each segment's top-1 theme, -1 for an unlabelled segment."""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    score = labels["score"] if "score" in labels.columns else pd.Series(1.0, index=labels.index)
    best = np.full(len(segments), -1)
    best_score = np.full(len(segments), -np.inf)
    for t, s, tid, sc in zip(
        labels["transcript"], labels["segment"], labels["theme_id"], score, strict=True
    ):
        i, j = pos[(t, int(s))], col[tid]
        sc = float(sc)
        if sc > best_score[i] or (sc == best_score[i] and j < best[i]):
            best[i], best_score[i] = j, sc
    return best


def iou_matrix(
    A: np.ndarray, B: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(n_both, n_a, n_b, IoU) per theme pair; IoU is 0 when neither theme labels a segment."""
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    both = Ai.T @ Bi
    n_a, n_b = Ai.sum(axis=0), Bi.sum(axis=0)
    return both, n_a, n_b, _iou(both, n_a, n_b)


def _iou(both: np.ndarray, n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    union = n_a[:, None] + n_b[None, :] - both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, both / np.where(union > 0, union, 1), 0.0)


def kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's κ of two binary labelings (scikit-learn); NaN when both are constant and equal
    (chance agreement 1: κ undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on the undefined case it sets to NaN
        return float(cohen_kappa_score(x, y, labels=[False, True]))


def kappa_counts(n_both: int, n_a: int, n_b: int, n: int) -> float:
    """Cohen's κ of two binary labelings from their 2×2 table (statsmodels `cohens_kappa`;
    equal to scikit-learn's on the same labelings, much cheaper per call): both, only A,
    only B, neither. NaN when both labelings are constant and equal (κ undefined)."""
    table = np.array([[n_both, n_a - n_both], [n_b - n_both, n - n_a - n_b + n_both]], float)
    if (table > 0).sum() == 1 and (table[0, 0] > 0 or table[1, 1] > 0):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # κ alone: the full results also build test statistics, 20 times the cost.
        return float(cohens_kappa(table, return_results=False))


def kappa_counts_array(n_both, n_a, n_b, n: int) -> np.ndarray:
    """:func:`kappa_counts` of many 2×2 tables at once, with statsmodels' arithmetic step for
    step (equal bit for bit; tests/test_grounding.py): the bootstrap's κ of every text pair
    of a resample in a few array operations instead of a statsmodels call per pair."""
    both = np.asarray(n_both, dtype=float)
    n_a, n_b = np.asarray(n_a, dtype=float), np.asarray(n_b, dtype=float)
    cells = np.stack([both, n_a - both, n_b - both, n - n_a - n_b + both])
    agree = cells[0] + cells[3]
    row0, row1 = (cells[0] + cells[1]) / n, (cells[2] + cells[3]) / n
    col0, col1 = (cells[0] + cells[2]) / n, (cells[1] + cells[3]) / n
    expected = col0 * row0 + col1 * row1
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (agree / n - expected) / (1 - expected)
    # κ undefined: both labelings constant and equal (one non-empty cell, on the diagonal)
    one = (cells > 0).sum(axis=0) == 1
    return np.where(one & ((cells[0] > 0) | (cells[3] > 0)), np.nan, out)


def text_pairs(S: np.ndarray, threshold: float | None, op: str = "ge") -> list[tuple[int, int]]:
    """The text-based Hungarian pairs: max-sum assignment on S, kept when S passes
    `threshold` (all assigned pairs when None). S and threshold on the method's scale
    (metrics.method_scale), as the metric tables decide."""
    rows, cols = hungarian_pairs(S)
    if threshold is None:
        return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]
    M = matches(S, threshold, op)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if M[r, c]]


def grounded_hungarian(iou: np.ndarray, min_iou: float) -> list[tuple[int, int]]:
    """Max-sum assignment on the IoU matrix; pairs with IoU ≥ min_iou."""
    rows, cols = linear_sum_assignment(iou, maximize=True)
    return [
        (int(r), int(c))
        for r, c in zip(rows, cols, strict=True)
        if iou[r, c] >= min_iou and iou[r, c] > 0
    ]


def _f1(k: int, n_a: int, n_b: int) -> float:
    return 2 * k / (n_a + n_b) if n_a + n_b else math.nan


def alpha_mapped(top_a: np.ndarray, top_b: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """Krippendorff's α (nominal) of A's and B's top-1 labels, B's mapped through the pairs
    onto A's themes; a B theme outside the pairs stays its own category. Unlabelled segments
    are missing values."""
    n_a = int(max(top_a.max(initial=-1), max((a for a, _ in pairs), default=-1))) + 1
    mapped = {b: a for a, b in pairs}
    a = np.where(top_a >= 0, top_a, np.nan).astype(float)
    b = np.array(
        [np.nan if v < 0 else mapped.get(int(v), n_a + int(v)) for v in top_b], dtype=float
    )
    both = ~np.isnan(a) & ~np.isnan(b)
    if both.sum() < 1 or len(set(np.concatenate([a[both], b[both]]).tolist())) < 2:
        return math.nan  # α needs pairable values of at least two categories
    return float(
        krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="nominal")
    )


def _partition(top_a: np.ndarray, top_b: np.ndarray) -> tuple[float, float, int]:
    both = (top_a >= 0) & (top_b >= 0)
    n = int(both.sum())
    if n < 2:
        return math.nan, math.nan, n
    x, y = top_a[both], top_b[both]
    return float(adjusted_mutual_info_score(x, y)), float(adjusted_rand_score(x, y)), n


def _spearman(S: np.ndarray, iou: np.ndarray) -> float:
    x, y = S.ravel(), iou.ravel()
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan  # constant ranks: no correlation defined
    return float(spearmanr(x, y).statistic)


def _pair_kappas(both, n_a, n_b, n: int, tpairs) -> np.ndarray:
    return np.array(
        [kappa_counts(int(both[i, j]), int(n_a[i]), int(n_b[j]), n) for i, j in tpairs],
        dtype=float,
    )


def _median_kappa(kappas: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (
            float(np.nanmedian(kappas)) if len(kappas) and not np.isnan(kappas).all() else math.nan
        )


def _spearman_ranked(rank_x: np.ndarray | None, y: np.ndarray) -> float:
    """:func:`_spearman` with x's ranks given (None: x constant or too short): scipy's
    spearmanr step for step (ranks stacked as its `apply_along_axis` lays them out, then
    np.corrcoef), for the bootstrap, whose S stays while the IoU changes."""
    from scipy.stats import rankdata

    y = y.ravel()
    if rank_x is None or np.ptp(y) == 0:
        return math.nan
    ranked = np.stack([rank_x, rankdata(y)]).T
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def _summary(
    A: np.ndarray,
    B: np.ndarray,
    top_a: np.ndarray,
    top_b: np.ndarray,
    S: np.ndarray,
    tpairs: list[tuple[int, int]] | None,
    min_iou: float,
) -> tuple[dict, np.ndarray]:
    """tpairs None: S is undefined on the method's scale (z of a set without spread), so
    every text-based column is NaN."""
    both, n_a, n_b, iou = iou_matrix(A, B)
    text = tpairs is not None
    tpairs = tpairs or []
    ami, ari, n_both = _partition(top_a, top_b)
    g = grounded_hungarian(iou, min_iou)
    n = len(A)
    kappas = _pair_kappas(both, n_a, n_b, n, tpairs)
    med = _median_kappa(kappas)
    row = {
        "n_segments": n,
        "n_both_labelled": n_both,
        "data_coverage_a": float(A.any(axis=1).mean()) if n else math.nan,
        "data_coverage_b": float(B.any(axis=1).mean()) if n else math.nan,
        "ami": ami,
        "ari": ari,
        "grounded_hungarian_n_matched": len(g),
        "grounded_hungarian_f1": _f1(len(g), A.shape[1], B.shape[1]),
        "text_pairs": len(tpairs),
        "text_pairs_median_kappa": med,
        "text_pairs_share_kappa_ge_0_4": float((kappas >= KAPPA_GOOD).mean())
        if len(kappas)
        else math.nan,
        "text_pairs_krippendorff_alpha": alpha_mapped(top_a, top_b, tpairs),
        "text_data_spearman": _spearman(S, iou) if text else math.nan,
    }
    if not text:
        row |= {k: math.nan for k in TEXT_METRICS}
    return row, iou


def grounding(
    A: np.ndarray,
    B: np.ndarray,
    top_a: np.ndarray,
    top_b: np.ndarray,
    S: np.ndarray,
    a_ids: Sequence[str],
    b_ids: Sequence[str],
    *,
    min_iou: float,
    threshold: float | None,
    op: str = "ge",
    n_boot: int = 0,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[dict, pd.DataFrame]:
    """(metrics row, pair table) of one comparison.

    A, B: boolean segments × themes label matrices over every segment; top_a, top_b: top-1
    indices (-1 = unlabelled); S: the method's text similarity (A themes × B themes) on its
    scale (metrics.method_scale; NaN cells where z is undefined: no text columns then);
    threshold/op: the method's first threshold on that scale, for the text Hungarian pairs.
    n_boot > 0 adds `<metric>_ci_low/_ci_high` from resampling segments with replacement.
    """
    S = np.asarray(S, dtype=float)
    if S.shape != (A.shape[1], B.shape[1]):
        raise ValueError(
            f"similarity shape {S.shape} does not match themes {A.shape[1]}×{B.shape[1]}"
        )
    # As the metric tables: a comparison with S undefined on the z scale is not text-scored.
    tpairs = text_pairs(S, threshold, op) if np.isfinite(S).all() else None
    row, iou = _summary(A, B, top_a, top_b, S, tpairs, min_iou)
    if tpairs is not None:
        row["text_hungarian_f1"] = _f1(len(tpairs), S.shape[0], S.shape[1])
    row = {k: row[k] for k in METRIC_COLUMNS}
    both, n_a, n_b, _ = iou_matrix(A, B)
    tp = set(tpairs or [])
    pairs = pd.DataFrame(
        [
            (
                a_ids[i],
                b_ids[j],
                int(n_a[i]),
                int(n_b[j]),
                int(both[i, j]),
                float(iou[i, j]),
                kappa_counts(int(both[i, j]), int(n_a[i]), int(n_b[j]), len(A)),
                float(S[i, j]),
                (i, j) in tp,
            )
            for i in range(len(a_ids))
            for j in range(len(b_ids))
        ],
        columns=PAIR_COLUMNS,
    )
    if n_boot:
        row.update(_bootstrap(A, B, top_a, top_b, S, tpairs, min_iou, n_boot, seed, level))
    return row, pairs


@functools.lru_cache(maxsize=8)
def _resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    """n_boot × n segment indices drawn with replacement, one row per resample (read-only):
    the same for every comparison of a job (same segments, same seed), so drawn once."""
    rng = np.random.default_rng(seed)
    idx = np.zeros((n_boot, n), dtype=np.int64)
    for r in range(n_boot):  # one draw per resample, as the intervals were always drawn
        idx[r] = rng.integers(0, n, size=n)
    idx.flags.writeable = False
    return idx


def partition_scores(C: np.ndarray) -> tuple[float, float]:
    """(AMI, ARI) of two labelings from their contingency table (rows: A's labels, columns:
    B's; counts, zero rows and columns allowed), equal bit for bit to scikit-learn's
    adjusted_mutual_info_score and adjusted_rand_score on the labelings themselves (the same
    arithmetic on the same counts; tests/test_grounding.py checks it): a bootstrap resample is
    a table of weighted counts, without building, validating and re-counting label arrays.
    """
    C = np.asarray(C, dtype=np.int64)
    C = C[C.sum(axis=1) > 0][:, C.sum(axis=0) > 0]
    n_rows, n_cols = C.shape
    if n_rows == n_cols == 1 or n_rows == n_cols == 0:
        ami = 1.0
    elif n_rows == 1 or n_cols == 1:
        ami = 0.0
    else:
        ami = _ami(C)
    return ami, _ari(C)


def _ami(C: np.ndarray) -> float:
    """scikit-learn's adjusted_mutual_info_score (arithmetic mean) on a trimmed table."""
    from sklearn.metrics import mutual_info_score
    from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

    eps = np.finfo("float64").eps
    mi = mutual_info_score(None, None, contingency=C)
    emi = expected_mutual_information(C, int(C.sum()))
    h_true, h_pred = _entropy(C.sum(axis=1)), _entropy(C.sum(axis=0))
    denominator = np.mean([h_true, h_pred]) - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    numerator = mi - emi
    numerator = min(numerator, -eps) if numerator < 0 else max(numerator, eps)
    return float(numerator / denominator)


def _entropy(counts: np.ndarray) -> float:
    """scikit-learn's label entropy from the labels' counts (all > 0)."""
    pi = counts.astype(np.float64)
    if pi.size == 1:
        return 0.0
    pi_sum = np.sum(pi)
    return float(-np.sum((pi / pi_sum) * (np.log(pi) - math.log(pi_sum))))


def _ari(C: np.ndarray) -> float:
    """scikit-learn's adjusted_rand_score: its pair confusion matrix in integers."""
    n = int(C.sum())
    n_c, n_k = C.sum(axis=1), C.sum(axis=0)
    sum_squares = int((C**2).sum())
    tp = sum_squares - n
    fp = int((C @ n_k).sum()) - sum_squares
    fn = int((C.T @ n_c).sum()) - sum_squares
    tn = n**2 - fp - fn - sum_squares
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _bootstrap(A, B, top_a, top_b, S, tpairs, min_iou, n_boot, seed, level) -> dict:
    """Each resample as per-segment weights (how often it was drawn): the label counts, IoU,
    κ and contingency tables follow from weighted sums, equal to those of the resampled rows.
    """
    from scipy.stats import rankdata

    n = len(A)
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    covered_a, covered_b = A.any(axis=1).astype(np.int64), B.any(axis=1).astype(np.int64)
    paired = (top_a >= 0) & (top_b >= 0)
    n_cells = A.shape[1] * B.shape[1]
    cell = top_a[paired] * B.shape[1] + top_b[paired]
    text = tpairs is not None
    ti = np.array([i for i, _ in tpairs or []], dtype=np.int64)
    tj = np.array([j for _, j in tpairs or []], dtype=np.int64)
    s = S.ravel()
    rank_s = rankdata(s) if text and s.size >= 3 and np.ptp(s) > 0 else None
    values = np.full((n_boot, len(CI_METRICS)), np.nan)
    for r, idx in enumerate(_resamples(n, n_boot, seed)):
        w = np.bincount(idx, minlength=n)
        both = Ai.T @ (Bi * w[:, None])
        n_a, n_b = w @ Ai, w @ Bi
        iou = _iou(both, n_a, n_b)
        C = np.bincount(cell, weights=w[paired], minlength=n_cells).astype(np.int64)
        C = C.reshape(A.shape[1], B.shape[1])
        ami, ari = partition_scores(C) if C.sum() >= 2 else (math.nan, math.nan)
        g = grounded_hungarian(iou, min_iou)
        res = {
            "data_coverage_a": int(w @ covered_a) / n if n else math.nan,
            "data_coverage_b": int(w @ covered_b) / n if n else math.nan,
            "ami": ami,
            "ari": ari,
            "grounded_hungarian_f1": _f1(len(g), A.shape[1], B.shape[1]),
            "text_pairs_median_kappa": (
                _median_kappa(kappa_counts_array(both[ti, tj], n_a[ti], n_b[tj], n))
                if text
                else math.nan
            ),
            "text_pairs_krippendorff_alpha": (
                alpha_mapped(top_a[idx], top_b[idx], tpairs) if text else math.nan
            ),
            "text_data_spearman": _spearman_ranked(rank_s, iou) if text else math.nan,
        }
        values[r] = [res[m] for m in CI_METRICS]
    q = [50 * (1 - level), 50 * (1 + level)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(values, q, axis=0)
    out = {}
    for m, a, b in zip(CI_METRICS, lo, hi, strict=True):
        out[f"{m}_ci_low"], out[f"{m}_ci_high"] = float(a), float(b)
    return out
