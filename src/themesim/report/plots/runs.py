"""Run consistency (seeds 002-004): the N × N similarity of a method's runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def _check(names: Sequence[str], M, ncs) -> np.ndarray:
    M = np.asarray(M, dtype=float)
    n = len(names)
    if M.shape != (n, n):
        raise ValueError(f"run matrix is {M.shape[0]}×{M.shape[1]} for {n} run names")
    if ncs is not None and len(ncs) != n:
        raise ValueError(f"{len(ncs)} NCS values for {n} runs")
    return M


def _row_labels(names: Sequence[str], ncs) -> list[str]:
    return [
        wrap_label(f"{r} (NCS {v:.2f})" if ncs is not None and np.isfinite(v) else str(r))
        for r, v in zip(names, ncs if ncs is not None else [np.nan] * len(names), strict=True)
    ]


def _draw(ax, names: Sequence[str], M: np.ndarray, ncs, norm):
    """One group's heatmap on ax; returns the image (for a colourbar)."""
    n = len(names)
    cmap = colormaps[HEATMAP_CMAP]
    im = ax.imshow(M, cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
    size = 8 if n <= 25 else 6
    cols = [wrap_label(str(r)) for r in names]
    ax.set_xticks(range(n), cols, rotation=45, ha="right", rotation_mode="anchor", fontsize=size)
    ax.set_yticks(range(n), _row_labels(names, ncs), fontsize=size)
    ax.tick_params(length=0)
    if n <= 25:
        annotate_cells(ax, M, cmap, norm, 9 if n <= 10 else 7)
    return im


def _norm(matrices) -> Normalize:
    finite = np.concatenate([M[np.isfinite(M)] for M in matrices] or [np.zeros(0)])
    return Normalize(vmin=min(0.0, float(finite.min()) if finite.size else 0.0), vmax=1.0)


def _colourbar(fig, ax, im, n: int) -> None:
    span = max(cell_span(n), 2.5)  # a slim colourbar even for two runs
    cax = ax.inset_axes([1.0 + 0.15 / span, 0.0, 0.2 / span, 1.0])
    cbar = fig.colorbar(im, cax=cax)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label("similarity between runs", fontsize=9)


def _score_text(score: float) -> str:
    return "–" if not np.isfinite(score) else f"{score:.3f}"


def runs_heatmap_figure(
    names: Sequence[str], M, *, ncs: Sequence[float] | None = None, score: float, title: str
) -> Figure:
    """N × N similarity of the runs; rows labelled with each run's NCS."""
    M = _check(names, M, ncs)
    n = len(names)
    fig = new_figure(max(5.0, 3.4 + cell_span(n)), max(4.0, cell_span(n) + 2.6))
    fig.suptitle(
        f"{title}\nrun consistency (mean off-diagonal) = {_score_text(score)}", fontsize=11
    )
    ax = fig.add_subplot()
    if n == 0:
        ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    im = _draw(ax, names, M, ncs, _norm([M]))
    _colourbar(fig, ax, im, n)
    return fig


def runs_groups_figure(groups: Sequence[Mapping], *, title: str) -> Figure:
    """One panel per run group (runs are compared only within their group), on one colour
    scale; each panel's title gives the group's run consistency.

    groups: mappings with "group", "names", "M", optional "ncs" and "score".
    """
    panels = [
        (g["group"], list(g["names"]), _check(g["names"], g["M"], g.get("ncs")), g.get("ncs"))
        for g in groups
    ]
    if not panels:
        fig = new_figure(5.0, 4.0)
        fig.suptitle(title, fontsize=11)
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "no run groups", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    sizes = [len(p[1]) for p in panels]
    widths = [max(2.0, cell_span(n)) + 2.2 for n in sizes]
    fig = new_figure(max(5.0, sum(widths) + 1.2), max(4.0, cell_span(max(sizes)) + 2.9))
    fig.suptitle(f"{title}\nruns compared within each group only", fontsize=11)
    axes = fig.subplots(1, len(panels), width_ratios=widths, squeeze=False)[0]
    norm = _norm([p[2] for p in panels])
    im = None
    for ax, (name, names, M, ncs), g in zip(axes, panels, groups, strict=True):
        im = _draw(ax, names, M, ncs, norm)
        score = float(g.get("score", np.nan))
        ax.set_title(f"{name}: run consistency = {_score_text(score)}", fontsize=10)
    _colourbar(fig, axes[-1], im, sizes[-1])
    return fig


def runs_groups_heatmap(groups: Sequence[Mapping], *, title: str, out_png, out_svg=None) -> Path:
    """Run-consistency heatmaps, one panel per run group."""
    return save_png(runs_groups_figure(groups, title=title), out_png, out_svg)


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
