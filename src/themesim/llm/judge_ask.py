"""One judgement of the LLM judge: its request (on llama-server json answers are prefilled
and held to a grammar), the parsing of its answer and its retries (client, session)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from themesim.llm.client import Retry as _Retry
from themesim.llm.client import post_chat, top_logprobs
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.prompts import JudgePrompt
from themesim.llm.session import CallSession


@dataclass
class Outcome:
    status: str  # "ok" | "failed" | "skipped"
    score: float | None = None
    raw: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    attempts: int = 0
    seconds: float = 0.0
    fatal: bool = False  # the endpoint failed (not this pair's answer): stop the others


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


def _attempt(settings, session: CallSession, body, scale: int = 1) -> Outcome:
    """One HTTP request; returns an ok outcome or raises client.Retry / client.GiveUp."""
    redact = session.redact
    url = session.start()
    choice, usage = post_chat(url, session.headers, body, settings.timeout_s, redact, session.http)
    out = Outcome(
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


def judge_one(settings, session: CallSession, prompt, text_a, text_b) -> Outcome:
    def attempt(use_rf: bool, _answer_failures: int) -> Outcome:
        body = _request_body(settings, session.model, prompt, text_a, text_b, use_rf)
        return _attempt(settings, session, body, prompt.scale)

    res = session.ask(attempt, "judge", sends_response_format=settings.score_mode != "logprob")
    if res.ok:
        out = res.value
        out.attempts, out.seconds = res.attempts, res.seconds
        return out
    if res.skipped:
        return Outcome("skipped")
    last = res.error
    return Outcome(
        "failed",
        raw=last.raw,
        error=session.redact(str(last)),
        attempts=res.attempts,
        seconds=res.seconds,
        fatal=last.fatal,
    )
