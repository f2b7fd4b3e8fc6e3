import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seed_examples import EX1, EX3, EX4, EX5, SUMMARY, THRESHOLD

from themesim.metrics.sets import coverage as metrics
from themesim.metrics.sets.coverage import METRIC_COLUMNS, score


def one(S, t=THRESHOLD, op="ge"):
    return score(S, [t], op).iloc[0]


@pytest.mark.parametrize("name", sorted(SUMMARY))
def test_seed_summary_table(name):
    S, paper_j, cov_f1, hung_f1, true_j = SUMMARY[name]
    r = one(S)
    assert r["raza_jaccard"] == pytest.approx(paper_j, abs=0.005)
    assert r["f1"] == pytest.approx(cov_f1, abs=0.005)
    assert r["hungarian_f1"] == pytest.approx(hung_f1, abs=0.005)
    assert r["true_jaccard"] == pytest.approx(true_j, abs=0.005)


def test_example1_perfect_5x5():
    r = one(EX1)
    assert r["n_match_pairs"] == 5
    assert r["raza_jaccard"] == pytest.approx(5 / 25)
    assert (r["recall"], r["precision"], r["hit_rate"]) == (1.0, 1.0, 1.0)
    assert r["hungarian_coverage_a"] == r["hungarian_coverage_b"] == 1.0
    assert r["bidir_max_sim_a"] == pytest.approx(0.85)
    assert r["bidir_max_sim_b"] == pytest.approx(0.85)
    assert r["matched_sim_median"] == pytest.approx(0.85)


def test_example3_asymmetric():
    r = one(EX3)
    assert r["raza_jaccard"] == pytest.approx(5 / 50)
    assert r["recall"] == 1.0 and r["precision"] == 0.5
    assert r["f1"] == pytest.approx(2 / 3)
    assert r["hungarian_coverage_a"] == 1.0 and r["hungarian_coverage_b"] == 0.5
    assert r["true_jaccard"] == pytest.approx(5 / (5 + 10 - 5))


def test_example4_many_to_many():
    r = one(EX4)
    assert r["n_match_pairs"] == 5
    assert r["raza_jaccard"] == pytest.approx(5 / 9)
    # METRICS.md: the seed prints 0.775; row and column maxima are 0.80, 0.80, 0.85.
    assert r["bidir_max_sim_a"] == pytest.approx(0.8167, abs=5e-5)
    assert r["bidir_max_sim_b"] == pytest.approx(0.8167, abs=5e-5)
    assert r["similarity_f1"] == pytest.approx(0.8167, abs=5e-5)
    rows, cols = metrics.hungarian_pairs(EX4)
    assert list(zip(rows, cols, strict=True)) == [(0, 0), (1, 1), (2, 2)]
    assert np.mean(EX4[rows, cols]) == pytest.approx(0.817, abs=5e-4)
    assert r["matched_sim_min"] == pytest.approx(0.80)
    assert r["matched_sim_max"] == pytest.approx(0.85)


def test_example5_partial():
    r = one(EX5)
    assert r["raza_jaccard"] == pytest.approx(3 / 25)
    assert r["recall"] == r["precision"] == pytest.approx(0.6)
    assert r["hungarian_n_matched"] == 3
    assert r["true_jaccard"] == pytest.approx(3 / 7)


def test_max_sum_counterexample():
    # METRICS.md: max-sum keeps the diagonal (1 match), max-cardinality keeps 2.
    S = np.array([[0.99, 0.71], [0.71, 0.60]])
    r = one(S, 0.7)
    assert r["hungarian_n_matched"] == 1
    assert r["maxcard_n_matched"] == 2
    assert r["maxcard_f1"] == 1.0
    rows, cols = metrics.max_cardinality_pairs(S, 0.7)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 1), (1, 0)]


def test_max_cardinality_tie_prefers_larger_total():
    S = np.array([[0.9, 0.8], [0.8, 0.95]])
    rows, cols = metrics.max_cardinality_pairs(S, 0.5)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 0), (1, 1)]


