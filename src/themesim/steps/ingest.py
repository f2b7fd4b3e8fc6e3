"""Rule ingest_themes: a theme file to its table (the transcripts' rules:
steps/ingest_transcripts.py)."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.io.files import record
from themesim.io.refi_qda import study_project, theme_table
from themesim.io.themes import read_theme_file, write_themes_parquet
from themesim.memory import check_matrix
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def ingest_theme_file(job: Job) -> None:
    """Rule ingest_themes (inputs.jobs.ingest_themes): one theme file as its table."""
    p = job.params
    ingest_themes(
        job.input["src"],
        job.output["table"],
        set_name=p["set"],
        template=p["template"],
        level=p["level"],
        within=bool(p["within"]),
    )


def ingest_themes(
    src, out, *, set_name: str, template: str, level: str = "all", within: bool = False
) -> None:
    """within: a method of the study writes this set's within-set matrix, whose size is
    checked against the memory here, before any other job runs (themesim.memory)."""
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
    if str(src).lower().endswith(".qdpx"):  # a REFI-QDA project: its codes are the themes
        # themesim's disagreement codes (its own export) are no themes
        return theme_table(study_project(src, level), set_name, template, str(src))
    return read_theme_file(src, set_name=set_name, text_template=template)
