"""LLM judge: an OpenAI-compatible chat endpoint scores the conceptual overlap of two themes (0–1).

Every judgement is cached in SQLite and committed as soon as it is done, so an interrupted run
resumes where it stopped; only "ok" entries count as cached, "failed" ones are asked again.
By default (base_url None) a local llama.cpp server with the packaged Qwen2.5-Coder-1.5B is
started for the run and stopped afterwards. See docs/judge.md.

The API key is read from the environment variable *named* in the settings; it is sent only in
the Authorization header and is scrubbed from every message, log line and stored answer.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from themesim.defaults import schema_fields
from themesim.errors import InputError
from themesim.llm import client as llm
from themesim.llm.client import RETRY_STATUS, canonical_key, post_chat, top_logprobs  # noqa: F401
from themesim.llm.client import Retry as _Retry
from themesim.llm.prompts import JudgePrompt, load_prompt
from themesim.llm.session import (
    CacheTable,
    CallSession,
    EndpointSettings,
    scoring_session,
    with_server_id,
)


class JudgeError(RuntimeError):
    """Some judgements failed; the successful ones are cached and a rerun resumes.

    `.scores` holds the matrix with NaN for failed pairs, `.stats` the counts.
    """

    def __init__(self, message: str, scores: np.ndarray | None = None, stats=None):
        super().__init__(message)
        self.scores = scores
        self.stats = stats


@dataclass(frozen=True)
@schema_fields(kind="llm_judge")  # the defaults: the schema's methods: x-kinds llm_judge
class JudgeSettings(EndpointSettings):
    WHERE = "judge settings"

    prompt: str  # prompts/<prompt>.txt ("json"), prompts/<prompt>_logprob.txt
    score_mode: str  # "json": {"score": S}; "logprob": P(yes) / (P(yes) + P(no))
    temperature: float
    max_tokens: int  # json mode; logprob mode always asks for 1 token
    both_orders: bool  # judge (A, B) and (B, A); the score is the mean of the two
    # llama-server only: reuse the KV cache of the previous request's prompt prefix. Faster,
    # but a score then depends on the request before it (docs/judge.md, "The order is part of
    # a score"); False evaluates every prompt from an empty slot: the score of a pair alone.
    cache_prompt: bool
    concurrency: int
    seed: int
    # Local server only: "auto" (llama.cpp's llama-server when `make install` built it, else
    # llama-cpp-python's; $THEMESIM_LLAMA_SERVER=python forces that), "native", "python".
    server: str = "auto"
    # Which server and build answered (themesim.llm.server.backend_id), for a base_url that is
    # a local server the caller started; part of the cache key. Set by judge_matrix itself when
    # it starts the server (base_url None).
    server_id: str | None = None

    def __post_init__(self):
        if self.score_mode not in ("json", "logprob"):
            raise InputError(
                self.WHERE,
                f"score_mode {self.score_mode!r} is unknown",
                'Use "json" or "logprob"',
            )
        super().__post_init__()
        if self.concurrency < 1:
            raise InputError(self.WHERE, "concurrency must be ≥ 1", "Fix the judge settings")

    @property
    def effective_max_tokens(self) -> int:
        return 1 if self.score_mode == "logprob" else self.max_tokens


@dataclass
class JudgeStats:
    judgements: int = 0  # distinct ordered (A, B) judgements needed (2 per pair with both_orders)
    cached: int = 0  # answered from the cache
    done: int = 0  # newly judged, ok
    failed: int = 0  # attempted and failed (stored as "failed", retried next run)
    skipped: int = 0  # not attempted because the endpoint had failed
    calls: int = 0  # HTTP requests sent, retries included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        """One line for a job's log (its repr is for debugging)."""
        return (
            f"{self.judgements} judgements ({self.cached} cached, {self.done} new, "
            f"{self.failed} failed, {self.skipped} skipped), {self.calls} calls, "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens, "
            f"{self.seconds:.1f} s"
        )


@dataclass
class _Outcome:
    status: str  # "ok" | "failed" | "skipped"
    score: float | None = None
    raw: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    attempts: int = 0
    seconds: float = 0.0
    fatal: bool = False  # the endpoint failed (not this pair's answer): stop the others


