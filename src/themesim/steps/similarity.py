"""The similarity rule: one file per pair of sets for every method kind."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.embed.encode import encode_with
from themesim.errors import InputError
from themesim.io.themes import read_themes_parquet

log = logging.getLogger("themesim")


def similarity_for(spec: dict, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """S for two theme tables with an embedding or TF-IDF method (no files involved)."""
    from themesim.similarity import cosine, tfidf, tfidf_options

    if spec["kind"] == "tfidf":
        return tfidf(a["text"].tolist(), b["text"].tolist(), **tfidf_options(spec))
    if spec["kind"] == "sentence_transformer":
        emb, _ = encode_with(spec, a["text"].tolist() + b["text"].tolist(), threads=None)
        return cosine(emb[: len(a)], emb[len(a) :])
    raise InputError(f"method kind {spec['kind']!r}", "needs files", "Run it in a study")


def _judge_pairs(spec: dict, pairs, tables: dict, cache, threads=None) -> dict:
    """Judge every pair of every comparison; a failure names the pair and keeps the cache."""
    from dataclasses import asdict, replace

    from themesim.llm.judge import JudgeSettings
    from themesim.methods import JUDGE_KEYS

    settings = JudgeSettings(**{k: spec[k] for k in JUDGE_KEYS if spec.get(k) is not None})
    if settings.base_url is not None:
        return _judge_all(settings, pairs, tables, cache)
    from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

    # One local server for the whole job; the cache key names the model, not the port.
    with LlamaServer(packaged_model_path(), n_ctx=settings.n_ctx, threads=threads) as srv:
        local = replace(settings, base_url=srv.base_url, model=packaged_model_name())
        judged = _judge_all(local, pairs, tables, cache)
    shown = {k: v for k, v in asdict(settings).items() if k != "api_key_env"}
    return {pair: (S, shown | {"model": packaged_model_name()}) for pair, (S, _) in judged.items()}


def _judge_all(settings, pairs, tables: dict, cache) -> dict:
    from dataclasses import asdict

    from themesim.errors import StepError
    from themesim.llm.judge import JudgeError, judge_matrix

    shown = {k: v for k, v in asdict(settings).items() if k not in ("api_key_env", "base_url")}
    out = {}
    for a, b in pairs:
        try:
            S, stats = judge_matrix(
                tables[a]["text"].tolist(), tables[b]["text"].tolist(), settings, cache
            )
        except JudgeError as e:
            raise StepError(f"judging {a} vs {b}: {e}") from e
        log.info("judge %s vs %s: %s", a, b, stats)
        out[(a, b)] = (S, shown)
    return out


def similarity_pairs(
    *,
    method: str,
    spec: dict,
    pairs,
    themes: dict,
    outputs,
    embeddings=None,
    matrices=None,
    cache=None,
    threads=None,
) -> None:
    """Write one long-form similarity file per (a, b) pair of one method."""
    from themesim.embed.encode import read_embeddings
    from themesim.similarity import (
        SCORE_RANGE,
        align_matrix,
        cosine,
        read_matrix_csv,
        tfidf,
        tfidf_options,
        write_similarity,
    )

    tables = {name: read_themes_parquet(p) for name, p in themes.items()}
    emb, model = {}, None
    if spec["kind"] in ("sentence_transformer", "abtt"):
        for s, path in embeddings.items():
            ids, emb[s], emeta = read_embeddings(path)
            model = emeta.get("model")
            if ids != tables[s]["theme_id"].tolist():
                raise InputError(
                    str(path),
                    "theme ids differ from the theme table",
                    "Delete results/embeddings and rerun",
                )
    if spec["kind"] == "abtt":
        from themesim.embed.isotropy import abtt

        # One correction for the whole study: every set shares the same space.
        names = list(emb)
        emb = dict(zip(names, abtt([emb[n] for n in names], d=spec.get("d")), strict=True))
    judged = (
        _judge_pairs(spec, pairs, tables, cache, threads) if spec["kind"] == "llm_judge" else {}
    )
    for (a, b), out in zip(pairs, outputs, strict=True):
        ta, tb = tables[a], tables[b]
        meta = {"method": method, "kind": spec["kind"], "set_a": a, "set_b": b}
        if judged:
            S, meta["judge"] = judged[(a, b)]
        elif emb:
            meta["model"] = model
            S = cosine(emb[a], emb[b])
        elif spec["kind"] == "tfidf":
            texts_b = None if a == b else tb["text"].tolist()
            S = tfidf(ta["text"].tolist(), texts_b, **tfidf_options(spec, f"methods.{method}"))
        else:
            src = matrices[(a, b)]
            raw, rows, cols = read_matrix_csv(
                src, score_range=SCORE_RANGE, clamp=bool(spec.get("clamp"))
            )
            S = align_matrix(raw, rows, cols, ta["name"].tolist(), tb["name"].tolist(), str(src))
            meta["source"] = str(src)
        write_similarity(out, S, ta["theme_id"].tolist(), tb["theme_id"].tolist(), meta)
    log.info("%s: %d similarity files", method, len(outputs))
