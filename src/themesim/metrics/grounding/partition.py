"""AMI and ARI of two labelings from their contingency table, equal bit for bit to
scikit-learn's on the labelings themselves: the grounding statistics' replicates and shifted
codings (metrics/grounding/grounding_intervals.py, metrics/grounding/grounding_shift.py) count
tables, not labels. The mutual information and its expectation are scikit-learn's own
functions of the table; the entropies and the pair counts are its arithmetic on the same
counts (scikit-learn takes labels for those, ten times the cost of a permutation's table).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.metrics.cluster import expected_mutual_information, mutual_info_score


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
