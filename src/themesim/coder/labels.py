"""One set's coder labels on the transcript segments (source `assigned` of
results/segments/{method}/{set}.parquet), for the segment_labels step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim import kinds
from themesim.coder.assign import CoderOptions, decide, vector_labels
from themesim.coder.settings import rule_of
from themesim.coder.trained import trained_labels


def evidence_matrix(rows, segments: pd.DataFrame, ids, sources) -> np.ndarray:
    """Segments × themes: does a label row of one of `sources` put the theme on the segment?"""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    E = np.zeros((len(segments), len(ids)), dtype=bool)
    for t, s, tid, source, *_ in rows:
        if source in sources:
            E[pos[(t, int(s))], col[tid]] = True
    return E


@dataclass(frozen=True)
class SetCoder:
    """Who codes one set under a method: the coder kind (`coding`: similarity, exemplar,
    llm or trained), grounding.coder's settings (`settings`, as coder_settings fills them
    in), the method's `spec` (its kind gives the theme and segment vectors) and its assign
    `threshold` (None: the method never assigns)."""

    coding: str
    settings: dict
    spec: dict
    threshold: float | None


def coder_rows(
    coder: SetCoder,
    themes: pd.DataFrame,
    segments: pd.DataFrame,
    eligible: np.ndarray,
    evidence_rows,
    *,
    theme_embeddings=None,
    segment_embeddings=None,
    llm_scores=None,
) -> list[tuple] | None:
    """(transcript, segment, theme_id, "assigned", score) of the set's coder labels, or None
    when this coder cannot label under the method (no vectors, no threshold).

    evidence_rows: the set's coded and quote label rows (prototypes of `exemplar`, coded rows
    for fitted thresholds); llm_scores: the coder_llm step's table (transcript, segment,
    theme_id, score) for coding `llm`."""
    ids = themes["theme_id"].tolist()
    coding, settings = coder.coding, coder.settings
    if coding == "llm":
        if llm_scores is None:
            return None
        S = _llm_matrix(llm_scores, segments, ids)
        rule, threshold = rule_of(settings, coding), float(settings["llm"]["threshold"])
        L = decide(S, eligible, rule, threshold, bool(settings["center"]))
    elif coder.threshold is None:  # the method never assigns (judge, precomputed, abtt)
        return None
    elif coding == "trained":
        L, S = trained_labels(themes["text"].tolist(), segments["text"].tolist(), eligible)
    else:
        vec = kinds.get(coder.spec["kind"]).segment_vectors(
            coder.spec, themes, segments, theme_embeddings, segment_embeddings
        )
        if vec is None:
            return None
        L, S = vector_labels(
            *vec,
            segments,
            eligible,
            CoderOptions.of(settings, coding),
            threshold=float(coder.threshold),
            evidence=evidence_matrix(evidence_rows, segments, ids, ("coded", "quote")),
            coded=evidence_matrix(evidence_rows, segments, ids, ("coded",)),
        )
    si, ti = np.nonzero(L)
    return [
        (
            segments["transcript"].iat[j],
            int(segments["segment"].iat[j]),
            ids[i],
            "assigned",
            float(S[i, j]),
        )
        for j, i in zip(si, ti, strict=True)
    ]


def _llm_matrix(table: pd.DataFrame, segments: pd.DataFrame, ids) -> np.ndarray:
    """Themes × segments P(code) of the coder_llm table; 0 where a segment was not asked."""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    S = np.zeros((len(ids), len(segments)))
    for t, s, tid, score in table[["transcript", "segment", "theme_id", "score"]].itertuples(
        index=False, name=None
    ):
        if (t, int(s)) in pos and tid in col:
            S[col[tid], pos[(t, int(s))]] = float(score)
    return S
