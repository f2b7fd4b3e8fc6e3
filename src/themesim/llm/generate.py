"""LLM theme generation (LLM-TA style) through any OpenAI-compatible chat endpoint.

Transcript segments are packed into chunks that fit the model's context; per chunk and run the
model proposes themes (name, description, keywords, and with a prompt that asks for them
verbatim `quotes`) as JSON; one consolidation call per run
merges the candidates into the run's theme list. Runs differ by their seed (sampling at
temperature > 0). Every answer is cached in SQLite keyed by model, prompt version and sha256,
stage, seed, the text filled in and the sampling settings: a rerun makes no call and starts no
server. An unusable answer is retried with another seed, then the run stops with
an error naming the chunk and the answer; it never yields an empty theme set. See
docs/generate.md.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from themesim.defaults import schema_fields
from themesim.errors import InputError, StepError
from themesim.llm import client as llm
from themesim.llm.chunks import (
    chunk_transcripts,
    pack_lines,
    segment_lines,
    text_budget,
)
from themesim.llm.prompts import first_json, load_prompts
from themesim.llm.session import CacheTable, CallSession, CallStats, EndpointSettings
from themesim.store import canonical_key

log = logging.getLogger("themesim.llm.generate")

RESEED = 1000  # the k-th retry after an unusable answer samples with seed + k * RESEED
CSV_COLUMNS = ["id", "name", "description", "keywords"]
QUOTES_KEY = '"quotes"'  # a prompt naming this JSON key asks for quotes (generate_v2)


class GenerateError(StepError):
    """A generation call failed after its retries; the answers before it stay cached."""


@dataclass(frozen=True)
@schema_fields("generate_themes")  # the defaults: the schema's generate_themes
class GenerateSettings(EndpointSettings):
    WHERE = "generate_themes settings"

    prompt: str  # prompts/<prompt>_chunk.txt and prompts/<prompt>_merge.txt
    max_themes: int  # of a run's final list
    chunk_themes: int  # proposed per chunk
    temperature: float  # > 0, so runs with different seeds differ
    max_tokens: int  # per answer; reserved in the context next to the prompt
    chars_per_token: float  # approximate token count: characters / this (conservative)

    def __post_init__(self):
        super().__post_init__()
        where = self.WHERE
        for key, low in (("max_themes", 1), ("chunk_themes", 1), ("max_tokens", 16)):
            if getattr(self, key) < low:
                raise InputError(where, f"{key} must be ≥ {low}", f"Fix {key}")
        if self.n_ctx < 512 or self.chars_per_token <= 0:
            raise InputError(
                where, "n_ctx must be ≥ 512 and chars_per_token > 0", "Fix the settings"
            )


@dataclass
class GenerateStats(CallStats):
    chunks: int = 0  # transcript chunks (each asked once per run)
    requests: int = 0  # distinct answers needed (chunk and merge calls over all runs)
    cached: int = 0
    done: int = 0

    def asked(self) -> str:
        done = f"{self.cached} cached, {self.done} new"
        return f"{self.requests} answers ({done}) of {self.chunks} chunks"


def asks_quotes(prompts: dict) -> bool:
    """Does the prompt version ask each theme for verbatim quotes (its JSON names "quotes")?"""
    return all(QUOTES_KEY in p.text for p in prompts.values())


def theme_schema(max_themes: int, quotes: bool = False) -> dict:
    theme = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "keywords": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "description", "keywords"],
    }
    if quotes:
        theme["properties"]["quotes"] = {"type": "array", "items": {"type": "string"}}
        theme["required"].append("quotes")
    themes = {"type": "array", "items": theme, "minItems": 1, "maxItems": max_themes}
    return {"type": "object", "properties": {"themes": themes}, "required": ["themes"]}


# ---------------------------------------------------------------- parsing


def _keywords(value) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[,;]", value)
    if not isinstance(value, list):
        return []
    return [" ".join(str(k).split()) for k in value if str(k).strip()]


def _quotes(value) -> list[str]:
    """Quotes as given (whitespace collapsed: locating them ignores it anyway)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [" ".join(str(q).split()) for q in value if str(q).strip()]


def parse_themes(text: str, quotes: bool = False) -> list[dict]:
    """Themes of a JSON answer: `{"themes": [...]}` or a bare list of theme objects.

    Keeps themes with a non-empty name and description (case-insensitively distinct names);
    raises ValueError when the answer holds no JSON or no such theme. quotes: keep each
    theme's `quotes` (a prompt that asks for them); a theme without any keeps an empty list.
    """
    data = first_json(text)
    if isinstance(data, dict):
        items = data.get("themes")
        if items is None:
            lists = [v for v in data.values() if isinstance(v, list)]
            items = lists[0] if len(lists) == 1 else None
    else:
        items = data
    if not isinstance(items, list):
        raise ValueError('no "themes" list in the answer')
    themes, seen = [], set()
    for item in items:
        if not isinstance(item, dict):
            continue
        name = " ".join(str(item.get("name") or item.get("theme") or "").split())
        desc = " ".join(str(item.get("description") or "").split())
        if not name or not desc or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        theme = {"name": name, "description": desc, "keywords": _keywords(item.get("keywords"))}
        if quotes:
            theme["quotes"] = _quotes(item.get("quotes"))
        themes.append(theme)
    if not themes:
        raise ValueError(f"none of the {len(items)} items has a name and a description")
    return themes


