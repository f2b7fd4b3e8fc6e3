"""The generate_themes rule: LLM-generated theme sets."""

from __future__ import annotations

import logging

from themesim.io.files import record
from themesim.io.segments import read_segments_parquet
from themesim.llm.generate import GenerateSettings, generate_runs, write_theme_csv
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def generate_theme_runs(job: Job) -> None:
    """LLM-generated theme sets: one CSV per run (inputs.jobs.generate_themes; params
    `runs`: run name -> seed, in the order of the outputs)."""
    p = job.params
    seeds, cache = dict(p["runs"]), p["cache"]
    outputs = dict(zip(seeds, job.output["runs"], strict=True))
    gs = GenerateSettings(**(dict(p["settings"]) | {"threads": job.threads}))
    runs, stats = generate_runs(read_segments_parquet(job.input["segments"]), seeds, gs, cache)
    for run, themes in runs.items():
        write_theme_csv(themes, outputs[run])
        record(outputs[run])  # an edited run is refused by the jobs that read it
        log.info("%s: %d themes -> %s", run, len(themes), outputs[run])
    log.info("generate: %s", stats)
