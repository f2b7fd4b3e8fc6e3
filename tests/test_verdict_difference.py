"""The verdict's agreement (rarefied, both sides) and its difference's interval
(metrics/verdicts/rarefied.py, metrics/verdicts/difference.py): hand-computed values and
properties that can fail."""

from itertools import combinations
from math import comb

import numpy as np
import pytest
from scipy.special import stdtrit

from themesim.metrics.verdicts.difference import Study, difference, verdict, word_from_p
from themesim.metrics.verdicts.rarefied import (
    agreement,
    pair_values,
    rarefaction_weights,
    side_values,
)


def test_rarefaction_weights_by_hand():
    # P(the j-th best of 5 is the best of 2 drawn): C(5 - j, 1) / C(5, 2) = 4, 3, 2, 1, 0 / 10
    assert rarefaction_weights(5, 2) == pytest.approx([0.4, 0.3, 0.2, 0.1, 0.0])
    assert rarefaction_weights(4, 4) == pytest.approx([1, 0, 0, 0])
    assert rarefaction_weights(6, 1) == pytest.approx([1 / 6] * 6)
    with pytest.raises(ValueError):
        rarefaction_weights(3, 4)


def test_rarefied_values_equal_the_mean_over_every_subset():
    rng = np.random.default_rng(0)
    S = rng.random((4, 6))
    a_rows, _, a_cols, _ = pair_values(S, S, 3)
    rows = [np.mean([S[t, list(c)].max() for c in combinations(range(6), 3)]) for t in range(4)]
    cols = [np.mean([S[list(c), u].max() for c in combinations(range(4), 3)]) for u in range(6)]
    assert a_rows == pytest.approx(rows)
    assert a_cols == pytest.approx(cols)
    # the pair's agreement is the mean of its two sides
    assert agreement(S, k=3) == pytest.approx(0.5 * (np.mean(rows) + np.mean(cols)))


def test_zero_one_evidence_is_hurlberts_rarefaction():
    M = np.array([[1, 0, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=float)
    a, _, _, _ = pair_values(M, M, 2)
    # 1 - C(m - c, k) / C(m, k): c = 2, 0, 3 matches among m = 5
    assert a == pytest.approx([1 - comb(3, 2) / 10, 0.0, 1 - comb(2, 2) / 10])


def test_rarefying_a_subset_again_changes_nothing():
    """Averaged over every 4 of a set's 6 themes, a theme's value against those 4 at k = 2
    is its value against all 6 at k = 2: the expectation does not depend on the set's size
    when its themes are exchangeable."""
    rng = np.random.default_rng(1)
    S = rng.random((1, 6))
    whole = side_values(S, S, 2)[0][0]
    sub = np.mean([side_values(S[:, list(c)], S[:, list(c)], 2)[0][0]
                   for c in combinations(range(6), 4)])  # fmt: skip
    assert sub == pytest.approx(whole)


def _study(seed=0, K=2, R=1, n=6):
    rng = np.random.default_rng(seed)
    names = [f"a{i}" for i in range(K)]
    runs = [f"g{i}" for i in range(R)]
    tables = {}
    for i, x in enumerate(names):
        for y in runs + names[i + 1 :]:
            S = rng.random((n, n))
            tables[(x, y)] = (S, S)
    return Study(names, runs, tables)


def test_the_difference_by_hand():
    """Two analysts and one run of two themes each: D = (A(a0, g) + A(a1, g)) / 2 - A(a0, a1),
    each A the mean of both sides' best partners (k = 2: no rarefaction)."""
    g = np.array([[0.9, 0.2], [0.1, 0.5]])
    h = np.array([[0.8, 0.3], [0.4, 0.7]])
    j = np.array([[0.6, 0.1], [0.2, 0.3]])
    s = Study(["a0", "a1"], ["g"], {("a0", "g"): (g, g), ("a1", "g"): (j, j), ("a0", "a1"): (h, h)})
    res = difference(s)
    a_g = 0.5 * ((0.9 + 0.5) / 2 + (0.9 + 0.5) / 2)
    a_j = 0.5 * ((0.6 + 0.3) / 2 + (0.6 + 0.3) / 2)
    a_h = 0.5 * ((0.8 + 0.7) / 2 + (0.8 + 0.7) / 2)
    assert res.generator == pytest.approx((a_g + a_j) / 2)
    assert res.human == pytest.approx(a_h)
    assert res.difference == pytest.approx((a_g + a_j) / 2 - a_h)
    assert res.covers == ("themes",)


def test_a_pair_of_themes_that_score_each_other_is_one_unit():
    """Two sets of n themes, theme i of each on the same idea with strength s_i and nothing
    else alike: the agreement is the mean of the s_i, and its variance is s^2 / n (the
    pairs are the n units), not twice that (each theme counted as a unit of its own)."""
    s_i = np.array([0.9, 0.6, 0.75, 0.3, 0.8, 0.55])
    ev = np.diag(s_i)
    res = difference(Study(["a"], ["g"], {("a", "g"): (ev, ev)}))
    n = s_i.size
    assert res.generator == pytest.approx(s_i.mean())
    q = stdtrit(n - 1, 0.95)  # the pairs - 1 degrees of freedom
    half = q * np.sqrt(s_i.var(ddof=1) / n)
    assert res.generator_ci_low == pytest.approx(s_i.mean() - half)
    assert res.generator_ci_high == pytest.approx(s_i.mean() + half)


def test_one_analyst_gives_the_agreement_and_no_difference():
    s = _study(5, K=1, R=3)
    res = difference(s)
    assert np.isnan(res.difference)
    assert res.generator_ci_low < res.generator < res.generator_ci_high


def test_random_writers_add_their_spread():
    """From three analysts and three runs, a study whose analysts differ (one writes
    themes nobody matches well) has an analyst part above 0."""
    rng = np.random.default_rng(6)
    names, runs = ["a0", "a1", "a2"], ["g0", "g1", "g2"]
    shift = {"a0": 0.0, "a1": 0.0, "a2": -0.4}
    tables = {}
    for i, x in enumerate(names):
        for y in runs + names[i + 1 :]:
            S = np.clip(rng.random((8, 8)) * 0.5 + 0.5 + shift[x] + shift.get(y, 0.0), 0, 1)
            tables[(x, y)] = (S, S)
    res = difference(Study(names, runs, tables))
    assert res.var_analysts > 0
    assert res.covers == ("themes", "runs", "analysts")


def test_the_words_from_the_interval_and_from_the_p_values_agree():
    for seed in range(8):
        res = difference(_study(seed, K=2, R=1, n=8), margin=0.1)
        p = {k: getattr(res, k) for k in ("p_equivalent", "p_better", "p_worse", "p_non_inferior")}
        assert word_from_p(p, 0.05) == verdict(res.ci_low, res.ci_high, 0.1)


def test_verdict_words():
    assert verdict(-0.05, 0.05, 0.1) == "equivalent"
    assert verdict(0.02, 0.3, 0.1) == "better"
    assert verdict(-0.4, -0.01, 0.1) == "worse"
    assert verdict(-0.05, 0.3, 0.1) == "non-inferior"
    assert verdict(-0.3, 0.3, 0.1) == "inconclusive"
    assert verdict(np.nan, 0.1, 0.1) == ""
