"""The calibration panel of one method (docs/thresholds.md): its ROC curve, the isotonic fit
against observed rates and the scores by label. Drawn by the calibration job alone; apart
from threshold_plots.py, so report_parts, which draws those, imports no scikit-learn
(metrics.calibration's ROC)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from themesim.metrics.calibration import roc_points
from themesim.report.plots.common import new_figure, save_png

NO_MATCH, MATCH = "#888888", "#1f77b4"


def calibration_figure(
    scores: np.ndarray, labels: np.ndarray, fit: pd.DataFrame, summary: dict, title: str
) -> Figure:
    """ROC curve, reliability curve (isotonic fit over binned observed rates) and the score
    distributions by label, with the F1 and Youden thresholds marked."""
    s, y = np.asarray(scores, float), np.asarray(labels, int)
    fig = new_figure(11, 3.6)
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
