"""One figure of the suite: coverage of every interval and the error rate of every test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.io.files import atomic_path
from themesim.validate.core import COVERAGE_FLOOR


def summary_figure(summary: pd.DataFrame, out) -> None:
    """Left: coverage per design (a dot per interval, the 0.93 floor drawn); right: type-I
    error and FDR per design against their alpha, power beside them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cov = summary[summary["property"] == "coverage"]
    err = summary[summary["property"].isin(["type1_error", "fdr", "power"])]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    for ax, part, title in ((axes[0], cov, "interval coverage"), (axes[1], err, "tests")):
        ax.set_title(title)
        if part.empty:
            ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
            continue
        labels = [f"{a}: {d}" for a, d in zip(part["area"], part["design"], strict=True)]
        order = list(dict.fromkeys(labels))
        y = np.array([order.index(lab) for lab in labels], dtype=float)
        kinds = part["property"].to_numpy()
        for kind, marker in (("coverage", "o"), ("type1_error", "o"), ("fdr", "s"), ("power", "^")):
            m = kinds == kind
            if m.any():
                ax.scatter(part["value"].to_numpy()[m], y[m], s=12, marker=marker, label=kind)
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels(order, fontsize=6)
        ax.set_xlim(-0.02, 1.02)
        ax.invert_yaxis()
    if not cov.empty:
        axes[0].set_xlim(min(0.8, float(cov["value"].min()) - 0.02), 1.005)
    axes[0].axvline(COVERAGE_FLOOR, color="red", lw=0.8, label=f"floor {COVERAGE_FLOOR}")
    axes[0].axvline(0.95, color="grey", lw=0.8, ls="--", label="nominal 0.95")
    axes[1].axvline(0.05, color="red", lw=0.8, label="alpha 0.05")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=110, metadata={"Software": None})
    plt.close(fig)
