from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from themesim.metrics.sets.nulls import (
    EMPIRICAL,
    FLOOR,
    GPD,
    NULL_TABLE_COLUMNS,
    bh_qvalues,
    defined_sets,
    fit_tail,
    null_best_median,
    null_pvalues,
    null_table,
    significant_match_rate,
    theme_pvalues,
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


# Four salad sets of n_b = 3 texts (pool order: set k is columns 3k..3k+2) and their bests.
SETS = np.array([[0.1, 0.5, 0.2], [0.3, 0.2, 0.1], [0.7, 0.0, 0.1], [0.4, 0.4, 0.6]])
POOL12 = SETS.ravel()  # bests 0.5, 0.3, 0.7, 0.6


def test_pvalue_rank_over_whole_salad_sets_hand_computed():
    # K = 4 sets; p = (1 + #{set bests >= obs}) / 5:
    #   0.3 -> all four bests >= 0.3 -> 5/5; 0.55 -> 0.7 and 0.6 -> 3/5;
    #   0.6 -> 0.7 and the tie 0.6 -> 3/5; 0.65 -> 0.7 -> 2/5.
    obs = np.array([0.3, 0.55, 0.6, 0.65])
    p, how = theme_pvalues(obs, POOL12, n_b=3)
    np.testing.assert_allclose(p, [1.0, 0.6, 0.6, 0.4])
    assert list(how) == [EMPIRICAL] * 4
    np.testing.assert_allclose(null_pvalues(obs, np.tile(POOL12, (4, 1)), 3), p)


def test_pvalue_trailing_partial_set_is_left_out():
    # 14 texts with n_b = 3: four whole sets, the last two texts (0.99, 0.99) are no set.
    row = np.r_[POOL12, 0.99, 0.99]
    np.testing.assert_allclose(theme_pvalues([0.55], row, 3)[0], [0.6])


def test_pvalue_is_exact_under_exchangeable_sets():
    # K + 1 exchangeable salad sets: each in turn plays B against the other K. Its p is
    # (1 + #{others' bests >= its best}) / (K + 1), so the K + 1 values are 1/(K+1) ... 1,
    # each once (the top one from the tail, at most 1/(K+1)): P(p <= j/(K+1)) = j/(K+1).
    rng = np.random.default_rng(4)
    n_b, k = 5, 30
    sets = rng.normal(0.3, 0.1, (k + 1, n_b))
    p = np.array(
        [
            theme_pvalues([sets[j].max()], np.delete(sets, j, axis=0).ravel(), n_b)[0][0]
            for j in range(k + 1)
        ]
    )
    order = np.sort(p)
    np.testing.assert_allclose(order[1:], np.arange(2, k + 2) / (k + 1))
    assert 0 < order[0] <= 1 / (k + 1)


def test_pvalue_beyond_the_pool_from_the_tail_hand_computed():
    # A pool whose top is GPD(-0.4)-shaped (quantile grid): the free fit is bounded, so the
    # tail used is exponential (shape -0.4 plus one standard error 0.6/sqrt(50) is still
    # below 0), with the scale of the top 10 exceedances (5 % of 200) raised by 1/sqrt(10).
    q = (np.arange(1, 51) - 0.5) / 50
    top = 0.5 + 0.1 / -0.4 * ((1 - q) ** 0.4 - 1)  # GPD(shape -0.4, scale 0.1) quantiles
    pool = np.r_[np.linspace(0.0, 0.49, 150), top]
    pool = np.random.default_rng(0).permutation(pool)  # sets mix body and tail
    tail = fit_tail(pool)
    assert tail.n_fit == 50 and tail.shape_fit < -0.3 and tail.shape == 0.0
    x = np.sort(pool)
    u = x[-11]
    assert tail.u == u and tail.n_u == 10
    scale = (x[-10:] - u).mean() * (1 + 1 / np.sqrt(10))
    assert tail.scale == pytest.approx(scale, rel=1e-12)
    n_b, obs = 4, 0.8
    p, how = theme_pvalues([obs], pool, n_b)
    expected = min(1 / 51, n_b * 10 / 200 * np.exp(-(obs - u) / scale))
    assert p[0] == pytest.approx(expected, rel=1e-9) and how[0] == GPD
    assert p[0] < 1 / 51  # below what the ranks alone can give


def test_tail_shape_is_raised_by_one_standard_error_and_never_bounded():
    rng = np.random.default_rng(3)
    for pool in (rng.pareto(3.0, 200), rng.normal(0.3, 0.1, 200), rng.beta(2, 5, 200)):
        tail = fit_tail(pool)
        assert tail.shape >= 0.0
        up = tail.shape_fit + (1 + tail.shape_fit) / np.sqrt(tail.n_fit)
        assert tail.shape == pytest.approx(max(0.0, up))
        assert tail.survival(10.0 * pool.max()) > 0  # no finite end point: p is never 0


def test_pvalue_floor_when_no_tail_passes():
    # The top 60 values are tied: no tail size has spread to fit, so beyond every set best
    # p stays at the ranks' floor 1 / (K + 1), flagged.
    pool = np.r_[np.linspace(0.0, 0.2, 140), np.full(60, 0.3)]
    assert fit_tail(pool) is None
    p, how = theme_pvalues([0.5], pool, 4)
    assert p[0] == 1 / 51 and how[0] == FLOOR


def test_pvalue_below_every_pool_value_is_one():
    pool = np.random.default_rng(5).uniform(0, 1, (2, 200))
    p = null_pvalues(np.array([-0.1, 0.0]), pool, n_b=7)
    np.testing.assert_array_equal(p, [1.0, 1.0])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(12, 120))
