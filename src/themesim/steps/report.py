"""The summary_report rule: the study's report, HTML and Markdown (report/summary.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from themesim.io.coded import coded_rows
from themesim.io.files import sha256_file
from themesim.provenance import provenance
from themesim.report.context import ReportSources
from themesim.report.summary import write_report
from themesim.steps.job import Job


def summary_report(job: Job) -> None:
    """Both summary reports, of every result, and each comparison's page (HTML and
    Markdown) in the pages folder (inputs.jobs.summary_report).

    study: its name, description and reference, the paths of the figures and tables the
    report opens with (side_by_side_png, intervals_png, headline_csv, headline_tex,
    verdicts_csv) and `archive.confidential` (speakers are then counted, never named, as
    the archive keeps the report). methods: method -> what the report shows of it
    (inputs.summary.report_methods): its tables, each of its pairs' heatmaps, its figures
    and grounding, and the comparisons it ran of the study's (ran_on).

    The inputs table lists each theme file (its theme count from its ingested table, so
    every input format, .qdpx included, is counted the same way without parsing the file a
    second time), each coded-segments file, transcript and precomputed score matrix, with
    its sha256. judges: method -> its similarity manifest, for the methods an LLM judge
    scores: the judge's model, its file's sha256 and the llama.cpp build are read from
    their files' metadata into the provenance.
    """
    i, p = job.input, job.params
    seg = pd.read_parquet(i["segments"])
    sources = ReportSources(
        # each set's ingested table: what text its themes were scored from
        study=p["study"] | {"theme_tables": dict(i["theme_tables"])},
        methods=p["methods"],
        inputs=_inputs(i, seg),
        transcripts=_transcripts(seg, bool(p["study"]["confidential"])),
        provenance=provenance(
            embeddings=list(i["embeddings"]), code_version=p["code_version"], judges=i["judges"]
        ),
        config=p["config"],
    )
    out = job.output
    write_report(sources, out_html=out["html"], out_md=out["md"], out_pages=out["pages"])


def _inputs(files: dict, seg: pd.DataFrame) -> list[dict]:
    """The report's inputs table: each input file, what it is, its sha256 and size."""
    tables = files["theme_tables"]
    rows = [
        {
            "path": str(path),
            "kind": "themes",
            "sha256": sha256_file(path),
            "n_items": pq.ParquetFile(tables[s]).metadata.num_rows,
        }
        for s, path in files["theme_files"].items()
    ]
    rows += [
        {
            "path": str(path),
            "kind": f"coded segments of {s}",
            "sha256": sha256_file(path),
            "n_items": coded_rows(path),
        }
        for s, path in files["coded"].items()
    ]
    rows += [
        {
            "path": str(path),
            "kind": "transcript",
            "sha256": sha256_file(path),
            "n_items": int((seg["transcript"] == Path(path).stem).sum()),
        }
        for path in files["transcripts"]
    ]
    rows += [
        {
            "path": str(path),
            "kind": "precomputed scores",
            "sha256": sha256_file(path),
            "n_items": None,
        }
        for path in files["precomputed"]
    ]
    return rows


def _transcripts(seg: pd.DataFrame, confidential: bool) -> dict:
    """The report's transcripts: how many, their segments and speakers."""
    return {
        "n_transcripts": int(seg["transcript"].nunique()),
        "n_segments": len(seg),
        "per_transcript": [
            {
                "transcript": t,
                "n_segments": len(g),
                "speakers": _speakers(g["speaker"], confidential),
            }
            for t, g in seg.groupby("transcript", sort=True)
        ],
    }


def _speakers(speakers: pd.Series, confidential: bool) -> list[str]:
    names = sorted(s for s in speakers.unique() if s)
    if confidential:  # names come from the transcripts: none may reach a confidential archive
        return [f"{len(names)} (names withheld: archive.confidential)"] if names else []
    return names
