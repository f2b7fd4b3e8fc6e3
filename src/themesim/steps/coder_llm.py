"""Rule coder_llm: the LLM coder's scores of every LLM-coded set on the transcript segments
(docs/grounding.md, "The coder"). One job for every set: the answers do not depend on the
embedding method, and a local server started once serves them all."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.coder.llm import CoderLLMSettings, code_segments
from themesim.io.files import write_parquet
from themesim.io.segments import read_segments_parquet
from themesim.io.themes import read_themes_parquet
from themesim.steps.job import Job

log = logging.getLogger("themesim")

SCORE_COLUMNS = ["transcript", "segment", "theme_id", "score"]


def coder_llm(job: Job) -> None:
    """results/coder/llm/{set}.parquet (transcript, segment, theme_id, score): P(code) of
    each theme on each segment not spoken by `exclude_speakers`, every answer cached in
    `cache` (results/cache/coder.sqlite), from the job of inputs.jobs.coder_llm: themes,
    out: set -> path; llm: grounding.coder.llm (threads: the job's, unless it sets them).
    """
    themes, given = job.input["themes"], job.params
    out, cache = given["out"], given["cache"]
    llm = dict(given["llm"]) | {"threads": given["llm"].get("threads") or job.threads}
    segments = read_segments_parquet(job.input["segments"]).reset_index(drop=True)
    skip = {str(x).casefold() for x in given["exclude_speakers"]}
    rows = np.flatnonzero(~segments["speaker"].astype(str).str.casefold().isin(skip).to_numpy())
    settings = CoderLLMSettings(
        **{k: llm[k] for k in CoderLLMSettings.__dataclass_fields__ if k in llm}
    )
    for s, path in themes.items():
        t = read_themes_parquet(path)
        P = code_segments(t, segments, settings, cache, rows=rows)
        ids = t["theme_id"].tolist()
        table = pd.DataFrame(
            [
                (segments["transcript"].iat[r], int(segments["segment"].iat[r]), tid, float(p))
                for r, probs in zip(rows, P, strict=True)
                for tid, p in zip(ids, probs, strict=True)
            ],
            columns=SCORE_COLUMNS,
        )
        write_parquet(table, out[s])
        log.info("coder_llm %s: %d segments × %d themes", s, len(rows), len(ids))