# ---------------------------------------------------------------- cache

TABLE = CacheTable(
    "judgements",
    asked=(("text_a", "TEXT NOT NULL", ""), ("text_b", "TEXT NOT NULL", "")),
    answer=("score", "REAL", "NULL when failed"),
)
SCHEMA = TABLE.schema


def _answer_settings(settings: JudgeSettings) -> dict:
    out = {
        "score_mode": settings.score_mode,
        "temperature": settings.temperature,
        "max_tokens": settings.effective_max_tokens,
        "seed": settings.seed,
    }
    # The two local servers (and two llama.cpp builds) differ in the last digits of a logprob
    # score: their scores never share a cache entry. Other endpoints keep their keys.
    if settings.server_id is not None:
        out["server"] = settings.server_id
    if order_free(settings):
        # Every prompt from an empty slot: other numbers than a reused prefix gave, so other
        # keys (a cache_prompt: true run keeps the keys of the versions before).
        out["cache_prompt"] = False
    if compact_json(settings):
        # The answer's fixed prefix is prefilled, not generated: other tokens, other keys.
        out["grammar"] = "prefill"
    return out


def llama_server(settings: JudgeSettings) -> bool:
    """Whether the requests go to llama.cpp's llama-server (the local one, or a base_url
    whose server_id the caller gave): it takes llama.cpp's own request fields."""
    return (settings.server_id or "").startswith("llama-server ")


def order_free(settings: JudgeSettings) -> bool:
    """Each request evaluated from an empty slot (`cache_prompt: false` sent to
    llama-server), so a score does not depend on the request before it."""
    return llama_server(settings) and not settings.cache_prompt


def compact_json(settings: JudgeSettings) -> bool:
    """json mode on llama-server: the assistant's answer is prefilled with JSON_PREFIX and a
    grammar lets the model write only the score and the closing brace (bench/README.md P7);
    the JSON schema's grammar would let it pretty-print (twice the tokens)."""
    return settings.score_mode == "json" and llama_server(settings)


# What every json answer starts with; on llama-server it is prefilled, not generated.
JSON_PREFIX = '{"score": '
JSON_END = "}"


def _score_grammar(prompt: JudgePrompt) -> str:
    """GBNF of the S of `{"score": S}` and the closing brace, with no leading zeros:
    0, 0.5, 0.125, 1 or 1.0 on a 0–1 scale; 0..scale as an integer otherwise (1 to 3
    tokens on Qwen's one-digit number tokens). parse_json_score still checks S's range."""
    if prompt.scale == 1:
        num = '"0" ("." [0-9]{1,3})? | "1" (".0")?'
    else:
        digits = len(str(prompt.scale))
        num = '"0" | [1-9] ' + " ".join(["[0-9]?"] * (digits - 1)) if digits > 1 else "[0-9]"
    return f'root ::= ({num}) "{JSON_END}"'


def cache_key(
    model: str, prompt: JudgePrompt, text_a: str, text_b: str, settings: JudgeSettings
) -> str:
    return canonical_key(
        {
            "model": model,
            "prompt_version": prompt.version,
            "prompt_sha256": prompt.sha256,
            "text_a": text_a,
            "text_b": text_b,
            **_answer_settings(settings),
        }
    )


def open_cache(path: str | Path) -> sqlite3.Connection:
    return TABLE.open(path)


def _cached_ok(
    con: sqlite3.Connection, keys: list[str], settings: JudgeSettings, prompt: JudgePrompt
) -> dict[str, float]:
    """key -> score of the keys cached "ok" with a score this version would store (an older
    version stored NULL scores of NaN logprobs "ok": those are asked again)."""
    found = TABLE.answers(con, keys, "score IS NOT NULL AND score BETWEEN 0 AND 1 AND ")
    if settings.score_mode == "json" and prompt.scale > 1:
        # Fractions on a percentage scale were once stored "ok" 100 times too small: asked
        # again, as an integer answer s gives s / scale.
        found = {
            k: v for k, v in found.items() if abs(v * prompt.scale - round(v * prompt.scale)) < 1e-6
        }
    return found


