"""Rule grounding: per method how far two sets label the same transcript segments, and its
figures (docs/grounding.md). The labels themselves: steps/segment_labels.py."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from themesim.coder.basis import basis_labels
from themesim.io.files import write_csv, write_parquet
from themesim.io.segments import read_segments_parquet
from themesim.io.themes import read_themes_parquet
from themesim.metrics.agreement.codebooks import (
    codebook_alpha_interval,
    segment_parts,
    union_similarity,
)
from themesim.metrics.grounding.grounding import (
    TRANSCRIPT_COUNT_COLUMNS,
    GroundingSettings,
    SetLabels,
    grounding,
    label_matrix,
    top1,
    transcript_counts,
)
from themesim.metrics.isotonic import map_calibrated
from themesim.metrics.method_scale import base_scale, method_matrix
from themesim.metrics.thresholds import read_thresholds
from themesim.report.grounding_plots import iou_heatmap, text_vs_data
from themesim.similarity import read_similarity
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def _quote_rate(path) -> float:
    q = pd.read_csv(path)
    return float(q["found"].mean()) if len(q) else math.nan


@dataclass
class _Grounding:
    """What every comparison of a grounding job reads: the method's text decision (its
    scale and first threshold as the metrics job resolved them), the segments, each set's
    theme ids and labels, and the settings."""

    method: str
    resolved: object  # metrics.thresholds.Thresholds
    to_scale: object
    within: dict  # set -> its within-set matrix file (scale: z)
    segments: pd.DataFrame  # transcript and segment of each segment, in order
    transcripts: np.ndarray  # each segment's transcript (the jackknife's units)
    strata: np.ndarray  # each segment's transcript and speaker (the shift test's)
    ids: dict  # set -> its theme ids
    labels: dict  # set -> its labels table
    quotes: dict  # set -> its quotes CSV
    settings: dict
    coder: dict  # bases, sets, assign, coders (grounding.basis, the coder's sets)
    codebooks: dict | None
    p_match: object  # raw S -> calibrated P(match) (the codebooks' fit; None without one)
    read: dict = field(default_factory=dict)  # set -> its within-set matrix, read once

    def within_matrix(self, s):
        # Read once: with comparisons.all_pairs every set recurs in many pairs.
        if s not in self.read:
            ids = self.ids[s]
            self.read[s] = read_similarity(self.within[s], ids, ids) if s in self.within else None
        return self.read[s]


def _grounding(job: Job) -> _Grounding:
    p, files = job.params, job.params["files"]
    resolved = read_thresholds(job.input["thresholds"])
    scale = dict(p.get("scale") or {})
    fit = pd.read_csv(scale["fit"]) if resolved.scale == "calibrated" else None
    segments = read_segments_parquet(job.input["segments"])
    # Intervals leave out one transcript at a time; the shift test rotates B's labels only
    # within one speaker's turns of one transcript (questions stay unassigned), in their
    # order: the segments table is sorted by transcript and segment.
    return _Grounding(
        method=p["method"],
        resolved=resolved,
        to_scale=base_scale(resolved.scale, resolved.clamp, fit),
        within=dict(scale.get("within") or {}),
        segments=segments[["transcript", "segment"]],
        transcripts=segments["transcript"].astype(str).to_numpy(),
        strata=(segments["transcript"].astype(str) + "\x1f" + _speakers(segments)).to_numpy(),
        ids={
            s: read_themes_parquet(t)["theme_id"].tolist() for s, t in job.input["themes"].items()
        },
        labels={s: pd.read_parquet(path) for s, path in files["labels"].items()},
        quotes=files["quotes"],
        settings=p["settings"],
        coder=p.get("coder") or {},
        codebooks=p.get("codebooks"),
        p_match=_p_match(p.get("codebooks")),
    )


def grounding_tables(job: Job) -> None:
    """grounding.csv (one row per comparison and basis), grounding_pairs.csv and a long
    parquet per comparison (every theme pair of every basis); with an output
    pairs_by_transcript, the coder basis's 2x2 counts of every theme pair per transcript
    (metrics.grounding.grounding.transcript_counts), from which the verdicts' segments route leaves
    one transcript out (inputs.jobs.grounding).

    coder: `bases`, grounding.basis (themesim.coder.basis; default `mixed`, the labels as
    they come); `sets`, the sets the method's coder labels (default every set); `assign`,
    grounding's; `coders`, set -> the coder that labels it (coder_a, coder_b; a `coder` row
    whose sets two different coders labelled says so in basis_note).

    The text side decides as the metric tables do: S on the method's scale
    (metrics.method_scale) against its first threshold, both as the metrics job resolved them
    (input thresholds, metrics.thresholds). scale: the files that scale needs, ``within`` (set
    -> within-set matrix, for scale: z) and ``fit`` (the isotonic fit's CSV, for scale:
    calibrated). Segment labels stay on raw scores (assign_threshold).

    codebooks: ``fit`` (the method's isotonic fit, None without calibration.pairs) and
    ``within`` (set -> within-set matrix): with both, every row gains cu_alpha_codebooks, the
    agreement across codebooks of the two sets' top-1 labels (metrics/agreement/codebooks.py) with
    s = calibrated P(match) between every two themes; NaN otherwise.
    """
    g, files = _grounding(job), job.params["files"]
    by_transcript = [] if job.output.get("pairs_by_transcript") else None
    pairs = [tuple(x) for x in job.params["pairs"]]
    rows, pair_tables = [], []
    for pair, sim, long_out in zip(pairs, files["similarity"], files["long"], strict=True):
        pair_rows, pt = _comparison(g, pair, sim, by_transcript)
        front = ["method", "set_a", "set_b", "grounding_basis"]
        write_parquet(pt[front + [c for c in pt.columns if c not in front]], long_out)
        rows += pair_rows
        pair_tables.append(pt)
    write_csv(pd.DataFrame(rows), job.output["table"])
    cols = ["method", "set_a", "set_b", "grounding_basis"]
    cols += ["a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa"]
    write_csv(pd.concat(pair_tables, ignore_index=True)[cols], job.output["pairs"])
    if by_transcript is not None:
        front = ["method", "set_a", "set_b"]
        table = (
            pd.concat(by_transcript, ignore_index=True).assign(method=g.method)
            if by_transcript
            else pd.DataFrame(columns=front + TRANSCRIPT_COUNT_COLUMNS)
        )
        write_parquet(table[front + TRANSCRIPT_COUNT_COLUMNS], job.output["pairs_by_transcript"])
    for r in rows:
        log.info(
            "%s %s vs %s (%s): text Hungarian F1 %.2f, grounded %.2f, AMI %.2f",
            g.method,
            r["set_a"],
            r["set_b"],
            r["grounding_basis"],
            r["text_hungarian_f1"],
            r["grounded_hungarian_f1"],
            r["ami"],
        )


def _comparison(g: _Grounding, pair: tuple, sim, by_transcript) -> tuple[list, pd.DataFrame]:
    """One comparison's rows of grounding.csv (one per basis) and its long table; the coder
    basis's counts per transcript go to `by_transcript` (None: not kept)."""
    a, b = pair
    ids, name = g.ids, g.resolved.scale
    raw = read_similarity(sim, ids[a], ids[b])
    s_union = None
    if g.p_match is not None:
        s_union = _union_similarity(g.p_match, g.codebooks, raw, ids, a, b)
    z = name == "z"
    S, flag = method_matrix(
        raw,
        scale=name,
        W_a=g.within_matrix(a) if z else None,
        W_b=g.within_matrix(b) if z else None,
        to_scale=g.to_scale,
    )
    rows, longs = [], []
    bases, coder_sets = g.coder.get("bases") or ["mixed"], g.coder.get("sets")
    assign = g.coder.get("assign", "uncoded")
    for basis, la, lb, note in basis_labels(
        g.labels, a, b, bases, ids if coder_sets is None else coder_sets, assign
    ):
        A, B = label_matrix(la, g.segments, ids[a]), label_matrix(lb, g.segments, ids[b])
        top_a, top_b = top1(la, g.segments, ids[a]), top1(lb, g.segments, ids[b])
        row, pt = _basis_row(g, pair, (A, B, top_a, top_b), S)
        row |= _codebook_columns(s_union, len(ids[b]), top_a, top_b, g.transcripts)
        if basis == "coder" and not note and by_transcript is not None:
            counts = transcript_counts(A, B, ids[a], ids[b], g.transcripts)
            by_transcript.append(counts.assign(set_a=a, set_b=b))
        if note:
            row, pt = _no_data(row, pt)
        coder = {s: (g.coder.get("coders") or {}).get(s, "") for s in (a, b)}
        if basis == "coder" and not note and coder[a] != coder[b]:
            note = f"two coders: {a} by {coder[a]}, {b} by {coder[b]}"
        sources = {
            s: ",".join(sorted(x["source"].unique())) or "none" for s, x in ((a, la), (b, lb))
        }
        rows.append(
            _head(g, pair, basis, sources, flag)
            | row
            | {"basis_note": note, "coder_a": coder[a], "coder_b": coder[b]}
        )
        longs.append(pt.assign(method=g.method, set_a=a, set_b=b, grounding_basis=basis))
    return rows, pd.concat(longs, ignore_index=True)


def _basis_row(g: _Grounding, pair: tuple, labels: tuple, S) -> tuple[dict, pd.DataFrame]:
    """metrics.grounding.grounding of one comparison under one basis: A's and B's label
    matrices and top-1 labels (`labels`) against S on the method's scale."""
    a, b = pair
    A, B, top_a, top_b = labels
    st = g.settings
    # grounding.bootstrap (its old segment resamples) of 0 still turns the intervals off.
    boot = st.get("bootstrap") or {}
    settings = GroundingSettings(
        min_iou=float(st["min_iou"]),
        threshold=g.resolved.first,
        op=g.resolved.op,
        intervals=bool(st.get("intervals", True)) and int(boot.get("n", 1)) > 0,
        n_perm=int(st.get("permutations", 0)),
        seed=int(st.get("seed", 0)),
    )
    return grounding(
        SetLabels(A, top_a, g.ids[a]), SetLabels(B, top_b, g.ids[b]), S, settings,
        transcripts=g.transcripts, strata=g.strata,
    )  # fmt: skip


def _head(g: _Grounding, pair: tuple, basis: str, sources: dict, flag) -> dict:
    """The front columns of a grounding.csv row."""
    a, b = pair
    name = g.resolved.scale
    return {
        "method": g.method,
        "set_a": a,
        "set_b": b,
        "grounding_basis": basis,
        "sources_a": sources[a],
        "sources_b": sources[b],
        "quote_grounding_rate_a": _quote_rate(g.quotes[a]),
        "quote_grounding_rate_b": _quote_rate(g.quotes[b]),
        "min_iou": float(g.settings["min_iou"]),
        "text_threshold": g.resolved.first,
        "scale": name,
    } | ({"scale_flag": flag} if name == "z" else {})


CODEBOOK_COLUMNS = ["cu_alpha_codebooks", "cu_alpha_codebooks_ci_low", "cu_alpha_codebooks_ci_high"]


def _p_match(codebooks: dict | None):
    """Raw scores -> calibrated P(match) through the method's isotonic fit; None without one."""
    if not codebooks or not codebooks.get("fit"):
        return None

    fit = pd.read_csv(codebooks["fit"])
    return lambda M: map_calibrated(np.asarray(M, dtype=float), fit)


def _union_similarity(p_match, codebooks, raw, ids, a, b):
    """P(match) between every two themes of sets a and b, raw their A x B scores (None
    without both within-set matrices)."""
    within = codebooks.get("within") or {}
    if a not in within or b not in within:
        return None
    return union_similarity(
        p_match(raw),
        p_match(read_similarity(within[a], ids[a], ids[a])),
        p_match(read_similarity(within[b], ids[b], ids[b])),
    )


def _codebook_columns(s, n_b: int, top_a, top_b, transcripts) -> dict:
    """cu_alpha_codebooks and its transcript jackknife interval, NaN without s."""
    if s is None:
        return dict.fromkeys(CODEBOOK_COLUMNS, math.nan)

    n_a = len(s) - n_b
    est, lo, hi = codebook_alpha_interval(segment_parts(top_a, top_b, transcripts, n_a, n_b), s)
    return dict(zip(CODEBOOK_COLUMNS, (est, lo, hi), strict=True))


def _speakers(segments: pd.DataFrame) -> pd.Series:
    """Each segment's speaker, any case (one stratum when the transcripts name none)."""
    if "speaker" not in segments.columns:
        return pd.Series("", index=segments.index)
    return segments["speaker"].fillna("").astype(str).str.strip().str.casefold()


def _no_data(row: dict, pairs: pd.DataFrame) -> tuple[dict, pd.DataFrame]:
    """A row whose labels a set lacks (its coder cannot label): NaN data figures, not the
    zeros an empty labelling would give; the text figures stay."""
    text = {"n_segments", "text_hungarian_f1", "text_pairs"}
    row = {k: (v if k in text else math.nan) for k, v in row.items()}
    pairs = pairs.assign(n_both=pd.NA, iou=math.nan, kappa=math.nan)
    return row, pairs


def grounding_tables_and_plots(job: Job) -> None:
    """The grounding rule: :func:`grounding_tables`, then :func:`grounding_plots` from the files
    it wrote, in one job (a settings change reruns both anyway)."""
    grounding_tables(job)
    p = job.params
    grounding_plots(
        method=p["method"],
        pairs=[tuple(x) for x in p["pairs"]],
        themes=job.input["themes"],
        table=job.output["table"],
        pair_tables=p["files"]["long"],
        out_heatmaps=p["files"]["heatmaps"],
        out_scatter=job.output["scatter"],
    )


def grounding_plots(
    *, method: str, pairs, themes: dict, table, pair_tables, out_heatmaps, out_scatter
):
    """Per comparison the IoU heatmap (PNG + SVG), per method the text-vs-data scatter."""
    names = {}
    for s, p in themes.items():
        t = read_themes_parquet(p)
        names[s] = dict(zip(t["theme_id"], t["name"], strict=True))
    longs = []
    for (a, b), path, out in zip(pairs, pair_tables, out_heatmaps, strict=True):
        long = primary_basis(pd.read_parquet(path))
        longs.append(long)
        title = f"{method}: {a} vs {b} — segment IoU"
        iou_heatmap(
            long, names[a], names[b], title, out, _svg(out), f"{a} (rows)", f"{b} (columns)"
        )
    text_vs_data(
        pd.concat(longs, ignore_index=True),
        primary_basis(pd.read_csv(table)),
        method,
        out_scatter,
        _svg(out_scatter),
    )


def primary_basis(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of each comparison's first basis (grounding.basis order): what the figures
    and the report's passages show."""
    if "grounding_basis" not in df.columns:
        return df
    first = df.groupby(["set_a", "set_b"], sort=False)["grounding_basis"].transform("first")
    return df[df["grounding_basis"] == first]


def _svg(png) -> str:
    return str(png)[: -len(".png")] + ".svg"
