"""The LLM judge's cache: the SQLite table of judgements, each keyed by everything that makes
its answer (model, prompt, texts, answer settings), what counts as cached, what is stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from themesim.llm.judge_ask import Outcome, compact_json, order_free
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.prompts import JudgePrompt
from themesim.llm.session import CacheTable, CallSession, answer_settings
from themesim.store import canonical_key

TABLE = CacheTable(
    "judgements",
    asked=(("text_a", "TEXT NOT NULL", ""), ("text_b", "TEXT NOT NULL", "")),
    answer=("score", "REAL", "NULL when failed"),
)


def _answer_settings(settings: JudgeSettings) -> dict:
    out = answer_settings(settings, settings.effective_max_tokens)
    if order_free(settings):
        # Every prompt from an empty slot: other numbers than a reused prefix gave, so other
        # keys (a cache_prompt: true run keeps the keys of the versions before).
        out["cache_prompt"] = False
    if compact_json(settings):
        # The answer's fixed prefix is prefilled, not generated: other tokens, other keys.
        out["grammar"] = "prefill"
    return out


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


def cached_ok(
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


def store_outcome(
    session: CallSession, key, prompt, text_a, text_b, settings, out: Outcome
) -> None:
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


def stored_failures(con: sqlite3.Connection, keys: list[str]) -> list[tuple[str, Outcome]]:
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
            found[k] = Outcome("failed", raw=raw, error=error, attempts=int(attempts or 0))
    return [(k, found[k]) for k in keys if k in found]
