"""Rules qdpx_transcripts and ingest_transcripts: the transcripts to the segments table
(the theme files' rule: steps/ingest.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from themesim.steps.job import Job

log = logging.getLogger("themesim")


def qdpx_transcripts(job: Job) -> None:
    """The .qdpx projects' text sources as the study's transcripts (no `transcripts:` given;
    inputs.jobs.qdpx_transcripts)."""
    from themesim.errors import InputError
    from themesim.io.refi_qda import project_texts, write_source_texts

    projects, outputs = list(job.input["projects"]), list(job.output["transcripts"])
    texts = project_texts(projects)
    expected = sorted(str(o) for o in outputs)
    names = sorted(str(Path(outputs[0]).parent / f"{n}.txt") for n in texts) if outputs else []
    if names != expected:  # the project changed since the workflow read its source names
        raise InputError(
            str(projects[0]), "its sources changed since the run started", "Run the workflow again"
        )
    write_source_texts(texts, Path(outputs[0]).parent)
    log.info("%d transcripts from the sources of %s", len(texts), ", ".join(map(str, projects)))


def ingest_transcript_files(job: Job) -> None:
    """Rule ingest_transcripts (inputs.jobs.ingest_transcripts): every transcript's segments."""
    ingest_transcripts(list(job.input["transcripts"]), job.output["segments"])


def ingest_transcripts(paths, out) -> None:
    from themesim.io.files import record
    from themesim.io.transcripts import read_transcripts, segment_columns, write_segments_parquet

    df = read_transcripts(paths) if paths else pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(df, out)
    record(out)  # its sha256, checked by the jobs that read it (themesim.io.manifest)
    log.info("%d segments from %d transcripts", len(df), len(paths))
