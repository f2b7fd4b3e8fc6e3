"""Theme map (seed 002): every theme on the first two principal components, matches joined."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import patheffects as pe
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from themesim.report.format import op_symbol
from themesim.report.plots.common import (
    legend_below,
    new_figure,
    require_columns,
    save_png,
)
from themesim.report.plots.distributions import matched_pairs, thresholds_text

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


# A qualitative palette of ten distinct hues (matplotlib's tab10), so seven or more sets
# stay apart; the markers change with every set as well.
SET_COLOURS = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
]  # fmt: skip
# Above this many labels they stay at their first place: the search compares each label
# with every one placed before it (a 100-set study has thousands of themes).
MAX_SPREAD_LABELS = 400
# Where a label may sit around its point (offset points), tried in this order.
LABEL_OFFSETS = [(4, 3), (4, -9), (-4, 3), (-4, -9), (0, 8), (0, -13), (8, -3), (-8, -3)]


def _spread_labels(fig: Figure, labels: list) -> None:
    """Move each label to the first place around its point where it overlaps no label
    placed before it (the least overlap when every place is taken). Deterministic: labels
    are placed in drawing order."""
    if not labels or len(labels) > MAX_SPREAD_LABELS:
        return
    renderer = fig.canvas.get_renderer()
    placed = []

    def overlap(box) -> float:
        total = 0.0
        for other in placed:
            w = min(box.x1, other.x1) - max(box.x0, other.x0)
            h = min(box.y1, other.y1) - max(box.y0, other.y0)
            if w > 0 and h > 0:
                total += w * h
        return total

    for t in labels:
        best, best_area = None, None
        for dx, dy in LABEL_OFFSETS:
            t.set_position((dx, dy))
            t.set_ha("left" if dx > 0 else "right" if dx < 0 else "center")
            box = t.get_window_extent(renderer).expanded(1.05, 1.1)
            area = overlap(box)
            if best_area is None or area < best_area:
                best, best_area = (dx, dy, box), area
            if area == 0:
                break
        dx, dy, box = best
        t.set_position((dx, dy))
        t.set_ha("left" if dx > 0 else "right" if dx < 0 else "center")
        placed.append(box)


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
    labels = []
    for k, s in enumerate(sets):
        mine = points[points["set"].astype(str) == s]
        colour = SET_COLOURS[k % len(SET_COLOURS)]
        ax.scatter(
            mine["x"],
            mine["y"],
            s=42,
            marker=MARKERS[k % len(MARKERS)],
            color=colour,
            edgecolor="white",
            linewidth=0.6,
            label=f"{k + 1}: {s} ({len(mine)})",
            zorder=3,
        )
        # ids repeat across sets (T01 in every generated run): each label names its set by
        # its number in the legend, in the set's colour
        for x, y, tid in zip(mine["x"], mine["y"], mine["theme_id"], strict=True):
            t = ax.annotate(
                f"{k + 1}:{str(tid)[:10]}",
                (x, y),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=font,
                color=colour,
                zorder=4,
            )
            t.set_path_effects(halo)
            labels.append(t)
    ax.set_xlabel(f"PC1 ({100 * explained[0]:.0f} % of variance)", fontsize=9)
    ax.set_ylabel(f"PC2 ({100 * explained[1]:.0f} % of variance)", fontsize=9)
    ax.grid(True, color="0.92", linewidth=0.6)
    ax.tick_params(labelsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    _spread_labels(fig, labels)
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


def draw_theme_map(tables, *, out_png, out_svg=None) -> Path:
    """The report_parts job's theme map of a method (steps.report_parts.MethodTables `tables`): 2-D
    PCA of every theme of every set (seed 002), one-to-one matches joined."""
    sets, vectors = tables.set_themes, tables.theme_vectors
    X = np.vstack([vectors[s] for s in sets]) if sets else np.zeros((0, 2))
    coords, ratio = pca_2d(X)
    points = pd.DataFrame(
        {
            "set": [s for s in sets for _ in range(len(sets[s]))],
            "theme_id": [i for s in sets for i in sets[s]["theme_id"]],
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    per_theme = tables.themes_table
    links = matched_pairs(per_theme, tables.op)
    rule = f"S {op_symbol(tables.op)} {thresholds_text(per_theme)}"
    return theme_map(
        points,
        links,
        explained=ratio,
        title=f"{tables.method}: every theme on the first two principal components",
        link_label=f"one-to-one match ({rule})",
        out_png=out_png,
        out_svg=out_svg,
    )
