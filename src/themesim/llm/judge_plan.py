"""What a judge run will ask, said before its first request: the distinct judgements, how many
the cache holds and the expected time. A run that would ask more than `max_pairs` stops there,
with the line that raises it."""

from __future__ import annotations

import sqlite3
import statistics
from dataclasses import dataclass

from themesim.errors import InputError

# Seconds a request when the cache has timed none of the model's: llama-server's logprob
# judgement on 2 cores (docs/judge.md, "Measured"), and a round trip to a hosted endpoint.
ASSUMED_S = {"local": 1.2, "endpoint": 1.0}
# The latest timed judgements whose median is the estimate.
TIMED = 500


def duration(seconds: float) -> str:
    """A duration for a person: 40 s, 12 min, 3.4 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class JudgePlan:
    judgements: int  # distinct requests the run needs
    cached: int  # of them answered by the cache
    in_flight: int  # requests at once
    seconds_each: float  # one request's wall time
    timed: int  # cached judgements seconds_each is the median of; 0: ASSUMED_S
    rate_limit: float | None = None  # requests started per second at most

    @property
    def missing(self) -> int:
        return self.judgements - self.cached

    @property
    def seconds(self) -> float:
        """Expected wall time of the missing judgements: in_flight at a time, each taking
        seconds_each, no faster than the rate limit."""
        per_second = self.in_flight / max(self.seconds_each, 1e-9)
        if self.rate_limit:
            per_second = min(per_second, self.rate_limit)
        return self.missing / per_second

    def __str__(self) -> str:
        if not self.missing:
            return f"{self.judgements:,} judgements, all cached: nothing to ask"
        basis = (
            f"the median of {self.timed:,} cached judgements"
            if self.timed
            else "assumed: none of this model's cached judgements is timed"
        )
        limit = f", at most {self.rate_limit:g} a second" if self.rate_limit else ""
        return (
            f"{self.missing:,} judgements to ask ({self.judgements:,} needed, "
            f"{self.cached:,} cached), about {duration(self.seconds)} at {self.in_flight} "
            f"in flight{limit} ({self.seconds_each:.2g} s a request: {basis})"
        )

    def check(self, max_pairs: int, key: str = "max_pairs of the judge method") -> None:
        """InputError when the run would ask more than max_pairs judgements."""
        if self.missing > max_pairs:
            raise InputError(
                key,
                f"{self} — more than max_pairs {max_pairs:,}",
                f"To run it, raise it to {self.missing} or more (under the judge method in "
                "config.yaml: max_pairs: N), or judge fewer comparisons (comparisons:)",
            )


def timed_seconds(con: sqlite3.Connection, model: str) -> list[float]:
    """The wall times of the model's latest judgements stored ok, newest first."""
    rows = con.execute(
        "SELECT seconds FROM judgements WHERE status = 'ok' AND model = ? AND seconds > 0 "
        "ORDER BY rowid DESC LIMIT ?",
        (model, TIMED),
    )
    return [float(s) for (s,) in rows]


def plan_keys(con: sqlite3.Connection | None, keys, cached: int, model: str, settings) -> JudgePlan:
    """The plan of judging `keys` (distinct) of which `cached` are in the cache `con` (None:
    no cache yet), with the judge's settings (in_flight, rate_limit, base_url)."""
    seconds = timed_seconds(con, model) if con is not None and len(keys) > cached else []
    assumed = ASSUMED_S["local" if settings.base_url is None or settings.server_id else "endpoint"]
    return JudgePlan(
        judgements=len(keys),
        cached=cached,
        in_flight=settings.in_flight,
        seconds_each=statistics.median(seconds) if seconds else assumed,
        timed=len(seconds),
        rate_limit=settings.rate_limit,
    )
