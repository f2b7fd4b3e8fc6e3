"""The similarity heatmap of one comparison, one-to-one pairs on the diagonal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class ThemeAxis:
    """One side of the matrix: its themes' labels, their ids (labels then read "H03 Guilt
    and obligation") and the axis title (None: "A (reference)" for the rows, "B" for the
    columns)."""

    labels: Sequence
    ids: Sequence | None = None
    name: str | None = None


@dataclass(frozen=True)
class Cutoff:
    """The decision the outlines show: a cell matches when its score ``op`` ``threshold``;
    ``label`` names the scale the scores are on (the colour bar), ``symbol`` its letter (the
    legend)."""

    threshold: float
    op: str
    label: str = "similarity S"
    symbol: str = "S"


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


@dataclass(frozen=True)
class _Cells:
    """What is drawn: the matrix, its row and column labels and ids, the one-to-one pairs
    (``meets``: whether each meets the threshold) and the pairs the z rule does not keep."""

    S: np.ndarray
    rows: list
    cols: list
    row_ids: list | None
    col_ids: list | None
    pairs: list
    meets: dict
    rejected: set


def _cells(S, a: ThemeAxis, b: ThemeAxis, cutoff: Cutoff, pairs, rejected) -> _Cells:
    """The inputs checked, in the order their errors are reported."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"similarity matrix must be 2-D, got shape {S.shape}")
    n_a, n_b = S.shape
    if (len(a.labels), len(b.labels)) != (n_a, n_b):
        raise ValueError(
            f"similarity matrix is {n_a}×{n_b} but there are "
            f"{len(a.labels)} A labels and {len(b.labels)} B labels"
        )
    op_symbol(cutoff.op)  # an unknown op is refused before the pairs are read
    # Accept lists, tuples or an (k, 2) array of indices.
    pairs = [] if pairs is None else [(int(i), int(j)) for i, j in pairs]
    for i, j in pairs:
        if not (0 <= i < n_a and 0 <= j < n_b):
            raise ValueError(f"pair {(i, j)} is outside the {n_a}×{n_b} matrix")
    # Whether each pair meets the threshold, from its own cell (a group shows its best).
    meets = {p: bool(matches(S[p], cutoff.threshold, cutoff.op)) for p in pairs}
    rejected = {(int(i), int(j)) for i, j in rejected} & set(pairs)
    return _Cells(S, a.labels, b.labels, a.ids, b.ids, pairs, meets, rejected)


def _in_groups(cells: _Cells) -> tuple[_Cells, str]:
    """The cells of a matrix too large to draw theme by theme, one per pair of groups
    (``_grouped``), and the line that says so under the title."""
    rows, cols = _full_labels(cells.rows, cells.row_ids), _full_labels(cells.cols, cells.col_ids)
    S, rows, cols, meets, note = _grouped(cells.S, rows, cols, cells.meets)
    # a group's cell is its best pair, not the pair the z rule read: no cross
    return _Cells(S, rows, cols, None, None, list(meets), meets, set()), note


def _on_diagonal(cells: _Cells) -> _Cells:
    """The rows and columns reordered so that the pairs sit on the diagonal."""
    rows, cols = diagonal_order(cells.S, cells.pairs)
    new_row = {i: k for k, i in enumerate(rows)}
    new_col = {j: k for k, j in enumerate(cols)}
    return _Cells(
        S=cells.S[np.ix_(rows, cols)],
        rows=[cells.rows[i] for i in rows],
        cols=[cells.cols[j] for j in cols],
        row_ids=None if cells.row_ids is None else [cells.row_ids[i] for i in rows],
        col_ids=None if cells.col_ids is None else [cells.col_ids[j] for j in cols],
        pairs=[(new_row[i], new_col[j]) for i, j in cells.pairs],
        meets={(new_row[i], new_col[j]): m for (i, j), m in cells.meets.items()},
        rejected={(new_row[i], new_col[j]) for i, j in cells.rejected},
    )


PAIR_COLOUR = OKABE_ITO["vermillion"]
BELOW_DASH = (0, (2, 1.5))  # a pair below the threshold: it does not count as a match


def heatmap_figure(
    S,
    a: ThemeAxis,
    b: ThemeAxis,
    *,
    cutoff: Cutoff,
    title: str,
    pairs: Sequence[tuple[int, int]] | None = None,
    rejected: Sequence[tuple[int, int]] = (),
    diagonal: bool = True,
) -> Figure:
    cells = _cells(S, a, b, cutoff, pairs, rejected)
    if max(cells.S.shape) > MAX_CELLS and min(cells.S.shape) > 0:
        cells, note = _in_groups(cells)
        title, diagonal = f"{title}\n{note}", False
    if diagonal and cells.pairs:
        cells = _on_diagonal(cells)
    n_a, n_b = cells.S.shape
    ylabels = theme_labels(cells.rows, cells.row_ids)
    xlabels = theme_labels(cells.cols, cells.col_ids)

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

    cmap, norm = _colour_matrix(fig, ax, cells.S, cutoff.label)
    _label_axes(ax, ylabels, xlabels, a.name or "A (reference)", b.name or "B")
    if n_a <= 25 and n_b <= 25:
        size = 9 if max(n_a, n_b) <= 10 else 8 if max(n_a, n_b) <= 18 else 6.5
        annotate_cells(ax, cells.S, cmap, norm, size)
    _outline_matches(ax, cells.S, cutoff)
    kinds = _mark_pairs(ax, cells)
    ax.set_xlim(-0.5, n_b - 0.5)
    ax.set_ylim(n_a - 0.5, -0.5)
    _legend(fig, cutoff, kinds, bool(cells.rejected), n_b)
    return fig


