"""All pairs at a glance: a sets × sets matrix of one method's Hungarian F1.

Drawn instead of per-pair heatmaps when `comparisons.all_pairs` has more pairs than
`plots.max_pair_heatmaps`. Sets are ordered by average-linkage clustering (scipy) of
1 − F1, so sets that agree sit next to each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
from scipy.spatial.distance import squareform

from themesim.report.plots.common import (
    HEATMAP_CMAP,
    annotate_cells,
    cell_span,
    new_figure,
    save_png,
)


def f1_matrix(
    comparisons: pd.DataFrame, threshold: float, sets: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray]:
    """Sets and their symmetric F1 matrix at ``threshold`` (NaN: diagonal, pair not run or
    not scored). ``sets``: their order before clustering (default: as they first appear)."""
    rows = comparisons[np.isclose(comparisons["threshold"].astype(float), threshold)]
    if sets is None:
        sets = list(pd.unique(pd.concat([rows["set_a"], rows["set_b"]]).astype(str)))
    sets = list(sets)
    index = {s: k for k, s in enumerate(sets)}
    F = np.full((len(sets), len(sets)), np.nan)
    for a, b, f in zip(rows["set_a"], rows["set_b"], rows["hungarian_f1"], strict=True):
        i, j = index.get(str(a)), index.get(str(b))
        if i is None or j is None or i == j:
            continue
        F[i, j] = F[j, i] = float(f) if pd.notna(f) else np.nan
    return sets, F


def cluster_order(F: np.ndarray) -> list[int]:
    """Leaf order of average-linkage clustering on 1 − F1 (missing F1: distance 1)."""
    n = F.shape[0]
    if n < 3:
        return list(range(n))
    D = 1.0 - np.where(np.isfinite(F), F, 0.0)
    D = np.clip((D + D.T) / 2, 0.0, None)
    np.fill_diagonal(D, 0.0)
    y = squareform(D, checks=False)
    Z = optimal_leaf_ordering(linkage(y, method="average"), y)
    return [int(i) for i in leaves_list(Z)]


def pairs_overview_figure(
    comparisons: pd.DataFrame,
    *,
    threshold: float,
    title: str,
    sets: Sequence[str] | None = None,
) -> tuple[Figure, list[str], np.ndarray]:
    """The figure, the clustered set order and the matrix as drawn (in that order)."""
    names, F = f1_matrix(comparisons, threshold, sets)
    order = cluster_order(F)
    names = [names[i] for i in order]
    F = F[np.ix_(order, order)]
    n = len(names)
    # Above 60 sets (the large-heatmap limit) every set keeps its row, in a smaller font.
    label_size = 8 if n <= 30 else 6 if n <= 60 else 5
    span = cell_span(n) if n <= 60 else 0.15 * n
    fig = new_figure(max(5.0, span + 3.5), max(4.0, span + 3.0))
    ax = fig.add_subplot()
    ax.set_title(f"{title}\nHungarian F1 at threshold {threshold:g}; sets clustered", fontsize=11)
    if n == 0:
        ax.text(0.5, 0.5, "no comparisons", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig, names, F
    # The diagonal and pairs without a score stay blank.
    cmap = colormaps[HEATMAP_CMAP].with_extremes(bad="white")
    norm = Normalize(vmin=0.0, vmax=1.0)
    im = ax.imshow(
        np.ma.masked_invalid(F), cmap=cmap, norm=norm, aspect="equal", interpolation="nearest"
    )
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label("Hungarian F1", fontsize=9)
    ax.set_xticks(range(n), names, rotation=90, ha="center", fontsize=label_size)
    ax.set_yticks(range(n), names, fontsize=label_size)
    ax.tick_params(length=0)
    if n <= 15:
        annotate_cells(ax, F, cmap, norm, 8)
    return fig, names, F


def pairs_overview(
    comparisons: pd.DataFrame,
    *,
    threshold: float,
    title: str,
    out_png,
    out_svg=None,
    sets: Sequence[str] | None = None,
) -> Path:
    fig, _, _ = pairs_overview_figure(comparisons, threshold=threshold, title=title, sets=sets)
    return save_png(fig, out_png, out_svg)
