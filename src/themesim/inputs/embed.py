"""The theme tables, the embeddings and the word-salad pools each method reads and writes."""

from __future__ import annotations

from themesim.inputs import Setup, at, methods
from themesim.paths import (
    EMBEDDINGS,
    KEYWORDS,
    NULLS,
    NULLS_DIR,
    SEGMENT_EMBEDDINGS,
    SEGMENTS,
    THEMES,
)


def themes(setup: Setup, sets=None) -> list[str]:
    """Theme tables of those sets (default: every set of the study)."""
    return [at(THEMES, set=s) for s in (setup.study.sets if sets is None else sets)]


def method_themes(setup: Setup, method: str) -> list[str]:
    """Theme tables of the sets of a method's comparisons (its per-set work)."""
    return themes(setup, setup.study.sets_for(method))


def segments(setup: Setup) -> list[str]:
    return [SEGMENTS] if setup.study.transcripts else []


def segment_outputs(setup: Setup) -> list[str]:
    return [SEGMENT_EMBEDDINGS] if setup.study.transcripts else []


def settings(setup: Setup, method: str) -> dict:
    """The settings that change embeddings; thresholds are not among them."""
    spec = methods.spec(setup, method)
    return {k: spec.get(k) for k in ("model", "path", "batch_size", "device", "dtype")}


def cache(setup: Setup):
    """The vector cache folder setting (null = $THEMESIM_EMBED_CACHE or ~/.cache/...)."""
    return setup.config.get("embedding_cache")


def cache_on(setup: Setup) -> bool:
    return cache(setup) not in (False, "")


def embedded_sets(setup: Setup, method: str, sets) -> list[str]:
    return list(sets) if methods.kind_of(setup, method).own_embeddings else []


def file_map(setup: Setup, method: str, sets) -> dict[str, str]:
    """Set -> its embedding file, of those sets, for a method that embeds (else none)."""
    return {s: at(EMBEDDINGS, method=method, set=s) for s in embedded_sets(setup, method, sets)}


def files(setup: Setup, method: str, sets) -> list[str]:
    return list(file_map(setup, method, sets).values())


def theme_map(setup: Setup, sets=None) -> dict[str, str]:
    """Set -> its theme table, of those sets (default: every set of the study)."""
    sets = list(setup.study.sets if sets is None else sets)
    return dict(zip(sets, themes(setup, sets), strict=True))


def keyword_map(setup: Setup, method: str) -> dict[str, str]:
    """Set -> its keywords' embeddings, of the sets of the method's comparisons it embeds."""
    sets = embedded_sets(setup, method, setup.study.sets_for(method))
    return {s: at(KEYWORDS, method=method, set=s) for s in sets}


def segment_embedding_files(setup: Setup, method: str) -> list[str]:
    has = methods.kind_of(setup, method).own_embeddings and setup.study.transcripts
    return [at(SEGMENT_EMBEDDINGS, method=method)] if has else []


def theme_map_embeddings(setup: Setup, method: str) -> list[str]:
    """Embedding files a method's similarity and theme map read (an abtt variant corrects
    its base's vectors); none for a kind that reads no embeddings."""
    return files(setup, setup.study.embeddings_of(method), list(setup.study.sets))


def embedded_null_sets(setup: Setup, pairs=None) -> list[str]:
    """B sets whose word-salad pools the embedding job writes: of the study's
    comparisons, or of `pairs` (a restricted method's)."""
    study = setup.study
    b = study.b_sets if pairs is None else list(dict.fromkeys(b for _, b in pairs))
    return b if study.metrics["null_model"]["pool"] > 0 else []


def null_sets(setup: Setup, method: str) -> list[str]:
    """B sets with embedded word-salad pools (others build theirs in the metrics job)."""
    embedded = methods.kind_of(setup, method).nulls == "embedded"
    if not (embedded and setup.study.metrics["null_model"]["pool"] > 0):
        return []
    return list(dict.fromkeys(b for _, b in setup.study.pairs_for(method)))


def null_map(setup: Setup, method: str) -> dict[str, str]:
    """B set -> its embedded word-salad pool, in the embedding job's folder."""
    return {s: at(NULLS, method=method, set=s) for s in null_sets(setup, method)}


def null_folder(setup: Setup, method: str) -> list[str]:
    """The embedding job's folder of the pools the method reads (none without any)."""
    return [at(NULLS_DIR, method=method)] if null_sets(setup, method) else []


def embedded_null_files(setup: Setup, method: str) -> list[str]:
    """The pools the embedding job of a method writes, in its folder (NULLS_DIR)."""
    sets = embedded_null_sets(setup, setup.study.pairs_for(method))
    return [at(NULLS, method=method, set=s) for s in sets]


def reference_sides(setup: Setup, method: str) -> list[str]:
    """Sets that appear as A in a comparison of the method."""
    return list(dict.fromkeys(a for a, _ in setup.study.pairs_for(method)))
