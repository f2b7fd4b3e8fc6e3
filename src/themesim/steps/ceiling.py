"""The paraphrase-ceiling rules: the LLM's paraphrases of the reference themes, then per method
the similarity of each theme to its paraphrases (docs/metrics.md, paraphrase ceiling)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet

log = logging.getLogger("themesim")

CEILING_KINDS = ("sentence_transformer", "tfidf")  # kinds that can score a paraphrase
PARAPHRASE_COLUMNS = ["theme_id", "text", "paraphrase_index", "paraphrase"]


def paraphrase_reference(themes_path, out, *, settings: dict, cache, threads=None) -> None:
    """paraphrases.csv: k LLM paraphrases of each reference theme's text."""
    from themesim.llm.paraphrase import ParaphraseSettings, paraphrase_texts

    themes = read_themes_parquet(themes_path)
    s = ParaphraseSettings(**(dict(settings) | {"threads": threads}))
    found, stats = paraphrase_texts(themes["text"].tolist(), s, cache)
    rows = [
        (tid, text, i, p)
        for tid, text in zip(themes["theme_id"], themes["text"], strict=True)
        for i, p in enumerate(found[text])
    ]
    write_csv(pd.DataFrame(rows, columns=PARAPHRASE_COLUMNS), out)
    log.info("ceiling: %d paraphrases of %d themes (%s)", len(rows), len(themes), stats)


def paraphrase_similarity(
    *, method: str, kind: str, spec: dict, paraphrases, embeddings, out, threads=1, cache=False
) -> None:
    """Raw similarity of each reference theme to each of its paraphrases under one method.

    Embedding methods reuse the theme's stored vector and embed the paraphrases through the
    embedding cache; TF-IDF is fitted per theme on the theme and its paraphrases.
    """
    from themesim.metrics.ceiling import SIMILARITY_COLUMNS

    para = pd.read_csv(paraphrases, dtype={"theme_id": str}, keep_default_na=False)
    sims = []
    if kind == "sentence_transformer":
        from themesim.embed.encode import encode_with, read_embeddings
        from themesim.similarity import cosine

        ids, T, _ = read_embeddings(embeddings)
        P, _ = encode_with(spec, para["paraphrase"].tolist(), threads, cache=cache, what=method)
        row = {tid: i for i, tid in enumerate(ids)}
        for j, tid in enumerate(para["theme_id"]):
            sims.append(float(cosine(T[row[tid]][None, :], P[j][None, :])[0, 0]))
    elif kind == "tfidf":
        from themesim.similarity import tfidf, tfidf_options

        for _, rows in para.groupby("theme_id", sort=False):
            S = tfidf([rows["text"].iloc[0]], rows["paraphrase"].tolist(), **tfidf_options(spec))
            sims += S[0].tolist()
    else:
        raise ValueError(f"kind {kind} has no paraphrase ceiling")
    long = pd.DataFrame(
        {
            "theme_id": para["theme_id"],
            "paraphrase_index": para["paraphrase_index"].astype(np.int64),
            "similarity": np.asarray(sims, dtype=np.float64),
        },
        columns=SIMILARITY_COLUMNS,
    )
    write_parquet(long, out)
