"""The LLM judge with the real packaged Qwen2.5-Coder-1.5B on a local llama.cpp server."""

import importlib.util
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import requests

from themesim.llm.judge import judge_matrix, judge_pairs
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.server import (
    LlamaServer,
    native_server_path,
    packaged_model_name,
    packaged_model_path,
)

A = [
    "Sleep loss: carers lose sleep and are exhausted by caring at night",
    "Money worries: the costs of care strain the household budget",
    "Guilt: carers feel guilty about using respite care",
]
B = [
    "Worn out: caregivers are tired because night-time caring stops them sleeping",
    "Football results: the scores of the weekend's football matches",
    "Work and caring: fitting job shifts around caring duties",
]


@pytest.fixture(scope="module")
def server():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail(
            "llama-cpp-python is not installed, so the LLM judge cannot run: run `make install`"
        )
    with LlamaServer(packaged_model_path(), n_ctx=2048) as srv:
        yield srv


@pytest.mark.parametrize("mode", ["json", "logprob"])
def test_judge_separates_a_paraphrase_from_an_unrelated_pair(server, tmp_path, mode):
    cache = tmp_path / "judge.sqlite"
    s = JudgeSettings(
        base_url=server.base_url, model=packaged_model_name(), max_tokens=16, score_mode=mode
    )
    assert JudgeSettings().prompt == "judge_v3"  # the default
    scores, stats = judge_matrix(A, B, s, cache, progress=False)
    print("scores:\n", np.round(scores, 2), "\n", stats)
    assert scores.shape == (3, 3) and ((scores >= 0) & (scores <= 1)).all()
    assert (stats.done, stats.failed, stats.calls) == (9, 0, 9)
    paraphrase, unrelated = scores[0, 0], scores[0, 1]
    assert paraphrase >= unrelated + 0.3, (paraphrase, unrelated)
    assert paraphrase >= scores[1, 1] + 0.3  # money vs football

    again, stats2 = judge_matrix(A, B, s, cache, progress=False)
    assert stats2.calls == 0 and stats2.cached == 9
    np.testing.assert_array_equal(again, scores)


def test_default_settings_start_their_own_server(server, tmp_path):
    """base_url None starts (and stops) a local server; temperature 0 gives the same score."""
    ref = JudgeSettings(base_url=server.base_url, model=packaged_model_name(), max_tokens=16)
    want, _ = judge_matrix(A[:1], B[:1], ref, tmp_path / "a.sqlite", progress=False)
    got, stats = judge_matrix(
        A[:1], B[:1], JudgeSettings(max_tokens=16), tmp_path / "b.sqlite", progress=False
    )
    assert stats.calls == 1
    assert got[0, 0] == pytest.approx(want[0, 0], abs=0.05)


@pytest.mark.slow
def test_the_default_local_server_gives_the_same_scores_on_every_run(tmp_path):
    """Two runs with fresh caches of the server judge_matrix starts by default (llama-server
    with one slot when `make install` built it): every score equal bit for bit."""
    runs = []
    for i in (1, 2):
        cache = tmp_path / f"run{i}.sqlite"
        scores, stats = judge_matrix(A, B, JudgeSettings(), cache, progress=False)
        assert (stats.done, stats.cached, stats.failed) == (9, 0, 0)
        with sqlite3.connect(cache) as con:
            servers = {
                json.loads(r[0])["server"] for r in con.execute("SELECT settings FROM judgements")
            }
        runs.append(scores)
    print("scores:\n", np.round(runs[0], 4), servers)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert runs[0][0, 0] >= runs[0][0, 1] + 0.3  # sleep loss: paraphrase vs football
    (server,) = servers
    if native_server_path() is not None:
        assert server.startswith("llama-server ") and server.endswith(", 1 slot, --flash-attn off")


def test_the_native_llama_server_is_the_one_started_when_built(tmp_path):
    """With llama-server built (`make install`), backend "native" runs it, with one slot,
    and its logprob scores are probabilities that put a paraphrase above an unrelated
    pair."""
    binary = native_server_path()
    if binary is None:
        pytest.skip(
            "no native llama-server: `make install` builds .venv/llama.cpp/bin/llama-server"
        )
    with LlamaServer(packaged_model_path(), n_ctx=2048, backend="native") as server:
        _judge_natively(server, binary, tmp_path)


