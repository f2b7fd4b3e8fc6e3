"""Grounded agreement: do two theme sets label the same transcript segments?

The unit is the transcript segment. Each set's labels are rows (transcript, segment, theme_id,
source[, score]); a segment may carry several themes. Its top-1 theme is the one with the
highest `score` (coded and quote labels score 1, assigned labels their similarity), ties to the
theme listed first in the set. Every statistic comes from a library: scikit-learn (AMI, ARI,
Cohen's κ), krippendorff (α), scipy (Hungarian assignment, Spearman). Formulas:
docs/grounding.md.

Inference treats the transcript, not the segment, as the sampled unit: segments of one
interview hang together, and a resample that repeats segments makes two labelings look more
alike than they are. Intervals leave one transcript out at a time (jackknife); the test of
agreement above chance rotates B's labels within each transcript and speaker, keeping B's runs
of one code (topic blocks), so that serial dependence along a transcript is kept under the null.

Here: the label matrices and one comparison's row and pair table. The statistics:
metrics/grounding/grounding_stats.py; their intervals: metrics/grounding/grounding_intervals.py;
the test: metrics/grounding/grounding_shift.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.metrics.contract import grounding_flags
from themesim.metrics.grounding.grounding_intervals import jackknife_intervals, withheld_intervals
from themesim.metrics.grounding.grounding_shift import (
    PRINTED_P,
    permutation_test,
    untested_p,
    withheld_p,
)
from themesim.metrics.grounding.grounding_stats import (
    METRIC_COLUMNS,
    f1_score,
    iou_matrix,
    kappa_counts,
    summary_row,
    text_pairs,
)
from themesim.metrics.grounding.labelings import Labelings

PAIR_COLUMNS = ["a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa", "similarity", "text_pair"]
# The chance-corrected figures (agreement beyond what chance gives: AMI, ARI, κ, α) are
# refused (NaN, with `withheld_reason`) over fewer transcripts than their interval needs: the
# transcript is the sampled unit, and with one transcript no interval leaves one out, so a
# figure such as "AMI 1.00" (two codings of a few segments of one interview) would be shown
# with nothing to judge it by. The figures that are plain shares and counts stay.
CHANCE_CORRECTED = [
    "ami",
    "ari",
    "text_pairs_median_kappa",
    "text_pairs_share_kappa_ge_0_4",
    "text_pairs_krippendorff_alpha",
]
CHANCE_MIN_TRANSCRIPTS = 2  # the delete-one-transcript jackknife's least


TRANSCRIPT_COUNT_COLUMNS = ["transcript", "a_id", "b_id", "n", "n_a", "n_b", "n_both"]


def transcript_counts(A, B, a_ids, b_ids, transcripts) -> pd.DataFrame:
    """Per transcript and theme pair, the 2x2 table's margins: n segments, n_a coded with the
    A theme, n_b with the B theme, n_both with both (TRANSCRIPT_COUNT_COLUMNS). Summed over
    transcripts they give grounding_pairs.csv's counts, so a κ with one transcript left out
    is kappa_counts of the sums over the others."""
    A, B = np.asarray(A, dtype=np.int64), np.asarray(B, dtype=np.int64)
    transcripts = np.asarray(transcripts).astype(str)
    na, nb = len(a_ids), len(b_ids)
    frames = []
    for t in dict.fromkeys(transcripts):
        m = transcripts == t
        a, b = A[m], B[m]
        frames.append(
            pd.DataFrame(
                {
                    "transcript": t,
                    "a_id": np.repeat(np.asarray(a_ids, dtype=object), nb),
                    "b_id": np.tile(np.asarray(b_ids, dtype=object), na),
                    "n": int(m.sum()),
                    "n_a": np.repeat(a.sum(axis=0), nb),
                    "n_b": np.tile(b.sum(axis=0), na),
                    "n_both": (a.T @ b).ravel(),
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=TRANSCRIPT_COUNT_COLUMNS)
    return pd.concat(frames, ignore_index=True)[TRANSCRIPT_COUNT_COLUMNS]


def _rows_cols(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]):
    """Each label's row in `segments` and column in `ids`, by hash lookups over whole
    columns (a study's 16,000 segments are matched once, not once per label in Python);
    ValueError naming the first label that is not a known segment and theme."""
    where = pd.MultiIndex.from_arrays(
        [segments["transcript"].astype(str).to_numpy(), _segment_numbers(segments["segment"])]
    )
    rows = where.get_indexer(
        pd.MultiIndex.from_arrays(
            [labels["transcript"].astype(str).to_numpy(), _segment_numbers(labels["segment"])]
        )
    )
    cols = pd.Index(list(ids), dtype=object).get_indexer(labels["theme_id"].to_numpy(dtype=object))
    bad = np.flatnonzero((rows < 0) | (cols < 0))
    if len(bad):
        t, s, tid = (labels[c].iloc[bad[0]] for c in ("transcript", "segment", "theme_id"))
        raise ValueError(f"label ({t}, {s}, {tid}) is not a known segment and theme")
    return rows, cols


def _segment_numbers(values) -> np.ndarray:
    """Segment numbers as whole numbers (a float column read back from a file included)."""
    return np.asarray(values, dtype=np.float64).astype(np.int64)


def label_matrix(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Boolean segments × themes: does theme j label segment i? Rows follow `segments`."""
    rows, cols = _rows_cols(labels, segments, ids)
    X = np.zeros((len(segments), len(ids)), dtype=bool)
    X[rows, cols] = True
    return X


def top1(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Index into `ids` of each segment's top-1 theme, -1 for an unlabelled segment."""
    rows, cols = _rows_cols(labels, segments, ids)
    score = (
        labels["score"].to_numpy(dtype=np.float64)
        if "score" in labels.columns
        else np.ones(len(labels))
    )
    best = np.full(len(segments), -1)
    # Highest score first, ties to the theme listed first; a NaN or -inf score never wins.
    keep = score > -np.inf
    rows, cols, score = rows[keep], cols[keep], score[keep]
    order = np.lexsort((cols, -score, rows))
    first = np.ones(len(order), dtype=bool)
    first[1:] = rows[order][1:] != rows[order][:-1]
    best[rows[order][first]] = cols[order][first]
    return best


@dataclass(frozen=True, eq=False)
class SetLabels:
    """One set's labels of the segments: `matrix`, boolean segments × themes
    (:func:`label_matrix`); `top`, each segment's top-1 theme (:func:`top1`, -1 =
    unlabelled); `ids`, its theme ids (the matrix's columns)."""

    matrix: np.ndarray
    top: np.ndarray
    ids: Sequence[str]


@dataclass(frozen=True)
class GroundingSettings:
    """How :func:`grounding` scores one comparison. min_iou: the IoU a grounded pair needs;
    threshold/op: the method's first threshold on its scale, for the text Hungarian pairs.
    intervals adds `<metric>_ci_low/_ci_high` from the delete-one-transcript jackknife
    (:func:`jackknife_interval`, at `level`) and `ci_method`, less those
    :func:`withhold_biased` withholds (withhold_biased=False: all of them, for the
    validation suite); n_perm > 0 adds `<metric>_p`, the run-preserving cyclic shift test
    of agreement above chance (:func:`permutation_test`, seeded by `seed`). Over fewer than
    CHANCE_MIN_TRANSCRIPTS transcripts the chance-corrected figures are NaN and
    `withheld_reason` says why (:func:`withheld_few_transcripts`; withhold_biased=False
    keeps them)."""

    min_iou: float
    threshold: float | None
    op: str = "ge"
    intervals: bool = False
    n_perm: int = 0
    seed: int = 0
    level: float = 0.95
    withhold_biased: bool = True


def grounding(
    a: SetLabels,
    b: SetLabels,
    S: np.ndarray,
    settings: GroundingSettings,
    transcripts: np.ndarray | None = None,
    strata: np.ndarray | None = None,
) -> tuple[dict, pd.DataFrame]:
    """(metrics row, pair table) of one comparison.

    a, b: the two sets' labels over every segment; S: the method's text similarity (A
    themes × B themes) on its scale (metrics.method_scale; NaN cells where z is undefined:
    no text columns then). transcripts: each segment's transcript (any labels; None: one
    transcript); strata: the shift test's strata, each a stratum's segments in transcript
    order (None: the transcripts).
    """
    S = np.asarray(S, dtype=float)
    if S.shape != (a.matrix.shape[1], b.matrix.shape[1]):
        raise ValueError(
            f"similarity shape {S.shape} does not match themes "
            f"{a.matrix.shape[1]}×{b.matrix.shape[1]}"
        )
    # As the metric tables: a comparison with S undefined on the z scale is not text-scored.
    tpairs = text_pairs(S, settings.threshold, settings.op) if np.isfinite(S).all() else None
    lab = Labelings(a.matrix, b.matrix, a.top, b.top, S, tpairs, settings.min_iou)
    row, iou = summary_row(lab.A, lab.B, lab.top_a, lab.top_b, S, tpairs, lab.min_iou)
    if tpairs is not None:
        row["text_hungarian_f1"] = f1_score(len(tpairs), S.shape[0], S.shape[1])
    transcripts = np.zeros(len(lab.A), dtype=np.int64) if transcripts is None else transcripts
    transcripts = _codes(transcripts)
    row["n_transcripts"] = int(len(np.unique(transcripts)))
    row = {k: row[k] for k in METRIC_COLUMNS}
    pairs = _pair_table(lab, a.ids, b.ids, iou)
    _add_inference(row, lab, settings, transcripts, strata)
    return row, pairs


def _pair_table(lab: Labelings, a_ids, b_ids, iou: np.ndarray) -> pd.DataFrame:
    """The comparison's pair table (PAIR_COLUMNS): every A theme against every B theme."""
    both, n_a, n_b, _ = iou_matrix(lab.A, lab.B)
    tp = set(lab.tpairs or [])
    n = len(lab.A)
    return pd.DataFrame(
        [
            (
                a_ids[i],
                b_ids[j],
                int(n_a[i]),
                int(n_b[j]),
                int(both[i, j]),
                float(iou[i, j]),
                kappa_counts(int(both[i, j]), int(n_a[i]), int(n_b[j]), n),
                float(lab.S[i, j]),
                (i, j) in tp,
            )
            for i in range(len(a_ids))
            for j in range(len(b_ids))
        ],
        columns=PAIR_COLUMNS,
    )


def _add_inference(row: dict, lab: Labelings, settings: GroundingSettings, transcripts, strata):
    """The row's intervals, p values and what is withheld of them (GroundingSettings), in
    place; transcripts: their integer codes."""
    withhold = settings.withhold_biased
    if settings.intervals:
        row.update(jackknife_intervals(lab, transcripts, row, settings.level))
        if withhold:
            row.update(withheld_intervals(row))

        # fewer transcripts than the suite measured the jackknife on: flagged (run-time)
        row["contract"] = grounding_flags(row["n_transcripts"])
    if settings.n_perm and withhold and not PRINTED_P:  # no p would be given: none is drawn
        row.update(untested_p())
    elif settings.n_perm:
        strata = transcripts if strata is None else _codes(strata)
        row.update(permutation_test(lab, strata, settings.n_perm, settings.seed))
        if withhold:  # the suite measures every p; a study is given the valid ones
            row.update(withheld_p(row))
    if withhold:
        row.update(withheld_few_transcripts(row))


def withheld_few_transcripts(row: dict) -> dict:
    """CHANCE_CORRECTED figures of a row over fewer than CHANCE_MIN_TRANSCRIPTS transcripts,
    with their intervals and p values, set to NaN, and `withheld_reason` saying which and why
    ("" when none is withheld: the column is always there)."""
    g = row["n_transcripts"]
    if g >= CHANCE_MIN_TRANSCRIPTS:
        return {"withheld_reason": ""}
    ends = ("", "_ci_low", "_ci_high", "_p")
    out: dict = {f"{m}{e}": math.nan for m in CHANCE_CORRECTED for e in ends if f"{m}{e}" in row}
    out["withheld_reason"] = (
        f"{', '.join(CHANCE_CORRECTED)}: not given over {g} transcript(s); a chance-corrected "
        f"figure needs at least {CHANCE_MIN_TRANSCRIPTS} (its interval leaves one transcript "
        "out at a time). Add transcripts to read agreement beyond chance"
    )
    return out


def _codes(labels) -> np.ndarray:
    """Integer codes of any labels (transcript names, (transcript, speaker) keys)."""
    return np.unique(np.asarray(labels), return_inverse=True)[1].astype(np.int64).reshape(-1)
