"""Rules ingest_themes, qdpx_transcripts and ingest_transcripts: inputs to parquet."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("themesim")


def ingest_themes(
    src, out, *, set_name: str, template: str, level: str = "all", within: bool = False
) -> None:
    """within: a method of the study writes this set's within-set matrix, whose size is
    checked against the memory here, before any other job runs (themesim.memory)."""
    from themesim.io.files import record
    from themesim.io.themes import write_themes_parquet
    from themesim.memory import check_matrix

    df = read_theme_set(src, set_name=set_name, template=template, level=level)
    if within:
        check_matrix(len(df), len(df), f"{src} (set {set_name})", "its within-set matrix")
    write_themes_parquet(df, out)
    record(out)  # its sha256, checked by the jobs that read it (themesim.io.manifest)
    log.info("%s: %d themes from %s", set_name, len(df), src)
    if len(df) <= 3:  # not an error, but the NaNs it causes must not be silent
        log.warning(
            "%s (%s) has only %d theme(s): its within-set baselines need at least 4 and are "
            "NaN (baseline_flag too_small)%s",
            set_name,
            src,
            len(df),
            "; with one theme, second-best similarities and gaps are NaN too"
            if len(df) == 1
            else "",
        )


def read_theme_set(src, *, set_name: str, template: str, level: str = "all") -> pd.DataFrame:
    """The theme table of one theme set's file (themesim.io.themes' columns)."""
    from themesim.io.themes import read_theme_file

    if str(src).lower().endswith(".qdpx"):  # a REFI-QDA project: its codes are the themes
        from themesim.io.refi_qda import study_project, theme_table

        # themesim's disagreement codes (its own export) are no themes
        return theme_table(study_project(src, level), set_name, template, str(src))
    return read_theme_file(src, set_name=set_name, text_template=template)


def qdpx_transcripts(projects, outputs) -> None:
    """The .qdpx projects' text sources as the study's transcripts (no `transcripts:` given)."""
    from themesim.errors import InputError
    from themesim.io.refi_qda import project_texts, write_source_texts

    texts = project_texts(projects)
    expected = sorted(str(o) for o in outputs)
    names = sorted(str(Path(outputs[0]).parent / f"{n}.txt") for n in texts) if outputs else []
    if names != expected:  # the project changed since the workflow read its source names
        raise InputError(
            str(projects[0]), "its sources changed since the run started", "Run the workflow again"
        )
    write_source_texts(texts, Path(outputs[0]).parent)
    log.info("%d transcripts from the sources of %s", len(texts), ", ".join(map(str, projects)))


def ingest_transcripts(paths, out) -> None:
    from themesim.io.files import record
    from themesim.io.transcripts import read_transcripts, segment_columns, write_segments_parquet

    df = read_transcripts(paths) if paths else pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(df, out)
    record(out)  # its sha256, checked by the jobs that read it (themesim.io.manifest)
    log.info("%d segments from %d transcripts", len(df), len(paths))
