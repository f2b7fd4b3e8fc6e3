"""What every LLM caller shares: its settings' common fields, its SQLite cache table and one
session of cached calls (the judge, theme generation, paraphrases and the grounding coder).

A session opens the caller's cache, reads the API key from the variable the settings name
(scrubbed from every message), starts the endpoint on the first call that the cache cannot
answer (a local llama.cpp server when base_url is null), retries each call with backoff
(themesim.llm.client.with_retries) and stores each answer, committed at once.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import ClassVar

from themesim.errors import InputError
from themesim.llm import client as llm
from themesim.llm.server import backend_id
from themesim.store import open_sqlite


@dataclass(frozen=True)
class EndpointSettings:
    """The settings every LLM caller has. The defaults of those in a caller's config section
    are the schema's, given to its class by `themesim.defaults.schema_fields`: none here."""

    WHERE: ClassVar[str] = "llm settings"  # the config key named in an error

    base_url: str | None  # None: start a local llama.cpp server with the packaged model
    model: str | None  # name sent to the endpoint; None with base_url None: packaged
    api_key_env: str | None  # NAME of the env var holding the key, never the key
    prompt: str  # a prompt version under llm/prompts/, or a path
    temperature: float
    max_tokens: int  # per answer
    n_ctx: int  # local server only: the model's context in tokens
    max_retries: int  # extra attempts after the first, per call
    timeout_s: float  # per request, the whole of it (a local server's queue included)
    backoff_s: float = 1.0  # first wait; doubles each retry
    backoff_max_s: float = 30.0  # cap on one wait
    # local server only; None: the CPUs this process may use (a coder's is its schema's)
    threads: int | None = None

    def __post_init__(self):
        if self.base_url is not None and not self.model:
            raise InputError(
                self.WHERE,
                "base_url is set but model is not",
                "Give the model name the endpoint expects",
            )
        if self.max_retries < 0:
            raise InputError(self.WHERE, "max_retries must be ≥ 0", f"Fix {self.WHERE}")


def with_server_id(settings, parallel: int = 1):
    """Settings whose server_id names the local server that answers (base_url None) with its
    `parallel` slots: its build, backend and slots are part of a cache key
    (themesim.llm.server.backend_id)."""
    if settings.base_url is not None:
        return settings

    return replace(settings, server_id=backend_id(settings.server, parallel))


@dataclass
class CallStats:
    """What a caller's job asked (its own fields and `asked`) and what that cost: requests
    sent, tokens and time, counted alike by the judge and theme generation."""

    calls: int = 0  # HTTP requests sent, retries included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def asked(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        """One line for a job's log (its repr is for debugging)."""
        return (
            f"{self.asked()}, {self.calls} calls, {self.prompt_tokens} prompt + "
            f"{self.completion_tokens} completion tokens, {self.seconds:.1f} s"
        )


def answer_settings(settings, max_tokens: int | None) -> dict:
    """What of a scoring caller's settings (the judge's, the coder's) changes its answers: in
    its cache keys and stored beside each answer. Score mode, temperature, seed, `max_tokens`
    where the caller counts it, and the local server that answered: the two local servers
    (and two llama.cpp builds) differ in the last digits of a logprob score, so their scores
    never share a cache entry. Other endpoints keep their keys."""
    out = {"score_mode": settings.score_mode, "temperature": settings.temperature}
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
    out["seed"] = settings.seed
    if settings.server_id is not None:
        out["server"] = settings.server_id
    return out


# ---------------------------------------------------------------- the cache table

_HEAD = (
    ("key", "TEXT PRIMARY KEY", "sha256 of canonical JSON of everything that changes the answer"),
    ("model", "TEXT NOT NULL", ""),
    ("prompt_version", "TEXT NOT NULL", ""),
    ("prompt_sha256", "TEXT NOT NULL", ""),
)
_STATUS = (("status", "TEXT NOT NULL CHECK (status IN ('ok', 'failed'))", ""),)
_USAGE = (
    ("prompt_tokens", "INTEGER", ""),
    ("completion_tokens", "INTEGER", ""),
    ("error", "TEXT", ""),
)
_TAIL = (("attempts", "INTEGER", ""), ("seconds", "REAL", ""), ("updated_at", "TEXT NOT NULL", ""))


