"""The paraphrase ceiling's per-method rule: the similarity of each reference theme to its
paraphrases (docs/metrics.md, paraphrase ceiling; the paraphrases: steps/paraphrase.py)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_parquet
from themesim.kinds import get as get_kind
from themesim.metrics.sets.ceiling import SIMILARITY_COLUMNS
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def paraphrase_similarity(job: Job) -> None:
    """Raw similarity of each reference theme to each of its paraphrases under one method
    (inputs.jobs.ceiling_similarity).

    Embedding methods reuse the theme's stored vector and embed the paraphrases through the
    embedding cache; TF-IDF is fitted per theme on the theme and its paraphrases.
    """
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
