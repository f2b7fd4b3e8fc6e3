"""Locate a theme's quotes in the transcripts.

A quote is found exactly when it occurs in a transcript's plain text after normalising
whitespace, case and quote characters (`spans.normalise`); otherwise fuzzily when rapidfuzz's
`fuzz.partial_ratio_alignment` of the normalised quote against the normalised text reaches
`FUZZY_CUTOFF` (0-100) — a quote an LLM shortened or re-punctuated still counts, one it
invented does not. Quotes shorter than `MIN_FUZZY_CHARS` are matched exactly only: a few
words match something by chance.
"""

from __future__ import annotations

import math

import pandas as pd
from rapidfuzz import fuzz

from themesim.io.spans import find_in, norm, normalise

FUZZY_CUTOFF = 90.0
MIN_FUZZY_CHARS = 20
LOCATED_COLUMNS = ["theme_id", "quote", "transcript", "start", "end", "score", "match"]
MISSING_COLUMNS = ["theme_id", "quote"]


def locate_quote(
    quote: str, texts: dict[str, str], cutoff: float = FUZZY_CUTOFF, normalised=None
) -> tuple[str, int, int, float, str] | None:
    """(transcript, start, end, score, "exact"|"fuzzy") of the quote's best place, or None.

    Exact hits win (the first transcript in name order); else the highest fuzzy score at or
    above `cutoff`, ties to the first transcript. normalised: a cache of normalised
    transcripts (name -> `spans.normalise` of its text) for the caller's loop: each
    transcript is normalised once, not once per quote.
    """
    q = norm(quote)
    if not q:
        return None
    normalised = {} if normalised is None else normalised
    for name in sorted(texts):
        if name not in normalised:
            normalised[name] = normalise(texts[name])
    normed = {name: normalised[name] for name in sorted(texts)}
    for name, (hay, index) in normed.items():
        hit = find_in(q, hay, index, 0)
        if hit is not None:
            return name, hit[0], hit[1], 100.0, "exact"
    if len(q) < MIN_FUZZY_CHARS:
        return None
    best = None
    for name, (hay, index) in normed.items():
        if not hay:
            continue
        a = fuzz.partial_ratio_alignment(q, hay, score_cutoff=cutoff)
        if a is None or a.score < cutoff or a.dest_end <= a.dest_start:
            continue
        if best is None or a.score > best[3]:
            best = (name, index[a.dest_start], index[a.dest_end - 1] + 1, float(a.score), "fuzzy")
    return best


def locate_quotes(
    themes: pd.DataFrame, texts: dict[str, str], cutoff: float = FUZZY_CUTOFF, normalised=None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(located, missing) for every quote of every theme (`theme_id`, `quotes` columns).

    located: LOCATED_COLUMNS, one row per quote found; missing: the quotes found nowhere.
    normalised: locate_quote's cache, kept by a caller that locates several sets' quotes.
    """
    found, missing = [], []
    normalised = {} if normalised is None else normalised
    for tid, quotes in zip(themes["theme_id"], themes["quotes"], strict=True):
        for quote in quotes:
            hit = locate_quote(quote, texts, cutoff, normalised)
            if hit is None:
                missing.append((tid, quote))
            else:
                found.append((tid, quote, *hit))
    located = pd.DataFrame(found, columns=LOCATED_COLUMNS).astype(
        {"start": "int64", "end": "int64", "score": "float64"}
    )
    return located, pd.DataFrame(missing, columns=MISSING_COLUMNS)


def quote_grounding_rate(located: pd.DataFrame, missing: pd.DataFrame) -> float:
    """Share of a set's quotes found in the transcripts; NaN for a set without quotes."""
    n = len(located) + len(missing)
    return len(located) / n if n else math.nan
