"""Run consistency (seeds 002-004): the N × N similarity of a method's runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from themesim.report.plots.common import (
    HEATMAP_CMAP,
    annotate_cells,
    cell_span,
    new_figure,
    save_png,
    wrap_label,
)


def runs_heatmap_figure(
    names: Sequence[str], M, *, ncs: Sequence[float] | None = None, score: float, title: str
) -> Figure:
    """N × N similarity of the runs; rows labelled with each run's NCS."""
    M = np.asarray(M, dtype=float)
    n = len(names)
    if M.shape != (n, n):
        raise ValueError(f"run matrix is {M.shape[0]}×{M.shape[1]} for {n} run names")
    if ncs is not None and len(ncs) != n:
        raise ValueError(f"{len(ncs)} NCS values for {n} runs")
    rows = [
        wrap_label(f"{r} (NCS {v:.2f})" if ncs is not None and np.isfinite(v) else str(r))
        for r, v in zip(names, ncs if ncs is not None else [np.nan] * n, strict=True)
    ]
    cols = [wrap_label(str(r)) for r in names]
    fig = new_figure(max(5.0, 3.4 + cell_span(n)), max(4.0, cell_span(n) + 2.6))
    score_txt = "–" if not np.isfinite(score) else f"{score:.3f}"
    fig.suptitle(f"{title}\nrun consistency (mean off-diagonal) = {score_txt}", fontsize=11)
    ax = fig.add_subplot()
    if n == 0:
        ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    finite = M[np.isfinite(M)]
    norm = Normalize(vmin=min(0.0, float(finite.min()) if finite.size else 0.0), vmax=1.0)
    cmap = colormaps[HEATMAP_CMAP]
    im = ax.imshow(M, cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
    span = max(cell_span(n), 2.5)  # a slim colourbar even for two runs
    cax = ax.inset_axes([1.0 + 0.15 / span, 0.0, 0.2 / span, 1.0])
    cbar = fig.colorbar(im, cax=cax)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label("similarity between runs", fontsize=9)
    size = 8 if n <= 25 else 6
    ax.set_xticks(range(n), cols, rotation=45, ha="right", rotation_mode="anchor", fontsize=size)
    ax.set_yticks(range(n), rows, fontsize=size)
    ax.tick_params(length=0)
    if n <= 25:
        annotate_cells(ax, M, cmap, norm, 9 if n <= 10 else 7)
    return fig


def runs_heatmap(
    names: Sequence[str],
    M,
    *,
    ncs: Sequence[float] | None = None,
    score: float,
    title: str,
    out_png,
    out_svg=None,
) -> Path:
    """Run-consistency heatmap with the study's score in the title."""
    fig = runs_heatmap_figure(names, M, ncs=ncs, score=score, title=title)
    return save_png(fig, out_png, out_svg)
