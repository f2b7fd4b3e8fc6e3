"""Rules segment_labels and grounding: each theme set's labels on the transcript segments, then
per method how far two sets label the same segments (docs/grounding.md)."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet

log = logging.getLogger("themesim")

LABEL_COLUMNS = ["transcript", "segment", "theme_id", "source", "score"]
QUOTE_COLUMNS = ["theme_id", "quote", "found", "transcript", "start", "end", "score", "match"]


def _labels_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=LABEL_COLUMNS)
    df = df.astype({"segment": "int64", "score": "float64"})
    return df.sort_values(["transcript", "segment", "theme_id", "source"], kind="stable")


def segment_labels(
    *,
    method: str,
    spec: dict,
    set_name: str,
    themes_path,
    segments_path,
    transcripts,
    coded=None,
    level: str = "all",
    theme_embeddings=None,
    segment_embeddings=None,
    assign: str = "uncoded",
    assign_threshold: float | None = None,
    quote_cutoff: float = 90.0,
    exclude_speakers=(),
    out,
    out_quotes,
) -> None:
    """results/segments/{method}/{set}.parquet (transcript, segment, theme_id, source, score)
    and the set's quotes with where they were found.

    coded: the set's coded-segments file or .qdpx (source `coded`, score 1); quotes in the
    theme file are located (source `quote`, score 1); `assign` (uncoded|always|never) adds
    each segment's themes with similarity ≥ assign_threshold (source `assigned`, score =
    similarity) for a set without coded data, or always; segments of `exclude_speakers`
    (e.g. the interviewer) are never assigned. spec: the method's similarity settings (its
    `kind` says how themes and segments are scored: Kind.segment_scores).
    """
    from themesim import kinds
    from themesim.io.coded import coded_labels, read_coded_file
    from themesim.io.quotes import locate_quotes
    from themesim.io.spans import overlapping, segment_offsets, transcript_texts
    from themesim.io.themes import read_themes_parquet
    from themesim.io.transcripts import read_segments_parquet

    themes = read_themes_parquet(themes_path)
    segments = read_segments_parquet(segments_path)
    texts = transcript_texts(segments, transcripts)
    offsets = segment_offsets(segments, texts)
    rows = []
    if coded:
        if Path(coded).suffix.lower() == ".qdpx":
            from themesim.io.refi_qda import read_qdpx

            table = read_qdpx(coded, level).coded
        else:
            table = read_coded_file(coded, themes)
        labels = coded_labels(table, texts, offsets, str(coded))
        rows += [(*r, 1.0) for r in labels.itertuples(index=False, name=None)]
    located, missing = locate_quotes(themes, texts, quote_cutoff)
    for tid, _q, doc, start, end, _score, _m in located.itertuples(index=False, name=None):
        rows += [(doc, s, tid, "quote", 1.0) for s in overlapping(offsets, doc, start, end)]
    do_assign = assign == "always" or (assign == "uncoded" and not coded)
    if do_assign and assign_threshold is not None:
        S = kinds.get(spec["kind"]).segment_scores(
            spec, themes, segments, theme_embeddings, segment_embeddings
        )
        if S is not None:
            # Interviewer questions name the topics and would take most assigned labels.
            skip = {str(x).casefold() for x in exclude_speakers}
            asked = segments["speaker"].astype(str).str.casefold().isin(skip).to_numpy()
            S = np.where(asked[None, :], -np.inf, S)
            ti, si = np.nonzero(S >= assign_threshold)
            for i, j in zip(ti, si, strict=True):
                rows.append(
                    (
                        segments["transcript"].iat[j],
                        int(segments["segment"].iat[j]),
                        themes["theme_id"].iat[i],
                        "assigned",
                        float(S[i, j]),
                    )
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
    threshold: float | str | None,
    op: str,
    settings: dict,
    out_csv,
    out_pairs,
    out_long,
    calibration=(),
    scale: dict | None = None,
) -> None:
    """grounding.csv (one row per comparison), grounding_pairs.csv and a long parquet per
    comparison (every theme pair).

    The text side decides as the metric tables do: S on the method's scale
    (metrics.method_scale) against the first threshold on that scale. scale: ``scale`` and
    ``clamp`` as configured, ``within`` (set -> within-set matrix, for scale: z) and ``fit``
    (the isotonic fit's CSV, for scale: calibrated); None: cosine. threshold `calibrated`:
    the F1-maximising threshold from calibration[0] (results/calibration/{method}.csv), as a
    P(match) under scale: calibrated. Segment labels stay on raw scores (assign_threshold).
    """
    from themesim.io.themes import read_themes_parquet
    from themesim.io.transcripts import read_segments_parquet
    from themesim.metrics.grounding import grounding, label_matrix, top1
    from themesim.metrics.method_scale import base_scale, method_matrix
    from themesim.similarity import read_similarity

    scale = dict(scale or {})
    name, clamp = scale.get("scale") or "cosine", bool(scale.get("clamp", False))
    fit = pd.read_csv(scale["fit"]) if name == "calibrated" else None
    if isinstance(threshold, str):
        from themesim.metrics.calibration import resolve_thresholds

        summary = pd.read_csv(calibration[0]).iloc[0].to_dict()
        threshold = resolve_thresholds([threshold], summary, fit)[0][0]
    to_scale = base_scale(name, clamp, fit)
    within = dict(scale.get("within") or {})
    segments = read_segments_parquet(segments_path)[["transcript", "segment"]]
    ids = {s: read_themes_parquet(p)["theme_id"].tolist() for s, p in themes.items()}
    read = {s: pd.read_parquet(p) for s, p in labels.items()}
    W: dict = {}

    def within_matrix(s):
        # Read once: with comparisons.all_pairs every set recurs in many pairs.
        if s not in W:
            W[s] = read_similarity(within[s], ids[s], ids[s]) if s in within else None
        return W[s]

    boot = settings.get("bootstrap") or {}
    rows, pair_tables = [], []
    for (a, b), sim, long_out in zip(pairs, similarities, out_long, strict=True):
        S, flag = method_matrix(
            read_similarity(sim, ids[a], ids[b]),
            scale=name,
            W_a=within_matrix(a) if name == "z" else None,
            W_b=within_matrix(b) if name == "z" else None,
            to_scale=to_scale,
        )
        A = label_matrix(read[a], segments, ids[a])
        B = label_matrix(read[b], segments, ids[b])
        row, pt = grounding(
            A,
            B,
            top1(read[a], segments, ids[a]),
            top1(read[b], segments, ids[b]),
            S,
            ids[a],
            ids[b],
            min_iou=float(settings["min_iou"]),
            threshold=threshold,
            op=op,
            n_boot=int(boot.get("n", 0)),
            seed=int(settings.get("seed", 0)),
        )
        sources = {s: ",".join(sorted(read[s]["source"].unique())) or "none" for s in (a, b)}
        rows.append(
            {
                "method": method,
                "set_a": a,
                "set_b": b,
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
        )
        pt = pt.assign(method=method, set_a=a, set_b=b)
        write_parquet(pt[["method", "set_a", "set_b", *pt.columns[:-3]]], long_out)
        pair_tables.append(pt)
    write_csv(pd.DataFrame(rows), out_csv)
    cols = ["method", "set_a", "set_b", "a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa"]
    write_csv(pd.concat(pair_tables, ignore_index=True)[cols], out_pairs)
    for r in rows:
        log.info(
            "%s %s vs %s: text Hungarian F1 %.2f, grounded %.2f, AMI %.2f",
            method,
            r["set_a"],
            r["set_b"],
            r["text_hungarian_f1"],
            r["grounded_hungarian_f1"],
            r["ami"],
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
        long = pd.read_parquet(path)
        longs.append(long)
        iou_heatmap(long, names[a], names[b], f"{method}: {a} vs {b} — segment IoU", out, _svg(out))
    text_vs_data(
        pd.concat(longs, ignore_index=True),
        pd.read_csv(table),
        method,
        out_scatter,
        _svg(out_scatter),
    )


def _svg(png) -> str:
    return str(png)[: -len(".png")] + ".svg"
