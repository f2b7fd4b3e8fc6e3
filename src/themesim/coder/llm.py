"""Deductive LLM coding: the set's themes as a codebook, one request per transcript segment.

Two answer modes. `logprob` (default): the codes are lettered and the model answers the letter
of the code that fits best, or 0 for none, in one token; the probabilities of the letters
among the top tokens, normalised over the letters and 0, are the segment's scores per theme,
so several themes can pass the coder's threshold (multi-label). `json`: the codes are
numbered and the model lists every code that fits (`{"codes": [2, 5]}`, a grammar or JSON
schema allows nothing else); a listed code scores 1. On the demo the packaged 1.5B model
listed every code for most passages in json mode (docs/grounding.md), so logprob is the
default.

Through the judge's plumbing (llm/client.py): an OpenAI-compatible endpoint, or with no
base_url a local llama.cpp server with the packaged Qwen2.5-Coder-1.5B. Every answer is
cached in SQLite (results/cache/coder.sqlite) and committed at once, keyed by everything that
changes it (model, prompt file, codebook, passage and its context, settings), so an
interrupted run resumes and a second method or study with the same set asks nothing again.
The codebook sits in the system message and the passage after it, so a local server evaluates
the codebook once and each request only the passage (its prompt cache keeps the prefix).
"""

from __future__ import annotations

import json
import logging
import math
import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from themesim.defaults import schema_fields
from themesim.errors import InputError, StepError
from themesim.llm import client as llm
from themesim.llm.prompts import PROMPT_DIR, text_sha256
from themesim.llm.session import (
    CacheTable,
    CallSession,
    EndpointSettings,
    answer_settings,
    scoring_session,
    with_server_id,
)
from themesim.store import canonical_key

log = logging.getLogger("themesim.coder")

PROMPT_SLOTS = ("{codebook}", "{passage}", "{speaker}", "{context}")


@dataclass(frozen=True)
@schema_fields("grounding", "coder", "llm")  # the defaults: the schema's grounding.coder.llm
class CoderLLMSettings(EndpointSettings):
    WHERE = "grounding.coder"

    prompt: str  # llm/prompts/<prompt>[_logprob].txt, or a path to a .txt file
    score_mode: str  # logprob: P(letter) per code; json: the listed codes
    context: int  # earlier segments shown (not coded) before the passage
    # not settings of grounding.coder.llm: the coder always asks greedily for a short answer
    temperature: float = 0.0
    max_tokens: int = 48
    seed: int = 0
    server: str  # local server only: auto | native | python
    server_id: str | None = None  # set when the local server is started (part of the key)

    def __post_init__(self):
        if self.score_mode not in ("logprob", "json"):
            raise InputError(
                f"{self.WHERE}.score_mode",
                f"{self.score_mode!r} is unknown",
                "Use logprob or json.",
            )
        super().__post_init__()


@dataclass(frozen=True)
class CoderPrompt:
    version: str
    system: str
    user: str
    sha256: str


def load_coder_prompt(name: str, score_mode: str = "logprob") -> CoderPrompt:
    suffix = "_logprob" if score_mode == "logprob" else ""
    path = Path(name) if name.endswith(".txt") else PROMPT_DIR / f"{name}{suffix}.txt"
    if not path.is_file():
        raise InputError(
            f"grounding.coder.prompt {name!r}",
            "no such prompt file",
            "Use coder_v1 or a path to a .txt file with system: and user: sections.",
        )
    raw = path.read_text(encoding="utf-8")
    user, system = llm.split_roles(raw.splitlines(), path)
    whole = (system or "") + user
    for slot in PROMPT_SLOTS:
        if slot not in whole:
            raise InputError(str(path), f"the prompt has no {slot} slot", "Add it.")
    if "{passage}" not in user:
        raise InputError(str(path), "{passage} is not in the user message", "Move it there.")
    return CoderPrompt(path.stem, system or "", user, text_sha256(raw))


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
TOP_LOGPROBS = 20  # the most OpenAI's API returns: codes beyond the 19 likeliest score 0


