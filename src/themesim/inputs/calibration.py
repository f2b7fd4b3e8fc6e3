"""What each method's calibration job reads, and who scores the rated pairs first."""

from __future__ import annotations

from themesim.inputs import Setup, at, embed, methods, similarity
from themesim.metrics.settings import calibration_settings
from themesim.paths import CACHES, CALIBRATION_TABLE, ISOTONIC
from themesim.study.methods import uses_calibrated


def settings(setup: Setup) -> dict:
    """config `calibration:` with its defaults (metrics.settings, docs/thresholds.md)."""
    return calibration_settings(setup.config.get("calibration"))


def uses_calibration(setup: Setup, method: str) -> bool:
    return uses_calibrated(setup.study.thresholds[method], methods.spec(setup, method))


def has_calibration(setup: Setup, method: str) -> bool:
    """Rated pairs are configured and the method's kind can score them (a kind that
    calibrates_on_request: only for a method that uses `calibrated`)."""
    k = methods.kind_of(setup, method)
    if not (settings(setup)["pairs"] and k.calibrates):
        return False
    return uses_calibration(setup, method) or not k.calibrates_on_request


def table(setup: Setup, method: str) -> str:
    return at(CALIBRATION_TABLE, method=method)


def strength_fits(setup: Setup) -> list[str]:
    """Methods whose verdicts read the partner's strength as P(match): an isotonic fit
    on the method's own (cosine) scale."""
    return [
        m
        for m in setup.study.methods
        if has_calibration(setup, m) and methods.spec(setup, m).get("scale", "cosine") == "cosine"
    ]


def isotonic_fit(setup: Setup, method: str) -> str:
    return at(ISOTONIC, method=method)


def files(setup: Setup, method: str) -> list[str]:
    """What the metrics rule reads to resolve `calibrated` (nothing when unused): the one
    job that resolves thresholds and scale; it writes them to thresholds.csv."""
    if not uses_calibration(setup, method):
        return []
    return [table(setup, method), isotonic_fit(setup, method)]


def spec(setup: Setup, method: str) -> dict:
    """The settings that make the pairs' scores: the model (an abtt variant's base) and d."""
    given, k = methods.spec(setup, method), methods.kind_of(setup, method)
    model = embed.settings(setup, k.embeddings_of(method, given)) if k.reads_embeddings else {}
    return model | k.similarity_spec(given)


def embeddings(setup: Setup, method: str) -> list[str]:
    """A kind whose pair scores need the study's theme vectors (abtt's correction)."""
    if not methods.kind_of(setup, method).pairs_read_study_embeddings:
        return []
    return embed.files(setup, setup.study.embeddings_of(method), list(setup.study.sets))


def cache(setup: Setup, method: str):
    """The judge's judgement cache (the one its similarity rule fills) for a kind that
    keeps one, else the embedding cache setting."""
    return CACHES["judge"] if methods.kind_of(setup, method).judge_cache else embed.cache(setup)


def embeds_rated_pairs(setup: Setup, method: str) -> bool:
    """The embedding job of the method whose model scores this method's rated pairs puts
    their vectors in the cache (steps.embed.calibration_texts): no second model load."""
    k = methods.kind_of(setup, method)
    return has_calibration(setup, method) and k.reads_embeddings and embed.cache_on(setup)


def embedded_rated_pairs(setup: Setup, method: str) -> list[str]:
    """The rated pairs an embedding job encodes (for every method scoring with its model);
    the rule reads them as `ancient`: an edit of the file reruns the calibration jobs,
    which encode its new texts, not the embedding job and everything made from it."""
    users = [
        m
        for m in setup.study.methods
        if embeds_rated_pairs(setup, m)
        and methods.kind_of(setup, m).embeddings_of(m, methods.spec(setup, m)) == method
    ]
    return [settings(setup)["pairs"]] if users else []


def after_embed(setup: Setup, method: str) -> list[str]:
    """An embedding file of the model's job, so calibration runs after it fills the cache."""
    if not embeds_rated_pairs(setup, method):
        return []
    base = methods.kind_of(setup, method).embeddings_of(method, methods.spec(setup, method))
    return embed.files(setup, base, [setup.study.reference])


def judges_rated_pairs(setup: Setup, method: str) -> bool:
    """The method's similarity job judges its rated pairs into the judgement cache, so the
    calibration job finds them there and starts no second LLM server."""
    return has_calibration(setup, method) and methods.kind_of(setup, method).judge_cache


def judged_rated_pairs(setup: Setup, method: str) -> list[str]:
    """The rated pairs the judge's similarity job judges (read as `ancient`: an edit of the
    file reruns the calibration job, which judges its new pairs)."""
    return [settings(setup)["pairs"]] if judges_rated_pairs(setup, method) else []


def after_judge(setup: Setup, method: str) -> list[str]:
    """The judge's similarity manifest, so calibration runs after it fills the cache."""
    return [similarity.manifest(setup, method)] if judges_rated_pairs(setup, method) else []


def matrix_pairs(setup: Setup, method: str) -> list:
    """The pairs whose score matrices (made elsewhere) may hold the rated pairs."""
    return setup.study.method_pairs(method) if methods.kind_of(setup, method).reads_matrices else []


def sets(setup: Setup, method: str) -> list[str]:
    """Sets whose theme tables name the rows and columns of those matrices."""
    return setup.study.sets_for(method) if methods.kind_of(setup, method).reads_matrices else []
