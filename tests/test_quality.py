"""Theme-set quality: seed 001's toy examples and the edge cases METRICS.md defines."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from themesim.metrics.sets.quality import (
    SET_QUALITY_KEYS,
    THEME_QUALITY_COLUMNS,
    KeywordDocuments,
    assign_to_nearest,
    distribution_diversity,
    keyword_importance,
    npmi_from_counts,
    npmi_keywords,
    semantic_coherence,
    semantic_coherence_from_sim,
    semantic_distinctiveness,
    semdiv,
    set_quality,
    top_tfidf_terms,
)

# Seed 001, example 1: machine / learning / algorithm.
S_KW = np.array([[1.0, 0.85, 0.82], [0.85, 1.0, 0.88], [0.82, 0.88, 1.0]])
# Seed 001, examples 2-3: T1 (ML), T2 (quantum physics), T3 (neural networks).
THEME_SIM = np.array([[1.0, 0.245, 0.782], [0.245, 1.0, 0.198], [0.782, 0.198, 1.0]])
ASSIGNMENTS = np.array([0, 0, 1, 0, 2, 2, 1, 2, 0, 1])


def embeddings_for(S: np.ndarray) -> np.ndarray:
    """Unit rows whose Gram matrix is S (S must be positive definite)."""
    return np.linalg.cholesky(S)


# --- semantic coherence ------------------------------------------------------------------


def test_sc_seed_toy_example():
    assert round(semantic_coherence_from_sim(S_KW), 3) == 0.892
    assert semantic_coherence_from_sim(S_KW) == pytest.approx(0.8917, abs=5e-5)


def test_sc_without_unit_indirect_diagonal_is_0873():
    # METRICS.md, known errors: keeping (S @ S / n)_ii on the diagonal gives 0.873.
    sc = semantic_coherence_from_sim(S_KW, indirect_unit_diagonal=False)
    assert round(sc, 3) == 0.873


def test_pagerank_weights_are_networkx_not_the_seeds():
    # The seed prints 0.32 / 0.36 / 0.32; weighted PageRank gives 0.328 / 0.339 / 0.333.
    lam = keyword_importance(S_KW)
    np.testing.assert_allclose(lam, [0.328, 0.339, 0.333], atol=5e-4)
    assert lam.sum() == pytest.approx(1.0)
    assert lam.argmax() == 1  # "learning" is still the most central keyword


def test_sc_from_embeddings_matches_sim():
    assert semantic_coherence(embeddings_for(S_KW)) == pytest.approx(
        semantic_coherence_from_sim(S_KW), abs=1e-12
    )


def test_sc_undefined_for_fewer_than_two_keywords():
    assert math.isnan(semantic_coherence_from_sim(np.ones((1, 1))))
    assert math.isnan(semantic_coherence(np.array([[1.0, 0.0]])))
    assert math.isnan(semantic_coherence(np.zeros((0, 4))))


def test_no_edges_gives_uniform_importance():
    S = np.array([[1.0, 0.1, 0.2], [0.1, 1.0, 0.05], [0.2, 0.05, 1.0]])
    np.testing.assert_allclose(keyword_importance(S), [1 / 3] * 3)
    # With uniform weights SC is the plain mean of S_h over all n^2 cells.
    S_ind = S @ S / 3
    np.fill_diagonal(S_ind, 1.0)
    expected = (0.7 * S + 0.3 * S_ind).mean()
    assert semantic_coherence_from_sim(S) == pytest.approx(expected)


def test_identical_keywords_are_fully_coherent():
    assert semantic_coherence_from_sim(np.ones((4, 4))) == pytest.approx(1.0)


def test_sc_rejects_bad_input():
    with pytest.raises(ValueError):
        semantic_coherence_from_sim(np.ones((2, 3)))
    with pytest.raises(ValueError):
        semantic_coherence_from_sim(S_KW, edge_threshold=-0.1)


# --- keywords from TF-IDF ----------------------------------------------------------------


def test_top_tfidf_terms_exact_words_and_alphabetical_ties():
    texts = [
        "Trust in the nurses and trust in doctors",
        "Waiting times at the clinic were long",
        "Doctors explained the waiting list",
    ]
    # Smooth idf over 3 texts: df 1 -> 1.693, df 2 ("doctors", "waiting") -> 1.288.
    # Text 1: trust 2 x 1.693 > nurses 1.693 > doctors 1.288.
    # Text 2: clinic = long = times = 1.693 (tie -> alphabetical) > waiting.
    # Text 3: explained = list > doctors = waiting (tie -> "doctors").
    assert top_tfidf_terms(texts, k=3) == [
        ["trust", "nurses", "doctors"],
        ["clinic", "long", "times"],
        ["explained", "list", "doctors"],
    ]
    assert top_tfidf_terms(texts, k=3) == top_tfidf_terms(texts, k=3)


def test_top_tfidf_terms_short_and_stopword_texts():
    assert top_tfidf_terms(["patients", "the and of"], k=5) == [["patients"], []]
    assert top_tfidf_terms(["the and", "of it"]) == [[], []]
    assert top_tfidf_terms([]) == []


# --- distinctiveness and diversity -------------------------------------------------------


def test_sd_seed_toy_example():
    SD, sd_mean = semantic_distinctiveness(THEME_SIM)
    assert SD[0, 1] == pytest.approx(0.3775)  # the seed rounds to 0.378
    assert SD[0, 2] == pytest.approx(0.109)
    assert SD[1, 2] == pytest.approx(0.401)
    assert round(sd_mean, 3) == 0.296
    np.testing.assert_array_equal(SD, SD.T)


def test_sd_diagonal_follows_the_formula_not_the_seed():
    # Seed 001 prints 0.500 on the diagonal, but (1 - cos(T, T)) / 2 = 0.
    SD, _ = semantic_distinctiveness(THEME_SIM)
    np.testing.assert_array_equal(np.diag(SD), 0.0)


def test_sd_single_theme_is_nan():
    SD, sd_mean = semantic_distinctiveness(np.ones((1, 1)))
    assert SD.shape == (1, 1) and math.isnan(sd_mean)


def test_distribution_diversity_seed_toy_example():
    # H = -(0.4 ln 0.4 + 2 * 0.3 ln 0.3) = 1.0889; / ln 3 = 0.99116. The seed prints 0.990
    # because it divides the rounded 1.088 by the rounded 1.099 (= 0.99003).
    value = distribution_diversity(ASSIGNMENTS, 3)
    assert value == pytest.approx(0.99116, abs=1e-5)
    assert abs(value - 0.990) < 2e-3


def test_distribution_diversity_edge_cases():
    assert distribution_diversity([0, 1, 2, 3], 4) == pytest.approx(1.0)
    assert distribution_diversity([1, 1, 1], 3) == 0.0
    # An empty topic counts: two of three topics used evenly -> ln 2 / ln 3.
    assert distribution_diversity([0, 1], 3) == pytest.approx(math.log(2) / math.log(3))
    assert math.isnan(distribution_diversity(np.array([], dtype=int), 3))
    assert math.isnan(distribution_diversity([0, 0], 1))
    with pytest.raises(ValueError):
        distribution_diversity([0, 3], 3)


def test_semdiv_seed_toy_example():
    # 0.5 * 0.29583 + 0.5 * 0.99116 = 0.64350
    value = semdiv(THEME_SIM, ASSIGNMENTS)
    assert round(value, 3) == 0.643
    assert semdiv(THEME_SIM, ASSIGNMENTS, alpha=1.0, beta=0.0) == pytest.approx(0.29583, abs=1e-5)


def test_assign_to_nearest_first_on_ties():
    themes = np.eye(3)
    segs = np.array([[0.0, 1.0, 0.0], [0.6, 0.0, 0.8], [1.0, 1.0, 0.0]])
    np.testing.assert_array_equal(assign_to_nearest(segs, themes), [1, 2, 0])
    assert assign_to_nearest(np.zeros((0, 3)), themes).size == 0


# --- NPMI --------------------------------------------------------------------------------


def test_npmi_seed_toy_example():
    assert round(npmi_from_counts(450, 1200, 1500, 10000), 3) == 0.295


def test_npmi_edge_cases():
    assert npmi_from_counts(0, 3, 4, 10) == -1.0  # never together
    assert npmi_from_counts(10, 10, 10, 10) == 1.0  # P(i, j) = 1
    assert math.isnan(npmi_from_counts(0, 0, 4, 10))  # a word that never occurs
    assert npmi_from_counts(5, 5, 5, 10) == pytest.approx(1.0)  # always together
    # Independent words: P(i, j) = P(i) P(j) -> 0.
    assert npmi_from_counts(25, 50, 50, 100) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError):
        npmi_from_counts(6, 5, 7, 10)


def test_npmi_keywords_whole_words_and_phrases():
    docs = [
        "Waiting times were long at the clinic.",
        "The clinic staff were kind.",
        "Long waiting lists again",
        "Nothing relevant; the clinician was away.",
    ]
    # "waiting" in docs 0, 2; "clinic" in 0, 1 (not "clinician"); pair together in doc 0.
    expected = npmi_from_counts(1, 2, 2, 4)
    assert npmi_keywords(["Waiting", "clinic"], docs) == pytest.approx(expected)
    # Phrase match; "Waiting times" occurs once, with "clinic" in the same doc.
    assert npmi_keywords(["waiting times", "clinic"], docs) == pytest.approx(
        npmi_from_counts(1, 1, 2, 4)
    )
    # Keyword that never occurs is left out: only the (waiting, clinic) pair remains.
    assert npmi_keywords(["waiting", "clinic", "money"], docs) == pytest.approx(expected)


def test_npmi_keywords_nan_cases():
    docs = ["one doc about trust"]
    assert math.isnan(npmi_keywords(["trust"], docs))
    assert math.isnan(npmi_keywords(["trust", "Trust"], docs))  # duplicates collapse
    assert math.isnan(npmi_keywords(["money", "time"], docs))
    assert math.isnan(npmi_keywords(["trust", "doc"], []))


def test_npmi_keywords_non_word_edges():
    docs = ["I write c++ code", "c++ and rust", "just rust"]
    assert npmi_keywords(["c++", "rust"], docs) == pytest.approx(npmi_from_counts(1, 2, 2, 3))


def test_keyword_documents_as_one_search_per_document():
    """The joined text finds exactly the documents a search of each finds: no phrase across
    two documents (one ends "long waiting", the next starts "times"), a keyword at a
    document's very start and end, a NUL inside a document (searched one by one), and each
    keyword's occurrences kept for the next theme."""
    import re

    docs = ["Long waiting", "times at the clinic", "clinic", "", "c++ and\trust", "waiting\ntimes"]
    index = KeywordDocuments(docs)
    for kw in ["waiting times", "clinic", "c++", "rust", "waiting", "times at", "t"]:
        body = r"\s+".join(re.escape(w) for w in kw.split())
        want = [bool(re.search(rf"(?<!\w){body}(?!\w)", d.lower())) for d in docs]
        assert index.occurs(kw).tolist() == want, kw
        assert KeywordDocuments(docs + ["a\x00clinic"]).occurs(kw).tolist()[:-1] == want
    assert index.occurs("waiting times").tolist() == [False] * 5 + [True]
    assert index.occurs("clinic") is index.occurs("clinic")  # searched once
    assert npmi_keywords(["clinic", "times"], index) == npmi_keywords(["clinic", "times"], docs)