def code_labels(k: int, score_mode: str) -> list[str]:
    """What the model answers per code: letters (one token each) or 1-based numbers."""
    if score_mode == "json":
        return [str(i) for i in range(1, k + 1)]
    if k > len(LETTERS):
        raise InputError(
            "grounding.coder",
            f"a set of {k} themes has more codes than the {len(LETTERS)} letters of logprob mode",
            "Use score_mode: json for this study.",
        )
    return list(LETTERS[:k])


def codebook(names, descriptions, labels) -> str:
    """`A. Name: description` lines: the labels are what the model answers."""
    return "\n".join(
        f"{c}. {n}: {' '.join(str(d).split())}" if str(d).strip() else f"{c}. {n}"
        for c, n, d in zip(labels, names, descriptions, strict=True)
    )


def grammar(k: int) -> str:
    """GBNF of `{"codes": [n, …]}` with n one of 1..k: nothing else can be sampled."""
    nums = " | ".join(f'"{i}"' for i in range(k, 0, -1))  # longest first: "10" before "1"
    return f'root ::= "{{\\"codes\\": [" (code (", " code)*)? "]}}"\ncode ::= {nums}'


def parse_letter_probs(top: dict[str, float], labels: list[str]) -> list[float]:
    """P(label) per code over the top first tokens, normalised over the labels and `0` (no
    code); tokens match case- and space-insensitively. ValueError when none of them is there,
    or when a label's or 0's logprob is not a log-probability: NaN, not a number, or above 0
    (as the judge's parse_logprob_score: a NaN once became NaN scores cached "ok", 5 and 4
    were read as 0.73 and 0.27, 1000 overflowed math.exp). −inf is P = 0."""
    want = {c.casefold(): i for i, c in enumerate(labels)}
    p = [0.0] * len(labels)
    none = 0.0
    for token, logprob in top.items():
        t = str(token).strip().casefold()
        if logprob is None or (t not in want and t != "0"):
            continue
        if isinstance(logprob, bool) or not isinstance(logprob, int | float):
            raise ValueError(f"logprob {logprob!r} of {token!r} is not a number")
        # A log-probability is ≤ 0; allow the rounding of a server that prints 1e-7 for 0.
        if math.isnan(logprob) or logprob > 1e-6:
            raise ValueError(f"logprob {logprob!r} of {token!r} is not a log-probability (≤ 0)")
        if t in want:
            p[want[t]] += math.exp(min(logprob, 0.0))
        else:
            none += math.exp(min(logprob, 0.0))
    total = sum(p) + none
    if total == 0:
        raise ValueError(f"no code letter and no 0 among the top tokens {sorted(top)[:8]}")
    return [x / total for x in p]


def parse_codes(text: str, k: int) -> list[int]:
    """The 1-based code numbers of an answer, sorted, without repeats; ValueError otherwise."""
    m = re.search(r"\{.*\}", text or "", re.S)
    if not m:
        raise ValueError("no JSON object in the answer")
    obj = json.loads(m.group(0))
    codes = obj.get("codes") if isinstance(obj, dict) else None
    if not isinstance(codes, list):
        raise ValueError('no "codes" list in the answer')
    out = set()
    for c in codes:
        n = int(c) if isinstance(c, int | str) and str(c).strip().isdigit() else None
        if n is None or not 1 <= n <= k:
            raise ValueError(f"code {c!r} is not one of 1..{k}")
        out.add(n)
    return sorted(out)


def usable(answer, k: int, score_mode: str) -> bool:
    """Whether an answer may be stored (or used from the cache) as ok: k probabilities in
    [0, 1] (logprob mode) or code numbers 1..k (json mode)."""
    if not isinstance(answer, list):
        return False
    if score_mode == "json":
        return all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= k for c in answer)
    return len(answer) == k and all(
        isinstance(p, int | float) and not isinstance(p, bool) and math.isfinite(p) and 0 <= p <= 1
        for p in answer
    )


TABLE = CacheTable(
    "codings",
    asked=(("codebook", "TEXT NOT NULL", ""), ("passage", "TEXT NOT NULL", "")),
    answer=("answer", "TEXT", "JSON: P per code (logprob) or the 1-based codes (json)"),
)