@dataclass(frozen=True)
class CacheTable:
    """One caller's table: the common columns around its own (what was asked, its answer).

    outcome: rows are `ok` or `failed` (a failed one is asked again) and keep token counts
    and the error; without it only answers are stored (the paraphrase cache)."""

    name: str
    asked: tuple  # (column, SQL type, comment) of what was asked, after the prompt
    answer: tuple  # (column, SQL type, comment)
    outcome: bool = True

    @property
    def columns(self) -> tuple:
        settings = (("settings", "TEXT NOT NULL", "JSON of the sampling settings of the call"),)
        raw = (("raw_response", "TEXT", "the answer text, or the last error body"),)
        status = _STATUS if self.outcome else ()
        usage = _USAGE if self.outcome else ()
        return _HEAD + self.asked + settings + status + (self.answer,) + raw + usage + _TAIL

    @property
    def schema(self) -> str:
        cols = self.columns
        lines = [
            f"    {name} {kind}{',' if i < len(cols) - 1 else ''}{f'  -- {note}' if note else ''}"
            for i, (name, kind, note) in enumerate(cols)
        ]
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n" + "\n".join(lines) + "\n)"

    def open(self, path) -> sqlite3.Connection:
        return open_sqlite(path, self.schema)

    def insert(self, con: sqlite3.Connection, row: dict) -> None:
        """Store one row (every column by name) and commit it at once."""
        names = [c[0] for c in self.columns]
        con.execute(
            f"INSERT OR REPLACE INTO {self.name} ({', '.join(names)}) "
            f"VALUES ({','.join('?' * len(names))})",
            [row.get(n) for n in names],
        )
        con.commit()

    def answers(self, con: sqlite3.Connection, keys, where: str = "") -> dict:
        """key -> stored answer of the keys among `keys` stored ok (and meeting `where`)."""
        ok = "status = 'ok' AND " if self.outcome else ""
        found = {}
        for i in range(0, len(keys), 500):
            chunk = list(keys[i : i + 500])
            rows = con.execute(
                f"SELECT key, {self.answer[0]} FROM {self.name} WHERE {ok}{where}"
                f"key IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            found.update(dict(rows))
        return found


# ---------------------------------------------------------------- one session of calls


class CallSession:
    """The calls of one job: its cache, key and redaction, the endpoint (started on the first
    call that needs it) and the retries, with the settings' retry budget. Thread-safe for
    calls (post, ask); the cache connection belongs to the thread that made the session."""

    def __init__(
        self,
        settings: EndpointSettings,
        table: CacheTable,
        cache_path,
        stack: ExitStack,
        *,
        label: str,
        rate_limit: float | None = None,
        **endpoint_options,
    ) -> None:
        self.s = settings
        self.table = table
        self.cache_path = cache_path
        self.label = label
        self.model = llm.endpoint_model(settings.base_url, settings.model)
        self.state = llm.CallState()
        self.con = table.open(cache_path)
        stack.callback(self.con.close)
        self._stack = stack
        self._options = endpoint_options
        self._rate_limit = rate_limit
        self._url: str | None = None
        self.http: llm.Http | None = None

    @cached_property
    def key(self) -> str | None:
        """The API key, read when first needed (a job answered from its cache needs none)."""
        return llm.api_key(self.s.api_key_env, self.s.WHERE)

    @cached_property
    def redact(self) -> llm.Redactor:
        return llm.Redactor(self.key)

    @cached_property
    def headers(self) -> dict:
        return llm.auth_headers(self.key)

    def start(self) -> str:
        """The chat completions URL; the first call starts a local server when one is needed."""
        if self._url is None:
            base = self._stack.enter_context(
                llm.endpoint(
                    self.s.base_url,
                    n_ctx=self.s.n_ctx,
                    threads=self.s.threads,
                    label=self.label,
                    **self._options,
                )
            )
            self.http = self._stack.enter_context(llm.Http(self._rate_limit))
            self._url = f"{base}/chat/completions"
            self.headers  # noqa: B018 (read once here, not by the calls' threads)
        return self._url

    def post(self, body: dict) -> tuple[dict, dict]:
        """(first choice, usage) of one request; raises client.Retry / client.GiveUp."""
        url = self.start()
        return llm.post_chat(url, self.headers, body, self.s.timeout_s, self.redact, self.http)

    def ask(self, attempt, label: str, *, sends_response_format: bool = True) -> llm.Attempted:
        """attempt(use_response_format, answer_failures) until it returns, with backoff."""
        return llm.with_retries(
            attempt,
            self.state,
            max_retries=self.s.max_retries,
            backoff_s=self.s.backoff_s,
            backoff_max_s=self.s.backoff_max_s,
            redact=self.redact,
            label=label,
            sends_response_format=sends_response_format,
        )

    def answers(self, keys, where: str = "") -> dict:
        return self.table.answers(self.con, keys, where)

    def store(self, key: str, prompt, settings: dict, **columns) -> None:
        """One answer (or failure) with the common columns filled in."""
        row = {
            "key": key,
            "model": self.model,
            "prompt_version": prompt.version,
            "prompt_sha256": prompt.sha256,
            "settings": json.dumps(settings, sort_keys=True),
            "updated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        self.table.insert(self.con, row | columns)


def scoring_session(
    settings,
    table: CacheTable,
    cache_path,
    stack: ExitStack,
    label: str,
    *,
    parallel: int = 1,
    rate_limit: float | None = None,
):
    """The session of a caller that scores by logprobs or a JSON answer (the judge, the
    coder): a local server keeps logits only in logprob mode, `server` picks its backend and
    `parallel` its slots (one per request in flight)."""
    return CallSession(
        settings,
        table,
        cache_path,
        stack,
        label=label,
        rate_limit=rate_limit,
        logits_all=settings.score_mode == "logprob",
        backend=settings.server,
        parallel=parallel,
    )