# The stored answer is for reading, not reparsing: a longer one keeps its start.
MAX_RAW_CHARS = 4000


def _clip(raw: str | None) -> str | None:
    if raw is None or len(raw) <= MAX_RAW_CHARS:
        return raw
    return raw[:MAX_RAW_CHARS] + f" … [{len(raw) - MAX_RAW_CHARS} more characters not stored]"


def _store(session: CallSession, key, prompt, text_a, text_b, settings, out: _Outcome) -> None:
    session.store(
        key,
        prompt,
        _answer_settings(settings),
        text_a=text_a,
        text_b=text_b,
        status=out.status,
        score=out.score,
        raw_response=_clip(out.raw),
        prompt_tokens=out.prompt_tokens,
        completion_tokens=out.completion_tokens,
        error=out.error,
        attempts=out.attempts,
        seconds=out.seconds,
    )


# ---------------------------------------------------------------- parsing


def parse_json_score(text: str, scale: int = 1) -> float:
    """The score in a `{"score": S}` answer divided by scale; ValueError unless S in [0, scale]
    and, on a scale above 1 (the prompt asks for an integer), a whole number."""
    match = re.search(r"\{.*?\}", text or "", re.S)
    if not match:
        raise ValueError("no JSON object in the answer")
    obj = json.loads(match.group(0))
    s = obj.get("score") if isinstance(obj, dict) else None
    if isinstance(s, str):
        s = float(s.strip())
    if isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s):
        raise ValueError('no numeric "score" in the answer')
    if not 0 <= s <= scale:
        raise ValueError(f"score {s} is outside 0–{scale}")
    if scale > 1 and s != int(s):
        # The prompt asks for an integer 0..scale: 0.85 is an answer on a 0–1 scale, which
        # divided by the scale would be stored 100 times too small.
        raise ValueError(f"score {s} is not a whole number 0–{scale} (a 0–1 answer?)")
    return float(s) / scale


def _json_answer(body: dict, choice: dict) -> str:
    """The whole answer: a prefilled request's prefix, the completion and, when the server
    stopped at it (and so left it out), the closing brace."""
    content = (choice.get("message") or {}).get("content") or ""
    if "stop" not in body:
        return content
    prefix = body["messages"][-1]["content"]
    # A prefilled answer may come back with its prefix (servers differ): never twice.
    content = content.removeprefix(prefix)
    stopped = choice.get("finish_reason") == "stop" and not content.endswith(JSON_END)
    return prefix + content + (JSON_END if stopped else "")


def parse_logprob_score(top: dict[str, float]) -> float:
    """P(yes) / (P(yes) + P(no)) over the top tokens, matching case- and space-insensitively.

    ValueError when a yes/no logprob is not a log-probability: NaN, not a number, or above 0
    (a NaN once became a NULL score stored "ok"; 1000 overflowed math.exp). −inf is P = 0.
    """
    p = {"yes": 0.0, "no": 0.0}
    for token, logprob in top.items():
        word = str(token).strip().lower()
        if word not in p or logprob is None:
            continue
        if isinstance(logprob, bool) or not isinstance(logprob, int | float):
            raise ValueError(f"logprob {logprob!r} of {token!r} is not a number")
        # A log-probability is ≤ 0; allow the rounding of a server that prints 1e-7 for 0.
        if math.isnan(logprob) or logprob > 1e-6:
            raise ValueError(f"logprob {logprob!r} of {token!r} is not a log-probability (≤ 0)")
        p[word] += math.exp(min(logprob, 0.0))
    if p["yes"] + p["no"] == 0:
        raise ValueError(f"neither yes nor no among the top tokens {sorted(top)}")
    return p["yes"] / (p["yes"] + p["no"])


# ---------------------------------------------------------------- one judgement


