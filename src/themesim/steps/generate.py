"""The generate_themes rule: LLM-generated theme sets."""

from __future__ import annotations

import logging

log = logging.getLogger("themesim")


def generate_theme_runs(
    segments_path, *, outputs: dict, seeds: dict, settings: dict, cache, threads=None
) -> None:
    """LLM-generated theme sets: one CSV per run (run name -> output path, run name -> seed)."""
    from themesim.io.files import record
    from themesim.io.transcripts import read_segments_parquet
    from themesim.llm.generate import GenerateSettings, generate_runs, write_theme_csv

    gs = GenerateSettings(**(dict(settings) | {"threads": threads}))
    runs, stats = generate_runs(read_segments_parquet(segments_path), dict(seeds), gs, cache)
    for run, themes in runs.items():
        write_theme_csv(themes, outputs[run])
        record(outputs[run])  # an edited run is refused by the jobs that read it
        log.info("%s: %d themes -> %s", run, len(themes), outputs[run])
    log.info("generate: %s", stats)
