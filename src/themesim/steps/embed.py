"""Embedding rules: theme sets, word-salad nulls, keywords and transcript segments.

embed_method is the workflow's one embedding job per method: one model load, and every text
the method needs encoded in one call (sorted, deduplicated, through the vector cache),
including the rated pairs of `calibration.pairs`, which are only cached: the calibration job
then finds them there and never loads the model. Embedding one file of each kind (tests and
single-file use) is steps/embed_files.py: it reads the theme tables with pandas, which this
job does not."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from themesim.embed.cache import cache_dir
from themesim.embed.columns import read_segment_columns, read_theme_columns
from themesim.embed.encode import encode_with, release_models
from themesim.embed.keyword_cache import sets_keywords
from themesim.embed.texts import word_salad_pool
from themesim.embed.vectors import text_sha256, write_embeddings, write_vector_table
from themesim.errors import InputError
from themesim.io.rated_pairs import rated_pair_texts
from themesim.steps.job import Job

log = logging.getLogger("themesim")


@dataclass
class _Texts:
    """Every text of a method's embedding job: each set's themes, keywords and word-salad
    pool, the transcript segments and the rated pairs."""

    tables: dict  # set -> its theme columns
    keywords: dict  # set -> each theme's keywords
    salads: dict  # B set -> (its salad texts, the theme each one imitates)
    segments: dict | None  # the segment columns, None without transcripts
    rated: list  # the rated pairs' texts (for the vector cache only)

    def unique(self) -> list[str]:
        """Every distinct text, sorted: one order and composition, whatever the sets' order."""
        texts = [t for table in self.tables.values() for t in table["text"]]
        texts += [w for kws in self.keywords.values() for ws in kws for w in ws]
        texts += [t for salad, _ in self.salads.values() for t in salad]
        texts += self.segments["text"] if self.segments is not None else []
        return sorted(set(texts + self.rated))


def _texts(job: Job) -> _Texts:
    p = job.params
    # Column lists read with pyarrow, not DataFrames (memory beside the model).
    tables = {s: read_theme_columns(path) for s, path in job.input["themes"].items()}
    # TF-IDF keywords from the cache folder or a child process: no scikit-learn in this one.
    keywords = sets_keywords(tables, p["top_k"], cache_dir(p["cache"]))
    pool, seed = p["pool"], p["seed"]
    salads = {
        s: word_salad_pool(tables[s]["text"], pool, seed) if pool else ([], []) for s in p["nulls"]
    }
    segments = job.one("segments")
    seg = read_segment_columns(segments) if segments else None
    return _Texts(tables, keywords, salads, seg, calibration_texts(job.one("pairs"), p["cache"]))


def embed_method(job: Job) -> None:
    """Every file a method embeds (inputs.jobs.embed), from one encode of its distinct
    texts: each set's embeddings and keywords (the rule's outputs, in set order), the B
    sets' word-salad pools (params `nulls`: set -> file, in the `nulls` folder) and the
    transcript segments. The rated pairs' texts go into the vector cache only (none
    without a cache)."""
    method, spec, cache = job.params["method"], job.params["spec"], job.params["cache"]
    if job.output.get("nulls"):
        Path(job.output["nulls"]).mkdir(parents=True, exist_ok=True)  # a folder, maybe empty
    texts = _texts(job)
    unique = texts.unique()
    emb, source = (
        encode_with(spec, unique, job.threads, cache=cache, what=method)
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
    _write_sets(job, texts, rows, source, meta)
    _write_nulls(job, texts, rows, meta)
    out = job.output.get("segments")
    if out:
        seg = texts.segments
        columns = {"transcript": seg["transcript"], "segment": seg["segment"]}
        vectors_seg = rows(seg["text"]) if seg["text"] else np.zeros((0, 0))
        write_vector_table(out[0], columns, vectors_seg, meta)
    log.info(
        "%s: %d sets, %d null pools of %d, %d transcript segments: %d distinct texts",
        method,
        len(job.output["embeddings"]),
        len(job.params["nulls"]),
        job.params["pool"],
        0 if texts.segments is None else len(texts.segments["text"]),
        len(unique),
    )
    if texts.rated:
        log.info(
            "%s: %d texts of rated pairs (%s) in the vector cache",
            method,
            len(texts.rated),
            job.one("pairs"),
        )


def _write_sets(job: Job, texts: _Texts, rows, source, meta: dict) -> None:
    """Each set's theme embeddings and keyword embeddings, in the rule's output order."""
    sets, out = list(texts.tables), job.output
    for s, path in zip(sets, out["embeddings"], strict=True):
        table = texts.tables[s]
        write_embeddings(path, table, rows(table["text"]), source, job.params["method"])
    for s, path in zip(sets, out["keywords"], strict=True):
        kws = texts.keywords[s]
        ids = [t for t, ws in zip(texts.tables[s]["theme_id"], kws, strict=True) for _ in ws]
        words = [w for ws in kws for w in ws]
        write_vector_table(path, {"theme_id": ids, "keyword": words}, rows(words), meta)


def _write_nulls(job: Job, texts: _Texts, rows, meta: dict) -> None:
    """Each B set's word-salad pool: its texts, the theme each imitates, their vectors."""
    method, pool, seed = job.params["method"], job.params["pool"], job.params["seed"]
    for s, path in job.params["nulls"].items():
        salad, like = texts.salads[s]
        ids = texts.tables[s]["theme_id"]
        columns = {"pool_index": list(range(len(salad))), "theme_id": [ids[i] for i in like]}
        columns["text"] = salad
        null_meta = {"method": method, "pool": pool, "seed": seed} | (meta if salad else {})
        emb_null = rows(salad) if salad else np.zeros((0, 0))
        write_vector_table(path, columns, emb_null, null_meta)
        log.info(
            "%s: a pool of %d word-salad texts of %d themes (%s)", method, len(salad), len(ids), s
        )


def calibration_texts(pairs, cache) -> list[str]:
    """The rated pairs' texts when there is a vector cache to leave them in; a file the
    calibration step will reject is logged and skipped, so it fails that step alone."""
    if not pairs or cache_dir(cache) is None:
        return []

    try:
        return rated_pair_texts(pairs)
    except InputError as e:
        log.warning("rated pairs not embedded here (the calibration step reports it): %s", e)
        return []