# --- one set -----------------------------------------------------------------------------


def test_set_quality_reproduces_the_seed_examples():
    theme_emb = embeddings_for(THEME_SIM)
    # Ten segments, each a copy of its theme's embedding, so they land on ASSIGNMENTS.
    seg_emb = theme_emb[ASSIGNMENTS]
    kw_emb = embeddings_for(S_KW)
    keywords = [["machine", "learning", "algorithm"], ["quantum", "physics"], ["neural"]]
    texts = ["machine learning"] * 3 + ["machine"] * 2 + ["quantum physics"] * 5
    set_dict, per_theme = set_quality(
        keywords,
        [kw_emb, embeddings_for(np.array([[1.0, 0.5], [0.5, 1.0]])), np.eye(1, 3)],
        theme_emb,
        seg_emb,
        texts,
        theme_names=["T1", "T2", "T3"],
    )
    assert list(set_dict) == SET_QUALITY_KEYS
    assert list(per_theme.columns) == THEME_QUALITY_COLUMNS
    assert round(set_dict["semdiv"], 3) == 0.643
    assert round(set_dict["sd_mean"], 3) == 0.296
    assert set_dict["semdiv_semantic"] == set_dict["sd_mean"]
    assert set_dict["semdiv_distribution"] == pytest.approx(0.99116, abs=1e-5)
    assert set_dict["n_segments_assigned"] == 10
    assert per_theme["n_segments"].tolist() == [4, 3, 3]
    assert round(per_theme.loc[0, "sc"], 3) == 0.892
    assert math.isnan(per_theme.loc[2, "sc"])  # one keyword
    # sc_mean / sc_median skip the undefined theme.
    sc_t2 = per_theme.loc[1, "sc"]
    assert set_dict["sc_mean"] == pytest.approx((per_theme.loc[0, "sc"] + sc_t2) / 2)
    assert set_dict["sc_median"] == pytest.approx(set_dict["sc_mean"])
    # NPMI: T1 pairs over 10 docs: machine(5)/learning(3) together 3, algorithm never occurs.
    assert per_theme.loc[0, "npmi"] == pytest.approx(npmi_from_counts(3, 5, 3, 10))
    assert per_theme.loc[1, "npmi"] == pytest.approx(1.0)  # P(i, j) = P(i) = P(j) = 0.5
    assert math.isnan(per_theme.loc[2, "npmi"])
    assert set_dict["npmi_mean"] == pytest.approx((per_theme.loc[0, "npmi"] + 1.0) / 2)


