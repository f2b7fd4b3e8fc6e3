"""The plot rules: heatmaps, sweeps, distributions, theme maps (run consistency: steps/runs.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind


def _label(theme_id: str, name: str) -> str:
    return f"{theme_id} {name}"


def sweep_plot(
    *,
    method: str,
    sweep_csv,
    thresholds_csv,
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> None:
    """The sweep curves of a method (rule plots), every θ of thresholds_csv marked: the
    thresholds as the metrics job resolved them (metrics.thresholds). More comparisons than
    ``max_panels`` (`plots.max_pair_panels`; None: no limit): the reference's and a summary.
    """
    from themesim.metrics.thresholds import read_thresholds
    from themesim.report.plots.sweep import sweep_curves

    sweep_curves(
        pd.read_csv(sweep_csv),
        thresholds=list(read_thresholds(thresholds_csv).values),
        title=f"{method}: metrics across thresholds",
        out_png=out_png,
        out_svg=out_svg,
        reference=reference,
        max_panels=max_panels,
    )


def comparison_heatmap(
    *,
    method: str,
    pair,
    themes: dict,
    similarity,
    thresholds_csv,
    op: str,
    out_png,
    out_svg=None,
    scale: dict | None = None,
) -> None:
    """One reference comparison's heatmap (rule heatmap), at the first threshold of
    thresholds_csv; scale: the files that put scores on the method's scale (``_heatmaps``)."""
    from themesim.metrics.thresholds import read_thresholds

    resolved = read_thresholds(thresholds_csv)
    _heatmaps(method, [pair], themes, [similarity], resolved, op, [out_png], [out_svg], scale)


def _heatmaps(
    method, pairs, themes: dict, similarities, resolved, op, outs, svgs, scale=None
) -> None:
    """One heatmap per comparison at the first threshold of ``resolved`` (metrics.thresholds.
    Thresholds), Hungarian pairs marked, on its scale as the metrics rule puts it
    (metrics.method_scale), so the outlined pairs are the decisions of its tables.

    scale: the files that scale needs, ``within`` (set -> within-set matrix, for scale: z)
    and ``fit`` (the isotonic fit's CSV, for scale: calibrated).
    """
    from themesim.metrics.coverage import hungarian_pairs
    from themesim.metrics.method_scale import (
        SCALE_SYMBOLS,
        base_scale,
        method_matrix,
        scale_label,
    )
    from themesim.report.plots.heatmap import heatmap
    from themesim.similarity import read_similarity

    scale = dict(scale or {})
    name, clamp, threshold = resolved.scale, resolved.clamp, resolved.first
    fit = pd.read_csv(scale["fit"]) if name == "calibrated" else None
    to_scale = base_scale(name, clamp, fit)
    within = dict(scale.get("within") or {})
    tables = {s: read_themes_parquet(p) for s, p in themes.items()}

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
        heatmap(
            S,
            [_label(i, n) for i, n in zip(ta["theme_id"], ta["name"], strict=True)],
            [_label(i, n) for i, n in zip(tb["theme_id"], tb["name"], strict=True)],
            threshold=threshold,
            op=op,
            title=title,
            out_png=out,
            out_svg=svg,
            pairs=matched,
            scale_label=scale_label(name, clamp),
            symbol=SCALE_SYMBOLS.get(name, "S"),
        )


