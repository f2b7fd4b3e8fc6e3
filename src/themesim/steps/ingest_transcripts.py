"""Rule ingest_transcripts: the transcripts to the segments table (the theme files' rule:
steps/ingest.py; a .qdpx's sources as transcripts: steps/qdpx_transcripts.py)."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.io.files import record
from themesim.io.transcripts import read_transcripts, segment_columns, write_segments_parquet
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def ingest_transcript_files(job: Job) -> None:
    """Rule ingest_transcripts (inputs.jobs.ingest_transcripts): every transcript's segments."""
    ingest_transcripts(list(job.input["transcripts"]), job.output["segments"])


def ingest_transcripts(paths, out) -> None:
    df = read_transcripts(paths) if paths else pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(df, out)
    record(out)  # its sha256, checked by the jobs that read it (themesim.io.manifest)
    log.info("%d segments from %d transcripts", len(df), len(paths))
