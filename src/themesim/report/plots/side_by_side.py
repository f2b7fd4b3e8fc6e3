"""Methods side by side: one panel per method, one line per comparison (never averaged)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from themesim.report.plots.common import (
    LINE_COLOURS,
    LINE_STYLES,
    THRESHOLD_STYLE,
    comparison_rows,
    comparisons,
    legend_below,
    mark_thresholds,
    op_of,
    require_columns,
    save_png,
    small_multiples,
    style_panel,
    threshold_xlabel,
)

METRIC_LABELS = {
    "hungarian_f1": "Hungarian F1 (one-to-one)",
    "true_jaccard": "True Jaccard",
    "f1": "Coverage F1",
    "hit_rate": "Hit rate (A covered)",
    "recall": "Recall (A covered)",
    "precision": "Precision (B covered)",
    "raza_jaccard": "Raza Jaccard (for comparison)",
    "maxcard_f1": "Max-cardinality F1",
    "similarity_f1": "Similarity F1",
}


def methods_side_by_side_figure(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, list[float]],
    metric: str = "hungarian_f1",
) -> Figure:
    if not sweeps:
        raise ValueError("no methods to plot")
    for name, df in sweeps.items():
        require_columns(
            df, ["set_a", "set_b", "threshold", metric], f"sweep table of method {name!r}"
        )
    # Same comparison, same colour and dash in every panel.
    labels = list(
        dict.fromkeys(f"{a} vs {b}" for df in sweeps.values() for a, b in comparisons(df))
    )
    style = {
        lab: (
            LINE_COLOURS[i % len(LINE_COLOURS)],
            LINE_STYLES[(i // len(LINE_COLOURS)) % len(LINE_STYLES)],
        )
        for i, lab in enumerate(labels)
    }
    pretty = METRIC_LABELS.get(metric, metric)
    title = f"{pretty} by threshold: each method on its own (never averaged)"
    fig, axes, ncols = small_multiples(len(sweeps), title)
    for k, (ax, (name, df)) in enumerate(zip(axes[: len(sweeps)], sweeps.items(), strict=True)):
        mark_thresholds(ax, thresholds.get(name, []))
        for a, b in comparisons(df):
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
        ax.set_title(name, fontsize=10)
        style_panel(ax)
        if k % ncols == 0:
            ax.set_ylabel(pretty, fontsize=9)
        if k >= len(sweeps) - ncols:  # lowest panel of its column
            ax.set_xlabel(threshold_xlabel(op_of(df)), fontsize=9)
            ax.tick_params(labelbottom=True)
    handles = [
        Line2D([], [], color=c, linestyle=d, linewidth=1.8, label=lab)
        for lab, (c, d) in style.items()
    ]
    handles.append(Line2D([], [], **THRESHOLD_STYLE, label="configured threshold(s)"))
    legend_below(fig, handles, min(3, len(handles)))
    return fig


def methods_side_by_side(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, list[float]],
    metric: str = "hungarian_f1",
    out_png,
    out_svg=None,
) -> Path:
    """One panel per method (same y-scale), one line per comparison."""
    return save_png(
        methods_side_by_side_figure(sweeps, thresholds=thresholds, metric=metric),
        out_png,
        out_svg,
    )
