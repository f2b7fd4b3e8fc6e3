"""The heatmap rule: a reference pair's heatmap (the folder of the other pairs':
steps/pair_heatmaps.py; the report_parts figures: steps/report_parts.py; run consistency:
steps/runs.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.io.themes import read_themes_parquet
from themesim.metrics.method_scale import SCALE_SYMBOLS, base_scale, method_matrix, scale_label
from themesim.metrics.sets.coverage import hungarian_pairs
from themesim.metrics.thresholds import read_thresholds
from themesim.report.plots.heatmap import Cutoff, ThemeAxis, heatmap
from themesim.similarity import read_similarity
from themesim.steps.job import Job


def _label(theme_id: str, name: str) -> str:
    return f"{theme_id} {name}"


@dataclass(frozen=True)
class HeatmapFiles:
    """One comparison's heatmap: its pair of sets, its similarity matrix and the figure's
    files (PNG, and SVG unless None)."""

    pair: tuple[str, str]
    similarity: Path
    png: Path
    svg: Path | None = None


def comparison_heatmap(job: Job) -> None:
    """One reference comparison's heatmap (inputs.jobs.heatmap), at the first threshold of
    its thresholds.csv; scale: the files that put scores on the method's scale
    (``draw_heatmaps``); decisions: the method's decision_changes.csv (the pairs the within-set
    z rule drops are crossed)."""
    p, out = job.params, job.output
    resolved = read_thresholds(job.input["thresholds"])
    files = HeatmapFiles(tuple(p["pair"]), p["similarity"], out["png"], out.get("svg"))
    draw_heatmaps(
        p["method"], [files], job.input["themes"], resolved, p["scale"], job.input.get("decisions")
    )


def _z_dropped(decisions, threshold: float) -> dict:
    """(set_a, set_b) -> the (a_id, b_id) one-to-one pairs the within-set z rule does not keep
    at the raw threshold (decision_changes.csv's only_raw_pairs); {} without the table."""
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


def draw_heatmaps(
    method, comparisons: list[HeatmapFiles], themes: dict, resolved, scale=None, decisions=None
) -> None:
    """One heatmap per comparison at the first threshold of ``resolved`` (metrics.thresholds.
    Thresholds), Hungarian pairs marked, on its scale as the metrics rule puts it
    (metrics.method_scale), so the outlined pairs are the decisions of its tables.

    scale: the files that scale needs, ``within`` (set -> within-set matrix, for scale: z)
    and ``fit`` (the isotonic fit's CSV, for scale: calibrated). decisions: the method's
    decision_changes.csv: the one-to-one pairs the within-set z rule drops get a cross.
    Axes name the sets.
    """
    scale = dict(scale or {})
    name, clamp, threshold = resolved.scale, resolved.clamp, resolved.first
    fit = pd.read_csv(scale["fit"]) if name == "calibrated" else None
    to_scale = base_scale(name, clamp, fit)
    within = dict(scale.get("within") or {})
    tables = {s: read_themes_parquet(p) for s, p in themes.items()}
    dropped = _z_dropped(decisions, threshold)
    cutoff = Cutoff(threshold, resolved.op, scale_label(name, clamp), SCALE_SYMBOLS.get(name, "S"))

    read: dict = {}

    def within_matrix(s):
        # Read once: with comparisons.all_pairs every set recurs in many pairs.
        if s not in read:
            ids = tables[s]["theme_id"]
            read[s] = read_similarity(within[s], ids, ids) if s in within else None
        return read[s]

    for files in comparisons:
        a, b = files.pair
        ta, tb = tables[a], tables[b]
        S, flag = method_matrix(
            read_similarity(files.similarity, ta["theme_id"], tb["theme_id"]),
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
            _axis(ta, f"{a} (rows)"),
            _axis(tb, f"{b} (columns)"),
            cutoff=cutoff,
            title=title,
            out_png=files.png,
            out_svg=files.svg,
            pairs=matched,
            rejected=rejected,
        )


def _axis(table: pd.DataFrame, name: str) -> ThemeAxis:
    """A set's side of the heatmap: each theme labelled "id name", the axis titled ``name``."""
    labels = [_label(i, n) for i, n in zip(table["theme_id"], table["name"], strict=True)]
    return ThemeAxis(labels, name=name)
