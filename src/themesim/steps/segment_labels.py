"""Rule segment_labels: each theme set's labels on the transcript segments (docs/grounding.md),
in one job per method for all the sets of its comparisons."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pandas as pd

from themesim.io.files import write_csv, write_parquet

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
    from themesim.io.spans import segment_offsets, transcript_texts
    from themesim.io.transcripts import read_segments_parquet

    segments = read_segments_parquet(segments_path)
    texts = transcript_texts(segments, transcripts)
    offsets = segment_offsets(segments, texts)
    return segments, texts, offsets


def method_segment_labels(
    *,
    method: str,
    spec: dict,
    sets,
    themes: dict,
    segments_path,
    transcripts,
    coded: dict | None = None,
    levels: dict | None = None,
    theme_embeddings: dict | None = None,
    users: dict | None = None,
    segment_embeddings=None,
    assign: str = "uncoded",
    assign_threshold: float | None = None,
    quote_cutoff: float = 90.0,
    exclude_speakers=(),
    coder: dict | None = None,
    coder_kinds: dict | None = None,
    llm_scores: dict | None = None,
    out: dict,
    out_quotes: dict,
) -> None:
    """results/segments/{method}/{set}.parquet and .quotes.csv of every set in `sets`, as
    :func:`segment_labels` writes them one set at a time (the transcripts read once).

    themes, out, out_quotes: set -> path; coded: set -> its coded-segments file (sets
    without one are absent); levels: set -> the .qdpx level (default "all");
    theme_embeddings: set -> its embedding file, for the sets that get coder labels;
    coder_kinds: set -> the coder kind that labels it (default: coder's kind); llm_scores:
    set -> the coder_llm table of an LLM-coded set; users: .qdpx set -> the user (name or
    guid) whose codings are its coded segments (`user:`; absent: every coding).
    """
    coded, levels, theme_embeddings = coded or {}, levels or {}, theme_embeddings or {}
    coder_kinds, llm_scores, users = coder_kinds or {}, llm_scores or {}, users or {}
    shared = load_transcripts(segments_path, transcripts)
    normalised: dict = {}  # each transcript normalised once for every set's quotes
    for s in sets:
        _write_set_labels(
            shared,
            normalised=normalised,
            method=method,
            spec=spec,
            set_name=s,
            themes_path=themes[s],
            coded=coded.get(s),
            level=levels.get(s, "all"),
            user=users.get(s),
            theme_embeddings=theme_embeddings.get(s),
            segment_embeddings=segment_embeddings,
            assign=assign,
            assign_threshold=assign_threshold,
            quote_cutoff=quote_cutoff,
            exclude_speakers=exclude_speakers,
            coder=coder,
            coder_kind=coder_kinds.get(s),
            llm_scores=llm_scores.get(s),
            out=out[s],
            out_quotes=out_quotes[s],
        )


def segment_labels(
    *,
    method: str,
    spec: dict,
    set_name: str,
    themes_path,
    coded=None,
    level: str = "all",
    theme_embeddings=None,
    out,
    out_quotes,
    user=None,
    **options,
) -> None:
    """results/segments/{method}/{set}.parquet (transcript, segment, theme_id, source, score)
    and the set's quotes with where they were found.

    coded: the set's coded-segments file or .qdpx (source `coded`, score 1); quotes in the
    theme file are located (source `quote`, score 1); unless `assign` is never, the
    automatic coder (`coder`: grounding.coder, themesim.coder) adds its labels (source
    `assigned`, score = the coder's score) with assign_threshold as its threshold; segments
    of `exclude_speakers` (e.g. the interviewer) are never coded. spec: the method's
    similarity settings (its `kind` gives the theme and segment vectors:
    Kind.segment_vectors).
    The other arguments (segments_path, transcripts, segment_embeddings, assign,
    assign_threshold, quote_cutoff, exclude_speakers, coder) are method_segment_labels'.
    """
    # One set through the method's job, so both write the same labels the same way.
    method_segment_labels(
        method=method,
        spec=spec,
        sets=[set_name],
        themes={set_name: themes_path},
        coded={} if coded is None else {set_name: coded},
        levels={set_name: level},
        users={} if user is None else {set_name: user},
        theme_embeddings={} if theme_embeddings is None else {set_name: theme_embeddings},
        out={set_name: out},
        out_quotes={set_name: out_quotes},
        **options,
    )


def _write_set_labels(
    shared,
    *,
    method,
    spec,
    set_name,
    themes_path,
    coded,
    level,
    theme_embeddings,
    segment_embeddings,
    assign,
    assign_threshold,
    quote_cutoff,
    exclude_speakers,
    out,
    out_quotes,
    coder=None,
    coder_kind=None,
    llm_scores=None,
    user=None,
    normalised=None,
) -> None:
    from themesim.coder.labels import coder_rows
    from themesim.coder.settings import coder_settings
    from themesim.io.coded import coded_labels, read_coded_file
    from themesim.io.quotes import locate_quotes
    from themesim.io.spans import overlapping
    from themesim.io.themes import read_themes_parquet

    segments, texts, offsets = shared
    themes = read_themes_parquet(themes_path)
    rows = []
    if coded:
        if Path(coded).suffix.lower() == ".qdpx":
            from themesim.io.refi_qda import study_project

            table = study_project(coded, level, user).coded
        else:
            table = read_coded_file(coded, themes)
        labels = coded_labels(table, texts, offsets, str(coded))
        rows += [(*r, 1.0) for r in labels.itertuples(index=False, name=None)]
    located, missing = locate_quotes(themes, texts, quote_cutoff, normalised)
    spans: dict = {}
    for tid, _q, doc, start, end, _score, _m in located.itertuples(index=False, name=None):
        rows += [(doc, s, tid, "quote", 1.0) for s in overlapping(offsets, doc, start, end, spans)]
    if assign != "never":
        coder = coder_settings({"coder": coder})
        # Interviewer questions name the topics and would take most assigned labels.
        skip = {str(x).casefold() for x in exclude_speakers}
        asked = segments["speaker"].astype(str).str.casefold().isin(skip).to_numpy()
        rows += (
            coder_rows(
                coding=coder_kind or coder["kind"],
                coder=coder,
                spec=spec,
                themes=themes,
                segments=segments,
                eligible=~asked,
                evidence_rows=rows,
                threshold=assign_threshold,
                theme_embeddings=theme_embeddings,
                segment_embeddings=segment_embeddings,
                llm_scores=pd.read_parquet(llm_scores) if llm_scores else None,
            )
            or []
        )
    labels = _labels_frame(rows)
    write_parquet(labels.reset_index(drop=True), out)
    quotes = pd.concat(
        [
            located.assign(found=True),
            missing.assign(found=False, transcript="", start=-1, end=-1, score=math.nan, match=""),
        ],
        ignore_index=True,
    )[QUOTE_COLUMNS]
    write_csv(quotes, out_quotes)
    log.info(
        "%s %s: %d labels (%s) on %d segments; %d of %d quotes found",
        method,
        set_name,
        len(labels),
        ", ".join(f"{k} {v}" for k, v in labels["source"].value_counts().sort_index().items()),
        labels[["transcript", "segment"]].drop_duplicates().shape[0],
        len(located),
        len(located) + len(missing),
    )
