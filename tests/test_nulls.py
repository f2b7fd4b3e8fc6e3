from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from themesim.metrics.nulls import (
    NULL_TABLE_COLUMNS,
    bh_qvalues,
    null_pvalues,
    null_table,
    significant_match_rate,
    word_salad_sets,
)

TEXTS = [
    "Trust in clinicians shapes adherence",
    "Cost barriers to care",
    "Family support during recovery and rehabilitation at home",
    "Stigma",
]


def words(texts):
    return Counter(w for t in texts for w in t.split())


def test_salad_preserves_words_and_counts():
    sets = word_salad_sets(TEXTS, k=5, seed=1)
    assert len(sets) == 5
    for salad in sets:
        assert len(salad) == len(TEXTS)
        assert words(salad) == words(TEXTS)
        assert [len(s.split()) for s in salad] == [len(t.split()) for t in TEXTS]


def test_salad_same_seed_same_sets():
    assert word_salad_sets(TEXTS, 4, seed=7) == word_salad_sets(TEXTS, 4, seed=7)


def test_salad_sets_differ():
    sets = word_salad_sets(TEXTS, 4, seed=7)
    assert len({tuple(s) for s in sets}) == 4
    assert sets != word_salad_sets(TEXTS, 4, seed=8)
    # words really move across themes
    assert any(s != TEXTS for s in sets)


def test_salad_empty_theme_and_whitespace():
    sets = word_salad_sets(["a  b\tc", "", "d"], 3, seed=0)
    for s in sets:
        assert [len(x.split()) for x in s] == [3, 0, 1]
        assert sorted(" ".join(s).split()) == ["a", "b", "c", "d"]


def test_salad_k_must_be_positive():
    with pytest.raises(ValueError):
        word_salad_sets(TEXTS, 0, seed=0)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["x", "y", "z", "w"]), max_size=6), min_size=1, max_size=5),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
)
def test_salad_property(token_lists, k, seed):
    texts = [" ".join(t) for t in token_lists]
    for salad in word_salad_sets(texts, k, seed):
        assert words(salad) == words(texts)
        assert [len(s.split()) for s in salad] == [len(t) for t in token_lists]


def test_pvalue_beats_all_nulls():
    obs = np.array([0.9, 0.5, 0.3])
    null = np.array([[0.4, 0.6, 0.3], [0.5, 0.4, 0.2], [0.1, 0.7, 0.9], [0.2, 0.5, 0.1]])
    p = null_pvalues(obs, null)
    K = 4
    assert p[0] == pytest.approx(1 / (K + 1))  # no null reaches 0.9
    assert p[1] == pytest.approx((1 + 3) / (K + 1))  # 0.6, 0.7 and a tie at 0.5 count
    assert p[2] == pytest.approx((1 + 2) / (K + 1))  # tie at 0.3 and 0.9


def test_pvalue_all_nulls_better_is_one():
    assert null_pvalues(np.array([0.1]), np.full((9, 1), 0.5))[0] == 1.0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_pvalues_in_unit_interval(n_a, k, seed):
    rng = np.random.default_rng(seed)
    # coarse values so ties happen
    obs = rng.integers(-3, 4, size=n_a) / 3
    null = rng.integers(-3, 4, size=(k, n_a)) / 3
    p = null_pvalues(obs, null)
    assert p.shape == (n_a,)
    assert ((p > 0) & (p <= 1)).all()
    assert (p >= 1 / (k + 1)).all()


@pytest.mark.parametrize(
    "obs, null",
    [
        (np.zeros((2, 2)), np.zeros((3, 2))),
        (np.zeros(2), np.zeros((3, 3))),
        (np.zeros(2), np.zeros((0, 2))),
        (np.array([np.nan, 0.0]), np.zeros((3, 2))),
    ],
    ids=["obs-2d", "shape-mismatch", "k0", "nan"],
)
def test_pvalues_bad_input(obs, null):
    with pytest.raises(ValueError):
        null_pvalues(obs, null)


def test_bh_hand_computed_and_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    # By hand, m = 4, ranks by p: 0.01 (1), 0.03 (2), 0.04 (3), 0.2 (4)
    #   p·m/rank: 0.04, 0.06, 0.05333, 0.2
    #   running min from the largest rank down: 0.2, 0.05333, min(0.06, 0.05333) = 0.05333, 0.04
    #   back in input order: [0.04, 0.05333, 0.05333, 0.2]
    q = bh_qvalues(p)
    np.testing.assert_allclose(q, [0.04, 0.16 / 3, 0.16 / 3, 0.2])
    np.testing.assert_allclose(q, multipletests(p, method="fdr_bh")[1])


def test_bh_caps_at_one_and_empty():
    np.testing.assert_allclose(bh_qvalues([1.0, 1.0]), [1.0, 1.0])
    assert bh_qvalues([]).shape == (0,)
    with pytest.raises(ValueError):
        bh_qvalues([0.5, 1.5])


def test_significant_match_rate():
    q = np.array([0.04, 0.05, 0.06, 0.2])
    assert significant_match_rate(q) == 0.5  # q ≤ 0.05 counts
    assert significant_match_rate(q, alpha=0.1) == 0.75
    assert np.isnan(significant_match_rate(np.array([])))


def test_null_table():
    rng = np.random.default_rng(0)
    K, n_a = 99, 4
    null = rng.uniform(0.2, 0.5, size=(K, n_a))
    obs = np.array([0.9, 0.3, 0.6, 0.1])
    t = null_table(obs, null)
    assert list(t.columns) == NULL_TABLE_COLUMNS
    assert len(t) == n_a
    assert t["null_significant"].dtype == bool
    assert t["null_p"].iloc[0] == pytest.approx(1 / (K + 1))
    np.testing.assert_allclose(t["null_q"], bh_qvalues(null_pvalues(obs, null)))
    np.testing.assert_allclose(t["null_best_median"], np.median(null, axis=0))
    assert list(t["null_significant"]) == [True, False, True, False]
