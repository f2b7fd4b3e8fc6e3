from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from themesim.metrics.nulls import (
    NULL_TABLE_COLUMNS,
    bh_qvalues,
    null_best_median,
    null_pvalues,
    null_table,
    significant_match_rate,
    word_salad_pool,
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


UNIFORM = np.arange(200) / 200  # 0, 0.005, ..., 0.995


def test_pvalue_empirical_body_hand_computed():
    # u = the 160th value, 0.795 (40 values above it); 0.5 lies in the empirical body:
    # s = #{x >= 0.5} / 200 = 0.5, p = 1 - (1 - 0.5)^5.
    p = null_pvalues(np.array([0.5, 0.795]), np.vstack([UNIFORM, UNIFORM]), n_b=5)
    assert p[0] == pytest.approx(1 - 0.5**5)
    assert p[1] == pytest.approx(1 - (1 - 41 / 200) ** 5)


def test_pvalue_beyond_the_pool_from_the_tail_hand_computed():
    # The exceedances 0.005..0.2 are uniform: the free GPD fit has a negative shape (a finite
    # end point), so the exponential tail with scale = mean exceedance = 0.1025 is used.
    # s(1.5) = 40/200 * exp(-(1.5 - 0.795) / 0.1025); p = 1 - (1 - s)^5.
    s = 0.2 * np.exp(-(1.5 - 0.795) / 0.1025)
    p = null_pvalues(np.array([1.5]), UNIFORM[None, :], n_b=5)[0]
    assert p == pytest.approx(1 - (1 - s) ** 5, rel=1e-9)
    assert 0 < p < 5 / 200  # below what the empirical form alone can give


def test_pvalue_heavy_tail_uses_the_fitted_shape():
    # A Pareto-like pool: the fitted shape is positive and p beyond the pool stays positive,
    # smaller than the empirical resolution and larger than the exponential tail would give.
    pool = np.sort(np.random.default_rng(3).pareto(3.0, 200))
    obs = pool[-1] * 2
    p = null_pvalues(np.array([obs]), pool[None, :], n_b=4)[0]
    u = pool[-41]
    expo = 0.2 * np.exp(-(obs - u) / (pool[-40:] - u).mean())
    assert 1 - (1 - expo) ** 4 < p < 4 / 200


def test_pvalue_below_every_pool_value_is_one():
    p = null_pvalues(np.array([-0.1, 0.0]), np.vstack([UNIFORM + 0.01, UNIFORM]), n_b=7)
    np.testing.assert_array_equal(p, [1.0, 1.0])


def test_pvalue_tied_top_of_the_pool():
    # 150 zeros and 50 values of 0.3: u = 0.3 and the exceedances have no spread.
    pool = np.r_[np.zeros(150), np.full(50, 0.3)][None, :]
    p_at, p_above = (null_pvalues(np.array([x]), pool, n_b=3)[0] for x in (0.3, 0.5))
    assert p_at == pytest.approx(1 - (1 - 50 / 200) ** 3)
    assert p_above == pytest.approx(1 - (200 / 201) ** 3)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(10, 120))
def test_pvalue_monotone_in_obs_and_in_unit_interval(seed, n_b, size):
    rng = np.random.default_rng(seed)
    pool = np.round(rng.normal(0.3, 0.1, size), 2)  # rounded so ties happen
    obs = np.linspace(-0.2, 1.2, 57)
    p = null_pvalues(obs, np.tile(pool, (obs.size, 1)), n_b)
    assert ((p >= 0) & (p <= 1)).all()
    assert (np.diff(p) <= 1e-12).all()
    assert p[0] == 1.0 and p[-1] < 1 - (1 - 1 / size) ** n_b


def test_pvalue_grows_with_n_b():
    pool = np.random.default_rng(0).normal(0.3, 0.05, (1, 200))
    p = [null_pvalues(np.array([0.4]), pool, n)[0] for n in (1, 5, 20)]
    assert p[0] < p[1] < p[2]


