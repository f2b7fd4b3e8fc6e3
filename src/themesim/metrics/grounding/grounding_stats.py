"""The grounding statistics of one comparison (metrics/grounding/grounding.py): IoU and κ of every
theme pair, the grounded and text Hungarian pairs, AMI, ARI, Krippendorff's α of the top-1 labels
and the Spearman ρ of text similarity against IoU, each from a library or equal to it bit for
bit (docs/grounding.md)."""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import spearmanr
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from themesim.metrics.grounding.partition import partition_scores
from themesim.metrics.kappa import kappa_counts_array
from themesim.metrics.sets.coverage import hungarian_pairs
from themesim.metrics.thresholds import matches

KAPPA_GOOD = 0.4  # "moderate" agreement (Landis & Koch) — the share of pairs reaching it
METRIC_COLUMNS = [
    "n_segments",
    "n_transcripts",
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


def iou_matrix(
    A: np.ndarray, B: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(n_both, n_a, n_b, IoU) per theme pair; IoU is 0 when neither theme labels a segment."""
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    both = Ai.T @ Bi
    n_a, n_b = Ai.sum(axis=0), Bi.sum(axis=0)
    return both, n_a, n_b, iou_from_counts(both, n_a, n_b)


def iou_from_counts(both: np.ndarray, n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
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


def f1_score(k: int, n_a: int, n_b: int) -> float:
    return 2 * k / (n_a + n_b) if n_a + n_b else math.nan


def alpha_mapped(top_a: np.ndarray, top_b: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """Krippendorff's α (nominal) of A's and B's top-1 labels, B's mapped through the pairs
    onto A's themes; a B theme outside the pairs stays its own category. Unlabelled segments
    are missing values."""
    n_a = int(max(top_a.max(initial=-1), max((a for a, _ in pairs), default=-1))) + 1
    top_b = np.asarray(top_b, dtype=np.int64)
    code = n_a + np.arange(  # one entry at least: an unlabelled B indexes 0, then is NaN
        max(int(top_b.max(initial=0)), max((b for _, b in pairs), default=0)) + 1
    )
    for x, y in pairs:  # the last pair of a B theme wins, as a dict of the pairs would
        code[y] = x
    a = np.where(top_a >= 0, top_a, np.nan).astype(float)
    b = np.where(top_b >= 0, code[np.maximum(top_b, 0)], np.nan).astype(float)
    both = ~np.isnan(a) & ~np.isnan(b)
    if both.sum() < 1 or len(set(np.concatenate([a[both], b[both]]).tolist())) < 2:
        return math.nan  # α needs pairable values of at least two categories
    return float(
        krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="nominal")
    )


def top1_table(top_a: np.ndarray, top_b: np.ndarray, n_a: int, n_b: int) -> np.ndarray:
    """The contingency table (n_a × n_b) of the top-1 labels of the segments both label."""
    both = (top_a >= 0) & (top_b >= 0)
    C = np.bincount(top_a[both] * n_b + top_b[both], minlength=n_a * n_b)
    return C.reshape(n_a, n_b)


def _partition(
    top_a: np.ndarray, top_b: np.ndarray, table: np.ndarray | None = None
) -> tuple[float, float, int]:
    """(AMI, ARI, n both label) of the top-1 labelings; with their `table`
    (:func:`top1_table`) from it (:func:`partition_scores`, scikit-learn's numbers bit for
    bit without its input checks: the jackknife's replicates)."""
    both = (top_a >= 0) & (top_b >= 0)
    n = int(both.sum())
    if n < 2:
        return math.nan, math.nan, n
    if table is not None:
        ami, ari = partition_scores(table)
        return ami, ari, n
    x, y = top_a[both], top_b[both]
    return float(adjusted_mutual_info_score(x, y)), float(adjusted_rand_score(x, y)), n


def _alpha(top_a, top_b, pairs, table: np.ndarray | None) -> float:
    """:func:`alpha_mapped`, or with the labels' `table` :func:`alpha_from_table`."""
    if table is None:
        return alpha_mapped(top_a, top_b, pairs)
    return alpha_from_table(table, pairs) if table.sum() >= 1 else math.nan


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


def median_kappa(kappas: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (
            float(np.nanmedian(kappas)) if len(kappas) and not np.isnan(kappas).all() else math.nan
        )


def spearman_ranked(rank_x: np.ndarray | None, y: np.ndarray) -> float:
    """:func:`_spearman` with x's ranks given (None: x constant or too short): scipy's
    spearmanr step for step (ranks stacked as its `apply_along_axis` lays them out, then
    np.corrcoef), for the bootstrap, whose S stays while the IoU changes."""
    y = y.ravel()
    if rank_x is None or np.ptp(y) == 0:
        return math.nan
    ranked = np.stack([rank_x, average_ranks(y)]).T
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def average_ranks(y: np.ndarray) -> np.ndarray:
    """scipy.stats.rankdata(y) (ties: their average rank) for a 1-d array, without its
    checks: the ranks are halves of integers, exact in float64, so the bits are equal."""
    order = np.argsort(y, kind="mergesort")
    ys = y[order]
    new = np.r_[True, ys[1:] != ys[:-1]]
    first = np.flatnonzero(new)  # start of each run of ties in sorted order
    ends = np.r_[first[1:], y.size]
    rank = (first + ends + 1) / 2.0  # average of the 1-based positions first+1 … ends
    out = np.empty(y.size)
    out[order] = np.repeat(rank, ends - first)
    return out


def summary_row(
    A: np.ndarray,
    B: np.ndarray,
    top_a: np.ndarray,
    top_b: np.ndarray,
    S: np.ndarray,
    tpairs: list[tuple[int, int]] | None,
    min_iou: float,
    fast: bool = False,
) -> tuple[dict, np.ndarray]:
    """tpairs None: S is undefined on the method's scale (z of a set without spread), so
    every text-based column is NaN. fast: AMI, ARI and κ from their tables
    (:func:`partition_scores`, :func:`kappa_counts_array`: the same numbers bit for bit,
    without the libraries' per-call checks) and α from the top-1 labels' table
    (:func:`alpha_from_table`, equal to the krippendorff package to 1e-12; the package
    recounts the labels' coincidences, 84 % of a replicate's time), for the jackknife's
    replicates."""
    both, n_a, n_b, iou = iou_matrix(A, B)
    text = tpairs is not None
    tpairs = tpairs or []
    table = top1_table(top_a, top_b, A.shape[1], B.shape[1]) if fast else None
    ami, ari, n_both = _partition(top_a, top_b, table)
    g = grounded_hungarian(iou, min_iou)
    n = len(A)
    if fast:
        ti, tj = [i for i, _ in tpairs], [j for _, j in tpairs]
        kappas = kappa_counts_array(both[ti, tj], n_a[ti], n_b[tj], n) if tpairs else np.array([])
    else:
        kappas = _pair_kappas(both, n_a, n_b, n, tpairs)
    med = median_kappa(kappas)
    row = {
        "n_segments": n,
        "n_both_labelled": n_both,
        "data_coverage_a": float(A.any(axis=1).mean()) if n else math.nan,
        "data_coverage_b": float(B.any(axis=1).mean()) if n else math.nan,
        "ami": ami,
        "ari": ari,
        "grounded_hungarian_n_matched": len(g),
        "grounded_hungarian_f1": f1_score(len(g), A.shape[1], B.shape[1]),
        "text_pairs": len(tpairs),
        "text_pairs_median_kappa": med,
        "text_pairs_share_kappa_ge_0_4": float((kappas >= KAPPA_GOOD).mean())
        if len(kappas)
        else math.nan,
        "text_pairs_krippendorff_alpha": _alpha(top_a, top_b, tpairs, table),
        "text_data_spearman": _spearman(S, iou) if text else math.nan,
    }
    if not text:
        row |= {k: math.nan for k in TEXT_METRICS}
    return row, iou


def alpha_from_table(C: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """:func:`alpha_mapped` from the contingency table C of the segments both label (rows:
    A's top-1 themes, columns: B's): Krippendorff's nominal α of two coders, whose pairable
    units are exactly those segments. Coincidences o = M + Mᵀ, M the table with B's
    columns mapped onto A's themes through the pairs (a B theme outside them its own
    category); α = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. Equal to the krippendorff
    package to rounding (tests/test_grounding.py); the permutation test's inner loop."""
    C = np.asarray(C, dtype=np.float64)
    n_a, n_b = C.shape
    col = np.arange(n_a, n_a + n_b)
    for a, b in pairs:
        col[b] = a
    M = np.zeros((n_a + n_b, n_a + n_b))
    for j in range(n_b):
        M[:n_a, col[j]] += C[:, j]
    o = M + M.T
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if (n_c > 0).sum() < 2:
        return math.nan
    off = n - np.trace(o)
    expected = n * n - float(n_c @ n_c)
    return float(1.0 - (n - 1) * off / expected)