def _judge_natively(server, binary, tmp_path):
    assert server.backend == "native"
    assert Path(f"/proc/{server.proc.pid}/exe").resolve() == binary.resolve()
    assert server.backend_id.startswith("llama-server ") and "commit" in server.backend_id
    slots = requests.get(server.base_url.removesuffix("/v1") + "/slots", timeout=10).json()
    assert len(slots) == 1 and {s["n_ctx"] for s in slots} == {2048}

    s = JudgeSettings(
        base_url=server.base_url, model=packaged_model_name(), server_id=server.backend_id
    )
    assert s.score_mode == "logprob"  # the default
    cache = tmp_path / "judge.sqlite"
    scores, stats = judge_matrix(A[:2], B[:2], s, cache, progress=False)
    print("scores:\n", np.round(scores, 3), "\n", stats)
    assert ((scores >= 0) & (scores <= 1)).all() and (stats.done, stats.failed) == (4, 0)
    assert scores[0, 0] >= scores[0, 1] + 0.3  # sleep loss: paraphrase vs football
    assert scores[0, 0] >= scores[1, 1] + 0.3  # above money vs football
    with sqlite3.connect(cache) as con:
        stored = {
            json.loads(r[0])["server"] for r in con.execute("SELECT settings FROM judgements")
        }
        top = json.loads(con.execute("SELECT raw_response FROM judgements LIMIT 1").fetchone()[0])
    assert stored == {server.backend_id}
    assert {t.strip().lower() for t in top} & {"yes", "no"} and len(top) == 10


@pytest.mark.slow
def test_json_mode_on_the_native_server_generates_only_the_number(tmp_path):
    """json mode on llama-server: the answer's prefix is prefilled, the model writes the
    number and the brace (2–4 tokens), and the stored answer is the whole JSON."""
    import re

    if native_server_path() is None:
        pytest.skip("no native llama-server: `make install` builds .venv/llama.cpp/bin")
    with LlamaServer(packaged_model_path(), backend="native", logits_all=False) as server:
        s = JudgeSettings(
            base_url=server.base_url,
            model=packaged_model_name(),
            server_id=server.backend_id,
            score_mode="json",
        )
        cache = tmp_path / "judge.sqlite"
        scores, stats = judge_matrix(A, B, s, cache, progress=False)
    print("scores:\n", np.round(scores, 2), "\n", stats)
    assert (stats.done, stats.failed, stats.calls) == (9, 0, 9)
    assert scores[0, 0] >= scores[0, 1] + 0.3  # sleep loss: paraphrase vs football
    with sqlite3.connect(cache) as con:
        rows = con.execute("SELECT raw_response, completion_tokens, settings FROM judgements")
        rows = rows.fetchall()
    for raw, tokens, settings in rows:
        assert re.fullmatch(r'\{"score": (0|[1-9][0-9]{0,2})\}', raw), raw
        # One token per digit (Qwen's number tokens) and one for the brace: nothing else.
        assert tokens == len(raw) - len('{"score": '), (raw, tokens)
        assert json.loads(settings)["grammar"] == "prefill"


# Not marked slow: `make test` keeps this property of the judge's scores (issue 23, item 8).
def test_a_score_does_not_depend_on_the_request_before_it(tmp_path):
    """Issue 23 (8): with the slot's prompt cache a score depended on the request before it
    (the demo's 89 judgements in two orders: 50 scores apart, by up to 0.045). By default
    every prompt is evaluated from an empty slot: the same pairs asked in two orders give the
    same scores bit for bit."""
    if native_server_path() is None:
        pytest.skip("no native llama-server: `make install` builds .venv/llama.cpp/bin")
    pairs = [(a, b) for a in A for b in B]
    runs = {}
    with LlamaServer(packaged_model_path(), n_ctx=2048, backend="native") as server:
        s = JudgeSettings(
            base_url=server.base_url, model=packaged_model_name(), server_id=server.backend_id
        )
        assert s.cache_prompt is False
        for name, order in (("a-major", pairs), ("reversed", pairs[::-1])):
            texts_a, texts_b = zip(*order, strict=True)
            scores, stats = judge_pairs(
                list(texts_a), list(texts_b), s, tmp_path / f"{name}.sqlite", progress=False
            )
            assert stats.done == 9
            runs[name] = dict(zip(order, scores, strict=True))
    got = np.array([[runs["a-major"][p], runs["reversed"][p]] for p in pairs])
    print("scores (a-major, reversed):\n", np.round(got, 4))
    np.testing.assert_array_equal(got[:, 0], got[:, 1])
