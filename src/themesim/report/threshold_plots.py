"""Figures about thresholds: the calibration panel of one method (docs/thresholds.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from themesim.report.plots.common import save_png

NO_MATCH, MATCH = "#888888", "#1f77b4"


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def calibration_figure(
    scores: np.ndarray, labels: np.ndarray, fit: pd.DataFrame, summary: dict, title: str
) -> Figure:
    """ROC curve, reliability curve (isotonic fit over binned observed rates) and the score
    distributions by label, with the F1 and Youden thresholds marked."""
    from themesim.metrics.calibration import roc_points

    s, y = np.asarray(scores, float), np.asarray(labels, int)
    fig = _figure(11, 3.6)
    roc, rel, dist = fig.subplots(1, 3)
    fpr, tpr = roc_points(s, y)
    roc.plot(fpr, tpr, color=MATCH, drawstyle="steps-post")
    roc.plot([0, 1], [0, 1], color=NO_MATCH, linestyle=":", linewidth=1)
    roc.set(
        xlabel="false positive rate",
        ylabel="true positive rate",
        title=f"ROC, AUC {summary['auc']:.2f} "
        f"[{summary['auc_ci_low']:.2f}, {summary['auc_ci_high']:.2f}]",
        xlim=(0, 1),
        ylim=(0, 1.02),
    )
    # Reliability: observed match rate in score quintiles against the isotonic P(match).
    edges = np.unique(np.quantile(s, np.linspace(0, 1, 6)))
    bins = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, max(len(edges) - 2, 0))
    centres = [s[bins == b].mean() for b in np.unique(bins)]
    rates = [y[bins == b].mean() for b in np.unique(bins)]
    rel.plot(fit["score"], fit["p_match"], color=MATCH, label="isotonic P(match)")
    rel.scatter(centres, rates, color="black", s=18, zorder=3, label="observed (quintiles)")
    rel.set(xlabel="score", ylabel="P(match)", title="Reliability", ylim=(-0.02, 1.02))
    rel.legend(fontsize=7, loc="upper left")
    rng = np.random.default_rng(0)  # fixed jitter: byte-identical reruns
    for k, (label, colour) in enumerate(((0, NO_MATCH), (1, MATCH))):
        v = s[y == label]
        dist.scatter(v, k + rng.uniform(-0.15, 0.15, v.size), s=14, color=colour, alpha=0.8)
    for key, style in (("f1_threshold", "--"), ("youden_threshold", ":")):
        for ax in (rel, dist):
            ax.axvline(summary[key], color="black", linestyle=style, linewidth=1)
    dist.set(
        yticks=[0, 1],
        yticklabels=["rated no match", "rated match"],
        xlabel="score",
        title=f"F1 θ {summary['f1_threshold']:.3g} (--), Youden θ "
        f"{summary['youden_threshold']:.3g} (:)",
    )
    fig.suptitle(title, fontsize=10)
    return fig


def calibration_plot(scores, labels, fit, summary, *, title: str, out_png, out_svg=None):
    return save_png(calibration_figure(scores, labels, fit, summary, title), out_png, out_svg)


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
    from themesim.report.pair_limit import shown_pairs

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
    from themesim.report.pair_limit import over_limit

    n = len(dict.fromkeys(zip(headline["set_a"], headline["set_b"], strict=True)))
    if over_limit(n, max_panels):
        fig = headline_intervals_summary_figure(headline, metric, reference, max_panels)
    else:
        fig = headline_intervals_figure(headline, metric)
    return save_png(fig, out_png, out_svg)
