"""The report rules: headline tables and the summary report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.io.files import sha256_file


def headline_tables(*, methods, comparisons, out_csv, out_tex) -> None:
    """The at-a-glance table for a paper: CSV (full precision) and LaTeX (booktabs)."""
    from themesim.report.summary import headline_frame, write_headline

    df = headline_frame(dict(zip(methods, comparisons, strict=True)))
    write_headline(df, out_csv=out_csv, out_tex=out_tex)


def summary_report(
    *,
    study: dict,
    methods: dict,
    pairs,
    comparisons,
    themes_tables,
    sweeps,
    heatmaps,
    sweep_plots,
    side_by_side_png,
    embeddings,
    segments,
    sets: dict,
    transcripts,
    config: dict,
    code_version,
    out_html,
    out_md,
    method_files: dict | None = None,
    precomputed=(),
    headline: dict | None = None,
    confidential: bool = False,
) -> None:
    """Both summary reports.

    method_files: method -> optional extras (``distributions_png``, ``confidence_png``,
    ``theme_map_png``, ``runs_png``, ``sets_csv``, ``runs_csv``); precomputed: the score
    matrices read by precomputed methods (listed with their sha256 among the inputs);
    headline: paths of headline.csv / headline.tex, mentioned beside the glance table.
    confidential: `archive.confidential`; speakers are then counted, never named, as the
    archive keeps the report.
    """
    from themesim.io.themes import read_theme_file
    from themesim.provenance import provenance
    from themesim.report.summary import write_report

    names = list(methods)
    per_method = {}
    n_pairs = len(pairs)
    method_files = method_files or {}
    for i, m in enumerate(names):
        per_method[m] = (
            dict(methods[m])
            | {
                "comparisons_csv": comparisons[i],
                "themes_csv": themes_tables[i],
                "sweep_csv": sweeps[i],
                "heatmaps": dict(
                    zip(pairs, heatmaps[i * n_pairs : (i + 1) * n_pairs], strict=True)
                ),
                "sweep_png": sweep_plots[i],
            }
            | dict(method_files.get(m) or {})
        )
    seg = pd.read_parquet(segments)
    inputs = [
        {
            "path": str(p),
            "kind": "themes",
            "sha256": sha256_file(p),
            "n_items": len(read_theme_file(p, set_name=s)),
        }
        for s, p in sets.items()
    ]
    counts = seg.groupby("transcript", sort=True)
    inputs += [
        {
            "path": str(p),
            "kind": "transcript",
            "sha256": sha256_file(p),
            "n_items": int((seg["transcript"] == Path(p).stem).sum()),
        }
        for p in transcripts
    ]
    inputs += [
        {"path": str(p), "kind": "precomputed scores", "sha256": sha256_file(p), "n_items": None}
        for p in precomputed
    ]
    write_report(
        out_html=out_html,
        out_md=out_md,
        study=dict(study) | {"side_by_side_png": side_by_side_png} | dict(headline or {}),
        methods=per_method,
        inputs=inputs,
        transcripts={
            "n_transcripts": int(seg["transcript"].nunique()),
            "n_segments": len(seg),
            "per_transcript": [
                {
                    "transcript": t,
                    "n_segments": len(g),
                    "speakers": _speakers(g["speaker"], confidential),
                }
                for t, g in counts
            ],
        },
        provenance=provenance(embeddings=embeddings, code_version=code_version),
        config=config,
    )


def _speakers(speakers: pd.Series, confidential: bool) -> list[str]:
    names = sorted(s for s in speakers.unique() if s)
    if confidential:  # names come from the transcripts: none may reach a confidential archive
        return [f"{len(names)} (names withheld: archive.confidential)"] if names else []
    return names
