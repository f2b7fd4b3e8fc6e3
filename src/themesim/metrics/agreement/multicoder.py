"""Agreement of m ≥ 2 coders on one binary code (applied or not) over units (characters).

With every coder rating every unit, each figure depends only on how many units k of the m
coders coded: the histogram h[k], k = 0..m. So a code's agreement over millions of characters
is a few sums, pooling over transcripts is adding histograms, and the transcript jackknife
subtracts them. Formulas (two categories, no missing ratings):

- percent_agreement: 100 · P̄, P̄ the mean over units of the share of agreeing coder pairs,
  P_u = [k(k − 1) + (m − k)(m − k − 1)] / [m(m − 1)] (the mean pairwise percent agreement);
- fleiss_kappa: (P̄ − P_e) / (1 − P_e), P_e = p² + (1 − p)², p = Σ k h[k] / (m N) (Fleiss 1971);
- brennan_prediger: (P̄ − 1/2) / (1 − 1/2) (Brennan & Prediger 1981; statsmodels' "randolph");
- gwet_ac1: (P̄ − P_e) / (1 − P_e), P_e = 2 p (1 − p) (Gwet 2008, two categories);
- alpha_binary_char: Krippendorff's α, nominal, from the coincidences
  o_10 = Σ h[k] k(m − k)/(m − 1), n = m N, n_1 = Σ k h[k]: α = 1 − (n − 1) o_10 / (n_0 n_1).

tests/test_multicoder.py checks them against statsmodels, the krippendorff package and hand
computations for 2, 3 and 5 coders.
"""

from __future__ import annotations

import numpy as np

from themesim.io.codings import Intervals

MULTI_STATS = [
    "percent_agreement",
    "fleiss_kappa",
    "alpha_binary_char",
    "gwet_ac1",
    "brennan_prediger",
]


def histogram(coders: list[Intervals], length: int) -> np.ndarray:
    """h[k]: characters of [0, length) coded by exactly k of the coders (intervals disjoint
    within a coder; touching ones, as unitizing.merge keeps them, included)."""
    m = len(coders)
    h = np.zeros(m + 1, dtype=np.int64)
    pts = [np.asarray(iv).reshape(-1, 2) for iv in coders]
    if not any(len(p) for p in pts):
        h[0] = length
        return h
    starts = np.concatenate([p[:, 0] for p in pts])
    ends = np.concatenate([p[:, 1] for p in pts])
    bounds = np.r_[starts, ends]
    delta = np.r_[np.ones(len(starts), dtype=np.int64), -np.ones(len(ends), dtype=np.int64)]
    # at one position ends come before starts: a coder's touching selections (0-4, 4-8)
    # never count twice there, so the level stays within 0..m
    order = np.lexsort((delta, bounds))
    bounds, delta = bounds[order], delta[order]
    level = np.cumsum(delta)
    widths = np.diff(bounds)
    np.add.at(h, level[:-1], widths)
    h[0] += length - h.sum()  # characters before, after and between every coding
    return h


def multi_stats(h) -> dict[str, np.ndarray]:
    """MULTI_STATS of histograms h (shape (..., m + 1)); NaN where undefined."""
    h = np.asarray(h, dtype=float)
    m = h.shape[-1] - 1
    k = np.arange(m + 1, dtype=float)
    N = h.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pu = (k * (k - 1) + (m - k) * (m - k - 1)) / (m * (m - 1))
        p_bar = (h * pu).sum(axis=-1) / N
        n1 = (h * k).sum(axis=-1)
        n = m * N
        p = n1 / n
        pe_f = p**2 + (1 - p) ** 2
        pe_g = 2 * p * (1 - p)
        o10 = (h * k * (m - k)).sum(axis=-1) / (m - 1)
        n0 = n - n1
        out = {
            "percent_agreement": np.where(N > 0, 100 * p_bar, np.nan),
            "fleiss_kappa": np.where((N > 0) & (pe_f < 1), (p_bar - pe_f) / (1 - pe_f), np.nan),
            "alpha_binary_char": np.where(n0 * n1 > 0, 1 - (n - 1) * o10 / (n0 * n1), np.nan),
            "gwet_ac1": np.where(N > 0, (p_bar - pe_g) / (1 - pe_g), np.nan),
            "brennan_prediger": np.where(N > 0, 2 * p_bar - 1, np.nan),
        }
    return out


def segment_agreement(a: Intervals, b: Intervals, share: float) -> tuple[int, int, int, int]:
    """(segments of a, those agreeing, segments of b, those agreeing): a segment agrees when a
    segment of the other coder (same code) overlaps at least `share` of its length."""

    def agreeing(x: Intervals, y: Intervals) -> int:
        if not len(x):
            return 0
        if not len(y):
            return 0
        lo = np.searchsorted(y[:, 1], x[:, 0], side="right")
        hi = np.searchsorted(y[:, 0], x[:, 1], side="left")
        best = np.zeros(len(x))
        for i in np.flatnonzero(hi > lo):
            ys = y[lo[i] : hi[i]]
            ov = np.minimum(ys[:, 1], x[i, 1]) - np.maximum(ys[:, 0], x[i, 0])
            best[i] = ov.max()
        return int((best >= share * (x[:, 1] - x[:, 0]) - 1e-9).sum())

    return len(a), agreeing(a, b), len(b), agreeing(b, a)
