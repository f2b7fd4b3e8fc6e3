"""The similarity heatmap of one comparison, one-to-one pairs on the diagonal."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib import patheffects as pe
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from themesim.metrics.thresholds import matches
from themesim.report.format import op_symbol
from themesim.report.plots.blocks import MAX_CELLS, block_max, group_axis, group_labels
from themesim.report.plots.common import (
    HEATMAP_CMAP,
    OKABE_ITO,
    annotate_cells,
    cell_span,
    legend_below,
    new_figure,
    saving,
    theme_label,
    theme_labels,
)


def data_range(S) -> tuple[float, float]:
    """The colour scale's ends: the data's own minimum and maximum (a constant matrix gets
    ±0.05 around its value), so a heatmap of values from 0.29 to 0.72 uses every colour."""
    S = np.asarray(S, dtype=float)
    finite = S[np.isfinite(S)]
    if not finite.size:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    return (lo - 0.05, hi + 0.05) if hi - lo < 1e-9 else (lo, hi)


def diagonal_order(S, pairs: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Row and column order that puts the one-to-one pairs on the diagonal.

    Paired rows keep the reference (A) order, each followed by its partner column;
    unpaired rows and columns come last, sorted by where their best partner sits.
    """
    S = np.asarray(S, dtype=float)
    n_a, n_b = S.shape
    pairs = sorted((int(i), int(j)) for i, j in pairs)
    rows = [i for i, _ in pairs]
    cols = [j for _, j in pairs]
    col_pos = {j: k for k, j in enumerate(cols)}
    row_pos = {i: k for k, i in enumerate(rows)}
    filled = np.where(np.isfinite(S), S, -np.inf)

    def best_pos(scores, placed: dict, size: int) -> float:
        if not placed or not np.isfinite(scores).any():
            return float(size)
        idx = list(placed)
        return float(placed[idx[int(np.argmax(scores[idx]))]])

    rest_rows = [i for i in range(n_a) if i not in row_pos]
    rest_cols = [j for j in range(n_b) if j not in col_pos]
    rest_rows.sort(key=lambda i: (best_pos(filled[i], col_pos, n_b), i))
    rest_cols.sort(key=lambda j: (best_pos(filled[:, j], row_pos, n_a), j))
    return rows + rest_rows, cols + rest_cols


def _full_labels(labels: Sequence, ids: Sequence | None) -> list[str]:
    if ids is None:
        return [str(x) for x in labels]
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} ids for {len(labels)} labels")
    return [theme_label(i, x) for i, x in zip(ids, labels, strict=True)]


def _grouped(S: np.ndarray, a_labels: list, b_labels: list, pair_meets: dict):
    """The matrix of groups (blocks module), its labels, pairs and a line for the title."""
    rows, cols = group_axis(S), group_axis(S.T)
    best_a = np.nanmax(np.where(np.isfinite(S), S, -np.inf), axis=1)
    best_b = np.nanmax(np.where(np.isfinite(S), S, -np.inf), axis=0)
    row_of, col_of = rows.index_of(), cols.index_of()
    meets: dict = {}
    for (i, j), m in pair_meets.items():
        key = (row_of[i], col_of[j])
        meets[key] = meets.get(key, False) or m
    axes = [
        f"{name}: {n} themes in {len(g.groups)} clustered groups"
        for name, n, g in (("rows", S.shape[0], rows), ("columns", S.shape[1], cols))
        if g.grouped
    ]
    note = "; ".join(axes) + "; a group's cell is its highest S, [n] its size"
    return (
        block_max(S, rows, cols),
        group_labels(a_labels, rows, best_a),
        group_labels(b_labels, cols, best_b),
        meets,
        note,
    )


