"""The paraphrase ceiling (issue 13): per-theme medians, the comparison columns, and the LLM
paraphrases through the fake server (and once through the packaged model)."""

import json
import math
import sqlite3

import numpy as np
import pandas as pd
import pytest
from helpers import FakeLLM, completion

from themesim.metrics.sets.ceiling import (
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
    assert str(stats) == "2 texts (0 cached, 2 new), 2 calls"  # the job's log line
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


# ---------------------------------------------------------------- in the workflow


@pytest.fixture(scope="module")
def ceiling_study(tmp_path_factory):
    import yaml
    from helpers import HUMAN, LLM, snakemake

    srv = FakeLLM(paraphrase_answers)
    root = tmp_path_factory.mktemp("ceiling_study")
    (root / "data").mkdir()
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM)
    cfg = {
        "theme_sets": ["data/human.csv", "data/llm.yaml"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
        "metrics": {"bootstrap": {"n": 0, "seed": 0}, "null_model": {"pool": 20, "seed": 3}},
        "ceiling": {"active": True, "k": 2, "base_url": srv.url, "model": "fake"},
        "methods": {
            "tfidf": {"kind": "tfidf", "thresholds": [0.05]},
            "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
            "judge": {"kind": "precomputed", "dir": "data/judge", "thresholds": [0.5]},
        },
    }
    (root / "data" / "judge").mkdir()
    (root / "data" / "judge" / "human__vs__llm.csv").write_text(
        ",Employment and caregiving conflict,Financial strain,Gardening as escape\n"
        "Caring while working,0.9,0.1,0.0\nOwn health suffers,0.2,0.1,0.3\n"
        "Money worries,0.1,0.8,0.0\nGuilt,0.5,0.0,0.1\n"
    )
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    targets = [f"results/metrics/{m}/comparisons.csv" for m in ("tfidf", "minilm", "judge")]
    snakemake(root, "--cores", "2", *targets)
    yield root, srv, cfg
    srv.close()


def test_ceiling_columns_in_the_workflow(ceiling_study):
    from themesim.similarity import tfidf

    root, srv, _ = ceiling_study
    assert srv.calls == 4  # one call per reference theme, shared by every method
    para = pd.read_csv(root / "results/ceiling/paraphrases.csv")
    assert list(para.columns) == ["theme_id", "text", "paraphrase_index", "paraphrase"]
    assert len(para) == 8 and para["paraphrase"].iloc[0].endswith("(paraphrase 0 seed 0)")
    # TF-IDF: each theme against its own paraphrases, fitted on the three texts.
    sims = pd.read_parquet(root / "results/ceiling/tfidf.parquet")
    want = []
    for _, rows in para.groupby("theme_id", sort=False):
        want += tfidf([rows["text"].iloc[0]], rows["paraphrase"].tolist())[0].tolist()
    np.testing.assert_allclose(sims["similarity"], want, atol=1e-12)
    for m in ("tfidf", "minilm"):
        comp = pd.read_csv(root / f"results/metrics/{m}/comparisons.csv").iloc[0]
        themes = pd.read_csv(root / f"results/metrics/{m}/themes.csv")
        s = pd.read_parquet(root / f"results/ceiling/{m}.parquet")
        ceiling = float(np.median(s.groupby("theme_id", sort=False)["similarity"].median()))
        null = float(themes[themes.side == "a"]["null_best_median"].median())
        obs = comp["matched_sim_median"]
        assert comp["hungarian_n_matched"] >= 1 and np.isfinite(obs)
        assert comp["ceiling_median"] == pytest.approx(ceiling)
        assert comp["matched_sim_pct_of_ceiling"] == pytest.approx(100 * obs / ceiling)
        assert comp["normalised_alignment"] == pytest.approx((obs - null) / (ceiling - null))
        assert 0 < ceiling <= 1 and null < ceiling
    # Precomputed scores cannot score a paraphrase: no ceiling columns, no ceiling file.
    judge = pd.read_csv(root / "results/metrics/judge/comparisons.csv")
    assert "ceiling_median" not in judge.columns
    assert not (root / "results/ceiling/judge.parquet").exists()


def test_a_threshold_change_reruns_no_paraphrase_and_no_embedding(ceiling_study):
    import yaml
    from helpers import job_counts, snakemake

    root, srv, cfg = ceiling_study
    cfg = cfg | {
        "methods": cfg["methods"]
        | {"minilm": {"kind": "sentence_transformer", "thresholds": [0.4]}}
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(root, "-n", "--cores", "2", "results/metrics/minilm/comparisons.csv")
    counts = job_counts(out.stdout)
    assert counts.get("metrics") == 1
    assert not any(k.startswith(("embed", "similarity", "paraphrase", "ceiling")) for k in counts)


# ---------------------------------------------------------------- the real packaged model


@pytest.mark.slow
def test_packaged_model_paraphrases_two_themes(tmp_path, monkeypatch):
    """Qwen2.5-Coder-1.5B on a local llama.cpp server: k real paraphrases per theme, closer
    to their own theme than to the other theme under MiniLM; a rerun starts no server."""
    import importlib.util

    from themesim.embed.encode import encode_with
    from themesim.llm import server as llama_server
    from themesim.llm.paraphrase import ParaphraseSettings, paraphrase_texts
    from themesim.methods import DEFAULT_METHODS
    from themesim.similarity import cosine

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed: run `make install`")
    texts = [
        "Money worries: the costs of care strain the household budget",
        "Own health suffers: carers lose sleep and neglect their own health",
    ]
    s = ParaphraseSettings(k=3, max_tokens=384)
    cache = tmp_path / "paraphrase.sqlite"
    out, stats = paraphrase_texts(texts, s, cache)
    print(json.dumps(out, indent=1))
    assert stats.done == 2 and stats.cached == 0
    for t in texts:
        assert len(out[t]) == 3 and len(set(out[t])) == 3
        assert all(len(p.split()) >= 4 and p.casefold() != t.casefold() for p in out[t])
    spec = {k: DEFAULT_METHODS["minilm"][k] for k in ("model", "path", "batch_size", "device")}
    T, _ = encode_with(spec, texts, 2, cache=False)
    ceilings = theme_ceilings_cosine(
        T, [encode_with(spec, out[t], 2, cache=False)[0] for t in texts]
    )
    P0, _ = encode_with(spec, out[texts[0]], 2, cache=False)
    other = float(np.median(cosine(T[1:2], P0)))  # theme 2 against theme 1's paraphrases
    print("ceilings", ceilings, "cross", other)
    assert (ceilings > 0.5).all() and ceilings[0] > other

    def no_server(*args, **kwargs):
        raise AssertionError("a cached rerun must not start a server")

    monkeypatch.setattr(llama_server.LlamaServer, "__enter__", no_server)
    again, stats = paraphrase_texts(texts, s, cache)
    assert again == out and stats.cached == 2 and stats.calls == 0


def test_kinds_with_a_ceiling():
    from themesim import kinds

    assert [n for n, k in kinds.KINDS.items() if k.ceiling] == ["sentence_transformer", "tfidf"]
