"""Paraphrases of reference themes by an LLM: the material of the paraphrase ceiling.

Each reference theme text gets k paraphrases from the same OpenAI-compatible client (and, with
base_url null, the same local llama.cpp server with the packaged model) as theme generation.
Answers are cached in SQLite keyed by model, prompt version and sha256, the theme text, k and
the sampling settings, so a rerun makes no call and starts no server. See docs/metrics.md
(paraphrase ceiling).
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from themesim.defaults import schema_fields
from themesim.errors import InputError, StepError
from themesim.llm import client as llm
from themesim.llm.prompts import PROMPT_DIR, chat_messages, first_json, prompt_roles, text_sha256
from themesim.llm.session import CacheTable, CallSession, EndpointSettings
from themesim.store import canonical_key

RESEED = 1000  # the j-th retry after an unusable answer samples with seed + j * RESEED
SLOTS = ("{text}", "{k}")


class ParaphraseError(StepError):
    """A paraphrase call failed after its retries; the answers before it stay cached."""


@dataclass(frozen=True)
@schema_fields("ceiling")  # the defaults: the schema's ceiling
class ParaphraseSettings(EndpointSettings):
    WHERE = "config ceiling"

    k: int  # paraphrases per theme
    prompt: str  # prompts/<prompt>.txt, or a path
    seed: int

    def __post_init__(self):
        if not isinstance(self.k, int) or self.k < 1:
            raise InputError(f"{self.WHERE}.k", f"{self.k!r} is not a count ≥ 1", "Set k: 5")
        super().__post_init__()


@dataclass
class ParaphrasePrompt:
    version: str
    text: str
    system: str | None
    sha256: str

    def messages(self, theme: str, k: int) -> list[dict]:
        return chat_messages(self.system, self.text.replace("{k}", str(k)).replace("{text}", theme))


def load_paraphrase_prompt(name: str) -> ParaphrasePrompt:
    path = Path(name) if os.sep in name else PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        versions = sorted(p.stem for p in PROMPT_DIR.glob("paraphrase_*.txt"))
        raise InputError(
            f"ceiling prompt {name!r}",
            f"{path} does not exist",
            f"Use one of {versions}, or a path to a file holding {{text}} and {{k}}",
        )
    raw = path.read_text(encoding="utf-8")
    text, system = prompt_roles(raw.split("\n"), path, SLOTS)
    return ParaphrasePrompt(path.stem, text, system, text_sha256(raw))


def paraphrase_schema(k: int) -> dict:
    items = {"type": "array", "items": {"type": "string"}, "minItems": k, "maxItems": k}
    return {"type": "object", "properties": {"paraphrases": items}, "required": ["paraphrases"]}


def parse_paraphrases(text: str, k: int, original: str) -> list[str]:
    """The first k distinct, non-empty paraphrases of a JSON answer that differ from the
    original (a copy would put the ceiling at 1); ValueError when fewer than k remain."""
    data = first_json(text)
    items = data.get("paraphrases") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError('no "paraphrases" list in the answer')
    seen, out = {" ".join(original.split()).casefold()}, []
    for item in items:
        if isinstance(item, dict):  # {"name": ..., "description": ...}
            item = ": ".join(str(item[f]) for f in ("name", "description") if item.get(f))
        one = " ".join(str(item).split())
        if one and one.casefold() not in seen:
            seen.add(one.casefold())
            out.append(one)
    if len(out) < k:
        raise ValueError(f"{len(out)} usable paraphrases, {k} asked for")
    return out[:k]


# Only answers are stored: a call that keeps failing stops the job.
TABLE = CacheTable(
    "paraphrases",
    asked=(("text", "TEXT NOT NULL", "the theme text paraphrased"), ("k", "INTEGER NOT NULL", "")),
    answer=("paraphrases", "TEXT NOT NULL", "JSON list of k strings"),
    outcome=False,
)


@dataclass
class ParaphraseStats:
    requests: int = 0
    cached: int = 0
    done: int = 0
    calls: int = 0

    def __str__(self) -> str:
        """One line for a job's log (its repr is for debugging)."""
        return f"{self.requests} texts ({self.cached} cached, {self.done} new), {self.calls} calls"


def paraphrase_texts(
    texts: list[str], settings: ParaphraseSettings, cache_path
) -> tuple[dict[str, list[str]], ParaphraseStats]:
    """text -> its k paraphrases, for each distinct text; cache first, then the endpoint.

    Raises ParaphraseError (answers so far cached) when a call keeps failing.
    """
    s = settings
    prompt = load_paraphrase_prompt(s.prompt)
    answer_settings = {"temperature": s.temperature, "max_tokens": s.max_tokens, "seed": s.seed}
    stats = ParaphraseStats()
    out: dict[str, list[str]] = {}
    with ExitStack() as stack:
        session = CallSession(s, TABLE, cache_path, stack, label="ceiling")
        redact = session.redact  # the API key is checked first, answers cached or not
        for text in dict.fromkeys(texts):
            stats.requests += 1
            fields = {"model": session.model, "prompt_version": prompt.version}
            fields |= {"prompt_sha256": prompt.sha256, "text": text, "k": s.k, **answer_settings}
            ckey = canonical_key(fields)
            cached = session.answers([ckey])
            if ckey in cached:
                stats.cached += 1
                out[text] = json.loads(cached[ckey])
                continue
            raw_seen: list[str] = []

            def attempt(use_rf: bool, failures: int, text=text, raw_seen=raw_seen):
                body = {
                    "model": session.model,
                    "messages": prompt.messages(text, s.k),
                    "temperature": s.temperature,
                    "max_tokens": s.max_tokens,
                    "seed": s.seed + RESEED * failures,
                }
                if use_rf:
                    body["response_format"] = {
                        "type": "json_object",
                        "schema": paraphrase_schema(s.k),
                    }
                choice, _ = session.post(body)
                raw = redact((choice.get("message") or {}).get("content") or "")
                raw_seen.append(raw)
                try:
                    return parse_paraphrases(raw, s.k, text)
                except ValueError as e:
                    raise llm.Retry(f"unusable answer: {e}", raw=raw, fatal=False) from e

            res = session.ask(attempt, f"paraphrase {text[:40]!r}")
            stats.calls = session.state.calls
            if not res.ok:
                last = raw_seen[-1] if raw_seen else ""
                raise ParaphraseError(
                    redact(
                        f"paraphrase ceiling, theme {text[:60]!r}: {res.error or 'stopped'} "
                        f"after {res.attempts} attempt(s); last answer: {last[:300]!r}. The "
                        f"{stats.cached + stats.done} answers before it are cached in "
                        f"{cache_path}; rerunning resumes from there"
                    )
                )
            session.store(
                ckey,
                prompt,
                answer_settings,
                text=text,
                k=s.k,
                paraphrases=json.dumps(res.value, ensure_ascii=False),
                raw_response=raw_seen[-1],
                attempts=res.attempts,
                seconds=res.seconds,
            )
            stats.done += 1
            out[text] = res.value
    return out, stats  # the caller logs str(stats) once