def test_ge_and_gt_differ_at_ties():
    S = np.array([[0.5, 0.2], [0.1, 0.5]])
    assert one(S, 0.5, "ge")["n_match_pairs"] == 2
    assert one(S, 0.5, "gt")["n_match_pairs"] == 0


def test_no_match_gives_nan_quartiles_and_zero_f1():
    r = one(EX1, 0.99)
    assert r["hungarian_n_matched"] == 0 and r["f1"] == 0 and r["hungarian_f1"] == 0
    assert np.isnan(r["matched_sim_median"])
    assert r["true_jaccard"] == 0


def test_sweep_matches_loop_per_threshold():
    rng = np.random.default_rng(3)
    S = rng.uniform(-0.2, 1, size=(7, 9))
    grid = metrics.threshold_grid()
    fast = score(S, grid)
    for t in (0.0, 0.33, 0.5, 0.81, 1.0):
        i = int(np.flatnonzero(np.isclose(grid, t))[0])
        M = S >= t
        assert fast.loc[i, "n_match_pairs"] == M.sum()
        assert fast.loc[i, "hit_rate"] == M.any(axis=1).mean()
        assert fast.loc[i, "precision"] == M.any(axis=0).mean()


def test_threshold_grid_is_exact():
    g = metrics.threshold_grid(0, 1, 0.01)
    assert len(g) == 101 and g[7] == 0.07 and g[-1] == 1.0


def test_columns_in_contract_order():
    assert list(score(EX1, [0.5]).columns) == ["threshold"] + METRIC_COLUMNS


def test_bad_matrix_rejected():
    with pytest.raises(ValueError, match="non-finite value at row 0, column 1"):
        score([[0.1, np.nan]], [0.5])
    with pytest.raises(ValueError, match="op must be"):
        score(EX1, [0.5], op="gte")


def test_theme_table_example4():
    t = metrics.theme_table(
        EX4, ["a1", "a2", "a3"], ["A1", "A2", "A3"], ["b1", "b2", "b3"], ["B1", "B2", "B3"]
    )
    a = t[t.side == "a"].set_index("theme_id")
    assert a.loc["a1", "best_match_id"] == "b1"
    assert a.loc["a1", "best_similarity"] == 0.80
    assert a.loc["a1", "second_similarity"] == 0.75
    assert a.loc["a3", "hungarian_partner_name"] == "B3"
    b = t[t.side == "b"].set_index("theme_id")
    assert b.loc["b2", "best_match_id"] == "a2" and b.loc["b3", "second_similarity"] == 0.40


# Random continuous matrices: ties between assignments have probability zero, and with
# ties the max-sum assignment (and so the Hungarian counts) is not unique.
matrices = st.builds(
    lambda seed, n, m: np.random.default_rng(seed).uniform(-1, 1, size=(n, m)),
    st.integers(0, 2**32 - 1),
    st.integers(1, 8),
    st.integers(1, 8),
)
thresholds = st.floats(-1, 1, allow_nan=False)
ops = st.sampled_from(["ge", "gt"])


@settings(max_examples=150, deadline=None)
@given(matrices, thresholds, ops)
def test_bounds(S, t, op):
    r = one(S, t, op)
    for c in METRIC_COLUMNS:
        if c.startswith(("n_", "hungarian_n", "maxcard_n", "matched_sim", "bidir", "similarity")):
            continue
        assert 0.0 <= r[c] <= 1.0, c


@settings(max_examples=150, deadline=None)
@given(matrices, thresholds, ops)
def test_raza_jaccard_symmetric_under_transpose(S, t, op):
    a, b = one(S, t, op), one(S.T, t, op)
    assert a["raza_jaccard"] == b["raza_jaccard"]
    assert a["f1"] == pytest.approx(b["f1"])
    assert a["hungarian_f1"] == pytest.approx(b["hungarian_f1"])


@settings(max_examples=150, deadline=None)
@given(matrices, thresholds, ops, st.integers(0, 2**32 - 1))
def test_invariant_to_row_and_column_order(S, t, op, seed):
    rng = np.random.default_rng(seed)
    P = S[rng.permutation(S.shape[0])][:, rng.permutation(S.shape[1])]
    a, b = score(S, [t], op), score(P, [t], op)
    np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(matrices, thresholds, ops)
