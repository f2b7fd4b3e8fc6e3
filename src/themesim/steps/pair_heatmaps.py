"""The pair_heatmaps rule (`comparisons.all_pairs`): the folder of the heatmaps of the pairs
without the reference, or their overview above `plots.max_pair_heatmaps`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.io.files import atomic_path
from themesim.metrics.thresholds import read_thresholds
from themesim.paths import pair_name
from themesim.report.plots.pairs_overview import pairs_overview
from themesim.steps.job import Job
from themesim.steps.plots import HeatmapFiles, draw_heatmaps


def pair_heatmaps(job: Job) -> None:
    """`comparisons.all_pairs`: the heatmaps of the pairs without the reference, as
    ``{a}__vs__{b}_heatmap.png`` and ``.svg`` in one folder (inputs.jobs.pair_heatmaps).

    More pairs than ``max_heatmaps`` (`plots.max_pair_heatmaps`; None: no limit): the folder
    holds instead ``overview.png``/``.svg``, every set against every set, and a README.txt."""
    p = job.params
    method, pairs, limit = p["method"], [tuple(x) for x in p["pairs"]], p["max_heatmaps"]
    resolved = read_thresholds(job.input["thresholds"])
    out = Path(job.output["heatmaps"])
    out.mkdir(parents=True, exist_ok=True)
    if limit is not None and len(pairs) > limit:
        _pairs_overview(method, pairs, resolved.first, job.input["comparisons"], out, limit)
        return
    names = [pair_name(a, b) for a, b in pairs]
    files = [
        HeatmapFiles(pair, similarity, out / f"{n}_heatmap.png", out / f"{n}_heatmap.svg")
        for pair, similarity, n in zip(pairs, p["similarities"], names, strict=True)
    ]
    draw_heatmaps(
        method, files, job.input["themes"], resolved, p["scale"], job.input.get("decisions")
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
