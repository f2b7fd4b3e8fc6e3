"""The paraphrase-ceiling rules: the LLM's paraphrases of the reference themes, then per method
the similarity of each theme to its paraphrases (docs/metrics.md, paraphrase ceiling)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet
from themesim.steps.job import Job

log = logging.getLogger("themesim")

PARAPHRASE_COLUMNS = ["theme_id", "text", "paraphrase_index", "paraphrase"]


def paraphrase_reference(job: Job) -> None:
    """paraphrases.csv: k LLM paraphrases of each reference theme's text
    (inputs.jobs.paraphrase_reference)."""
    from themesim.llm.paraphrase import ParaphraseSettings, paraphrase_texts

    themes = read_themes_parquet(job.input["themes"])
    s = ParaphraseSettings(**(dict(job.params["settings"]) | {"threads": job.threads}))
    found, stats = paraphrase_texts(themes["text"].tolist(), s, job.params["cache"])
    rows = [
        (tid, text, i, p)
        for tid, text in zip(themes["theme_id"], themes["text"], strict=True)
        for i, p in enumerate(found[text])
    ]
    write_csv(pd.DataFrame(rows, columns=PARAPHRASE_COLUMNS), job.output["paraphrases"])
    log.info("ceiling: %d paraphrases of %d themes (%s)", len(rows), len(themes), stats)


def paraphrase_similarity(job: Job) -> None:
    """Raw similarity of each reference theme to each of its paraphrases under one method
    (inputs.jobs.ceiling_similarity).

    Embedding methods reuse the theme's stored vector and embed the paraphrases through the
    embedding cache; TF-IDF is fitted per theme on the theme and its paraphrases.
    """
    from themesim.kinds import get as get_kind
    from themesim.metrics.sets.ceiling import SIMILARITY_COLUMNS

    p = job.params
    para = pd.read_csv(job.input["paraphrases"], dtype={"theme_id": str}, keep_default_na=False)
    sims = get_kind(p["kind"]).paraphrase_scores(
        p["method"], p["spec"], para, job.one("embeddings"), job.threads, p["cache"]
    )
    long = pd.DataFrame(
        {
            "theme_id": para["theme_id"],
            "paraphrase_index": para["paraphrase_index"].astype(np.int64),
            "similarity": np.asarray(sims, dtype=np.float64),
        },
        columns=SIMILARITY_COLUMNS,
    )
    write_parquet(long, job.output["similarity"])
