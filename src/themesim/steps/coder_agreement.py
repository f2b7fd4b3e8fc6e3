"""Rule coder_agreement: results/grounding/coder_agreement.csv, the automatic coder against
every human coding of the study, per method and set (themesim.coder.agreement)."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.coder.agreement import agreement_table
from themesim.io.files import write_csv
from themesim.io.segments import read_segments_parquet
from themesim.io.themes import read_themes_parquet
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def coder_agreement(job: Job) -> None:
    """coder_agreement.csv (inputs.jobs.coder_agreement): methods: method -> {sets,
    coded_sets, coders, labels: each set's label parquet}; themes: set -> theme parquet."""
    given = job.params["methods"]
    methods = {m: {k: v[k] for k in ("sets", "coded_sets", "coders")} for m, v in given.items()}
    labels = {
        (m, s): path
        for m, v in given.items()
        for s, path in zip(v["sets"], v["labels"], strict=True)
    }
    segments = read_segments_parquet(job.input["segments"]).reset_index(drop=True)
    table = agreement_table(
        methods,
        {k: pd.read_parquet(p) for k, p in labels.items()},
        {s: read_themes_parquet(p) for s, p in job.input["themes"].items()},
        segments,
        job.params["exclude_speakers"],
    )
    write_csv(table, job.output["table"])
    for r in table[table["level"] == "overall"].itertuples():
        if r.status == "checked":
            log.info(
                "%s %s: coder vs human median κ %.2f [%.2f, %.2f], pooled α %.2f",
                r.method,
                r.set,
                r.median_kappa,
                r.median_kappa_ci_low,
                r.median_kappa_ci_high,
                r.pooled_alpha,
            )
