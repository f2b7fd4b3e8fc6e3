"""Calibration from rated pairs (metrics/calibration.py)."""

import numpy as np
import pandas as pd
import pytest

from themesim.errors import InputError
from themesim.metrics.calibration import (
    calibrate,
    f1_threshold,
    isotonic_fit,
    map_calibrated,
    read_rated_pairs,
    youden_threshold,
)

# The scikit-learn ROC example: AUC 0.75.
SCORES = np.array([0.1, 0.4, 0.35, 0.8])
LABELS = np.array([0, 0, 1, 1])


def test_hand_computed_thresholds():
    # >= 0.35 keeps 0.8, 0.4, 0.35: precision 2/3, recall 1 -> F1 0.8 (the best).
    assert f1_threshold(SCORES, LABELS) == (0.35, pytest.approx(0.8))
    # J = 0.5 at 0.8 (TPR .5, FPR 0) and at 0.35 (TPR 1, FPR .5): the higher threshold.
    assert youden_threshold(SCORES, LABELS) == (0.8, pytest.approx(0.5))


def test_isotonic_fit_pools_the_violator():
    fit = isotonic_fit(SCORES, LABELS)
    # Sorted labels 0, 1, 0, 1: the middle two pool to 0.5.
    np.testing.assert_allclose(map_calibrated([0.0, 0.1, 0.375, 0.8, 2.0], fit), [0, 0, 0.5, 1, 1])


def test_calibrate_summary_and_intervals():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 40)
    s = np.where(y == 1, rng.normal(0.7, 0.1, 80), rng.normal(0.4, 0.1, 80))
    out = calibrate(s, y, n_boot=300, seed=1)
    assert out["n_pairs"] == 80 and out["n_positive"] == 40
    assert 0.9 < out["auc"] <= 1
    for k in ("auc", "f1_threshold", "youden_threshold"):
        assert out[f"{k}_ci_low"] <= out[k] <= out[f"{k}_ci_high"], k
    assert 0.45 < out["f1_threshold"] < 0.65  # between the two class means
    assert calibrate(s, y, n_boot=300, seed=1) == out  # seeded
    assert calibrate(SCORES, LABELS, n_boot=50)["auc"] == 0.75


def test_read_label_and_rating_files(tmp_path):
    p = tmp_path / "pairs.csv"
    p.write_text("text_a,text_b,label\na,b,1\nc,d,0\ne,f,1\ng,h,0\n")
    assert read_rated_pairs(p)["label"].tolist() == [1, 0, 1, 0]
    p.write_text("text_a,text_b,rating\na,b,5\nc,d,2\ne,f,4\ng,h,3\n")
    assert read_rated_pairs(p, positive_from=4)["label"].tolist() == [1, 0, 1, 0]
    with pytest.raises(InputError, match="positive_from"):
        read_rated_pairs(p)


@pytest.mark.parametrize(
    "text, message",
    [
        ("text_a,label\na,1\n", "lacks column"),
        ("text_a,text_b,label\na,b,yes\nc,d,0\n", r"row 2.*label 'yes'"),
        ("text_a,text_b,label\na,b,1\nc,d,1\ne,f,0\n", "fewer than 2 pairs labelled 0"),
        ("text_a,text_b,label\na,,1\n", "row 2.*empty text"),
    ],
)
def test_bad_pairs_files(tmp_path, text, message):
    p = tmp_path / "pairs.csv"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        read_rated_pairs(p)
    assert isinstance(pd.read_csv(p), pd.DataFrame)


def test_schema_calibration_defaults_equal_the_settings_source():
    from pathlib import Path

    import yaml

    from themesim.metrics.settings import DEFAULT_CALIBRATION, calibration_settings

    schema = yaml.safe_load(
        (Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml").read_text()
    )
    props = schema["properties"]["calibration"]["properties"]
    assert props["pairs"]["default"] == DEFAULT_CALIBRATION["pairs"]
    assert props["positive_from"]["default"] == DEFAULT_CALIBRATION["positive_from"]
    assert props["bootstrap"]["default"] == DEFAULT_CALIBRATION["bootstrap"]
    # A partial bootstrap keeps the other default (one level deep).
    assert calibration_settings({"bootstrap": {"n": 5}})["bootstrap"] == {"n": 5, "seed": 0}


def test_kinds_that_score_rated_pairs():
    from themesim import kinds

    assert [n for n, k in kinds.KINDS.items() if k.calibrates] == [
        "sentence_transformer",
        "tfidf",
        "abtt",
    ]
    assert [n for n, k in kinds.KINDS.items() if k.pairs_read_study_embeddings] == ["abtt"]
    with pytest.raises(NotImplementedError):
        kinds.get("precomputed").pair_scores({}, ["a"], ["b"])


def test_tfidf_pair_scores_hand_computed():
    from themesim.steps.calibration import pair_scores

    # Same words in another order: cosine 1; no shared term: 0.
    s = pair_scores("tfidf", {}, ["staff trust", "cost"], ["trust staff", "waiting"])
    assert s == pytest.approx([1.0, 0.0])
    # Character n-grams (the kind's analyzer setting) find the shared stem that words miss.
    words = pair_scores("tfidf", {}, ["waiting"], ["waited"])
    chars = pair_scores("tfidf", {"analyzer": "char_wb"}, ["waiting"], ["waited"])
    assert words == pytest.approx([0.0]) and chars[0] > 0.3
    with pytest.raises(ValueError, match="no calibration"):
        pair_scores("llm_judge", {}, ["a"], ["b"])
