"""The similarity rule: one file per pair of sets, for every method kind (themesim.kinds)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.io.manifest import write_manifest
from themesim.io.rated_pairs import rated_pair_columns
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind
from themesim.memory import check_matrix
from themesim.similarity import write_similarity
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def similarity_for(spec: dict, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """S for two theme tables with an embedding or TF-IDF method (no files involved)."""
    return get_kind(spec["kind"]).similarity_for(spec, a, b)


def similarity_pairs(job: Job) -> None:
    """One long-form similarity file per pair of one method (params `pairs`, written to
    `files`), then the manifest listing them (themesim.io.manifest); a failed job leaves no
    pair file (inputs.jobs.similarity).

    The rated pairs (input `rated`): a kind with a judgement cache also scores them (into
    the cache only), so its calibration job starts no second LLM server."""
    p = job.params
    method, spec, pairs = p["method"], p["spec"], [tuple(x) for x in p["pairs"]]
    tables = {name: read_themes_parquet(path) for name, path in job.input["themes"].items()}
    if pairs:  # the largest matrix first, before any is built
        a, b = max(pairs, key=lambda p: len(tables[p[0]]) * len(tables[p[1]]))
        what = f"the within-set matrix of {a}" if a == b else f"the matrix of {a} vs {b}"
        check_matrix(len(tables[a]), len(tables[b]), f"{method} similarity", what)
    rated = job.one("rated")
    scored = get_kind(spec["kind"]).similarity(
        spec,
        pairs,
        tables,
        embeddings=job.input.get("embeddings") or None,
        matrices=job.input.get("matrices") or None,
        cache=p.get("cache"),
        threads=job.threads,
        **({"rated": rated_texts(rated)} if rated else {}),
    )
    _write_pairs(method, spec["kind"], tables, scored, p["files"], job.output["manifest"])


def _write_pairs(method: str, kind: str, tables: dict, scored, paths, manifest) -> None:
    """Each scored pair's file, then their manifest; none left behind when one fails."""
    written = []
    try:
        for ((a, b), S, extra), out in zip(scored, paths, strict=True):
            ta, tb = tables[a], tables[b]
            meta = {"method": method, "kind": kind, "set_a": a, "set_b": b} | extra
            write_similarity(out, S, ta["theme_id"].tolist(), tb["theme_id"].tolist(), meta)
            written.append(out)
        write_manifest(paths, manifest)
    except BaseException:
        # Most pair files are not declared outputs, so Snakemake would not remove them.
        for out in written:
            Path(out).unlink(missing_ok=True)
        raise
    log.info("%s: %d similarity files", method, len(paths))


def rated_texts(path) -> tuple[list[str], list[str]]:
    """(text_a, text_b) of the rated pairs; a file the calibration step will reject is
    logged and skipped, so it fails that step alone."""
    try:
        a, b = rated_pair_columns(path)
    except InputError as e:
        log.warning("rated pairs not judged here (the calibration step reports it): %s", e)
        return [], []
    # A pair with an empty text is the calibration step's error, not a question to ask.
    kept = [(x, y) for x, y in zip(a, b, strict=True) if x.strip() and y.strip()]
    return [x for x, _ in kept], [y for _, y in kept]