def pair_heatmaps(
    *,
    method: str,
    pairs,
    themes: dict,
    similarities,
    thresholds_csv,
    op: str,
    out_dir,
    comparisons_csv,
    scale: dict | None = None,
    max_heatmaps: int | None = None,
) -> None:
    """`comparisons.all_pairs`: the heatmaps of the pairs without the reference, as
    ``{a}__vs__{b}_heatmap.png`` and ``.svg`` in one folder (rule pair_heatmaps).

    More pairs than ``max_heatmaps`` (`plots.max_pair_heatmaps`; None: no limit): the folder
    holds instead ``overview.png``/``.svg``, every set against every set, and a README.txt."""
    from pathlib import Path

    from themesim.metrics.thresholds import read_thresholds
    from themesim.study.names import pair_name

    resolved = read_thresholds(thresholds_csv)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if max_heatmaps is not None and len(pairs) > max_heatmaps:
        _pairs_overview(method, pairs, resolved.first, comparisons_csv, out, max_heatmaps)
        return
    names = [pair_name(a, b) for a, b in pairs]
    pngs = [out / f"{n}_heatmap.png" for n in names]
    svgs = [out / f"{n}_heatmap.svg" for n in names]
    _heatmaps(method, pairs, themes, similarities, resolved, op, pngs, svgs, scale)


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


def side_by_side(
    *,
    methods,
    sweeps,
    thresholds,
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> None:
    """thresholds: each method's thresholds.csv, in ``methods`` order."""
    from themesim.metrics.thresholds import read_thresholds
    from themesim.report.plots.side_by_side import methods_side_by_side

    methods_side_by_side(
        {m: pd.read_csv(p) for m, p in zip(methods, sweeps, strict=True)},
        thresholds={m: read_thresholds(p).values for m, p in zip(methods, thresholds, strict=True)},
        metric="hungarian_f1",
        out_png=out_png,
        out_svg=out_svg,
        reference=reference,
        max_panels=max_panels,
    )


def _theme_table(path) -> pd.DataFrame:
    """themes.csv as text (a set or theme called "NA" stays a name); plots parse numbers."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def distribution_plots(
    *,
    method: str,
    themes_csv,
    op: str,
    gamma: float,
    out_distributions,
    out_confidence,
    out_distributions_svg=None,
    out_confidence_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> None:
    """Matched-similarity and gap distributions, and the four-way confidence profile (above
    ``max_panels`` comparisons: the reference's rows and a summary of all)."""
    from themesim.report.plots.distributions import confidence_profile, distributions

    themes = _theme_table(themes_csv)
    distributions(
        themes,
        op=op,
        gamma=gamma,
        title=f"{method}: matched similarity and gap per comparison",
        out_png=out_distributions,
        out_svg=out_distributions_svg,
        reference=reference,
        max_panels=max_panels,
    )
    confidence_profile(
        themes,
        op=op,
        gamma=gamma,
        title=f"{method}: how confidently each theme is matched",
        out_png=out_confidence,
        out_svg=out_confidence_svg,
        reference=reference,
        max_panels=max_panels,
    )


def theme_map_plot(
    *,
    method: str,
    kind: str,
    themes: dict,
    embeddings: dict,
    themes_csv,
    op: str,
    d=None,
    out_png,
    out_svg=None,
) -> None:
    """2-D PCA of every theme of every set (seed 002); one-to-one matches joined."""
    from themesim.report.plots.common import op_symbol
    from themesim.report.plots.distributions import matched_pairs, thresholds_text
    from themesim.report.plots.theme_map import pca_2d, theme_map

    tables = {s: read_themes_parquet(p) for s, p in themes.items()}
    vectors = get_kind(kind).vectors({"d": d}, tables, embeddings)
    X = np.vstack([vectors[s] for s in tables]) if tables else np.zeros((0, 2))
    coords, ratio = pca_2d(X)
    points = pd.DataFrame(
        {
            "set": [s for s in tables for _ in range(len(tables[s]))],
            "theme_id": [i for s in tables for i in tables[s]["theme_id"]],
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    per_theme = _theme_table(themes_csv)
    links = matched_pairs(per_theme, op)
    rule = f"S {op_symbol(op)} {thresholds_text(per_theme)}"
    theme_map(
        points,
        links,
        explained=ratio,
        title=f"{method}: every theme on the first two principal components",
        link_label=f"one-to-one match ({rule})",
        out_png=out_png,
        out_svg=out_svg,
    )