def test_set_quality_without_segments_and_one_theme():
    set_dict, per_theme = set_quality(
        [["a", "b"]], [np.eye(2, 4)], np.eye(1, 4), np.zeros((0, 4)), []
    )
    assert per_theme["theme"].tolist() == ["T1"]
    assert set_dict["n_segments_assigned"] == 0
    for key in ("sd_mean", "semdiv", "semdiv_distribution", "npmi_mean"):
        assert math.isnan(set_dict[key]), key
    assert not math.isnan(set_dict["sc_mean"])


def test_set_quality_theme_without_keywords():
    set_dict, per_theme = set_quality(
        [[], ["x", "y"]], [np.zeros((0, 2)), np.eye(2)], np.eye(2), np.eye(2), ["x y", "y"]
    )
    assert per_theme["n_keywords"].tolist() == [0, 2]
    assert math.isnan(per_theme.loc[0, "sc"]) and math.isnan(per_theme.loc[0, "npmi"])


def test_set_quality_checks_lengths():
    with pytest.raises(ValueError):
        set_quality([["a"]], [np.eye(1, 2)], np.eye(2), np.eye(2), ["a", "b"])
    with pytest.raises(ValueError):
        set_quality([["a", "b"]], [np.eye(1, 2)], np.eye(1, 2), np.eye(1, 2), ["a"])
    with pytest.raises(ValueError):
        set_quality([["a"]], [np.eye(1, 2)], np.eye(1, 2), np.eye(2), ["a"])


# --- properties --------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 6), st.integers(3, 8), st.integers(0, 2**32 - 1))
def test_sc_and_sd_ranges(n, d, seed):
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(n, d))
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    S = np.clip(E @ E.T, -1, 1)
    sc = semantic_coherence(E)
    # S_h mixes values in [-1, 1] (S) and [-1, 1] (S @ S / n), with non-negative weights.
    assert -1 - 1e-9 <= sc <= 1 + 1e-9
    SD, sd_mean = semantic_distinctiveness(S)
    assert (SD >= 0).all() and (SD <= 1).all() and 0 <= sd_mean <= 1
