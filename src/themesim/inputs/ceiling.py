"""The paraphrase ceiling's files (config `ceiling:`)."""

from __future__ import annotations

from themesim.inputs import Setup, at, embed, methods
from themesim.paths import CEILING, PARAPHRASES
from themesim.similarity import tfidf_options


def has_ceiling(setup: Setup, method: str) -> bool:
    """A paraphrase ceiling for this method: active, a kind that can score paraphrases,
    and the reference among the sets of its comparisons."""
    return (
        bool(setup.study.ceiling["active"])
        and methods.kind_of(setup, method).ceiling
        and setup.study.reference in setup.study.sets_for(method)
    )


def files(setup: Setup, method: str) -> list[str]:
    """The method's paraphrase similarities, an input of its metrics ([] when none)."""
    return [at(CEILING, method=method)] if has_ceiling(setup, method) else []


def paraphrase_files(setup: Setup) -> list[str]:
    """The paraphrases and per-method paraphrase similarities, when some method has a
    ceiling (archived beside the metric tables they feed)."""
    chosen = [m for m in setup.study.methods if has_ceiling(setup, m)]
    return [PARAPHRASES] + [at(CEILING, method=m) for m in chosen] if chosen else []


def paraphrase_settings(setup: Setup) -> dict:
    """Settings of the paraphrase calls (themesim.llm.paraphrase.ParaphraseSettings)."""
    return {k: v for k, v in setup.study.ceiling.items() if k != "active" and v is not None}


def spec(setup: Setup, method: str) -> dict:
    """What changes a method's paraphrase scores: its embedding or TF-IDF settings."""
    if methods.kind_of(setup, method).own_embeddings:
        return embed.settings(setup, method)
    return tfidf_options(methods.spec(setup, method))
