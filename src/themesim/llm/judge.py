"""LLM judge: an OpenAI-compatible chat endpoint scores the conceptual overlap of two themes (0–1).

Every judgement is cached in SQLite and committed as soon as it is done, so an interrupted run
resumes where it stopped; only "ok" entries count as cached, "failed" ones are asked again.
By default (base_url None) a local llama.cpp server with the packaged Qwen2.5-Coder-1.5B is
started for the run and stopped afterwards. See docs/judge.md.

The API key is read from the environment variable *named* in the settings; it is sent only in
the Authorization header and is scrubbed from every message, log line and stored answer.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from themesim.llm import client as llm
from themesim.llm.judge_ask import Outcome, judge_one
from themesim.llm.judge_cache import (
    TABLE,
    cache_key,
    cached_ok,
    open_cache,
    store_outcome,
    stored_failures,
)
from themesim.llm.judge_plan import JudgePlan, plan_keys
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.prompts import load_prompt
from themesim.llm.session import CallStats, scoring_session, with_server_id

log = logging.getLogger("themesim.llm.judge")


class JudgeError(RuntimeError):
    """Some judgements failed; the successful ones are cached and a rerun resumes.

    `.scores` holds the matrix with NaN for failed pairs, `.stats` the counts.
    """

    def __init__(self, message: str, scores: np.ndarray | None = None, stats=None):
        super().__init__(message)
        self.scores = scores
        self.stats = stats


@dataclass
class JudgeStats(CallStats):
    judgements: int = 0  # distinct ordered (A, B) judgements needed (2 per pair with both_orders)
    cached: int = 0  # answered from the cache
    done: int = 0  # newly judged, ok
    failed: int = 0  # attempted and failed (stored as "failed", retried next run)
    skipped: int = 0  # not attempted because the endpoint had failed

    def asked(self) -> str:
        return (
            f"{self.judgements} judgements ({self.cached} cached, {self.done} new, "
            f"{self.failed} failed, {self.skipped} skipped)"
        )


# ---------------------------------------------------------------- the matrix


def _snip(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= n else one[: n - 1] + "…")


def request_order(texts_a, texts_b, both_orders: bool = False) -> list[tuple[str, str]]:
    """Distinct ordered judgements, every B of one A consecutively (A-major).

    The prompts put Theme A before Theme B, and with `cache_prompt: true` (and on
    llama-cpp-python's server) the server keeps the KV cache of the longest prefix shared with
    the previous request, so each A's prompt prefix is evaluated once, not once per B. (By
    default llama-server evaluates every prompt whole: the order then changes no score.)
    Identical texts are asked once.
    """
    a_texts, b_texts = list(dict.fromkeys(texts_a)), list(dict.fromkeys(texts_b))
    order = [(a, b) for a in a_texts for b in b_texts]
    if both_orders:
        order += [(b, a) for b in b_texts for a in a_texts]
    return list(dict.fromkeys(order))


def request_workers(settings: JudgeSettings) -> int:
    """Requests in flight: settings.in_flight (`concurrency`; by default 2 to an endpoint and
    1 to the local server, whose one slot then sees the requests in the same order and gives
    the same scores on every run). The local server judge_matrix starts gets that many slots."""
    return settings.in_flight


def judge_matrix(
    texts_a: list[str],
    texts_b: list[str],
    settings: JudgeSettings,
    cache_path: str | Path,
    *,
    progress: bool = True,
    ask: bool = True,
    announce: bool = True,
) -> tuple[np.ndarray, JudgeStats]:
    """Scores[i, j] = the judge's overlap of texts_a[i] and texts_b[j], in [0, 1].

    Only cache misses are sent, `settings.in_flight` at a time; each answer is stored in the
    order of the requests, whatever the order they come back in. Before the first request
    the plan (how many to ask, the expected time) is logged (announce=False: not) and a run
    that would ask more than `settings.max_pairs` stops with an InputError. Raises JudgeError
    after all pairs if any failed (its .scores has NaN there); the successes stay cached.
    ask=False: send nothing; a miss is reported from its `failed` row (a caller that has just
    asked it, with all its retries, reads the matrix from the cache without asking again).
    """
    texts_a, texts_b = [str(t) for t in texts_a], [str(t) for t in texts_b]
    order = request_order(texts_a, texts_b, settings.both_orders)
    score, stats, failed = _judge_ordered(order, settings, cache_path, progress, ask, announce)
    matrix = np.array([[score(a, b) for b in texts_b] for a in texts_a], dtype=np.float64)
    matrix = matrix.reshape(len(texts_a), len(texts_b))
    if failed:
        raise JudgeError(failed, matrix, stats)
    return matrix, stats


def judge_pairs(
    texts_a: list[str],
    texts_b: list[str],
    settings: JudgeSettings,
    cache_path: str | Path,
    *,
    progress: bool = True,
    ask: bool = True,
    announce: bool = True,
) -> tuple[np.ndarray, JudgeStats]:
    """Scores[i] = the judge's overlap of texts_a[i] and texts_b[i] (rated pairs), in [0, 1].

    The same requests, cache keys, failure handling, `ask` and `announce` as judge_matrix: a
    pair already judged inside a matrix is answered from the cache.
    """
    texts_a, texts_b = [str(t) for t in texts_a], [str(t) for t in texts_b]
    if len(texts_a) != len(texts_b):
        raise ValueError(f"{len(texts_a)} texts_a but {len(texts_b)} texts_b")
    first = {a: i for i, a in reversed(list(enumerate(texts_a)))}
    # A-major, as request_order: one A's requests share the server's cached prompt prefix.
    order = sorted(dict.fromkeys(zip(texts_a, texts_b, strict=True)), key=lambda p: first[p[0]])
    if settings.both_orders:
        order = list(dict.fromkeys(order + [(b, a) for a, b in order]))
    score, stats, failed = _judge_ordered(order, settings, cache_path, progress, ask, announce)
    scores = np.array([score(a, b) for a, b in zip(texts_a, texts_b, strict=True)], dtype=float)
    if failed:
        raise JudgeError(failed, scores, stats)
    return scores, stats


def keyed_settings(settings: JudgeSettings):
    """(settings with the local server's id, model, prompt): what a cache key is made of. The
    local server judge_matrix starts has one slot per request in flight."""
    prompt = load_prompt(settings.prompt, settings.score_mode)
    model = llm.endpoint_model(settings.base_url, settings.model)
    return with_server_id(settings, settings.in_flight), model, prompt


def plan(order, settings: JudgeSettings, cache_path: str | Path) -> JudgePlan:
    """What judging the ordered (a, b) requests of `order` would ask (themesim.llm.judge_plan):
    the distinct judgements, how many the cache holds and the expected time."""
    settings, model, prompt = keyed_settings(settings)
    keys = list(dict.fromkeys(cache_key(model, prompt, a, b, settings) for a, b in order))
    if not Path(cache_path).is_file():  # nothing cached; a dry run creates no file
        return plan_keys(None, keys, 0, model, settings)
    con = open_cache(cache_path)
    try:
        return plan_keys(con, keys, len(cached_ok(con, keys, settings, prompt)), model, settings)
    finally:
        con.close()


def _judge_ordered(order, settings, cache_path, progress, ask=True, announce=True):
    """Judge each distinct ordered (a, b) of `order` that the cache lacks (with ask=False,
    report the misses from their stored `failed` rows instead).

    Returns score(a, b) (the mean of both orders with both_orders; NaN if missing), the stats
    and the failure message ("" when every judgement is ok).
    """
    t0 = time.monotonic()
    settings, model, prompt = keyed_settings(settings)
    jobs = {cache_key(model, prompt, a, b, settings): (a, b) for a, b in order}
    stats = JudgeStats(judgements=len(jobs))
    with ExitStack() as stack:
        session = scoring_session(
            settings,
            TABLE,
            cache_path,
            stack,
            "judge",
            parallel=settings.in_flight,
            rate_limit=settings.rate_limit,
        )
        redact = session.redact
        scores = cached_ok(session.con, list(jobs), settings, prompt)
        stats.cached = len(scores)
        misses = [k for k in jobs if k not in scores]
        failures: list[tuple[str, Outcome]] = []
        if misses and not ask:
            failures += stored_failures(session.con, misses)
            stats.failed = len(failures)
            stats.skipped = len(misses) - stats.failed
        elif misses:
            the_plan = plan_keys(session.con, list(jobs), len(scores), session.model, settings)
            if announce:
                log.info("judge: %s", the_plan)
            the_plan.check(settings.max_pairs)
            todo = {k: jobs[k] for k in misses}
            failures += _run_misses(todo, settings, session, prompt, scores, stats, progress)

    def score(a: str, b: str) -> float:
        s = scores.get(cache_key(model, prompt, a, b, settings))
        if settings.both_orders and s is not None:
            s2 = scores.get(cache_key(model, prompt, b, a, settings))
            s = None if s2 is None else (s + s2) / 2
        return np.nan if s is None else s

    stats.seconds = time.monotonic() - t0  # the caller logs str(stats) once, with what it asked
    failed = ""
    if stats.failed or stats.skipped:
        failed = _failure_message(failures, jobs, stats, cache_path, redact)
    return score, stats, failed


def _run_misses(todo: dict, settings, session, prompt, scores, stats, progress) -> list:
    """Ask the misses (todo: key -> (a, b)), settings.in_flight at a time, and store each
    outcome in the order of `todo` (so the cache's rows and the counts are the same whatever
    the concurrency and the answers' timing): an answer that comes back early waits for those
    before it, at most 4 x in_flight requests ahead of the oldest unstored one. Returns the
    failures, (key, outcome) each; ok scores go in `scores`, the counts in `stats`."""
    state = session.state
    failures: list[tuple[str, Outcome]] = []
    workers = request_workers(settings)
    with ExitStack() as stack:
        session.start()  # the endpoint (a local server) before the workers ask it
        bar = stack.enter_context(
            tqdm(
                total=stats.judgements,
                initial=stats.cached,
                desc="judge",
                unit="pair",
                disable=not progress,
                dynamic_ncols=True,
            )
        )
        bar.set_postfix(done=0, cached=stats.cached, failed=0)
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=workers))
        keys, pending = iter(todo), deque()

        def submit() -> None:
            while len(pending) < 4 * workers and (k := next(keys, None)) is not None:
                pending.append((k, pool.submit(judge_one, settings, session, prompt, *todo[k])))

        try:
            submit()
            while pending:
                k, fut = pending.popleft()
                out = fut.result()
                submit()
                if out.status == "skipped":
                    stats.skipped += 1
                    continue
                store_outcome(session, k, prompt, *todo[k], settings, out)  # committed at once
                stats.prompt_tokens += out.prompt_tokens
                stats.completion_tokens += out.completion_tokens
                if out.status == "ok":
                    scores[k] = out.score
                    stats.done += 1
                else:
                    stats.failed += 1
                    failures.append((k, out))
                bar.update(1)
                bar.set_postfix(done=stats.done, cached=stats.cached, failed=stats.failed)
        except BaseException:
            state.abort.set()  # Ctrl-C: stop the workers; what is stored stays stored
            raise
        finally:
            stats.calls = state.calls
    return failures


def _failure_message(failures, jobs, stats, cache_path, redact) -> str:
    lines = [
        f"LLM judge: {stats.failed} of {stats.judgements} judgements failed"
        + (
            f" and {stats.skipped} were not attempted because the endpoint kept failing"
            if stats.skipped
            else ""
        )
        + "."
    ]
    for k, out in failures[:3]:
        a, b = jobs[k]
        answer = f"; last answer: {_snip(out.raw, 200)}" if out.raw else ""
        lines.append(
            f"- A={_snip(a)} vs B={_snip(b)}: {out.error} after {out.attempts} attempt(s){answer}"
        )
    if len(failures) > 3:
        lines.append(f"- … and {len(failures) - 3} more (status 'failed' in the cache)")
    if any((out.error or "").startswith("cannot connect") for _, out in failures):
        lines.append(
            "Nothing answers at the method's base_url: start the server, or fix base_url "
            "(null starts the packaged local model)."
        )
    ok = stats.cached + stats.done
    lines.append(
        f"The {ok} successful judgements are cached in {cache_path}; rerunning "
        "resumes and asks only the failed and missing pairs."
    )
    return redact("\n".join(lines))
