"""Rule segment_labels: each theme set's labels on the transcript segments (docs/grounding.md),
in one job per method for all the sets of its comparisons."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from themesim.coder.labels import SetCoder, coder_rows
from themesim.coder.settings import coder_settings
from themesim.io.coded import coded_labels, read_coded_file
from themesim.io.files import write_csv, write_parquet
from themesim.io.quotes import locate_quotes
from themesim.io.refi_qda import study_project
from themesim.io.segments import read_segments_parquet
from themesim.io.spans import overlapping, segment_offsets, transcript_texts
from themesim.io.themes import read_themes_parquet
from themesim.steps.job import Job

log = logging.getLogger("themesim")

LABEL_COLUMNS = ["transcript", "segment", "theme_id", "source", "score"]
QUOTE_COLUMNS = ["theme_id", "quote", "found", "transcript", "start", "end", "score", "match"]


def _labels_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=LABEL_COLUMNS)
    df = df.astype({"segment": "int64", "score": "float64"})
    return df.sort_values(["transcript", "segment", "theme_id", "source"], kind="stable")


def load_transcripts(segments_path, transcripts):
    """The segments table, each transcript's plain text and each segment's span in it: the
    same for every set, so read once per job."""
    segments = read_segments_parquet(segments_path)
    texts = transcript_texts(segments, transcripts)
    offsets = segment_offsets(segments, texts)
    return segments, texts, offsets


@dataclass(frozen=True)
class Coding:
    """How a method's labels job labels a set beside its coded segments and located quotes:
    the method's similarity settings (spec: its `kind` gives the theme and segment vectors,
    Kind.segment_vectors) and grounding's: unless `assign` is never, the automatic coder
    (`coder`: grounding.coder, themesim.coder) adds its labels (source `assigned`, score =
    the coder's score) with assign_threshold as its threshold; segments of
    `exclude_speakers` (e.g. the interviewer) are never coded; quote_cutoff: rapidfuzz's
    for a quote not found exactly. segment_embeddings: the method's segment vectors."""

    method: str
    spec: dict
    assign: str = "uncoded"
    assign_threshold: float | None = None
    quote_cutoff: float = 90.0
    exclude_speakers: tuple = ()
    coder: dict | None = None
    segment_embeddings: str | None = None


@dataclass(frozen=True)
class SetFiles:
    """One set's files in a labels job: its theme table, its labels and quotes (out,
    out_quotes), its coded-segments file or .qdpx (coded; level and user: the .qdpx's
    level, and its user whose codings are the set's), its theme vectors when the coder
    assigns by them, the coder kind that labels it (None: coding.coder's) and, for an
    LLM-coded set, the coder_llm table."""

    themes: str
    out: str
    out_quotes: str
    coded: str | None = None
    level: str = "all"
    user: str | None = None
    theme_embeddings: str | None = None
    coder_kind: str | None = None
    llm_scores: str | None = None


def method_segment_labels(job: Job) -> None:
    """results/segments/{method}/{set}.parquet and .quotes.csv of every set of the method's
    comparisons (inputs.jobs.segment_labels), as :func:`segment_labels` writes them one set
    at a time (the transcripts read once)."""
    p, i = job.params, job.input
    c = p["coding"]
    coding = Coding(
        method=p["method"],
        spec=p["spec"],
        assign=c["assign"],
        assign_threshold=c["assign_threshold"],
        quote_cutoff=c["quote_cutoff"],
        exclude_speakers=tuple(c["exclude_speakers"]),
        coder=c["coder"],
        segment_embeddings=job.one("segment_embeddings"),
    )
    shared = load_transcripts(i["segments"], i["transcripts"])
    normalised: dict = {}  # each transcript normalised once for every set's quotes
    for s, themes in i["themes"].items():
        files = SetFiles(
            themes=themes,
            out=p["labels"][s],
            out_quotes=p["quotes"][s],
            coded=i["coded"].get(s),
            level=p["levels"].get(s, "all"),
            user=p["users"].get(s),
            theme_embeddings=i["embeddings"].get(s),
            coder_kind=c["coder_kinds"].get(s),
            llm_scores=i["llm_scores"].get(s),
        )
        _write_set_labels(shared, s, files, coding, normalised)


def segment_labels(
    *, set_name: str, files: SetFiles, coding: Coding, segments_path, transcripts
) -> None:
    """results/segments/{method}/{set}.parquet (transcript, segment, theme_id, source, score)
    and the set's quotes with where they were found (SetFiles.out_quotes): coded segments
    (source `coded`, score 1), the quotes of the theme file located (source `quote`, score
    1) and the coder's labels (Coding)."""
    # One set as the method's job writes it, so both write the same labels the same way.
    _write_set_labels(load_transcripts(segments_path, transcripts), set_name, files, coding)


def _write_set_labels(
    shared, set_name: str, files: SetFiles, coding: Coding, normalised: dict | None = None
) -> None:
    segments, texts, offsets = shared
    themes = read_themes_parquet(files.themes)
    coded, rows = files.coded, []
    if coded:
        if Path(coded).suffix.lower() == ".qdpx":
            table = study_project(coded, files.level, files.user).coded
        else:
            table = read_coded_file(coded, themes)
        labels = coded_labels(table, texts, offsets, str(coded))
        rows += [(*r, 1.0) for r in labels.itertuples(index=False, name=None)]
    located, missing = locate_quotes(themes, texts, coding.quote_cutoff, normalised)
    spans: dict = {}
    for tid, _q, doc, start, end, _score, _m in located.itertuples(index=False, name=None):
        rows += [(doc, s, tid, "quote", 1.0) for s in overlapping(offsets, doc, start, end, spans)]
    if coding.assign != "never":
        coder = coder_settings({"coder": coding.coder})
        # Interviewer questions name the topics and would take most assigned labels.
        skip = {str(x).casefold() for x in coding.exclude_speakers}
        asked = segments["speaker"].astype(str).str.casefold().isin(skip).to_numpy()
        rows += (
            coder_rows(
                SetCoder(
                    coding=files.coder_kind or coder["kind"],
                    settings=coder,
                    spec=coding.spec,
                    threshold=coding.assign_threshold,
                ),
                themes,
                segments,
                ~asked,
                rows,
                theme_embeddings=files.theme_embeddings,
                segment_embeddings=coding.segment_embeddings,
                llm_scores=pd.read_parquet(files.llm_scores) if files.llm_scores else None,
            )
            or []
        )
    labels = _labels_frame(rows)
    write_parquet(labels.reset_index(drop=True), files.out)
    quotes = pd.concat(
        [
            located.assign(found=True),
            missing.assign(found=False, transcript="", start=-1, end=-1, score=math.nan, match=""),
        ],
        ignore_index=True,
    )[QUOTE_COLUMNS]
    write_csv(quotes, files.out_quotes)
    log.info(
        "%s %s: %d labels (%s) on %d segments; %d of %d quotes found",
        coding.method,
        set_name,
        len(labels),
        ", ".join(f"{k} {v}" for k, v in labels["source"].value_counts().sort_index().items()),
        labels[["transcript", "segment"]].drop_duplicates().shape[0],
        len(located),
        len(located) + len(missing),
    )
