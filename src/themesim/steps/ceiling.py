"""The paraphrase-ceiling rules: the LLM's paraphrases of the reference themes, then per method
the similarity of each theme to its paraphrases (docs/metrics.md, paraphrase ceiling)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet

log = logging.getLogger("themesim")

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
    from themesim.kinds import get as get_kind
    from themesim.metrics.sets.ceiling import SIMILARITY_COLUMNS

    para = pd.read_csv(paraphrases, dtype={"theme_id": str}, keep_default_na=False)
    sims = get_kind(kind).paraphrase_scores(method, spec, para, embeddings, threads, cache)
    long = pd.DataFrame(
        {
            "theme_id": para["theme_id"],
            "paraphrase_index": para["paraphrase_index"].astype(np.int64),
            "similarity": np.asarray(sims, dtype=np.float64),
        },
        columns=SIMILARITY_COLUMNS,
    )
    write_parquet(long, out)