def test_pvalue_monotone_in_obs_and_in_unit_interval(seed, n_b, size):
    rng = np.random.default_rng(seed)
    pool = np.round(rng.normal(0.3, 0.1, size), 2)  # rounded so ties happen
    obs = np.linspace(-0.2, 1.2, 57)
    p, _ = theme_pvalues(obs, pool, n_b)
    k = size // n_b
    assert ((p > 0) & (p <= 1)).all()
    assert (np.diff(p) <= 1e-12).all()
    assert p[0] == 1.0 and p[-1] <= 1 / (k + 1)


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
        (np.zeros(2), np.zeros((2, 20)), 30),
    ],
    ids=["obs-2d", "shape-mismatch", "pool-too-small", "n_b-0", "nan", "no-whole-set"],
)
def test_pvalues_bad_input(obs, pool, n_b):
    with pytest.raises(ValueError):
        null_pvalues(obs, pool, n_b)


def test_pool_made_of_whole_salad_sets():
    # 10 asked of a set of 4 themes: ceil(10 / 4) = 3 whole salad sets, 12 texts (the fix
    # for a trailing partial set, which had too few texts for a within-set spread).
    pool, like = word_salad_pool(TEXTS, 10, seed=4)
    sets = word_salad_sets(TEXTS, 3, seed=4)
    assert pool == [t for s in sets for t in s]
    assert like == [0, 1, 2, 3] * 3
    assert [len(t.split()) for t in pool] == [len(TEXTS[i].split()) for i in like]
    for k in range(3):
        assert words(pool[4 * k : 4 * k + 4]) == words(TEXTS)
    assert len(word_salad_pool(TEXTS, 12, seed=4)[0]) == 12


def test_pool_same_seed_same_p_values():

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


def test_z_scale_pool_standardised_within_each_salad_set(tmp_path):
    """Regression: under scale z a pool text was standardised against all P - 1 other pool
    texts; it is standardised against the n_b - 1 other texts of its own salad set, as a
    real B theme is against B's others (docs/thresholds.md)."""
    from themesim.embed.vectors import write_vector_table
    from themesim.kinds import get as get_kind
    from themesim.metrics.sets.scales import z_scale
    from themesim.similarity import cosine

    rng = np.random.default_rng(1)

    def unit(n):
        x = rng.normal(size=(n, 8))
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    emb_a, null = unit(5), unit(12)  # n_b = 4: three salad sets of 4 texts
    W_a = cosine(emb_a, emb_a)
    path = tmp_path / "null.parquet"
    write_vector_table(path, {"text": [f"t{i}" for i in range(12)]}, null, {})
    b = pd.DataFrame({"theme_id": ["B0", "B1", "B2", "B3"]})

    def scale(M, W_null):
        return z_scale(M, W_a, W_null)[0]

    got = get_kind("sentence_transformer").null_pool(None, b, path, 12, 0, scale, emb_a)
    null = null.astype(np.float32)  # as the file stores them
    S = cosine(emb_a, null)
    W = cosine(null, null)
    for k in range(3):
        s = slice(4 * k, 4 * k + 4)
        np.testing.assert_allclose(got[:, s], z_scale(S[:, s], W_a, W[s, s])[0])
    whole_pool = z_scale(S, W_a, W)[0]  # the old standardisation
    assert not np.allclose(got, whole_pool)