def _answer_settings(s: CoderLLMSettings) -> dict:
    """A logprob answer is one letter: max_tokens counts only in json mode."""
    return answer_settings(s, s.max_tokens if s.score_mode == "json" else None)


def _key(model, prompt: CoderPrompt, book: str, passage: str, s: CoderLLMSettings) -> str:
    return canonical_key(
        {
            "model": model,
            "prompt_version": prompt.version,
            "prompt_sha256": prompt.sha256,
            "codebook": book,
            "passage": passage,
            **_answer_settings(s),
        }
    )


def _messages(prompt: CoderPrompt, book: str, speaker: str, passage: str, context: str) -> list:
    def fill(t: str) -> str:
        return (
            t.replace("{codebook}", book)
            .replace("{context}", context)
            .replace("{speaker}", speaker)
            .replace("{passage}", passage)
        )

    msgs = [{"role": "system", "content": fill(prompt.system)}] if prompt.system else []
    return msgs + [{"role": "user", "content": fill(prompt.user)}]


def passages(segments, context: int) -> list[tuple[str, str, str]]:
    """(speaker, text, context block) per segment row: the `context` segments before it in
    its transcript, as `Speaker: text` lines, shown to the model but not coded."""
    out = []
    rows = list(zip(segments["transcript"], segments["speaker"], segments["text"], strict=True))
    for i, (t, spk, text) in enumerate(rows):
        before = [r for r in rows[max(0, i - context) : i] if r[0] == t] if context else []
        block = "".join(f"{s}: {x}\n" for _t, s, x in before)
        block = f"Context, not to be coded:\n{block}\n" if block else ""
        out.append((str(spk or "speaker"), str(text), block))
    return out


def code_segments(
    themes,
    segments,
    settings: CoderLLMSettings,
    cache_path,
    *,
    rows=None,
    progress: bool = False,
) -> np.ndarray:
    """Segments × themes scores (themes: name, description; segments: transcript, speaker,
    text, in transcript order; rows: the positions of the segments to code, default all —
    the others still serve as context): P(code) in logprob mode, 1 for a listed code in json
    mode. Raises StepError when some requests failed; the answered ones stay cached and a
    rerun asks only the rest."""
    prompt = load_coder_prompt(settings.prompt, settings.score_mode)
    model = llm.endpoint_model(settings.base_url, settings.model)
    settings = with_server_id(settings)
    k = len(themes)
    labels = code_labels(k, settings.score_mode)
    book = codebook(themes["name"].tolist(), themes["description"].tolist(), labels)
    items = passages(segments, settings.context)
    if rows is not None:
        items = [items[int(i)] for i in rows]
    keys, jobs = [], {}
    for spk, text, ctx in items:
        passage = f"{ctx}\x00{spk}\x00{text}"
        key = _key(model, prompt, book, passage, settings)
        keys.append(key)
        jobs.setdefault(key, (spk, text, ctx, passage))
    with ExitStack() as stack:
        session = scoring_session(settings, TABLE, cache_path, stack, "coder")
        done = {k: json.loads(v) for k, v in session.answers(list(jobs)).items()}
        # An older version cached NaN scores "ok": such answers are asked again.
        done = {key: v for key, v in done.items() if usable(v, k, settings.score_mode)}
        misses = [key for key in jobs if key not in done]
        if misses:
            _ask(misses, jobs, done, session, _Coding(settings, prompt, book, labels), progress)
    out = np.zeros((len(items), k))
    for i, key in enumerate(keys):
        if settings.score_mode == "logprob":
            out[i] = done[key]
        else:
            out[i, [c - 1 for c in done[key]]] = 1.0
    return out


@dataclass(frozen=True)
class _Coding:
    """What every request of one coding shares: the settings, the prompt, the codebook and
    what the model answers per code (its labels)."""

    settings: CoderLLMSettings
    prompt: CoderPrompt
    book: str
    labels: list[str]


