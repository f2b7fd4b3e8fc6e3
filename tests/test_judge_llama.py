"""The LLM judge with the real packaged Qwen2.5-Coder-1.5B on a local llama.cpp server."""

import importlib.util

import numpy as np
import pytest

from themesim.llm.judge import JudgeSettings, judge_matrix
from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

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
