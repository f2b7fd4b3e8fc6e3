"""Rule grounding: per method how far two sets label the same transcript segments, and its
figures (docs/grounding.md). The labels themselves: steps/segment_labels.py."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet

log = logging.getLogger("themesim")


def _quote_rate(path) -> float:
    q = pd.read_csv(path)
    return float(q["found"].mean()) if len(q) else math.nan


def grounding_tables(
    *,
    method: str,
    pairs,
    themes: dict,
    labels: dict,
    quotes: dict,
    segments_path,
    similarities,
    thresholds_csv,
    settings: dict,
    out_csv,
    out_pairs,
    out_long,
    scale: dict | None = None,
    bases=None,
    coder_sets=None,
    assign: str = "uncoded",
    coders: dict | None = None,
    out_transcripts=None,
    codebooks: dict | None = None,
) -> None:
    """grounding.csv (one row per comparison and basis), grounding_pairs.csv and a long
    parquet per comparison (every theme pair of every basis); out_transcripts: the coder
    basis's 2x2 counts of every theme pair per transcript (metrics.grounding.grounding.
    transcript_counts), from which the verdicts' segments route leaves one transcript out.

    bases: grounding.basis (themesim.coder.basis; default `mixed`, the labels as they come);
    coder_sets: the sets the method's coder labels (default every set); assign: grounding's;
    coders: set -> the coder that labels it (coder_a, coder_b; a `coder` row whose sets two
    different coders labelled says so in basis_note).

    The text side decides as the metric tables do: S on the method's scale
    (metrics.method_scale) against its first threshold, both as the metrics job resolved them
    (thresholds_csv, metrics.thresholds). scale: the files that scale needs, ``within`` (set ->
    within-set matrix, for scale: z) and ``fit`` (the isotonic fit's CSV, for scale:
    calibrated). Segment labels stay on raw scores (assign_threshold).

    codebooks: ``fit`` (the method's isotonic fit, None without calibration.pairs) and
    ``within`` (set -> within-set matrix): with both, every row gains cu_alpha_codebooks, the
    agreement across codebooks of the two sets' top-1 labels (metrics/agreement/codebooks.py) with
    s = calibrated P(match) between every two themes; NaN otherwise.
    """
    from themesim.coder.basis import basis_labels
    from themesim.io.themes import read_themes_parquet
    from themesim.io.transcripts import read_segments_parquet
    from themesim.metrics.grounding.grounding import (
        TRANSCRIPT_COUNT_COLUMNS,
        grounding,
        label_matrix,
        top1,
        transcript_counts,
    )
    from themesim.metrics.method_scale import base_scale, method_matrix
    from themesim.metrics.thresholds import read_thresholds
    from themesim.similarity import read_similarity

    resolved = read_thresholds(thresholds_csv)
    scale = dict(scale or {})
    name, clamp, threshold = resolved.scale, resolved.clamp, resolved.first
    fit = pd.read_csv(scale["fit"]) if name == "calibrated" else None
    to_scale = base_scale(name, clamp, fit)
    within = dict(scale.get("within") or {})
    segments = read_segments_parquet(segments_path)
    # Intervals leave out one transcript at a time; the shift test rotates B's labels only
    # within one speaker's turns of one transcript (questions stay unassigned), in their
    # order: the segments table is sorted by transcript and segment.
    transcripts = segments["transcript"].astype(str).to_numpy()
    strata = (segments["transcript"].astype(str) + "\x1f" + _speakers(segments)).to_numpy()
    segments = segments[["transcript", "segment"]]
    ids = {s: read_themes_parquet(p)["theme_id"].tolist() for s, p in themes.items()}
    read = {s: pd.read_parquet(p) for s, p in labels.items()}
    W: dict = {}

    def within_matrix(s):
        # Read once: with comparisons.all_pairs every set recurs in many pairs.
        if s not in W:
            W[s] = read_similarity(within[s], ids[s], ids[s]) if s in within else None
        return W[s]

    # grounding.bootstrap (its old segment resamples) of 0 still turns the intervals off.
    boot = settings.get("bootstrap") or {}
    intervals = bool(settings.get("intervals", True)) and int(boot.get("n", 1)) > 0
    p_match = _p_match(codebooks)
    rows, pair_tables, by_transcript = [], [], []
    for (a, b), sim, long_out in zip(pairs, similarities, out_long, strict=True):
        raw = read_similarity(sim, ids[a], ids[b])
        s_union = None
        if p_match is not None:
            s_union = _union_similarity(p_match, codebooks, raw, ids, a, b)
        S, flag = method_matrix(
            raw,
            scale=name,
            W_a=within_matrix(a) if name == "z" else None,
            W_b=within_matrix(b) if name == "z" else None,
            to_scale=to_scale,
        )
        longs = []
        for basis, la, lb, note in basis_labels(
            read, a, b, bases or ["mixed"], ids if coder_sets is None else coder_sets, assign
        ):
            A = label_matrix(la, segments, ids[a])
            B = label_matrix(lb, segments, ids[b])
            top_a, top_b = top1(la, segments, ids[a]), top1(lb, segments, ids[b])
            row, pt = grounding(
                A,
                B,
                top_a,
                top_b,
                S,
                ids[a],
                ids[b],
                min_iou=float(settings["min_iou"]),
                threshold=threshold,
                op=resolved.op,
                transcripts=transcripts,
                strata=strata,
                intervals=intervals,
                n_perm=int(settings.get("permutations", 0)),
                seed=int(settings.get("seed", 0)),
            )
            row |= _codebook_columns(s_union, len(ids[b]), top_a, top_b, transcripts)
            if basis == "coder" and not note and out_transcripts is not None:
                counts = transcript_counts(A, B, ids[a], ids[b], transcripts)
                by_transcript.append(counts.assign(set_a=a, set_b=b))
            if note:
                row, pt = _no_data(row, pt)
            coder = {s: (coders or {}).get(s, "") for s in (a, b)}
            if basis == "coder" and not note and coder[a] != coder[b]:
                note = f"two coders: {a} by {coder[a]}, {b} by {coder[b]}"
            sources = {
                s: ",".join(sorted(x["source"].unique())) or "none" for s, x in ((a, la), (b, lb))
            }
            rows.append(
                {
                    "method": method,
                    "set_a": a,
                    "set_b": b,
                    "grounding_basis": basis,
                    "sources_a": sources[a],
                    "sources_b": sources[b],
                    "quote_grounding_rate_a": _quote_rate(quotes[a]),
                    "quote_grounding_rate_b": _quote_rate(quotes[b]),
                    "min_iou": float(settings["min_iou"]),
                    "text_threshold": threshold,
                    "scale": name,
                }
                | ({"scale_flag": flag} if name == "z" else {})
                | row
                | {"basis_note": note, "coder_a": coder[a], "coder_b": coder[b]}
            )
            longs.append(pt.assign(method=method, set_a=a, set_b=b, grounding_basis=basis))
        pt = pd.concat(longs, ignore_index=True)
        front = ["method", "set_a", "set_b", "grounding_basis"]
        write_parquet(pt[front + [c for c in pt.columns if c not in front]], long_out)
        pair_tables.append(pt)
    write_csv(pd.DataFrame(rows), out_csv)
    cols = ["method", "set_a", "set_b", "grounding_basis"]
    cols += ["a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa"]
    write_csv(pd.concat(pair_tables, ignore_index=True)[cols], out_pairs)
    if out_transcripts is not None:
        front = ["method", "set_a", "set_b"]
        table = (
            pd.concat(by_transcript, ignore_index=True).assign(method=method)
            if by_transcript
            else pd.DataFrame(columns=front + TRANSCRIPT_COUNT_COLUMNS)
        )
        write_parquet(table[front + TRANSCRIPT_COUNT_COLUMNS], out_transcripts)
    for r in rows:
        log.info(
            "%s %s vs %s (%s): text Hungarian F1 %.2f, grounded %.2f, AMI %.2f",
            method,
            r["set_a"],
            r["set_b"],
            r["grounding_basis"],
            r["text_hungarian_f1"],
            r["grounded_hungarian_f1"],
            r["ami"],
        )


CODEBOOK_COLUMNS = ["cu_alpha_codebooks", "cu_alpha_codebooks_ci_low", "cu_alpha_codebooks_ci_high"]


def _p_match(codebooks: dict | None):
    """Raw scores -> calibrated P(match) through the method's isotonic fit; None without one."""
    if not codebooks or not codebooks.get("fit"):
        return None
    from themesim.metrics.calibration import map_calibrated

    fit = pd.read_csv(codebooks["fit"])
    return lambda M: map_calibrated(np.asarray(M, dtype=float), fit)


def _union_similarity(p_match, codebooks, raw, ids, a, b):
    """P(match) between every two themes of sets a and b, raw their A x B scores (None
    without both within-set matrices)."""
    from themesim.metrics.agreement.codebooks import union_similarity
    from themesim.similarity import read_similarity

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
    from themesim.metrics.agreement.codebooks import codebook_alpha_interval, segment_parts

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
    import math

    text = {"n_segments", "text_hungarian_f1", "text_pairs"}
    row = {k: (v if k in text else math.nan) for k, v in row.items()}
    pairs = pairs.assign(n_both=pd.NA, iou=math.nan, kappa=math.nan)
    return row, pairs


def grounding_tables_and_plots(*, out_heatmaps, out_scatter, **tables) -> None:
    """The grounding rule: :func:`grounding_tables`, then :func:`grounding_plots` from the files
    it wrote, in one job (a settings change reruns both anyway)."""
    grounding_tables(**tables)
    grounding_plots(
        method=tables["method"],
        pairs=tables["pairs"],
        themes=tables["themes"],
        table=tables["out_csv"],
        pair_tables=tables["out_long"],
        out_heatmaps=out_heatmaps,
        out_scatter=out_scatter,
    )


def grounding_plots(
    *, method: str, pairs, themes: dict, table, pair_tables, out_heatmaps, out_scatter
):
    """Per comparison the IoU heatmap (PNG + SVG), per method the text-vs-data scatter."""
    from themesim.io.themes import read_themes_parquet
    from themesim.report.grounding_plots import iou_heatmap, text_vs_data

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