def _ask(misses, jobs, done, session: CallSession, coding: _Coding, progress) -> None:
    """Ask each miss in order, store its answer (or failure) at once and put the usable ones
    in `done`; StepError when some passage stays uncoded."""
    settings, redact = coding.settings, session.redact
    json_mode = settings.score_mode == "json"  # logprob mode asks no response_format
    failed = []
    with ExitStack() as stack:
        session.start()
        bar = stack.enter_context(tqdm(total=len(misses), desc="coder", disable=not progress))
        for key in misses:  # in order: a local server's one slot keeps the codebook's prefix
            spk, text, ctx, passage = jobs[key]
            messages = _messages(coding.prompt, coding.book, spk, text, ctx)
            res = session.ask(
                _attempt(session, coding, messages), "coder", sends_response_format=json_mode
            )
            if res.skipped:
                break
            if res.ok:
                answer, raw, usage = res.value
                done[key] = answer
            else:
                failed.append((text, res.error))
                answer, raw, usage = None, res.error.raw, {}
            session.store(
                key,
                coding.prompt,
                _answer_settings(settings),
                codebook=coding.book,
                passage=passage,
                status="ok" if res.ok else "failed",
                answer=json.dumps(answer) if answer is not None else None,
                raw_response=raw,
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                error=None if res.ok else redact(str(res.error)),
                attempts=res.attempts,
                seconds=res.seconds,
            )
            bar.update(1)
    if failed or len(done) < len(jobs):
        missing = len(jobs) - len(done)
        text, err = failed[0] if failed else ("", "not attempted: the endpoint kept failing")
        raise StepError(
            f"LLM coder: {missing} of {len(jobs)} passages not coded (first: "
            f"{' '.join(text.split())[:60]!r}: {err}). The {len(done)} coded ones are cached "
            f"in the coder cache; rerunning asks only the rest."
        )


def _attempt(session: CallSession, coding: _Coding, messages: list):
    """One passage's attempt(use_response_format, answer_failures) for session.ask: the
    request, and its answer parsed, (answer, raw, usage); an unusable answer is a Retry."""
    settings, k = coding.settings, len(coding.labels)
    logprob = settings.score_mode == "logprob"
    body = {
        "model": session.model,
        "messages": messages,
        "temperature": settings.temperature,
        "max_tokens": 1 if logprob else settings.max_tokens,
        "seed": settings.seed,
    }
    if logprob:
        body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)

    def attempt(use_rf: bool, _fails: int):
        b = dict(body)
        if use_rf and settings.base_url is None:
            b["grammar"] = grammar(k)
        elif use_rf:
            b["response_format"] = {"type": "json_object", "schema": _schema(k)}
        choice, usage = session.post(b)
        answer, raw = _parse_answer(choice, coding, session.redact)
        if not usable(answer, k, settings.score_mode):
            # Only a usable answer is stored "ok": anything else would be cached.
            raise llm.Retry(f"unusable answer {answer!r}", raw=raw, fatal=False)
        return answer, raw, usage

    return attempt


def _parse_answer(choice: dict, coding: _Coding, redact) -> tuple[list, str | None]:
    """(answer, raw text as stored) of a chat completion; a Retry when it cannot be read."""
    raw = None
    try:
        if coding.settings.score_mode == "logprob":
            top = llm.top_logprobs(choice)
            raw = redact(json.dumps(top, ensure_ascii=False))
            return parse_letter_probs(top, coding.labels), raw
        content = (choice.get("message") or {}).get("content") or ""
        if not isinstance(content, str):
            raise ValueError(f"the answer is a {type(content).__name__}, not text")
        raw = redact(content)
        return parse_codes(raw, len(coding.labels)), raw
    except (ValueError, TypeError, AttributeError, ArithmeticError) as e:
        raise llm.Retry(f"unparsable answer ({e})", raw=raw, fatal=False) from e


def _schema(k: int) -> dict:
    item = {"type": "integer", "minimum": 1, "maximum": k}
    codes = {"type": "array", "items": item, "uniqueItems": True}
    return {"type": "object", "properties": {"codes": codes}, "required": ["codes"]}
