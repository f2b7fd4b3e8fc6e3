"""Theme map (seed 002): every theme on the first two principal components, matches joined."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import patheffects as pe
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from themesim.report.plots.common import (
    LINE_COLOURS,
    legend_below,
    new_figure,
    require_columns,
    save_png,
)

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]


def pca_2d(X) -> tuple[np.ndarray, np.ndarray]:
    """First two principal coordinates and their share of the variance.

    Signs fixed (largest loading positive) so reruns draw the same picture.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    coords = np.zeros((n, 2))
    ratio = np.zeros(2)
    if n < 2:
        return coords, ratio
    Xc = X - X.mean(axis=0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    k = min(2, len(s))
    for c in range(k):
        if Vt[c, np.argmax(np.abs(Vt[c]))] < 0:
            U[:, c], Vt[c] = -U[:, c], -Vt[c]
    coords[:, :k] = U[:, :k] * s[:k]
    total = float((s**2).sum())
    if total > 0:
        ratio[:k] = s[:k] ** 2 / total
    return coords, ratio


def theme_map_figure(
    points: pd.DataFrame,
    links: pd.DataFrame,
    *,
    explained: Sequence[float],
    title: str,
    link_label: str = "one-to-one match",
) -> Figure:
    """points: set, theme_id, x, y; links: set_a, a_id, set_b, b_id (pairs to join)."""
    require_columns(points, ["set", "theme_id", "x", "y"], "theme map points")
    require_columns(links, ["set_a", "a_id", "set_b", "b_id"], "theme map links")
    sets = list(dict.fromkeys(points["set"].astype(str)))
    n = len(points)
    size = 6.5 if n <= 60 else 8.5
    fig = new_figure(size + 0.5, size)
    fig.suptitle(title, fontsize=11)
    ax = fig.add_subplot()
    where = {
        (str(s), str(i)): (x, y)
        for s, i, x, y in zip(
            points["set"], points["theme_id"], points["x"], points["y"], strict=True
        )
    }
    for sa, ia, sb, ib in zip(
        links["set_a"], links["a_id"], links["set_b"], links["b_id"], strict=True
    ):
        p, q = where.get((str(sa), str(ia))), where.get((str(sb), str(ib)))
        if p is None or q is None:
            continue
        ax.plot([p[0], q[0]], [p[1], q[1]], color="0.45", linewidth=1.0, alpha=0.8, zorder=1)
    font = 7 if n <= 60 else 5.5
    halo = [pe.withStroke(linewidth=2, foreground="white")]
    for k, s in enumerate(sets):
        mine = points[points["set"].astype(str) == s]
        ax.scatter(
            mine["x"],
            mine["y"],
            s=42,
            marker=MARKERS[k % len(MARKERS)],
            color=LINE_COLOURS[k % len(LINE_COLOURS)],
            edgecolor="white",
            linewidth=0.6,
            label=f"{s} ({len(mine)})",
            zorder=3,
        )
        for x, y, tid in zip(mine["x"], mine["y"], mine["theme_id"], strict=True):
            t = ax.annotate(
                str(tid)[:10],
                (x, y),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=font,
                color="0.15",
                zorder=4,
            )
            t.set_path_effects(halo)
    ax.set_xlabel(f"PC1 ({100 * explained[0]:.0f} % of variance)", fontsize=9)
    ax.set_ylabel(f"PC2 ({100 * explained[1]:.0f} % of variance)", fontsize=9)
    ax.grid(True, color="0.92", linewidth=0.6)
    ax.tick_params(labelsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="0.45", linewidth=1.0, label=link_label))
    legend_below(fig, handles, min(4, len(handles)))
    if not n:
        ax.text(0.5, 0.5, "no themes", ha="center", va="center", transform=ax.transAxes)
    return fig


def theme_map(
    points: pd.DataFrame,
    links: pd.DataFrame,
    *,
    explained: Sequence[float],
    title: str,
    out_png,
    out_svg=None,
    link_label: str = "one-to-one match",
) -> Path:
    """Every theme of every set on the first two principal components; matches joined."""
    fig = theme_map_figure(points, links, explained=explained, title=title, link_label=link_label)
    return save_png(fig, out_png, out_svg)
