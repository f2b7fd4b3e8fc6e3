"""Methods side by side: small multiples, a panel per method and comparison (never averaged)."""

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
    THRESHOLD_STYLE,
    comparison_rows,
    comparisons,
    legend_below,
    mark_thresholds,
    new_figure,
    require_columns,
    save_png,
    style_panel,
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
    """Small multiples: a row per method, a column per comparison, one line per panel, so
    no legend has to tell many lines apart. With a reference only its comparisons get
    columns (the others' figures are in the tables); above ``max_panels`` comparisons a
    method draws the reference's first ``max_panels`` and a last column with the median and
    interquartile band of all of its comparisons. Each panel is read on its method's own
    threshold scale: never averaged across methods."""
    if not sweeps:
        raise ValueError("no methods to plot")
    for name, df in sweeps.items():
        require_columns(
            df, ["set_a", "set_b", "threshold", metric], f"sweep table of method {name!r}"
        )
    drawn, summarised, columns = _panels(sweeps, reference, max_panels)
    n_cols = len(columns) + (1 if summarised else 0)
    n_rows = len(sweeps)
    pretty = legend(metric)
    fig = new_figure(max(4.5, 1.75 * max(n_cols, 1) + 0.9), 1.45 * n_rows + 1.3)
    fig.suptitle(
        f"{pretty} by threshold: a panel per method (rows) and comparison (columns), "
        "each on its method's own scale",
        fontsize=10,
    )
    axes = fig.subplots(n_rows, max(n_cols, 1), sharex=False, sharey=True, squeeze=False)
    colour = LINE_COLOURS[0]
    for i, (name, df) in enumerate(sweeps.items()):
        for j in range(max(n_cols, 1)):
            ax = axes[i][j]
            style_panel(ax)
            ax.tick_params(labelsize=6.5)
            if j < len(columns):
                a, b = columns[j]
                ax.set_label(f"{name}|{a} vs {b}")
                if i == 0:
                    ax.set_title(f"{a} vs\n{b}", fontsize=8)
                mark_thresholds(ax, thresholds[name].values)
                if (a, b) not in drawn[name]:
                    _not_drawn(ax, (a, b) not in comparisons(df))
                    continue
                rows = comparison_rows(df, a, b)
                ax.plot(rows["threshold"], rows[metric], color=colour, linewidth=1.5,
                        label=f"{a} vs {b}", zorder=2)  # fmt: skip
            else:  # the summary column
                ax.set_label(f"{name}|all")
                if i == 0:
                    ax.set_title("all comparisons\n(median, IQR)", fontsize=8)
                if name in summarised:
                    mark_thresholds(ax, thresholds[name].values)
                    _summary_lines(ax, df, metric)
                    ax.text(0.97, 0.92, f"{len(comparisons(df)):,}", ha="right", va="top",
                            fontsize=7, transform=ax.transAxes)  # fmt: skip
            if j == 0:
                ax.set_ylabel(name, fontsize=8)
            if i == n_rows - 1:
                ax.set_xlabel("θ", fontsize=7)
            else:
                ax.tick_params(labelbottom=False)
    handles = [
        Line2D([], [], color=colour, linewidth=1.5, label=pretty),
        Line2D([], [], **THRESHOLD_STYLE, label="configured threshold(s)"),
    ]
    if summarised:
        handles.append(Line2D([], [], **SUMMARY_STYLE, label="median of all comparisons"))
        handles.append(Patch(facecolor="0.3", alpha=0.2, label="their interquartile band"))
    legend_below(fig, handles, len(handles))
    return fig


SUMMARY_STYLE = {"color": "0.15", "linestyle": "-", "linewidth": 2.6}


def _panels(sweeps: dict[str, pd.DataFrame], reference, max_panels) -> tuple[dict, set, list]:
    """Each method's comparisons drawn one by one, the methods that also get the summary
    column (more comparisons than ``max_panels``) and the comparisons that get a column
    (with a reference among them, only the reference's)."""
    drawn = {name: comparisons(df) for name, df in sweeps.items()}
    summarised = {n for n, pairs in drawn.items() if over_limit(len(pairs), max_panels)}
    for name in summarised:
        drawn[name] = shown_pairs(drawn[name], reference, max_panels)
    columns = list(dict.fromkeys(p for pairs in drawn.values() for p in pairs))
    if reference and any(a == reference for a, _ in columns):
        columns = [(a, b) for a, b in columns if a == reference]
    return drawn, summarised, columns


def _not_drawn(ax, not_run: bool) -> None:
    """A panel without a line: "not run" where the method did not compare that pair (a
    comparison beyond max_panels stays blank: the summary column holds it)."""
    ax.text(0.5, 0.5, "not run" if not_run else "", ha="center", va="center", fontsize=7,
            color="0.4", transform=ax.transAxes)  # fmt: skip


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
    """A panel per method and comparison, one line each (above ``max_panels``: the
    reference's and a column with the median and interquartile band of all)."""
    fig = methods_side_by_side_figure(
        sweeps, thresholds=thresholds, metric=metric, reference=reference, max_panels=max_panels
    )
    return save_png(fig, out_png, out_svg)
