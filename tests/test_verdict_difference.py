"""The verdict's agreement (rarefied, both sides) and its difference's interval
(metrics/verdicts/rarefied.py, metrics/verdicts/difference.py): hand-computed values and
properties that can fail."""

from itertools import combinations
from math import comb

import numpy as np
import pytest

from themesim.metrics.verdicts.difference import (
    Study,
    _Cell,
    _without_each_column,
    difference,
    verdict,
    word_from_p,
)
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


def test_leaving_a_column_out_is_recomputing_without_it():
    rng = np.random.default_rng(2)
    S = rng.random((3, 5))
    for k in (2, 4, 5):
        out = _without_each_column(S, k)
        for j in range(5):
            rest = np.delete(S, j, axis=1)
            want = side_values(rest, rest, min(k, 4))[0]
            assert out[:, j] == pytest.approx(want)


def test_a_cell_without_two_themes_is_recomputed():
    rng = np.random.default_rng(3)
    ev = rng.random((4, 5))
    cell = _Cell(ev, ev, 4)
    for i, j in ((0, 1), (2, None), (None, 3)):
        keep_r = [r for r in range(4) if r != i]
        keep_c = [c for c in range(5) if c != j]
        sub = ev[np.ix_(keep_r, keep_c)]
        # each side at k = 4, or at the other side's size where fewer remain
        x_side = side_values(sub, sub, min(4, sub.shape[1]))[0].mean()
        y_side = side_values(sub.T, sub.T, min(4, sub.shape[0]))[0].mean()
        assert cell.without(i, j) == pytest.approx(0.5 * (x_side + y_side))
        assert cell.without_many(
            [i] if i is not None else [], [j] if j is not None else []
        ) == pytest.approx(0.5 * (x_side + y_side))


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


def test_the_jackknife_is_over_units_left_out_whole():
    """With themes only (two analysts, one run), the variance is the delete-a-unit
    jackknife: recomputing D by hand without each unit gives the same figure."""
    from themesim.metrics.verdicts.difference import _clusters

    s = _study(4)
    res = difference(s)
    sizes = s.sizes()
    cells = {c: _Cell(*s.tables[c], min(sizes.values())) for c in s.tables}
    units = _clusters(s, cells, sizes, s.analysts + s.runs)
    reps = []
    for members in units:
        drop = {}
        for x, t in members:
            drop.setdefault(x, []).append(t)
        vals = {}
        for (x, y), (ev, _) in s.tables.items():
            keep_x = [i for i in range(ev.shape[0]) if i not in drop.get(x, [])]
            keep_y = [i for i in range(ev.shape[1]) if i not in drop.get(y, [])]
            sub = ev[np.ix_(keep_x, keep_y)]
            k = min(sizes.values())
            vals[(x, y)] = 0.5 * (
                side_values(sub, sub, min(k, sub.shape[1]))[0].mean()
                + side_values(sub.T, sub.T, min(k, sub.shape[0]))[0].mean()
            )
        reps.append((vals[("a0", "g0")] + vals[("a1", "g0")]) / 2 - vals[("a0", "a1")])
    reps = np.array(reps)
    g = reps.size
    assert res.se**2 == pytest.approx((g - 1) / g * ((reps - reps.mean()) ** 2).sum())
    assert res.df == pytest.approx(g - 1)


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
