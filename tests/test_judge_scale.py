"""The judge at scale, against a fake endpoint (no model): requests in flight, the same
results and cache rows whatever the concurrency, the plan said before the first request,
max_pairs, the rate limit and a server's Retry-After."""

import hashlib
import json
import logging
import sqlite3
import time

import numpy as np
import pytest
from helpers import completion, make_study, snakemake, themes_in, write_config

from themesim.errors import InputError
from themesim.llm.judge import judge_matrix
from themesim.llm.judge_plan import JudgePlan, duration
from themesim.llm.judge_settings import JudgeSettings

A = [f"Theme A{i}" for i in range(4)]
B = [f"Theme B{j}" for j in range(4)]


def score_of(a: str, b: str) -> float:
    return int(hashlib.sha256(f"{a}|{b}".encode()).hexdigest()[:4], 16) / 0xFFFF


def answering(latency):
    """A judge whose answer depends on the pair and whose latency(a, b) varies per pair."""

    def behave(n, body, headers):
        a, b = themes_in(body)
        return 200, completion(json.dumps({"score": score_of(a, b)})), latency(a, b)

    return behave


def settings(url, **kw) -> JudgeSettings:
    base = dict(
        base_url=url,
        model="fake-model",
        prompt="judge_v1",
        score_mode="json",
        max_retries=1,
        timeout_s=10,
        backoff_s=0.01,
        backoff_max_s=0.02,
    )
    return JudgeSettings(**(base | kw))


def cache_rows(path) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return list(
            con.execute("SELECT key, text_a, text_b, status, score FROM judgements ORDER BY rowid")
        )
    finally:
        con.close()


def test_in_flight_requests_give_the_same_scores_and_cache_rows(fake_llm, tmp_path):
    """Answers come back in another order than asked (a later request is answered first);
    the scores and the cache's rows, in their order, are those of one request at a time."""
    srv = fake_llm(answering(lambda a, b: 0.02 * ((3 * int(a[-1]) + int(b[-1])) % 5)))
    one, _ = judge_matrix(A, B, settings(srv.url, concurrency=1), tmp_path / "1.sqlite")
    eight, stats = judge_matrix(A, B, settings(srv.url, concurrency=8), tmp_path / "8.sqlite")
    np.testing.assert_array_equal(one, eight)
    np.testing.assert_array_equal(one, [[score_of(a, b) for b in B] for a in A])
    assert cache_rows(tmp_path / "1.sqlite") == cache_rows(tmp_path / "8.sqlite")
    assert [r[1:3] for r in cache_rows(tmp_path / "8.sqlite")] == [(a, b) for a in A for b in B]
    assert stats.done == 16 and srv.calls == 32


def test_fast_fake_endpoint_concurrency_8_then_nothing_asked_again(fake_llm, tmp_path):
    """16 pairs of 0.2 s each take 3.2 s one at a time; 8 in flight take about 0.4 s. A rerun
    asks the endpoint nothing."""
    srv = fake_llm(answering(lambda a, b: 0.2))
    cache = tmp_path / "judge.sqlite"
    s = settings(srv.url, concurrency=8)
    t0 = time.monotonic()
    scores, stats = judge_matrix(A, B, s, cache, progress=False)
    wall = time.monotonic() - t0
    assert srv.calls == 16 and stats.done == 16
    assert wall < 1.6, f"16 pairs at 8 in flight took {wall:.2f} s"
    again, stats2 = judge_matrix(A, B, s, cache, progress=False)
    assert srv.calls == 16 and stats2.cached == 16 and stats2.calls == 0
    np.testing.assert_array_equal(scores, again)


def test_the_plan_is_logged_before_the_first_request(fake_llm, tmp_path, caplog):
    srv = fake_llm(answering(lambda a, b: 0))
    cache = tmp_path / "judge.sqlite"
    with caplog.at_level(logging.INFO, logger="themesim.llm.judge"):
        judge_matrix(A[:2], B[:3], settings(srv.url, concurrency=3), cache, progress=False)
    assert "judge: 6 judgements to ask (6 needed, 0 cached), about " in caplog.text
    assert "at 3 in flight (1 s a request: assumed" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="themesim.llm.judge"):
        judge_matrix(A[:3], B[:3], settings(srv.url), cache, progress=False)
    # The time of a request is now the median of the 6 judgements the cache has timed.
    assert "judge: 3 judgements to ask (9 needed, 6 cached)" in caplog.text
    assert "at 2 in flight" in caplog.text and "the median of 6 cached judgements" in caplog.text


def test_more_than_max_pairs_stops_before_the_first_request(fake_llm, tmp_path):
    srv = fake_llm(answering(lambda a, b: 0))
    cache = tmp_path / "judge.sqlite"
    with pytest.raises(InputError) as err:
        judge_matrix(A, B, settings(srv.url, max_pairs=15), cache, progress=False)
    assert srv.calls == 0
    msg = str(err.value)
    assert msg.startswith("max_pairs of the judge method: 16 judgements to ask")
    assert "more than max_pairs 15" in msg and "raise it to 16 or more" in msg
    # Cached judgements do not count: 12 cached, 4 to ask.
    judge_matrix(A[:3], B, settings(srv.url), cache, progress=False)
    judge_matrix(A, B, settings(srv.url, max_pairs=4), cache, progress=False)
    assert srv.calls == 16


