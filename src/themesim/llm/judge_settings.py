"""The LLM judge's settings: its endpoint's (session.EndpointSettings) and the kind's own
(schema: methods, x-kinds llm_judge), in a module of their own so the judgement (judge_ask),
its cache (judge_cache) and the matrix (judge) each import them."""

from __future__ import annotations

from dataclasses import dataclass

from themesim.defaults import schema_fields
from themesim.errors import InputError
from themesim.llm.session import EndpointSettings


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
    # Requests in flight; None: 2 to a base_url, 1 to the local server (whose one slot then
    # gives the same scores bit for bit on every run). The local server gets as many slots.
    concurrency: int | None
    # The most judgements one run asks (those cached not counted): a study above it stops
    # before its first request, with the count and the expected time.
    max_pairs: int
    # Requests started per second at most (a provider's rate limit); None: no limit.
    rate_limit: float | None
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
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError(self.WHERE, "concurrency must be ≥ 1", "Fix the judge settings")
        if self.max_pairs < 0:
            raise InputError(self.WHERE, "max_pairs must be ≥ 0", "Fix the judge settings")
        if self.rate_limit is not None and not self.rate_limit > 0:
            raise InputError(
                self.WHERE, "rate_limit must be > 0 requests a second (or null)", "Fix it"
            )

    @property
    def in_flight(self) -> int:
        """Requests in flight: `concurrency`, or by default 2 to a base_url and 1 to the
        local server (one slot: the same scores on every run)."""
        if self.concurrency is not None:
            return self.concurrency
        return 2 if self.base_url is not None else 1

    @property
    def effective_max_tokens(self) -> int:
        return 1 if self.score_mode == "logprob" else self.max_tokens