def test_tfidf_pool_on_the_z_scale_is_defined_for_every_text():
    """Regression: with pool 10 and B of 4 themes the last TF-IDF chunk held 2 texts, too
    few for a within-set spread, so under z the whole null silently went NaN (and was
    dropped); the pool is now 3 whole salad sets of 4."""
    from themesim.kinds import get as get_kind
    from themesim.metrics.sets.scales import z_scale
    from themesim.similarity import tfidf

    a = pd.DataFrame(
        {
            "text": [
                "care for a parent at home",
                "money worries about paying for care",
                "guilt and respite from care",
                "work and shifts around a parent",
            ]
        }
    )
    b = pd.DataFrame(
        {
            "text": [
                "care at home for an older parent",
                "paying for care at home strains money",
                "guilt about respite and care",
                "work shifts around caring for a parent",
            ]
        }
    )
    W_a = tfidf(a["text"].tolist(), None)

    def scale(M, W_null):
        return z_scale(M, W_a, W_null)[0]

    sims = get_kind("tfidf").null_pool(a, b, None, 10, 0, scale, None)
    assert sims.shape == (4, 12) and np.isfinite(sims).all()


def test_salad_sets_with_an_undefined_z_are_left_out():
    # Set 1 (columns 3-5) has a text without a within-set spread (NaN on the z scale): a
    # real B like it would not be scored, so the null leaves that whole set out.
    pool = np.tile(POOL12, (2, 1))
    pool[:, 4] = np.nan
    kept, dropped = defined_sets(pool, 3)
    assert dropped == 1
    np.testing.assert_array_equal(kept, np.tile(np.r_[SETS[0], SETS[2], SETS[3]], (2, 1)))
    full = np.tile(POOL12, (2, 1))
    assert defined_sets(full, 3)[1] == 0 and np.array_equal(defined_sets(full, 3)[0], full)


def test_metrics_step_leaves_out_undefined_salad_sets_and_says_so(caplog):
    from themesim.steps.metrics import _defined_null

    pool = np.tile(np.r_[POOL12, POOL12], (2, 1))  # 8 sets of 3
    pool[:, 4] = np.nan
    with caplog.at_level("INFO", logger="themesim"):
        kept = _defined_null("m", "a", "b", pool, 3)
    assert kept.shape == (2, 21) and "1 of the 8 word-salad sets of b" in caplog.text
    caplog.clear()
    pool[:, 1::3] = np.nan  # every set: too few texts left for a null
    with caplog.at_level("WARNING", logger="themesim"):
        assert _defined_null("m", "a", "b", pool, 3) is None
    assert "no null p-values" in caplog.text and "metrics.null_model.pool" in caplog.text


def test_metrics_step_names_themes_at_the_floor(caplog):
    from themesim.metrics.comparison import Settings
    from themesim.steps.metrics import _log_null_resolution

    pool = np.r_[np.linspace(0.0, 0.2, 140), np.full(60, 0.3)]
    null = null_table(np.array([0.5, 0.1]), np.vstack([pool, pool]), 4)
    assert list(null["null_tail"]) == [FLOOR, EMPIRICAL]
    with caplog.at_level("INFO", logger="themesim"):
        _log_null_resolution("m", "a", "b", null, 200, 4, Settings(thresholds=[0.5]))
    assert "1 theme(s) of a beat every word-salad set" in caplog.text
    assert "1/51" in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="themesim"):  # 12 sets of 16: 1/13 > 0.05
        _log_null_resolution("m", "a", "b", null, 192, 16, Settings(thresholds=[0.5]))
    assert "holds 12 word-salad sets" in caplog.text and "pool: 320" in caplog.text


def test_metrics_step_warns_where_the_tail_is_heavy(caplog):
    from scipy.stats import genpareto

    from themesim.metrics.comparison import Settings
    from themesim.steps.metrics import _log_null_resolution

    heavy = genpareto.ppf((np.arange(200) + 0.5) / 200, 0.3)  # shape 0.3: a heavy tail
    light = np.linspace(0.0, 1.0, 200)  # ends at 1
    obs = np.array([heavy.max() + 1.0, light.max() + 0.5])
    pools = np.vstack([heavy, light])
    null = null_table(obs, pools, 4)
    assert list(null["null_tail"]) == [GPD, GPD]
    with caplog.at_level("WARNING", logger="themesim"):
        _log_null_resolution("m", "a", "b", null, 200, 4, Settings(thresholds=[0.5]), pools)
    assert "1 theme(s) of a take null_p from a heavy word-salad tail" in caplog.text
    import re

    shape = float(re.search(r"shape up to ([0-9.]+)", caplog.text).group(1))
    assert 0.2 < shape < 0.4  # the fit of 50 exceedances of a GPD(0.3) quantile grid
