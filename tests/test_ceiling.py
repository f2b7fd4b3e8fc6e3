"""The paraphrase ceiling (issue 13): per-theme medians, the comparison columns, and the LLM
paraphrases through the fake server (and once through the packaged model)."""

import json
import math
import sqlite3

import numpy as np
import pandas as pd
import pytest
from helpers import FakeLLM, completion

from themesim.metrics.ceiling import (
    CEILING_COLUMNS,
    ceiling_columns,
    normalised_alignment,
    pct_of_ceiling,
    theme_ceilings,
    theme_ceilings_cosine,
)


def test_theme_ceiling_is_the_median_similarity_to_its_paraphrases():
    got = theme_ceilings([[0.9, 0.7, 0.8], [0.6, 1.0], []])
    np.testing.assert_allclose(got[:2], [0.8, 0.8])
    assert math.isnan(got[2])


def test_cosine_ceilings_by_hand():
    # theme [1, 0]; paraphrases at cosines 1.0, 0.6, 0.0 -> median 0.6
    T = np.array([[1.0, 0.0], [0.0, 1.0]])
    P = [np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]), np.array([[0.8, 0.6], [0.6, 0.8]])]
    np.testing.assert_allclose(theme_ceilings_cosine(T, P), [0.6, 0.7])
    with pytest.raises(ValueError, match="1 paraphrase blocks for 2 themes"):
        theme_ceilings_cosine(T, P[:1])


def test_normalised_alignment_and_share_by_hand():
    # observed 0.6, null 0.2, ceiling 0.8: (0.6 - 0.2) / (0.8 - 0.2) = 2/3; 0.6/0.8 = 75 %
    assert normalised_alignment(0.6, 0.2, 0.8) == pytest.approx(2 / 3)
    assert pct_of_ceiling(0.6, 0.8) == pytest.approx(75.0)
    assert normalised_alignment(0.8, 0.2, 0.8) == pytest.approx(1.0)
    assert normalised_alignment(0.2, 0.2, 0.8) == pytest.approx(0.0)
    assert math.isnan(normalised_alignment(0.6, 0.5, 0.4))  # ceiling below the null: no scale
    assert math.isnan(normalised_alignment(0.6, math.nan, 0.8))  # null model off
    assert math.isnan(pct_of_ceiling(0.6, 0.0))


def test_ceiling_columns_join_the_comparisons():
    comp = pd.DataFrame(
        {
            "method": "m",
            "set_a": ["h", "h", "x"],
            "set_b": ["b", "c", "c"],
            "threshold": 0.5,
            "matched_sim_median": [0.6, 0.5, 0.9],
        }
    )
    themes = pd.DataFrame(
        {
            "set_a": ["h"] * 5 + ["x"],
            "set_b": ["b"] * 3 + ["c"] * 2 + ["c"],
            "side": ["a", "a", "a", "a", "b", "a"],
            "null_best_median": [0.1, 0.3, 0.2, 0.4, 9.0, 0.1],  # side b never counts
        }
    )
    out = ceiling_columns(comp, themes, [0.9, 0.7, 0.8, np.nan], reference="h")
    assert list(out.columns) == [*comp.columns, *CEILING_COLUMNS]
    # ceiling: median of 0.9, 0.7, 0.8 = 0.8 (the NaN theme left out); nulls: b 0.2, c 0.4
    np.testing.assert_allclose(out["ceiling_median"][:2], [0.8, 0.8])
    np.testing.assert_allclose(out["matched_sim_pct_of_ceiling"][:2], [75.0, 62.5])
    np.testing.assert_allclose(out["normalised_alignment"][:2], [(0.6 - 0.2) / 0.6, 0.1 / 0.4])
    assert out.iloc[2][CEILING_COLUMNS].isna().all()  # set_a is not the reference


# ---------------------------------------------------------------- the LLM paraphrases


def paraphrase_answers(n, body, headers):
    """k numbered paraphrases of the theme in the request, plus a copy of it (dropped)."""
    user = body["messages"][-1]["content"]
    theme = user.split("Theme:\n", 1)[1].split("\n\n", 1)[0]
    k = int(user.split("Write ", 1)[1].split(" ", 1)[0])
    items = [theme] + [f"{theme} (paraphrase {i} seed {body['seed']})" for i in range(k)]
    return 200, completion(json.dumps({"paraphrases": items})), 0


@pytest.fixture
def fake():
    srv = FakeLLM(paraphrase_answers)
    yield srv
    srv.close()


def test_paraphrases_through_the_fake_server_are_cached(fake, tmp_path):
    from themesim.llm.paraphrase import ParaphraseSettings, paraphrase_texts

    s = ParaphraseSettings(k=3, base_url=fake.url, model="fake", seed=4, max_retries=0)
    texts = [
        "Money worries: costs strain the budget",
        "Guilt: about respite",
        "Guilt: about respite",
    ]
    cache = tmp_path / "cache" / "paraphrase.sqlite"
    out, stats = paraphrase_texts(texts, s, cache)
    assert fake.calls == 2 and stats.done == 2  # the repeated text is asked once
    assert out["Guilt: about respite"] == [
        f"Guilt: about respite (paraphrase {i} seed 4)" for i in range(3)
    ]  # the verbatim copy the server sent first is not a paraphrase
    body = fake.bodies[0]
    assert body["model"] == "fake" and body["seed"] == 4
    assert body["response_format"]["schema"]["properties"]["paraphrases"]["minItems"] == 3
    again, stats = paraphrase_texts(texts, s, cache)
    assert again == out and fake.calls == 2 and stats.cached == 2
    rows = sqlite3.connect(cache).execute("SELECT text, k FROM paraphrases").fetchall()
    assert sorted(rows) == [
        ("Guilt: about respite", 3),
        ("Money worries: costs strain the budget", 3),
    ]
    # Another k is another question.
    paraphrase_texts(texts[:1], ParaphraseSettings(k=2, base_url=fake.url, model="fake"), cache)
    assert fake.calls == 3


def test_too_few_paraphrases_fail_clearly(tmp_path):
    from themesim.llm.paraphrase import ParaphraseError, ParaphraseSettings, paraphrase_texts

    def short(n, body, headers):
        return 200, completion(json.dumps({"paraphrases": ["only one"]})), 0

    srv = FakeLLM(short)
    try:
        s = ParaphraseSettings(k=3, base_url=srv.url, model="fake", max_retries=1, backoff_s=0)
        with pytest.raises(ParaphraseError, match=r"1 usable paraphrases, 3 asked for"):
            paraphrase_texts(["Guilt: about respite"], s, tmp_path / "p.sqlite")
        assert srv.calls == 2 and [b["seed"] for b in srv.bodies] == [0, 1000]  # reseeded
    finally:
        srv.close()


def test_bad_k_is_a_config_error():
    from themesim.errors import InputError
    from themesim.llm.paraphrase import ParaphraseSettings

    with pytest.raises(InputError, match="config ceiling.k"):
        ParaphraseSettings(k=0)
