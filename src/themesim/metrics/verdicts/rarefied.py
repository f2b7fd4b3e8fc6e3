"""Agreement of two theme sets read from both sides at a common set size (docs/verdicts.md).

A set that writes more themes gives every theme of the other set more chances of a good
partner, so a one-sided agreement (the share of the reference's themes matched) rises with
the size of the set it is read against. The verdict's agreement is therefore rarefied
(Hurlbert 1971, "The nonconcept of species diversity", Ecology 52: 577-586; Heck, van Belle
and Simberloff 1975): each theme t of set x is scored by the best partner it would find
among k themes drawn at random from set y,

    a_t(y) = E[ max over a random k-subset K of y of s(t, u), u in K ]
           = sum_j s_(j) C(m - j, k - 1) / C(m, k),

s_(1) >= s_(2) >= ... the evidence of t against y's m themes in decreasing order (a 0/1
match at the threshold, or a strength), and the agreement of the pair is the mean over
both sides,

    A(x, y) = 1/2 [ mean over t in x of a_t(y) + mean over u in y of a_u(x) ].

When a writer's themes are exchangeable draws of its process, E A does not depend on how
many themes either set holds, only on k, which a verdict fixes for all of its pairs (the
smallest set among them). For 0/1 evidence a_t(y) = 1 - C(m - c, k) / C(m, k), c the number
of y's themes that match t: Hurlbert's expected richness, term by term.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln


@lru_cache(maxsize=4096)
def rarefaction_weights(m: int, k: int) -> np.ndarray:
    """P(the j-th best of m themes is the best of a random k-subset), j = 1..m:
    C(m - j, k - 1) / C(m, k); zero where m - j < k - 1. Sums to 1 (read-only: cached)."""
    if not 1 <= k <= m:
        raise ValueError(f"rarefaction needs 1 <= k <= m, got k={k}, m={m}")
    j = np.arange(1, m + 1)
    ok = m - j >= k - 1
    w = np.zeros(m)
    top = m - j[ok]
    w[ok] = np.exp(
        gammaln(top + 1) - gammaln(k) - gammaln(top - k + 2)  # C(m - j, k - 1)
        - (gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1))  # C(m, k)
    )  # fmt: skip
    w /= w.sum()
    w.flags.writeable = False
    return w


def side_values(values: np.ndarray, order: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(a_t, best_t) for each row t of an (n, m) table: a_t the rarefied best evidence over
    a random k of the m columns, best_t the column of the row's best partner. `values` is
    the evidence (0/1 or a strength), `order` what names the best partner (the similarity:
    with 0/1 evidence many columns tie)."""
    m = values.shape[1]
    return -np.sort(-values, axis=1) @ rarefaction_weights(m, k), np.argmax(order, axis=1)


def pair_values(values: np.ndarray, order: np.ndarray, k: int):
    """Both sides of one pair of sets: (a_rows, best_rows, a_cols, best_cols)."""
    a_r, b_r = side_values(values, order, k)
    a_c, b_c = side_values(values.T, order.T, k)
    return a_r, b_r, a_c, b_c


def agreement(values: np.ndarray, order: np.ndarray | None = None, k: int | None = None) -> float:
    """A(x, y) of one (n_x, n_y) table at k (default: the smaller set)."""
    values = np.asarray(values, dtype=np.float64)
    order = values if order is None else np.asarray(order, dtype=np.float64)
    k = min(values.shape) if k is None else k
    a_r, _, a_c, _ = pair_values(values, order, k)
    return float(0.5 * (a_r.mean() + a_c.mean()))
