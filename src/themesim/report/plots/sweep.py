"""Threshold sweep of one method: every metric against θ, one panel per comparison (above
`plots.max_pair_panels`: the reference's and one summary panel)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from themesim.metrics.registry import legend
from themesim.metrics.thresholds import Thresholds
from themesim.report.plots.common import (
    OKABE_ITO,
    THRESHOLD_STYLE,
    comparison_rows,
    comparisons,
    legend_below,
    mark_thresholds,
    require_columns,
    save_png,
    small_multiples,
    style_panel,
    threshold_xlabel,
)
from themesim.report.plots.pair_limit import (
    over_limit,
    quartiles_by_threshold,
    shown_pairs,
    summary_title,
)

# Sweep metrics: the headline (Hungarian F1) drawn heaviest; colour *and* dash differ.
SWEEP_STYLES = {
    "hungarian_f1": (OKABE_ITO["blue"], "-", 2.4),
    "true_jaccard": (OKABE_ITO["green"], "--", 1.6),
    "f1": (OKABE_ITO["orange"], "-.", 1.6),
    "hit_rate": (OKABE_ITO["purple"], ":", 1.9),
    "raza_jaccard": (OKABE_ITO["vermillion"], (0, (6, 2, 1, 2)), 1.4),
}
# column -> (legend, colour, dash, width); legends from metrics/registry.py
SWEEP_METRICS = {col: (legend(col), *style) for col, style in SWEEP_STYLES.items()}


def sweep_curves_figure(sweep: pd.DataFrame, *, thresholds: Thresholds, title: str) -> Figure:
    """thresholds: the method's, as its metrics job resolved them (each marked; their op
    names the axis)."""
    require_columns(sweep, ["set_a", "set_b", "threshold", *SWEEP_METRICS], "sweep table")
    comps = comparisons(sweep)
    fig, axes, ncols = small_multiples(len(comps), title)
    xlabel = threshold_xlabel(thresholds.op)
    if not comps:
        axes[0].text(
            0.5, 0.5, "no sweep rows", ha="center", va="center", transform=axes[0].transAxes
        )
    for k, (ax, (a, b)) in enumerate(zip(axes[: len(comps)], comps, strict=True)):
        _comparison_panel(ax, comparison_rows(sweep, a, b), a, b, thresholds)
        _axis_labels(ax, k, len(comps), ncols, xlabel)
    _legend(fig)
    return fig


def _comparison_panel(ax, rows: pd.DataFrame, a: str, b: str, thresholds: Thresholds) -> None:
    mark_thresholds(ax, thresholds.values)
    for col, (label, colour, dash, lw) in SWEEP_METRICS.items():
        ax.plot(
            rows["threshold"],
            rows[col],
            color=colour,
            linestyle=dash,
            linewidth=lw,
            label=label,
            zorder=2,
        )
    sizes = ""
    if {"n_a", "n_b"} <= set(rows.columns) and len(rows):
        sizes = f"  (A={int(rows['n_a'].iloc[0])}, B={int(rows['n_b'].iloc[0])})"
    ax.set_title(f"{a} vs {b}{sizes}", fontsize=9)
    style_panel(ax)


def _axis_labels(ax, k: int, n: int, ncols: int, xlabel: str) -> None:
    if k % ncols == 0:
        ax.set_ylabel("score", fontsize=9)
    if k >= n - ncols:  # lowest panel of its column
        ax.set_xlabel(xlabel, fontsize=9)
        ax.tick_params(labelbottom=True)


def _legend(fig, extra=()) -> None:
    handles = [
        Line2D([], [], color=c, linestyle=d, linewidth=lw, label=lab)
        for lab, c, d, lw in SWEEP_METRICS.values()
    ]
    handles.extend(extra)
    handles.append(Line2D([], [], **THRESHOLD_STYLE, label="configured threshold"))
    legend_below(fig, handles, min(3, len(handles)))


def sweep_summary_figure(
    sweep: pd.DataFrame,
    *,
    thresholds: Thresholds,
    title: str,
    reference: str | None,
    max_panels: int,
) -> Figure:
    """Above `plots.max_pair_panels` comparisons: a panel for each of the reference's (at most
    ``max_panels``) and one of every comparison's median and interquartile band per metric."""
    require_columns(sweep, ["set_a", "set_b", "threshold", *SWEEP_METRICS], "sweep table")
    comps = comparisons(sweep)
    shown = shown_pairs(comps, reference, max_panels)
    n = len(shown) + 1
    fig, axes, ncols = small_multiples(n, title)
    xlabel = threshold_xlabel(thresholds.op)
    for k, (ax, (a, b)) in enumerate(zip(axes[: len(shown)], shown, strict=True)):
        _comparison_panel(ax, comparison_rows(sweep, a, b), a, b, thresholds)
        _axis_labels(ax, k, n, ncols, xlabel)
    ax = axes[len(shown)]
    q = quartiles_by_threshold(sweep, list(SWEEP_METRICS))
    mark_thresholds(ax, thresholds.values)
    for col, (_, colour, dash, lw) in SWEEP_METRICS.items():
        ax.fill_between(
            q["threshold"], q[f"{col}_q1"], q[f"{col}_q3"], color=colour, alpha=0.15, lw=0
        )
        ax.plot(q["threshold"], q[f"{col}_median"], color=colour, linestyle=dash, linewidth=lw)
    ax.set_title(summary_title(len(comps)), fontsize=9)
    style_panel(ax)
    _axis_labels(ax, n - 1, n, ncols, xlabel)
    band = Patch(facecolor="0.5", alpha=0.15, label="interquartile band of all comparisons")
    _legend(fig, [band])
    return fig


def sweep_curves(
    sweep: pd.DataFrame,
    *,
    thresholds: Thresholds,
    title: str,
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> Path:
    """Small multiples, one panel per (set_a, set_b): metrics vs threshold; above
    ``max_panels`` comparisons the reference's and a summary (sweep_summary_figure)."""
    if over_limit(len(comparisons(sweep)), max_panels):
        fig = sweep_summary_figure(
            sweep, thresholds=thresholds, title=title, reference=reference, max_panels=max_panels
        )
    else:
        fig = sweep_curves_figure(sweep, thresholds=thresholds, title=title)
    return save_png(fig, out_png, out_svg)


def draw_sweep(tables, *, out_png, out_svg=None) -> Path:
    """The report_parts job's sweep of one method (report/figures.py), every θ of its
    thresholds.csv marked (steps.report_parts.MethodTables)."""
    return tables.draw(
        sweep_curves,
        tables.sweep_table,
        "metrics across thresholds",
        out_png=out_png,
        out_svg=out_svg,
        thresholds=tables.thresholds,
    )
