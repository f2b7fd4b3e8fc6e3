"""Methods side by side: one panel per method, one line per comparison (never averaged)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from themesim.metrics.registry import legend
from themesim.metrics.thresholds import Thresholds
from themesim.report.plots.common import (
    LINE_COLOURS,
    LINE_STYLES,
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
from themesim.report.plots.pair_limit import over_limit, quartiles_by_threshold, shown_pairs


def methods_side_by_side_figure(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, Thresholds],
    metric: str = "hungarian_f1",
    reference: str | None = None,
    max_panels: int | None = None,
) -> Figure:
    """Above ``max_panels`` comparisons a method's panel draws the reference's comparisons
    (at most ``max_panels``) and the median and interquartile band of all of them."""
    if not sweeps:
        raise ValueError("no methods to plot")
    for name, df in sweeps.items():
        require_columns(
            df, ["set_a", "set_b", "threshold", metric], f"sweep table of method {name!r}"
        )
    drawn = {name: comparisons(df) for name, df in sweeps.items()}
    summarised = {n for n, pairs in drawn.items() if over_limit(len(pairs), max_panels)}
    for name in summarised:
        drawn[name] = shown_pairs(drawn[name], reference, max_panels)
    # Same comparison, same colour and dash in every panel.
    labels = list(dict.fromkeys(f"{a} vs {b}" for pairs in drawn.values() for a, b in pairs))
    style = {
        lab: (
            LINE_COLOURS[i % len(LINE_COLOURS)],
            LINE_STYLES[(i // len(LINE_COLOURS)) % len(LINE_STYLES)],
        )
        for i, lab in enumerate(labels)
    }
    pretty = legend(metric)
    title = f"{pretty} by threshold: each method on its own (never averaged)"
    fig, axes, ncols = small_multiples(len(sweeps), title)
    for k, (ax, (name, df)) in enumerate(zip(axes[: len(sweeps)], sweeps.items(), strict=True)):
        mark_thresholds(ax, thresholds[name].values)
        if name in summarised:
            _summary_lines(ax, df, metric)
        for a, b in drawn[name]:
            rows = comparison_rows(df, a, b)
            lab = f"{a} vs {b}"
            colour, dash = style[lab]
            ax.plot(
                rows["threshold"],
                rows[metric],
                color=colour,
                linestyle=dash,
                linewidth=1.8,
                label=lab,
                zorder=2,
            )
        if df.empty:
            ax.text(
                0.5,
                0.5,
                "no sweep rows",
                ha="center",
                va="center",
                transform=ax.transAxes,
                fontsize=9,
            )
        if name in summarised:
            ax.set_title(f"{name}: {len(comparisons(df)):,} comparisons", fontsize=10)
        else:
            ax.set_title(name, fontsize=10)
        style_panel(ax)
        if k % ncols == 0:
            ax.set_ylabel(pretty, fontsize=9)
        if k >= len(sweeps) - ncols:  # lowest panel of its column
            ax.set_xlabel(threshold_xlabel(thresholds[name].op), fontsize=9)
            ax.tick_params(labelbottom=True)
    handles = [
        Line2D([], [], color=c, linestyle=d, linewidth=1.8, label=lab)
        for lab, (c, d) in style.items()
    ]
    if summarised:
        handles.append(Line2D([], [], **SUMMARY_STYLE, label="median of all comparisons"))
        handles.append(Patch(facecolor="0.3", alpha=0.2, label="their interquartile band"))
    handles.append(Line2D([], [], **THRESHOLD_STYLE, label="configured threshold(s)"))
    legend_below(fig, handles, min(3, len(handles)))
    return fig


SUMMARY_STYLE = {"color": "0.15", "linestyle": "-", "linewidth": 2.6}


def _summary_lines(ax, df: pd.DataFrame, metric: str) -> None:
    q = quartiles_by_threshold(df, [metric])
    ax.fill_between(
        q["threshold"], q[f"{metric}_q1"], q[f"{metric}_q3"], color="0.3", alpha=0.2, lw=0
    )
    ax.plot(q["threshold"], q[f"{metric}_median"], **SUMMARY_STYLE, zorder=3)


def methods_side_by_side(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, Thresholds],
    metric: str = "hungarian_f1",
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> Path:
    """One panel per method (same y-scale), one line per comparison (above ``max_panels``:
    the reference's and a median with its interquartile band)."""
    fig = methods_side_by_side_figure(
        sweeps, thresholds=thresholds, metric=metric, reference=reference, max_panels=max_panels
    )
    return save_png(fig, out_png, out_svg)