def _colour_matrix(fig: Figure, ax, S: np.ndarray, scale_label: str):
    """The matrix in colour with its colour bar; returns the colour map and its norm."""
    n_b = S.shape[1]
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
    return cmap, norm


def _label_axes(ax, ylabels: list, xlabels: list, a_name: str, b_name: str) -> None:
    """Theme labels on both axes, the axis titles and white lines between the cells."""
    n_a, n_b = len(ylabels), len(xlabels)
    label_size = 6 if max(n_a, n_b) > 30 else 8
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


def _outline_matches(ax, S: np.ndarray, cutoff: Cutoff) -> None:
    """A thin black outline round every cell that meets the threshold."""
    # A white halo keeps outlines visible on both dark and light cells.
    halo = [pe.withStroke(linewidth=2.6, foreground="white")]
    for i, j in zip(*np.nonzero(matches(S, cutoff.threshold, cutoff.op)), strict=True):
        rect = Rectangle(
            (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.1, zorder=3
        )
        rect.set_path_effects(halo)
        ax.add_patch(rect)


def _mark_pairs(ax, cells: _Cells) -> set:
    """Each one-to-one pair's inner outline and corner dot, and a cross on those the z rule
    does not keep; returns which kinds were drawn (True: meets the threshold)."""
    kinds = set()
    for i, j in cells.pairs:
        dash = "solid" if cells.meets[i, j] else BELOW_DASH
        kinds.add(dash == "solid")
        rect = Rectangle(
            (j - 0.42, i - 0.42),
            0.84,
            0.84,
            fill=False,
            edgecolor=PAIR_COLOUR,
            linewidth=2.6,
            linestyle=dash,
            zorder=4,
        )
        rect.set_path_effects([pe.withStroke(linewidth=4.2, foreground="white")])
        ax.add_patch(rect)
        # Corner dot: a shape cue for readers who cannot tell the colours apart.
        ax.plot(j - 0.3, i - 0.3, "o", ms=4, mfc=PAIR_COLOUR, mec="white", mew=0.8, zorder=5)
        if (i, j) in cells.rejected:  # the within-set z rule does not keep this pair
            ax.plot(j + 0.3, i + 0.3, "X", ms=6, mfc="black", mec="white", mew=0.8, zorder=6)
    return kinds


def _legend(fig: Figure, cutoff: Cutoff, kinds: set, crossed: bool, n_b: int) -> None:
    """The outline, the kinds of pair drawn and (``crossed``) the z rule's cross."""
    sym = op_symbol(cutoff.op)
    handles = [
        Patch(
            facecolor="none",
            edgecolor="black",
            linewidth=1.1,
            label=f"{cutoff.symbol} {sym} {cutoff.threshold:g} (meets threshold)",
        )
    ]
    pair_labels = {True: "one-to-one (Hungarian) match", False: "one-to-one pair below threshold"}
    for solid in sorted(kinds, reverse=True):
        handles.append(
            Line2D(
                [],
                [],
                color=PAIR_COLOUR,
                linewidth=2.6,
                linestyle="solid" if solid else BELOW_DASH,
                marker="o",
                markersize=4,
                markerfacecolor=PAIR_COLOUR,
                label=pair_labels[solid],
            )
        )
    if crossed:
        handles.append(
            Line2D([], [], linestyle="none", marker="X", markersize=6, markerfacecolor="black",
                   markeredgecolor="white", label="pair the within-set z rule does not keep")
        )  # fmt: skip
    # Stacked under narrow matrices, so the legend does not set the figure width.
    ncols = len(handles) if n_b >= 8 else 1
    legend_below(fig, handles, ncols)


heatmap = saving(
    heatmap_figure,
    "heatmap",
    """Annotated similarity matrix (rows = A, the reference; columns = B).

    Cells meeting the threshold are outlined; ``pairs`` (Hungarian (i, j)) get a
    thick vermillion inner outline and a corner dot, and (``diagonal``) rows and
    columns are reordered so the pairs sit on the diagonal; ``rejected`` pairs (of
    ``pairs``, the ones the within-set z rule does not keep) get a black cross. The colours
    span the data's own range (``data_range``). ``a`` and ``b`` (ThemeAxis) give each
    side's labels, title and ids (labels like "H03 Guilt and obligation"). ``S`` and the
    ``cutoff`` threshold are on the scale its ``label`` names (the colour bar's label; its
    ``symbol`` in the legend), so outlines are that scale's decisions.
    """,
)
