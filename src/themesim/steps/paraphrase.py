"""The paraphrase ceiling's first rule: the LLM's paraphrases of the reference themes
(docs/metrics.md, paraphrase ceiling; each method's similarity to them: steps/ceiling.py)."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.io.files import write_csv
from themesim.io.themes import read_themes_parquet
from themesim.llm.paraphrase import ParaphraseSettings, paraphrase_texts
from themesim.steps.job import Job

log = logging.getLogger("themesim")

PARAPHRASE_COLUMNS = ["theme_id", "text", "paraphrase_index", "paraphrase"]


def paraphrase_reference(job: Job) -> None:
    """paraphrases.csv: k LLM paraphrases of each reference theme's text
    (inputs.jobs.paraphrase_reference)."""
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