def _request_body(settings, model, prompt: JudgePrompt, text_a, text_b, use_rf: bool) -> dict:
    body = {
        "model": model,
        "messages": prompt.messages(text_a, text_b),
        "temperature": settings.temperature,
        "max_tokens": settings.effective_max_tokens,
        "seed": settings.seed,
    }
    if llama_server(settings):
        body["cache_prompt"] = settings.cache_prompt
    if settings.score_mode == "logprob":
        body.update(logprobs=True, top_logprobs=10)
    elif use_rf and compact_json(settings):
        # llama-server continues a last assistant message (its --prefill-assistant default);
        # the stop string ends the request when the brace is sampled, with no step for EOS.
        body["messages"] = [*body["messages"], {"role": "assistant", "content": JSON_PREFIX}]
        body.update(grammar=_score_grammar(prompt), stop=[JSON_END])
    elif use_rf:
        body["response_format"] = {"type": "json_object", "schema": prompt.schema()}
    return body


def _attempt(settings, session: CallSession, body, scale: int = 1) -> _Outcome:
    """One HTTP request; returns an ok outcome or raises client.Retry / client.GiveUp."""
    redact = session.redact
    choice, usage = post_chat(session.start(), session.headers, body, settings.timeout_s, redact)
    out = _Outcome(
        "ok",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )
    try:
        if settings.score_mode == "logprob":
            top = top_logprobs(choice)
            out.raw = redact(json.dumps(top, ensure_ascii=False))
            out.score = parse_logprob_score(top)
        else:
            out.raw = redact(_json_answer(body, choice))
            out.score = parse_json_score(out.raw, scale)
    except (ValueError, TypeError, AttributeError, ArithmeticError) as e:
        raise _Retry(f"unparsable answer ({e})", raw=out.raw, fatal=False) from e
    if not (isinstance(out.score, float) and 0.0 <= out.score <= 1.0):
        # Only a score in [0, 1] is stored "ok": anything else would be cached as a success.
        raise _Retry(f"unusable score {out.score!r}", raw=out.raw, fatal=False)
    return out


def _judge_one(settings, session: CallSession, prompt, text_a, text_b) -> _Outcome:
    def attempt(use_rf: bool, _answer_failures: int) -> _Outcome:
        body = _request_body(settings, session.model, prompt, text_a, text_b, use_rf)
        return _attempt(settings, session, body, prompt.scale)

    res = session.ask(attempt, "judge", sends_response_format=settings.score_mode != "logprob")
    if res.ok:
        out = res.value
        out.attempts, out.seconds = res.attempts, res.seconds
        return out
    if res.skipped:
        return _Outcome("skipped")
    last = res.error
    return _Outcome(
        "failed",
        raw=last.raw,
        error=session.redact(str(last)),
        attempts=res.attempts,
        seconds=res.seconds,
        fatal=last.fatal,
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
    """Requests in flight: `concurrency` for an endpoint, 1 for the local server judge_matrix
    starts, whose one slot then sees the requests in the same order on every run (its KV cache
    reuse, and so the last digits of a score, follow that order). A caller that starts the
    local server itself passes concurrency 1 for the same reason."""
    return settings.concurrency if settings.base_url is not None else 1


def judge_matrix(
    texts_a: list[str],
    texts_b: list[str],
    settings: JudgeSettings,
    cache_path: str | Path,
    *,
    progress: bool = True,
    ask: bool = True,
) -> tuple[np.ndarray, JudgeStats]:
    """Scores[i, j] = the judge's overlap of texts_a[i] and texts_b[j], in [0, 1].

    Only cache misses are sent, `settings.concurrency` at a time. Raises JudgeError after all
    pairs if any failed (its .scores has NaN there); the successes stay cached.
    ask=False: send nothing; a miss is reported from its `failed` row (a caller that has just
    asked it, with all its retries, reads the matrix from the cache without asking again).
    """
    texts_a, texts_b = [str(t) for t in texts_a], [str(t) for t in texts_b]
    order = request_order(texts_a, texts_b, settings.both_orders)
    score, stats, failed = _judge_ordered(order, settings, cache_path, progress, ask)
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
) -> tuple[np.ndarray, JudgeStats]:
    """Scores[i] = the judge's overlap of texts_a[i] and texts_b[i] (rated pairs), in [0, 1].

    The same requests, cache keys, failure handling and `ask` as judge_matrix: a pair already
    judged inside a matrix is answered from the cache.
    """
    texts_a, texts_b = [str(t) for t in texts_a], [str(t) for t in texts_b]
    if len(texts_a) != len(texts_b):
        raise ValueError(f"{len(texts_a)} texts_a but {len(texts_b)} texts_b")
    first = {a: i for i, a in reversed(list(enumerate(texts_a)))}
    # A-major, as request_order: one A's requests share the server's cached prompt prefix.
    order = sorted(dict.fromkeys(zip(texts_a, texts_b, strict=True)), key=lambda p: first[p[0]])
    if settings.both_orders:
        order = list(dict.fromkeys(order + [(b, a) for a, b in order]))
    score, stats, failed = _judge_ordered(order, settings, cache_path, progress, ask)
    scores = np.array([score(a, b) for a, b in zip(texts_a, texts_b, strict=True)], dtype=float)
    if failed:
        raise JudgeError(failed, scores, stats)
    return scores, stats