@pytest.mark.parametrize(
    "obs, pool, n_b",
    [
        (np.zeros((2, 2)), np.zeros((2, 20)), 3),
        (np.zeros(2), np.zeros((3, 20)), 3),
        (np.zeros(2), np.zeros((2, 5)), 3),
        (np.zeros(2), np.zeros((2, 20)), 0),
        (np.array([np.nan, 0.0]), np.zeros((2, 20)), 3),
    ],
    ids=["obs-2d", "shape-mismatch", "pool-too-small", "n_b-0", "nan"],
)
def test_pvalues_bad_input(obs, pool, n_b):
    with pytest.raises(ValueError):
        null_pvalues(obs, pool, n_b)


def test_pool_made_like_the_salad_sets():
    pool, like = word_salad_pool(TEXTS, 10, seed=4)
    sets = word_salad_sets(TEXTS, 3, seed=4)
    assert pool == [t for s in sets for t in s][:10]
    assert like == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert [len(t.split()) for t in pool] == [len(TEXTS[i].split()) for i in like]
    assert words(pool[:4]) == words(TEXTS)


def test_pool_same_seed_same_p_values():
    import pandas as pd

    from themesim.kinds import get as get_kind

    a = pd.DataFrame({"text": ["trust in clinicians", "family support at home", "stigma"]})
    b = pd.DataFrame({"text": TEXTS})
    kind = get_kind("tfidf")
    sims = [kind.null_pool(a, b, None, 60, seed, lambda M, W: M, None) for seed in (5, 5, 6)]
    assert sims[0].shape == (3, 60)
    obs = np.array([0.6, 0.4, 0.2])
    p = [null_pvalues(obs, s, len(b)) for s in sims]
    np.testing.assert_array_equal(p[0], p[1])
    assert not np.array_equal(sims[0], sims[2])
    assert kind.null_pool(a, b, None, 0, 5, lambda M: M, None) is None


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
    n_a, n_b = 4, 6
    pool = rng.uniform(0.2, 0.5, size=(n_a, 200))
    obs = np.array([0.9, 0.3, 0.6, 0.1])
    t = null_table(obs, pool, n_b)
    assert list(t.columns) == NULL_TABLE_COLUMNS
    assert len(t) == n_a
    assert t["null_significant"].dtype == bool
    assert t["null_p"].iloc[3] == 1.0
    np.testing.assert_allclose(t["null_q"], bh_qvalues(null_pvalues(obs, pool, n_b)))
    # The median of the best of n_b draws: the pool quantile at 0.5^(1/n_b).
    np.testing.assert_allclose(t["null_best_median"], np.quantile(pool, 0.5 ** (1 / n_b), axis=1))
    assert list(t["null_significant"]) == [True, False, True, False]


def test_null_best_median_matches_simulated_maxima():
    pool = np.random.default_rng(1).normal(0.3, 0.05, 200)
    draws = np.random.default_rng(2).choice(pool, size=(40000, 8)).max(axis=1)
    assert null_best_median(pool[None, :], 8)[0] == pytest.approx(np.median(draws), abs=0.003)


def test_deprecated_k_is_read_with_a_warning(caplog):
    from themesim.errors import InputError
    from themesim.metrics.settings import metrics_settings

    with caplog.at_level("WARNING", logger="themesim"):
        off = metrics_settings({"null_model": {"k": 0, "seed": 3}})
    assert off["null_model"] == {"pool": 0, "seed": 3, "alpha": 0.05}
    assert "metrics.null_model.k is deprecated" in caplog.text and "pool: 0" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="themesim"):
        on = metrics_settings({"null_model": {"k": 100}})
    assert on["null_model"] == {"pool": 200, "seed": 0, "alpha": 0.05}
    assert "k: 100 is ignored" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="themesim"):
        assert metrics_settings({"null_model": {"pool": 50}})["null_model"]["pool"] == 50
    assert caplog.text == ""
    with pytest.raises(InputError, match="metrics.null_model.pool"):
        metrics_settings({"null_model": {"pool": 5}})