def candidate_lines(themes: list[dict]) -> list[str]:
    """One line per candidate for the merge prompt; quotes only for themes that have them, so
    the merge text (and its cache key) of a prompt without quotes is unchanged."""
    return [
        f"- {t['name']}: {t['description']}"
        + (f" (keywords: {', '.join(t['keywords'])})" if t["keywords"] else "")
        + (
            f" (quotes: {' | '.join(json.dumps(q, ensure_ascii=False) for q in t['quotes'])})"
            if t.get("quotes")
            else ""
        )
        for t in themes
    ]


# ---------------------------------------------------------------- cache


TABLE = CacheTable(
    "generations",
    asked=(
        ("stage", "TEXT NOT NULL", "chunk | merge"),
        ("seed", "INTEGER NOT NULL", "the run's seed (a retry after an unusable answer reseeds)"),
        ("text", "TEXT NOT NULL", "what filled the prompt's {text} slot"),
    ),
    answer=("themes", "TEXT", "JSON list of {name, description, keywords}; NULL if failed"),
)


@dataclass
class _Call:
    stage: str
    seed: int
    text: str
    n_themes: int
    label: str  # for logs and errors, e.g. "run generated_run1 (seed 1), chunk 2 of 4"


class _Generator:
    """The calls of one generation job: cache first, then the endpoint (started on demand)."""

    def __init__(self, settings: GenerateSettings, cache_path, stack: ExitStack):
        self.s = settings
        self.prompts = load_prompts(settings.prompt)
        self.quotes = asks_quotes(self.prompts)
        self.session = CallSession(settings, TABLE, cache_path, stack, label="generate")
        self.model = self.session.model
        self.redact = self.session.redact
        self.cache_path = cache_path
        self.stats = GenerateStats()

    def answer_settings(self, call: _Call) -> dict:
        return {
            "temperature": self.s.temperature,
            "max_tokens": self.s.max_tokens,
            "max_themes": call.n_themes,
        }

    def cache_key(self, call: _Call) -> str:
        p = self.prompts[call.stage]
        return canonical_key(
            {
                "model": self.model,
                "prompt_version": p.version,
                "prompt_sha256": p.sha256,
                "stage": call.stage,
                "seed": call.seed,
                "text": call.text,
                **self.answer_settings(call),
            }
        )

    def themes(self, call: _Call) -> list[dict]:
        self.stats.requests += 1
        key = self.cache_key(call)
        cached = self.session.answers([key])
        if key in cached:
            self.stats.cached += 1
            return json.loads(cached[key])
        prompt = self.prompts[call.stage]
        messages = prompt.messages(call.text, call.n_themes)
        usage_seen: list[dict] = []
        raw_seen: list[str] = []

        def attempt(use_rf: bool, answer_failures: int) -> list[dict]:
            body = {
                "model": self.model,
                "messages": messages,
                "temperature": self.s.temperature,
                "max_tokens": self.s.max_tokens,
                "seed": call.seed + RESEED * answer_failures,
            }
            if use_rf:
                body["response_format"] = {
                    "type": "json_object",
                    "schema": theme_schema(call.n_themes, self.quotes),
                }
            choice, usage = self.session.post(body)
            usage_seen.append(usage)
            raw = self.redact((choice.get("message") or {}).get("content") or "")
            raw_seen.append(raw)
            try:
                themes = parse_themes(raw, self.quotes)
            except ValueError as e:
                cut = " (cut off at max_tokens)" if choice.get("finish_reason") == "length" else ""
                raise llm.Retry(f"unparsable answer{cut}: {e}", raw=raw, fatal=False) from e
            return themes[: call.n_themes]

        res = self.session.ask(attempt, f"generate {call.label}")
        self.stats.calls = self.session.state.calls
        p_tok = sum(int(u.get("prompt_tokens") or 0) for u in usage_seen)
        c_tok = sum(int(u.get("completion_tokens") or 0) for u in usage_seen)
        self.stats.prompt_tokens += p_tok
        self.stats.completion_tokens += c_tok
        error = None if res.ok else self.redact(str(res.error))
        raw = res.error.raw if res.error is not None else raw_seen[-1]
        self._store(key, call, res, raw, p_tok, c_tok, error)
        if not res.ok:
            self._fail(call, res, raw, error)
        self.stats.done += 1
        log.info(
            "generate %s: %d themes (%d prompt + %d completion tokens, %d attempt(s), %.1f s)",
            call.label,
            len(res.value),
            p_tok,
            c_tok,
            res.attempts,
            res.seconds,
        )
        return res.value

    def _store(self, key, call: _Call, res, raw, p_tok, c_tok, error) -> None:
        self.session.store(
            key,
            self.prompts[call.stage],
            self.answer_settings(call),
            stage=call.stage,
            seed=call.seed,
            text=call.text,
            status="ok" if res.ok else "failed",
            themes=json.dumps(res.value, ensure_ascii=False) if res.ok else None,
            raw_response=raw,
            prompt_tokens=p_tok,
            completion_tokens=c_tok,
            error=error,
            attempts=res.attempts,
            seconds=res.seconds,
        )

    def _fail(self, call: _Call, res, raw, error) -> None:
        what = error or "the run was stopped"
        answer = f"; last answer: {_snip(raw, 300)}" if raw else ""
        if what.startswith("HTTP 400"):
            answer += (
                ". If the server says the prompt exceeds its context, set n_ctx to the "
                "server's context or lower chars_per_token"
            )
        ok = self.stats.cached + self.stats.done
        raise GenerateError(
            self.redact(
                f"theme generation, {call.label} ({call.stage} prompt): {what} after "
                f"{res.attempts} attempt(s){answer}. The {ok} answers before it are cached in "
                f"{self.cache_path}; rerunning resumes from there. An answer the model cannot "
                "put into the JSON form may need a larger max_tokens or another model."
            )
        )