def keyed_settings(settings: JudgeSettings):
    """(settings with the local server's id, model, prompt): what a cache key is made of."""
    prompt = load_prompt(settings.prompt, settings.score_mode)
    model = llm.endpoint_model(settings.base_url, settings.model)
    return with_server_id(settings), model, prompt


def uncached(texts_a, texts_b, settings: JudgeSettings, cache_path: str | Path) -> int:
    """How many judgements of the texts_a x texts_b matrix the cache lacks: 0 means
    judge_matrix answers from the cache alone, with no server."""
    texts_a, texts_b = [str(t) for t in texts_a], [str(t) for t in texts_b]
    return _missing(request_order(texts_a, texts_b, settings.both_orders), settings, cache_path)


def uncached_pairs(texts_a, texts_b, settings: JudgeSettings, cache_path: str | Path) -> int:
    """How many judgements of the rated pairs (texts_a[i], texts_b[i]) the cache lacks: 0
    means judge_pairs answers from the cache alone, with no server."""
    order = list(zip(map(str, texts_a), map(str, texts_b), strict=True))
    if settings.both_orders:
        order += [(b, a) for a, b in order]
    return _missing(order, settings, cache_path)


def _missing(order, settings: JudgeSettings, cache_path: str | Path) -> int:
    if not order:
        return 0
    settings, model, prompt = keyed_settings(settings)
    keys = list(dict.fromkeys(cache_key(model, prompt, a, b, settings) for a, b in order))
    con = open_cache(cache_path)
    try:
        return len(keys) - len(_cached_ok(con, keys, settings, prompt))
    finally:
        con.close()


def _judge_ordered(order, settings, cache_path, progress, ask=True):
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
        session = scoring_session(settings, TABLE, cache_path, stack, "judge")
        redact = session.redact
        scores = _cached_ok(session.con, list(jobs), settings, prompt)
        stats.cached = len(scores)
        misses = [k for k in jobs if k not in scores]
        failures: list[tuple[str, _Outcome]] = []
        if misses and not ask:
            failures += _stored_failures(session.con, misses)
            stats.failed = len(failures)
            stats.skipped = len(misses) - stats.failed
        elif misses:
            _run_misses(misses, jobs, settings, session, prompt, scores, failures, stats, progress)

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


def _run_misses(misses, jobs, settings, session, prompt, scores, failures, stats, progress):
    from tqdm import tqdm

    state = session.state
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
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=request_workers(settings)))
        futures = {pool.submit(_judge_one, settings, session, prompt, *jobs[k]): k for k in misses}
        try:
            for fut in as_completed(futures):
                k = futures[fut]
                out = fut.result()
                if out.status == "skipped":
                    stats.skipped += 1
                    continue
                _store(session, k, prompt, *jobs[k], settings, out)  # committed at once
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


def _stored_failures(con: sqlite3.Connection, keys: list[str]) -> list[tuple[str, _Outcome]]:
    """(key, outcome) of the keys stored `failed`, in `keys` order."""
    found = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        rows = con.execute(
            "SELECT key, raw_response, error, attempts FROM judgements WHERE status = 'failed' "
            f"AND key IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        for k, raw, error, attempts in rows:
            found[k] = _Outcome("failed", raw=raw, error=error, attempts=int(attempts or 0))
    return [(k, found[k]) for k in keys if k in found]


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


def stats_dict(stats: JudgeStats) -> dict:
    return asdict(stats)
