"""Embedding rules: theme sets, word-salad nulls, keywords and transcript segments.

embed_method is the workflow's one embedding job per method: one model load, and every text
the method needs encoded in one call (sorted, deduplicated, through the vector cache),
including the rated pairs of `calibration.pairs`, which are only cached: the calibration job
then finds them there and never loads the model. The per-kind functions below it embed one
file each (tests and single-file use)."""

from __future__ import annotations

import logging

import numpy as np

from themesim.embed.encode import encode_with

log = logging.getLogger("themesim")


def embed_set(themes_path, out, *, method: str, spec: dict, threads: int = 1, cache=False) -> None:
    from themesim.embed.vectors import write_embeddings
    from themesim.io.themes import read_themes_parquet

    themes = read_themes_parquet(themes_path)
    emb, source = encode_with(spec, themes["text"].tolist(), threads, cache=cache, what=method)
    write_embeddings(out, themes, emb, source, method)
    log.info("%s: %d texts embedded with %s (%s)", method, len(themes), source.model, source.path)


def embed_null_set(
    themes_path, out, *, method: str, spec: dict, pool: int, seed: int, threads=1, cache=False
):
    """The set's pool of P word-salad texts, embedded like the set itself (docs/nulls.md)."""
    from dataclasses import asdict

    from themesim.embed.texts import word_salad_pool
    from themesim.embed.vectors import write_vector_table
    from themesim.io.themes import read_themes_parquet

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
    from dataclasses import asdict

    from themesim.embed.texts import theme_keywords
    from themesim.embed.vectors import write_vector_table
    from themesim.io.themes import read_themes_parquet

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
    from dataclasses import asdict

    import pandas as pd

    from themesim.embed.vectors import write_vector_table

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


def embed_method(
    themes: dict,
    out: dict,
    *,
    method: str,
    spec: dict,
    null_sets=(),
    pool: int = 0,
    seed: int = 0,
    top_k: int = 5,
    segments=None,
    pairs=None,
    threads=1,
    cache=False,
) -> None:
    """Every file a method embeds, from one encode of its distinct texts.

    themes: set -> theme parquet; out: {"embeddings"|"keywords"|"nulls": {set: path},
    "segments": path or None}. The files are those the per-kind functions write. pairs: the
    rated-pairs CSV whose texts go into the vector cache only (none without a cache).
    """
    from dataclasses import asdict

    from themesim.embed.cache import cache_dir
    from themesim.embed.columns import read_segment_columns, read_theme_columns
    from themesim.embed.encode import release_models
    from themesim.embed.keyword_cache import sets_keywords
    from themesim.embed.texts import word_salad_pool
    from themesim.embed.vectors import text_sha256, write_embeddings, write_vector_table

    # Column lists read with pyarrow: this job imports no pandas (memory beside the model).
    tables = {s: read_theme_columns(p) for s, p in themes.items()}
    # TF-IDF keywords from the cache folder or a child process: no scikit-learn in this one.
    keywords = sets_keywords(tables, top_k, cache_dir(cache))
    salads = {
        s: word_salad_pool(tables[s]["text"], pool, seed) if pool else ([], []) for s in null_sets
    }
    seg = read_segment_columns(segments) if segments else None
    texts = [t for table in tables.values() for t in table["text"]]
    texts += [w for kws in keywords.values() for ws in kws for w in ws]
    texts += [t for salad, _ in salads.values() for t in salad]
    texts += seg["text"] if seg is not None else []
    rated = calibration_texts(pairs, cache)
    texts += rated
    unique = sorted(set(texts))  # one order and composition, whatever the sets' order
    emb, source = (
        encode_with(spec, unique, threads, cache=cache, what=method)
        if unique
        else (np.zeros((0, 0)), None)
    )
    release_models()  # every text is encoded: the writes below need no model
    vectors = dict(zip(map(text_sha256, unique), emb, strict=True))
    dim = emb.shape[1] if len(unique) else 0

    def rows(items):
        if not items:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([vectors[text_sha256(t)] for t in items])

    meta = {"method": method} | (asdict(source) if source else {})
    for s, path in out.get("embeddings", {}).items():
        write_embeddings(path, tables[s], rows(tables[s]["text"]), source, method)
    for s, path in out.get("keywords", {}).items():
        kws = keywords[s]
        ids = [t for t, ws in zip(tables[s]["theme_id"], kws, strict=True) for _ in ws]
        words = [w for ws in kws for w in ws]
        write_vector_table(path, {"theme_id": ids, "keyword": words}, rows(words), meta)
    for s, path in out.get("nulls", {}).items():
        salad, like = salads[s]
        ids = tables[s]["theme_id"]
        columns = {"pool_index": list(range(len(salad))), "theme_id": [ids[i] for i in like]}
        columns["text"] = salad
        null_meta = {"method": method, "pool": pool, "seed": seed} | (meta if salad else {})
        emb_null = rows(salad) if salad else np.zeros((0, 0))
        write_vector_table(path, columns, emb_null, null_meta)
        log.info(
            "%s: a pool of %d word-salad texts of %d themes (%s)", method, len(salad), len(ids), s
        )
    if out.get("segments"):
        columns = {"transcript": seg["transcript"], "segment": seg["segment"]}
        texts_seg = seg["text"]
        write_vector_table(
            out["segments"], columns, rows(texts_seg) if texts_seg else np.zeros((0, 0)), meta
        )
    log.info(
        "%s: %d sets, %d null pools of %d, %d transcript segments: %d distinct texts",
        method,
        len(out.get("embeddings", {})),
        len(out.get("nulls", {})),
        pool,
        0 if seg is None else len(seg["text"]),
        len(unique),
    )
    if rated:
        log.info("%s: %d texts of rated pairs (%s) in the vector cache", method, len(rated), pairs)


def calibration_texts(pairs, cache) -> list[str]:
    """The rated pairs' texts when there is a vector cache to leave them in; a file the
    calibration step will reject is logged and skipped, so it fails that step alone."""
    from themesim.embed.cache import cache_dir
    from themesim.errors import InputError

    if not pairs or cache_dir(cache) is None:
        return []
    from themesim.io.rated_pairs import rated_pair_texts  # pandas: only when there are pairs

    try:
        return rated_pair_texts(pairs)
    except InputError as e:
        log.warning("rated pairs not embedded here (the calibration step reports it): %s", e)
        return []