def _snip(text: str, n: int) -> str:
    one = " ".join(str(text).split())
    return repr(one if len(one) <= n else one[: n - 1] + "…")


# ---------------------------------------------------------------- runs


def generate_runs(
    segments: pd.DataFrame,
    seeds: dict[str, int],
    settings: GenerateSettings,
    cache_path: str | Path,
) -> tuple[dict[str, list[dict]], GenerateStats]:
    """Themes of each run (run name -> seed): per-chunk themes, then one consolidation.

    Calls go chunk by chunk across runs, so a local server reuses the chunk's evaluated prompt
    for every seed. Raises GenerateError (answers so far cached) when a call keeps failing.
    """
    t0 = time.monotonic()
    if not seeds:
        raise InputError("generate_themes", "no runs", "Set runs ≥ 1")
    lines = segment_lines(segments)
    if not lines:
        raise InputError(
            "generate_themes",
            "the transcripts hold no text",
            "List transcript files under transcripts: in the config",
        )
    with ExitStack() as stack:
        gen = _Generator(settings, cache_path, stack)
        cpt = settings.chars_per_token
        chunks = chunk_transcripts(
            lines, text_budget(gen.prompts["chunk"], settings, settings.chunk_themes), cpt
        )
        gen.stats.chunks = len(chunks)
        log.info("generate: %d transcript lines in %d chunks", len(lines), len(chunks))
        candidates: dict[str, list[dict]] = {run: [] for run in seeds}
        for i, chunk in enumerate(chunks, start=1):
            for run, seed in seeds.items():
                label = f"run {run} (seed {seed}), chunk {i} of {len(chunks)}"
                call = _Call("chunk", seed, chunk, settings.chunk_themes, label)
                candidates[run] += gen.themes(call)
        merge_budget = text_budget(gen.prompts["merge"], settings, settings.max_themes)
        out = {
            run: _consolidate(gen, run, seed, candidates[run], merge_budget)
            for run, seed in seeds.items()
        }
        gen.stats.seconds = time.monotonic() - t0  # the caller logs str(stats) once
        return out, gen.stats


def _consolidate(gen: _Generator, run: str, seed: int, themes: list[dict], budget: int):
    """Merge a run's candidates in calls that fit the context, until one call holds them all."""
    cpt, n = gen.s.chars_per_token, gen.s.max_themes
    level = 1
    while True:
        groups = pack_lines(candidate_lines(themes), budget, cpt)
        merged: list[dict] = []
        for j, group in enumerate(groups, start=1):
            part = f", part {j} of {len(groups)}" if len(groups) > 1 else ""
            label = f"run {run} (seed {seed}), merge {level}{part}"
            merged += gen.themes(_Call("merge", seed, "\n".join(group), n, label))
        if len(groups) == 1:
            return merged
        if len(merged) >= len(themes):
            raise InputError(
                "generate_themes settings",
                f"the {len(themes)} candidate themes of run {run} do not shrink when merged "
                f"in groups that fit n_ctx={gen.s.n_ctx}",
                "Raise n_ctx, or lower max_themes or chunk_themes",
            )
        themes, level = merged, level + 1


def _joined(items: list[str]) -> str:
    """A list cell of a theme file: items joined with "; " (a ";" inside one becomes ",")."""
    return "; ".join(k.replace(";", ",") for k in items)


def write_theme_csv(themes: list[dict], path, id_prefix: str = "T") -> None:
    """id,name,description,keywords (keywords joined with "; "), readable as a theme set; a
    `quotes` column (joined the same way) when the themes have quotes (generate_v2)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    quotes = any("quotes" in t for t in themes)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_COLUMNS + (["quotes"] if quotes else []))
        for i, t in enumerate(themes, start=1):
            row = [f"{id_prefix}{i:02d}", t["name"], t["description"], _joined(t["keywords"])]
            w.writerow(row + ([_joined(t.get("quotes", []))] if quotes else []))