def test_plan_figures():
    plan = JudgePlan(judgements=1000, cached=100, in_flight=8, seconds_each=2.0, timed=50)
    assert plan.missing == 900 and plan.seconds == 225.0  # 900 / (8 / 2 s)
    limited = JudgePlan(1000, 100, 8, 2.0, 50, rate_limit=1.5)
    assert limited.seconds == 600.0  # 900 / 1.5 a second
    assert (duration(40), duration(225), duration(7200)) == ("40 s", "4 min", "2.0 h")
    assert str(JudgePlan(5, 5, 1, 1.0, 0)) == "5 judgements, all cached: nothing to ask"


def test_rate_limit_spaces_the_requests(fake_llm, tmp_path):
    """rate_limit 4 a second: a burst of 4, then one every 0.25 s (10 requests: about 1.5 s),
    however many are in flight."""
    srv = fake_llm(answering(lambda a, b: 0))
    t0 = time.monotonic()
    s = settings(srv.url, concurrency=8, rate_limit=4)
    judge_matrix(A[:2], B + ["Theme B4"], s, tmp_path / "c.sqlite", progress=False)
    assert srv.calls == 10 and time.monotonic() - t0 >= 1.3


def test_a_429_waits_for_its_retry_after(fake_llm, tmp_path):
    seen = []

    def behave(n, body, headers):
        seen.append(time.monotonic())
        if n == 1:
            return 429, "slow down", 0
        return answering(lambda a, b: 0)(n, body, headers)

    srv = fake_llm(behave)
    # the answer carries Retry-After: FakeLLM sends it for a 429 with `retry_after`
    srv.retry_after = "0.5"
    s = settings(srv.url, backoff_s=0.01, backoff_max_s=5)
    judge_matrix(A[:1], B[:1], s, tmp_path / "c.sqlite", progress=False)
    assert srv.calls == 2 and seen[1] - seen[0] >= 0.45


def test_the_dry_run_and_the_job_state_the_judgements_before_asking(fake_llm, tmp_path):
    """`snakemake -n` names each judge method's judgements to ask and the expected time
    (nothing is written); above max_pairs the workflow stops with the key to raise; the
    judge's job logs the plan before its first request, and afterwards the dry run finds
    them all cached."""
    srv = fake_llm(answering(lambda a, b: 0))
    root = make_study(tmp_path / "study")
    judge = {"kind": "llm_judge", "thresholds": [0.5], "base_url": srv.url, "model": "m"}
    judge |= {"prompt": "judge_v1", "score_mode": "json", "concurrency": 4}
    write_config(root, [0.5], methods={"remote": judge})
    first = snakemake(root, "--dry-run", "--cores", "2")
    dry = first.stdout + first.stderr
    assert "judge method remote: 20 judgements to ask (20 needed, 0 cached), about " in dry
    assert "at 4 in flight" in dry and not (root / "results").exists()
    write_config(root, [0.5], methods={"remote": judge | {"max_pairs": 19}})
    refused = snakemake(root, "--dry-run", "--cores", "2", check=False)
    assert refused.returncode == 1
    assert "Error: config methods.remote.max_pairs: 20 judgements to ask" in refused.stderr
    assert "more than max_pairs 19" in refused.stderr and "raise it to 20" in refused.stderr
    write_config(root, [0.5], methods={"remote": judge})
    snakemake(root, "--cores", "2", "results/similarity/remote/manifest.csv")
    assert srv.calls == 20
    job_log = (root / "logs" / "similarity" / "remote.log").read_text()
    said = job_log.index("judge: 20 judgements to ask (20 needed, 0 cached)")
    assert said < job_log.index("distinct requests in one sorted stream")
    again = snakemake(root, "--dry-run", "--cores", "2")
    assert "judge method remote: 20 judgements, all cached: nothing to ask" in (
        again.stdout + again.stderr
    )


def test_the_judge_job_starts_the_local_server_with_a_slot_per_request_in_flight(
    fake_llm, tmp_path, monkeypatch
):
    """concurrency 3 on the local server: it is started with 3 slots and gets 3 requests in
    flight; left out, one slot and one request at a time."""
    import threading

    import pandas as pd

    from themesim.kinds.llm_judge import KIND
    from themesim.llm import server as llama_server

    in_flight, most, lock = [0], [0], threading.Lock()

    def behave(n, body, headers):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.1)
        with lock:
            in_flight[0] -= 1
        return answering(lambda a, b: 0)(n, body, headers)

    srv = fake_llm(behave)
    started = []

    class FakeServer:
        def __init__(self, path, *, parallel=1, **kw):
            started.append(parallel)
            self.base_url = srv.url
            self.backend_id = llama_server.backend_id("auto", parallel)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    # where the judge kind and the client look them up
    for module in ("themesim.kinds.llm_judge", "themesim.llm.client"):
        monkeypatch.setattr(f"{module}.LlamaServer", FakeServer)
        monkeypatch.setattr(f"{module}.packaged_model_path", lambda: "m.gguf")
        monkeypatch.setattr(f"{module}.packaged_model_name", lambda: "m")
    tables = {"a": pd.DataFrame({"text": A}), "b": pd.DataFrame({"text": B})}
    spec = {"prompt": "judge_v1", "score_mode": "json", "timeout_s": 5}
    for extra, slots in (({"concurrency": 3}, 3), ({}, 1)):
        most[0] = 0
        cache = tmp_path / f"{slots}.sqlite"
        ((_, got, meta),) = KIND.similarity(spec | extra, [("a", "b")], tables, cache=cache)
        np.testing.assert_array_equal(got, [[score_of(a, b) for b in B] for a in A])
        assert started[-1] == slots and most[0] == slots
        assert meta["judge"]["server_id"] == llama_server.backend_id("auto", slots)
