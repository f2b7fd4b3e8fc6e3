"""Rules ingest_themes and ingest_transcripts: inputs to parquet."""

from __future__ import annotations

import logging

import pandas as pd

log = logging.getLogger("themesim")


def ingest_themes(src, out, *, set_name: str, template: str, level: str = "all") -> None:
    from themesim.io.themes import read_theme_file, write_themes_parquet

    if str(src).lower().endswith(".qdpx"):  # a REFI-QDA project: its codes are the themes
        from themesim.io.refi_qda import read_qdpx, theme_table

        df = theme_table(read_qdpx(src, level), set_name, template, str(src))
    else:
        df = read_theme_file(src, set_name=set_name, text_template=template)
    write_themes_parquet(df, out)
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


def ingest_transcripts(paths, out) -> None:
    from themesim.io.transcripts import read_transcripts, segment_columns, write_segments_parquet

    df = read_transcripts(paths) if paths else pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(df, out)
    log.info("%d segments from %d transcripts", len(df), len(paths))
