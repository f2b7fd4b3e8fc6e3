"""The heatmap rules: a reference pair's heatmap, and the folder of the other pairs' (the
report_parts figures: steps/report_parts.py; run consistency: steps/runs.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.io.themes import read_themes_parquet
from themesim.metrics.thresholds import read_thresholds
from themesim.steps.job import Job


def _label(theme_id: str, name: str) -> str:
    return f"{theme_id} {name}"


def comparison_heatmap(job: Job) -> None:
    """One reference comparison's heatmap (inputs.jobs.heatmap), at the first threshold of
    its thresholds.csv; scale: the files that put scores on the method's scale
    (``_heatmaps``); decisions: the method's decision_changes.csv (the pairs the within-set
    z rule drops are crossed)."""
    p, out = job.params, job.output
    resolved = read_thresholds(job.input["thresholds"])
    pair, themes = tuple(p["pair"]), job.input["themes"]
    svg = [out.get("svg")]
    _heatmaps(
        p["method"],
        [pair],
        themes,
        [p["similarity"]],
        resolved,
        [out["png"]],
        svg,
        p["scale"],
        job.input.get("decisions"),
    )


def _z_dropped(decisions, threshold: float) -> dict:
    """(set_a, set_b) -> the (a_id, b_id) one-to-one pairs the within-set z rule does not keep
    at the raw threshold (decision_changes.csv's only_raw_pairs); {} without the table."""
    import math
    from pathlib import Path

    if not decisions or not Path(decisions).is_file():
        return {}
    d = pd.read_csv(decisions, dtype={"only_raw_pairs": str}, keep_default_na=False)
    if d.empty or "only_raw_pairs" not in d:
        return {}
    d = d[[math.isclose(float(t), threshold, rel_tol=1e-9) for t in d["raw_threshold"]]]
    return {
        (a, b): {tuple(p.split(":", 1)) for p in str(x).split("; ") if ":" in p}
        for a, b, x in zip(d["set_a"], d["set_b"], d["only_raw_pairs"], strict=True)
    }


def _heatmaps(
    method, pairs, themes: dict, similarities, resolved, outs, svgs, scale=None, decisions=None
) -> None:
    """One heatmap per comparison at the first threshold of ``resolved`` (metrics.thresholds.
    Thresholds), Hungarian pairs marked, on its scale as the metrics rule puts it
    (metrics.method_scale), so the outlined pairs are the decisions of its tables.

    scale: the files that scale needs, ``within`` (set -> within-set matrix, for scale: z)
    and ``fit`` (the isotonic fit's CSV, for scale: calibrated). decisions: the method's
    decision_changes.csv: the one-to-one pairs the within-set z rule drops get a cross.
    Axes name the sets.
    """
    from themesim.metrics.method_scale import (
        SCALE_SYMBOLS,
        base_scale,
        method_matrix,
        scale_label,
    )
    from themesim.metrics.sets.coverage import hungarian_pairs
    from themesim.report.plots.heatmap import heatmap
    from themesim.similarity import read_similarity

    scale = dict(scale or {})
    name, clamp, threshold = resolved.scale, resolved.clamp, resolved.first
    fit = pd.read_csv(scale["fit"]) if name == "calibrated" else None
    to_scale = base_scale(name, clamp, fit)
    within = dict(scale.get("within") or {})
    tables = {s: read_themes_parquet(p) for s, p in themes.items()}
    dropped = _z_dropped(decisions, threshold)

    read: dict = {}

    def within_matrix(s):
        # Read once: with comparisons.all_pairs every set recurs in many pairs.
        if s not in read:
            ids = tables[s]["theme_id"]
            read[s] = read_similarity(within[s], ids, ids) if s in within else None
        return read[s]

    for (a, b), path, out, svg in zip(pairs, similarities, outs, svgs, strict=True):
        ta, tb = tables[a], tables[b]
        S, flag = method_matrix(
            read_similarity(path, ta["theme_id"], tb["theme_id"]),
            scale=name,
            W_a=within_matrix(a) if name == "z" else None,
            W_b=within_matrix(b) if name == "z" else None,
            to_scale=to_scale,
        )
        title = f"{method}: {a} (rows) vs {b} (columns)"
        if np.isfinite(S).all():
            rows, cols = hungarian_pairs(S)
            matched = list(zip(rows.tolist(), cols.tolist(), strict=True))
        else:  # the metric tables flag this comparison and score nothing: no pairs to mark
            matched = []
            title += f"\nz undefined ({flag or 'NaN'}): not scored"
        a_pos = {t: k for k, t in enumerate(ta["theme_id"])}
        b_pos = {t: k for k, t in enumerate(tb["theme_id"])}
        rejected = [
            (a_pos[x], b_pos[y]) for x, y in dropped.get((a, b), ()) if x in a_pos and y in b_pos
        ]
        heatmap(
            S,
            [_label(i, n) for i, n in zip(ta["theme_id"], ta["name"], strict=True)],
            [_label(i, n) for i, n in zip(tb["theme_id"], tb["name"], strict=True)],
            threshold=threshold,
            op=resolved.op,
            title=title,
            out_png=out,
            out_svg=svg,
            pairs=matched,
            scale_label=scale_label(name, clamp),
            symbol=SCALE_SYMBOLS.get(name, "S"),
            a_name=f"{a} (rows)",
            b_name=f"{b} (columns)",
            rejected=rejected,
        )


def pair_heatmaps(job: Job) -> None:
    """`comparisons.all_pairs`: the heatmaps of the pairs without the reference, as
    ``{a}__vs__{b}_heatmap.png`` and ``.svg`` in one folder (inputs.jobs.pair_heatmaps).

    More pairs than ``max_heatmaps`` (`plots.max_pair_heatmaps`; None: no limit): the folder
    holds instead ``overview.png``/``.svg``, every set against every set, and a README.txt."""
    from pathlib import Path

    from themesim.study.names import pair_name

    p = job.params
    method, pairs, limit = p["method"], [tuple(x) for x in p["pairs"]], p["max_heatmaps"]
    resolved = read_thresholds(job.input["thresholds"])
    out = Path(job.output["heatmaps"])
    out.mkdir(parents=True, exist_ok=True)
    if limit is not None and len(pairs) > limit:
        _pairs_overview(method, pairs, resolved.first, job.input["comparisons"], out, limit)
        return
    names = [pair_name(a, b) for a, b in pairs]
    pngs = [out / f"{n}_heatmap.png" for n in names]
    svgs = [out / f"{n}_heatmap.svg" for n in names]
    themes, similarities = job.input["themes"], p["similarities"]
    _heatmaps(
        method,
        pairs,
        themes,
        similarities,
        resolved,
        pngs,
        svgs,
        p["scale"],
        job.input.get("decisions"),
    )


OVERVIEW_README = """\
Per-pair heatmaps were not drawn for method {method}: its {n} pairs without the
reference are more than plots.max_pair_heatmaps ({limit}). overview.png (and .svg) shows
instead every set against every set: Hungarian F1 at threshold {threshold:g}, sets ordered
by clustering so that sets which agree sit together. The heatmaps of the reference pairs
are in the folder above, as usual.

To get every pair's heatmap here, raise plots.max_pair_heatmaps in the config above {n}
(or set it to null, no limit) and run the workflow again: only this folder is redrawn.
Each heatmap takes about half a second.
"""


def _pairs_overview(method, pairs, threshold, comparisons_csv, out, limit) -> None:
    from pathlib import Path

    from themesim.io.files import atomic_path
    from themesim.report.plots.pairs_overview import pairs_overview

    comp = pd.read_csv(comparisons_csv, dtype={"set_a": str, "set_b": str})
    pairs_overview(
        comp,
        threshold=threshold,
        title=f"{method}: every pair of sets",
        out_png=out / "overview.png",
        out_svg=out / "overview.svg",
    )
    text = OVERVIEW_README.format(method=method, n=len(pairs), limit=limit, threshold=threshold)
    with atomic_path(out / "README.txt") as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
