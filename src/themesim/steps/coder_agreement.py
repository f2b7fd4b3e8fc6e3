"""Rule coder_agreement: results/grounding/coder_agreement.csv, the automatic coder against
every human coding of the study, per method and set (themesim.coder.agreement)."""

from __future__ import annotations

import logging

import pandas as pd

from themesim.io.files import write_csv

log = logging.getLogger("themesim")


def coder_agreement(
    *, methods: dict, labels: dict, themes: dict, segments_path, exclude_speakers=(), out
) -> None:
    """methods: method -> {sets, coded_sets, coders}; labels: (method, set) -> label parquet;
    themes: set -> theme parquet."""
    from themesim.coder.agreement import agreement_table
    from themesim.io.themes import read_themes_parquet
    from themesim.io.transcripts import read_segments_parquet

    segments = read_segments_parquet(segments_path).reset_index(drop=True)
    table = agreement_table(
        methods,
        {k: pd.read_parquet(p) for k, p in labels.items()},
        {s: read_themes_parquet(p) for s, p in themes.items()},
        segments,
        exclude_speakers,
    )
    write_csv(table, out)
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
