"""Rule qdpx_transcripts: the text sources of the study's .qdpx projects written as its
transcripts, when the config names none (then ingested by steps/ingest_transcripts.py)."""

from __future__ import annotations

import logging
from pathlib import Path

from themesim.errors import InputError
from themesim.io.refi_qda import project_texts, write_source_texts
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def qdpx_transcripts(job: Job) -> None:
    """The .qdpx projects' text sources as the study's transcripts (no `transcripts:` given;
    inputs.jobs.qdpx_transcripts)."""
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