def heatmap_figure(
    S,
    a_labels: Sequence,
    b_labels: Sequence,
    *,
    threshold: float,
    op: str,
    title: str,
    pairs: Sequence[tuple[int, int]] | None = None,
    a_ids: Sequence | None = None,
    b_ids: Sequence | None = None,
    a_name: str = "A (reference)",
    b_name: str = "B",
    diagonal: bool = True,
    scale_label: str = "similarity S",
    symbol: str = "S",
    rejected: Sequence[tuple[int, int]] = (),
) -> Figure:
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"similarity matrix must be 2-D, got shape {S.shape}")
    n_a, n_b = S.shape
    if (len(a_labels), len(b_labels)) != (n_a, n_b):
        raise ValueError(
            f"similarity matrix is {n_a}×{n_b} but there are "
            f"{len(a_labels)} A labels and {len(b_labels)} B labels"
        )
    sym = op_symbol(op)
    # Accept lists, tuples or an (k, 2) array of indices.
    pairs = [] if pairs is None else [(int(i), int(j)) for i, j in pairs]
    for i, j in pairs:
        if not (0 <= i < n_a and 0 <= j < n_b):
            raise ValueError(f"pair {(i, j)} is outside the {n_a}×{n_b} matrix")
    # Whether each pair meets the threshold, from its own cell (a group shows its best).
    pair_meets = {p: bool(matches(S[p], threshold, op)) for p in pairs}
    rejected = {(int(i), int(j)) for i, j in rejected} & set(pairs)
    if max(n_a, n_b) > MAX_CELLS and min(n_a, n_b) > 0:
        S, a_labels, b_labels, pair_meets, note = _grouped(
            S, _full_labels(a_labels, a_ids), _full_labels(b_labels, b_ids), pair_meets
        )
        pairs, a_ids, b_ids, diagonal = list(pair_meets), None, None, False
        rejected = set()  # a group's cell is its best pair, not the pair the z rule read
        title = f"{title}\n{note}"
        n_a, n_b = S.shape
    if diagonal and pairs:
        rows, cols = diagonal_order(S, pairs)
        S = S[np.ix_(rows, cols)]
        a_labels, b_labels = [a_labels[i] for i in rows], [b_labels[j] for j in cols]
        a_ids = None if a_ids is None else [a_ids[i] for i in rows]
        b_ids = None if b_ids is None else [b_ids[j] for j in cols]
        new_row = {i: k for k, i in enumerate(rows)}
        new_col = {j: k for k, j in enumerate(cols)}
        pairs = [(new_row[i], new_col[j]) for i, j in pairs]
        pair_meets = {(new_row[i], new_col[j]): m for (i, j), m in pair_meets.items()}
        rejected = {(new_row[i], new_col[j]) for i, j in rejected}
    ylabels, xlabels = theme_labels(a_labels, a_ids), theme_labels(b_labels, b_ids)
    big = max(n_a, n_b) > 30
    label_size = 6 if big else 8

    fig = new_figure(max(5.0, 2.4 + cell_span(n_b) + 1.3), max(4.0, cell_span(n_a) + 3.0))
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=11)
    if n_a == 0 or n_b == 0:
        ax.text(
            0.5,
            0.5,
            "empty theme set: nothing to compare",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
        return fig

    # the colours span the data, so the differences it holds are seen (its scale is named)
    vmin, vmax = data_range(S)
    norm = Normalize(vmin=vmin, vmax=vmax)
    cmap = colormaps[HEATMAP_CMAP]
    im = ax.imshow(S, cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
    # Inset colourbar: exactly as tall as the matrix, whatever its aspect.
    cax = ax.inset_axes([1.0 + 0.15 / cell_span(n_b), 0.0, 0.2 / cell_span(n_b), 1.0])
    cbar = fig.colorbar(im, cax=cax)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label(scale_label, fontsize=9)

    ax.set_xticks(
        range(n_b), xlabels, rotation=45, ha="right", rotation_mode="anchor", fontsize=label_size
    )
    ax.set_yticks(range(n_a), ylabels, fontsize=label_size)
    ax.set_xlabel(b_name, fontsize=9)
    ax.set_ylabel(a_name, fontsize=9)
    ax.tick_params(length=0)
    ax.set_xticks(np.arange(-0.5, n_b), minor=True)
    ax.set_yticks(np.arange(-0.5, n_a), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)

    if n_a <= 25 and n_b <= 25:
        size = 9 if max(n_a, n_b) <= 10 else 8 if max(n_a, n_b) <= 18 else 6.5
        annotate_cells(ax, S, cmap, norm, size)

    # A white halo keeps outlines visible on both dark and light cells.
    halo = [pe.withStroke(linewidth=2.6, foreground="white")]
    for i, j in zip(*np.nonzero(matches(S, threshold, op)), strict=True):
        rect = Rectangle(
            (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.1, zorder=3
        )
        rect.set_path_effects(halo)
        ax.add_patch(rect)
    pair_colour = OKABE_ITO["vermillion"]
    kinds = set()
    for i, j in pairs:
        # Assigned but below the threshold: dashed, since it does not count as a match.
        dash = "solid" if pair_meets[i, j] else (0, (2, 1.5))
        kinds.add(dash == "solid")
        rect = Rectangle(
            (j - 0.42, i - 0.42),
            0.84,
            0.84,
            fill=False,
            edgecolor=pair_colour,
            linewidth=2.6,
            linestyle=dash,
            zorder=4,
        )
        rect.set_path_effects([pe.withStroke(linewidth=4.2, foreground="white")])
        ax.add_patch(rect)
        # Corner dot: a shape cue for readers who cannot tell the colours apart.
        ax.plot(j - 0.3, i - 0.3, "o", ms=4, mfc=pair_colour, mec="white", mew=0.8, zorder=5)
        if (i, j) in rejected:  # the within-set z rule does not keep this pair
            ax.plot(j + 0.3, i + 0.3, "X", ms=6, mfc="black", mec="white", mew=0.8, zorder=6)
    ax.set_xlim(-0.5, n_b - 0.5)
    ax.set_ylim(n_a - 0.5, -0.5)

    handles = [
        Patch(
            facecolor="none",
            edgecolor="black",
            linewidth=1.1,
            label=f"{symbol} {sym} {threshold:g} (meets threshold)",
        )
    ]
    pair_labels = {True: "one-to-one (Hungarian) match", False: "one-to-one pair below threshold"}
    for solid in sorted(kinds, reverse=True):
        handles.append(
            Line2D(
                [],
                [],
                color=pair_colour,
                linewidth=2.6,
                linestyle="solid" if solid else (0, (2, 1.5)),
                marker="o",
                markersize=4,
                markerfacecolor=pair_colour,
                label=pair_labels[solid],
            )
        )
    if rejected:
        handles.append(
            Line2D([], [], linestyle="none", marker="X", markersize=6, markerfacecolor="black",
                   markeredgecolor="white", label="pair the within-set z rule does not keep")
        )  # fmt: skip
    # Stacked under narrow matrices, so the legend does not set the figure width.
    ncols = len(handles) if n_b >= 8 else 1
    legend_below(fig, handles, ncols)
    return fig


heatmap = saving(
    heatmap_figure,
    "heatmap",
    """Annotated similarity matrix (rows = A, the reference; columns = B).

    Cells meeting the threshold are outlined; ``pairs`` (Hungarian (i, j)) get a
    thick vermillion inner outline and a corner dot, and (``diagonal``) rows and
    columns are reordered so the pairs sit on the diagonal; ``rejected`` pairs (of
    ``pairs``, the ones the within-set z rule does not keep) get a black cross. The colours
    span the data's own range (``data_range``). Pass ``a_ids``/``b_ids``
    to have labels like "H03 Guilt and obligation". ``S`` and ``threshold`` are on the scale
    ``scale_label`` names (the colour bar's label; ``symbol`` in the legend), so outlines are
    that scale's decisions.
    """,
)