def test_max_cardinality_at_least_max_sum(S, t, op):
    r = one(S, t, op)
    assert r["maxcard_n_matched"] >= r["hungarian_n_matched"]
    rows, _ = metrics.max_cardinality_pairs(S, t, op)
    assert len(rows) == r["maxcard_n_matched"]


# Five texts whose TF-IDF self-cosines come out 0.9999999999999999 / ...97 before snapping.
COPY_TEXTS = [
    "household and carers household carers shifts",
    "carers guilt money",
    "carers budget carers and costs of work sleep",
    "patience strain strain of money sleep",
    "sleep household health of family",
]


def test_a_set_and_its_copy_match_at_threshold_one_tfidf():
    # Regression (issue 15): the copy scored hungarian_f1 0.6 at 1.0 and the sweep dipped.
    from themesim.similarity import tfidf

    S = tfidf(COPY_TEXTS, list(COPY_TEXTS))
    assert np.diag(S).tolist() == [1.0] * 5
    sweep = score(S, metrics.threshold_grid(0.0, 1.0, 0.1))
    assert sweep["threshold"].iloc[-1] == 1.0
    assert sweep["hungarian_f1"].tolist() == [1.0] * 11


def test_a_set_and_its_copy_match_at_threshold_one_embeddings():
    from themesim.similarity import cosine

    rng = np.random.default_rng(7)
    E = rng.normal(size=(6, 384)).astype(np.float32)
    E /= np.linalg.norm(E, axis=1, keepdims=True)  # float32 unit rows: norms 1 +- 1e-7
    S = cosine(E, E.copy())
    assert np.diag(S).tolist() == [1.0] * 6
    assert (S[~np.eye(6, dtype=bool)] < 0.5).all()  # distinct vectors are not snapped
    assert score(S, [1.0])["hungarian_f1"].tolist() == [1.0]
    assert cosine(E[:1], -E[:1]).tolist() == [[-1.0]]


CHINESE_A = ["照顾父母影响工作", "照顾费用让家庭经济紧张"]
CHINESE_B = ["工作与照顾父母的冲突", "家庭经济压力很大"]


def test_tfidf_warns_on_chinese_words_and_char_ngrams_score_it(caplog):
    # Regression (issue 15): Chinese text scored 0 with no warning (a phrase is one word term).
    from themesim.similarity import tfidf, tfidf_options

    S = tfidf(CHINESE_A, CHINESE_B)
    assert (S == 0).all()
    assert "4 of 4 texts are in a script without spaces" in caplog.text
    assert "analyzer: char_wb" in caplog.text
    caplog.clear()
    options = tfidf_options({"kind": "tfidf", "analyzer": "char_wb"})
    assert options == {"analyzer": "char_wb", "ngram_range": (1, 3)}
    S = tfidf(CHINESE_A, CHINESE_B, **options)
    assert S[0, 0] > 0.3 and S[1, 1] > 0.25  # shared characters: 照顾父母 / 工作, 家庭经济
    assert S[0, 0] > S[0, 1] and S[1, 1] > S[1, 0]
    assert "without spaces" not in caplog.text


def test_tfidf_warns_on_a_text_without_terms(caplog):
    from themesim.similarity import tfidf

    S = tfidf(["money worries", "a !"], ["money and costs"])
    assert S[1, 0] == 0.0
    assert "1 of 3 texts have no terms and score 0 against every theme (first: 'a !')" in (
        caplog.text
    )


def test_tfidf_ngram_range_must_be_min_max():
    from themesim.errors import InputError
    from themesim.similarity import tfidf_options

    assert tfidf_options({}) == {"analyzer": "word", "ngram_range": (1, 1)}
    assert tfidf_options({"analyzer": "word", "ngram_range": [1, 2]})["ngram_range"] == (1, 2)
    with pytest.raises(InputError, match=r"methods.t.ngram_range: \[3, 1\] is not \[min, max\]"):
        tfidf_options({"ngram_range": [3, 1]}, "methods.t")
