"""Figures about thresholds: the headline intervals of every comparison at a method's first
threshold (report_parts); the calibration panel is in calibration_plot.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from themesim.report.pair_limit import over_limit, shown_pairs
from themesim.report.plots.common import save_png

MATCH = "#1f77b4"


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _first_threshold_rows(headline: pd.DataFrame, method: str) -> pd.DataFrame:
    """The method's row at its first threshold, per comparison."""
    rows = headline[headline["method"] == method]
    return rows.groupby(["set_a", "set_b"], sort=False).head(1)


def _interval_dots(ax, first: pd.DataFrame, y: dict, metric: str) -> None:
    """A dot (and its interval's bar) for each comparison that has a row `y`."""
    for r in first.to_dict("records"):
        yy = y.get((r["set_a"], r["set_b"]))
        if yy is None:
            continue
        lo, hi = r.get(f"{metric}_ci_low"), r.get(f"{metric}_ci_high")
        if pd.notna(lo) and pd.notna(hi):
            ax.plot([lo, hi], [yy, yy], color=MATCH, linewidth=2, solid_capstyle="butt")
        ax.plot([r[metric]], [yy], "o", color="black", markersize=5)


def _interval_panel(ax, method: str, first: pd.DataFrame, metric: str) -> None:
    theta = first["threshold"].iloc[0] if len(first) else float("nan")
    ax.set_title(f"{method} (θ {theta:g})", fontsize=9)
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x", linewidth=0.4, alpha=0.5)
    ax.set_xlabel(metric.replace("_", " "), fontsize=8)


def headline_intervals_figure(headline: pd.DataFrame, metric: str = "hungarian_f1") -> Figure:
    """Dot and whisker per comparison (rows) and method (one panel each, never pooled): the
    metric at each method's first threshold with its 95 % interval
    (metrics/intervals/intervals.py)."""
    methods = list(dict.fromkeys(headline["method"]))
    comps = list(dict.fromkeys(zip(headline["set_a"], headline["set_b"], strict=True)))
    fig = _figure(max(4.0, 2.6 * len(methods)), 1.0 + 0.38 * len(comps))
    axes = np.atleast_1d(fig.subplots(1, len(methods), sharey=True, squeeze=False)[0])
    y = {c: i for i, c in enumerate(comps)}
    for ax, method in zip(axes, methods, strict=True):
        first = _first_threshold_rows(headline, method)
        _interval_dots(ax, first, y, metric)
        _interval_panel(ax, method, first, metric)
    axes[0].set_yticks(range(len(comps)), [f"{a} vs {b}" for a, b in comps], fontsize=8)
    axes[0].invert_yaxis()
    return fig


def headline_intervals_summary_figure(
    headline: pd.DataFrame, metric: str, reference: str | None, max_panels: int
) -> Figure:
    """Above `plots.max_pair_panels` comparisons: a dot and whisker for each of the
    reference's (at most ``max_panels``) and, per method, one box of every comparison's value
    (quartiles and median; whiskers min and max)."""
    methods = list(dict.fromkeys(headline["method"]))
    comps = list(dict.fromkeys(zip(headline["set_a"], headline["set_b"], strict=True)))
    shown = shown_pairs(comps, reference, max_panels)
    fig = _figure(max(4.0, 2.6 * len(methods)), 1.0 + 0.38 * (len(shown) + 1))
    axes = np.atleast_1d(fig.subplots(1, len(methods), sharey=True, squeeze=False)[0])
    y = {c: i for i, c in enumerate(shown)}
    for ax, method in zip(axes, methods, strict=True):
        first = _first_threshold_rows(headline, method)
        _interval_dots(ax, first, y, metric)
        values = pd.to_numeric(first[metric], errors="coerce").dropna().to_numpy(float)
        if len(values):
            ax.boxplot(
                [values],
                positions=[len(shown)],
                orientation="horizontal",
                widths=0.6,
                whis=(0, 100),
                showfliers=False,
                manage_ticks=False,
                medianprops={"color": "black", "linewidth": 2},
            )
        _interval_panel(ax, method, first, metric)
    labels = [f"{a} vs {b}" for a, b in shown] + [f"all {len(comps):,} comparisons (box)"]
    axes[0].set_yticks(range(len(labels)), labels, fontsize=8)
    axes[0].set_ylim(len(labels) - 0.5, -0.5)
    return fig


def headline_intervals(
    headline: pd.DataFrame,
    *,
    out_png,
    out_svg=None,
    metric="hungarian_f1",
    reference: str | None = None,
    max_panels: int | None = None,
):
    n = len(dict.fromkeys(zip(headline["set_a"], headline["set_b"], strict=True)))
    if over_limit(n, max_panels):
        fig = headline_intervals_summary_figure(headline, metric, reference, max_panels)
    else:
        fig = headline_intervals_figure(headline, metric)
    return save_png(fig, out_png, out_svg)
