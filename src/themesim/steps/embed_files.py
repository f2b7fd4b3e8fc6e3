"""Embedding one file at a time: a theme set, its word-salad nulls, its keywords, the
transcript segments (tests and single-file use; the workflow's embedding job is
steps/embed.py's embed_method, which encodes every file of a method in one call)."""

from __future__ import annotations

import logging
from dataclasses import asdict

import numpy as np
import pandas as pd

from themesim.embed.encode import encode_with
from themesim.embed.texts import theme_keywords, word_salad_pool
from themesim.embed.vectors import write_embeddings, write_vector_table
from themesim.io.themes import read_themes_parquet

log = logging.getLogger("themesim")


def embed_set(themes_path, out, *, method: str, spec: dict, threads: int = 1, cache=False) -> None:
    themes = read_themes_parquet(themes_path)
    emb, source = encode_with(spec, themes["text"].tolist(), threads, cache=cache, what=method)
    write_embeddings(out, themes, emb, source, method)
    log.info("%s: %d texts embedded with %s (%s)", method, len(themes), source.model, source.path)


def embed_null_set(
    themes_path, out, *, method: str, spec: dict, pool: int, seed: int, threads=1, cache=False
):
    """The set's pool of P word-salad texts, embedded like the set itself (docs/nulls.md)."""
    themes = read_themes_parquet(themes_path)
    texts, like = word_salad_pool(themes["text"].tolist(), pool, seed) if pool else ([], [])
    emb, source = (
        encode_with(spec, texts, threads, cache=cache, what=f"{method} nulls")
        if texts
        else (np.zeros((0, 0)), None)
    )
    ids = themes["theme_id"].tolist()
    # theme_id: the B theme whose word count the salad text has.
    columns = {"pool_index": list(range(len(texts))), "theme_id": [ids[i] for i in like]}
    columns["text"] = texts
    meta = {"method": method, "pool": pool, "seed": seed}
    if source is not None:
        meta |= asdict(source)
    write_vector_table(out, columns, emb, meta)
    log.info("%s: a pool of %d word-salad texts of %d themes", method, len(texts), len(ids))


def embed_keywords_set(
    themes_path, out, *, method: str, spec: dict, top_k: int, threads=1, cache=False
):
    themes = read_themes_parquet(themes_path)
    keywords = theme_keywords(themes, top_k)
    ids = [t for t, kws in zip(themes["theme_id"], keywords, strict=True) for _ in kws]
    words = [w for kws in keywords for w in kws]
    emb, source = encode_with(spec, words, threads, cache=cache, what=f"{method} keywords")
    write_vector_table(
        out, {"theme_id": ids, "keyword": words}, emb, asdict(source) | {"method": method}
    )
    log.info("%s: %d keywords of %d themes embedded", method, len(words), len(themes))


def embed_segments(segments_path, out, *, method: str, spec: dict, threads=1, cache=False):
    seg = pd.read_parquet(segments_path)
    texts = seg["text"].tolist()
    emb, source = (
        encode_with(spec, texts, threads, cache=cache, what=f"{method} segments")
        if texts
        else (np.zeros((0, 0)), None)
    )
    meta = {"method": method} | (asdict(source) if source else {})
    columns = {"transcript": seg["transcript"].tolist(), "segment": seg["segment"].tolist()}
    write_vector_table(out, columns, emb, meta)
    log.info("%s: %d transcript segments embedded", method, len(texts))
