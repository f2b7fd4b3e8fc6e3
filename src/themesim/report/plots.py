"""Figures: similarity heatmaps, threshold sweeps, methods side by side.

Uses the object-oriented matplotlib API with the Agg canvas only, so importing
this module never touches pyplot's global state or the user's backend.
Every ``*_figure`` function returns the :class:`~matplotlib.figure.Figure` (for
inspection in tests); the plain functions save it and return the PNG path.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps, rc_context
from matplotlib import patheffects as pe
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from themesim.io.files import atomic_path
from themesim.report.fonts import use_fallback_fonts

use_fallback_fonts()  # CJK names and emoji draw as glyphs, not empty boxes

DPI = 150
LABEL_WIDTH = 28
LABEL_LINES = 2

# Okabe–Ito (colour-blind safe); yellow left out of line plots: too pale on white.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}
LINE_COLOURS = [
    OKABE_ITO[k] for k in ("blue", "orange", "green", "vermillion", "purple", "sky_blue", "black")
]
LINE_STYLES = ["-", "--", "-.", ":"]
HEATMAP_CMAP = "viridis"

# Sweep metrics: the headline (Hungarian F1) drawn heaviest; colour *and* dash differ.
SWEEP_METRICS = {
    "hungarian_f1": ("Hungarian F1 (one-to-one)", OKABE_ITO["blue"], "-", 2.4),
    "true_jaccard": ("True Jaccard", OKABE_ITO["green"], "--", 1.6),
    "f1": ("Coverage F1", OKABE_ITO["orange"], "-.", 1.6),
    "hit_rate": ("Hit rate (A covered)", OKABE_ITO["purple"], ":", 1.9),
    "raza_jaccard": (
        "Raza Jaccard (for comparison)",
        OKABE_ITO["vermillion"],
        (0, (6, 2, 1, 2)),
        1.4,
    ),
}
THRESHOLD_STYLE = {"color": "0.35", "linestyle": (0, (4, 3)), "linewidth": 1.0}
_OP_SYMBOL = {"ge": "≥", "gt": ">"}


# ---------------------------------------------------------------------------
# labels


def theme_label(theme_id, name) -> str:
    """'H03 Guilt and obligation': the id first so it survives wrapping."""
    theme_id = "" if theme_id is None else str(theme_id).strip()
    name = "" if name is None else str(name).strip()
    if theme_id and name and not name.startswith(theme_id):
        return f"{theme_id} {name}"
    return name or theme_id


def wrap_label(label: str, width: int = LABEL_WIDTH, max_lines: int = LABEL_LINES) -> str:
    """Wrap to ``width`` characters, at most ``max_lines`` lines, then '…'."""
    lines = textwrap.wrap(str(label), width=width, max_lines=max_lines, placeholder="…")
    return "\n".join(lines) if lines else ""


def _labels(labels: Sequence, ids: Sequence | None) -> list[str]:
    if ids is None:
        return [wrap_label(x) for x in labels]
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} ids for {len(labels)} labels")
    return [wrap_label(theme_label(i, x)) for i, x in zip(ids, labels, strict=True)]


def op_symbol(op: str) -> str:
    """'≥' for op "ge", '>' for "gt"."""
    try:
        return _OP_SYMBOL[op]
    except KeyError:
        raise ValueError(f"op must be 'ge' or 'gt', got {op!r}") from None


_op_symbol = op_symbol


# ---------------------------------------------------------------------------
# saving


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig: Figure, out_png, out_svg=None) -> Path:
    """Save at 150 dpi without the version stamp, so reruns are byte-identical.

    With ``out_svg`` the same figure is also written as SVG (text as paths, so it
    needs no fonts; fixed id salt and no date, so it is byte-identical too).
    """
    out = Path(out_png)
    with atomic_path(out) as tmp:
        fig.savefig(
            tmp,
            format="png",
            dpi=DPI,
            metadata={"Software": None},
            bbox_inches="tight",
            pad_inches=0.15,
        )
    if out_svg is not None:
        svg = Path(out_svg)
        with (
            atomic_path(svg) as tmp,
            rc_context({"svg.hashsalt": "themesim", "svg.fonttype": "path"}),
        ):
            fig.savefig(
                tmp,
                format="svg",
                metadata={"Date": None, "Creator": None},
                bbox_inches="tight",
                pad_inches=0.15,
            )
    fig.clear()  # free the artists now; the Figure is not registered with pyplot
    return out


# ---------------------------------------------------------------------------
# heatmap


def _span(n: int) -> float:
    """Inches for n cells: roomy up to 25, then narrower, but always growing."""
    return 0.5 * min(n, 25) + 0.25 * max(n - 25, 0)


def _meets(S: np.ndarray, threshold: float, op: str) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return S >= threshold if op == "ge" else S > threshold


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


def _legend_below(fig: Figure, handles, ncols: int, **kw) -> None:
    """The figure's legend in the space below its axes, as every plot here has it."""
    fig.legend(
        handles=handles, loc="outside lower center", ncols=ncols, fontsize=8, frameon=False, **kw
    )


def _annotate_cells(ax, M: np.ndarray, cmap, norm, size: float) -> None:
    """Each finite value in its cell, black on light colours and white on dark ones."""
    for i, j in zip(*np.nonzero(np.isfinite(M)), strict=True):
        r, g, b, _ = cmap(norm(M[i, j]))
        light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5  # relative luminance
        ax.text(
            j,
            i,
            f"{M[i, j]:.2f}",
            ha="center",
            va="center",
            fontsize=size,
            color="black" if light else "white",
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
    sym = _op_symbol(op)
    # Accept lists, tuples or an (k, 2) array of indices.
    pairs = [] if pairs is None else [(int(i), int(j)) for i, j in pairs]
    for i, j in pairs:
        if not (0 <= i < n_a and 0 <= j < n_b):
            raise ValueError(f"pair {(i, j)} is outside the {n_a}×{n_b} matrix")
    if diagonal and pairs:
        rows, cols = diagonal_order(S, pairs)
        S = S[np.ix_(rows, cols)]
        a_labels, b_labels = [a_labels[i] for i in rows], [b_labels[j] for j in cols]
        a_ids = None if a_ids is None else [a_ids[i] for i in rows]
        b_ids = None if b_ids is None else [b_ids[j] for j in cols]
        new_row = {i: k for k, i in enumerate(rows)}
        new_col = {j: k for k, j in enumerate(cols)}
        pairs = [(new_row[i], new_col[j]) for i, j in pairs]
    ylabels, xlabels = _labels(a_labels, a_ids), _labels(b_labels, b_ids)
    big = max(n_a, n_b) > 30
    label_size = 6 if big else 8

    fig = _new_figure(max(5.0, 2.4 + _span(n_b) + 1.3), max(4.0, _span(n_a) + 3.0))
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

    finite = S[np.isfinite(S)]
    vmin = min(0.0, float(finite.min())) if finite.size else 0.0
    vmax = max(1.0, float(finite.max())) if finite.size else 1.0
    norm = Normalize(vmin=vmin, vmax=vmax)
    cmap = colormaps[HEATMAP_CMAP]
    im = ax.imshow(S, cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
    # Inset colourbar: exactly as tall as the matrix, whatever its aspect.
    cax = ax.inset_axes([1.0 + 0.15 / _span(n_b), 0.0, 0.2 / _span(n_b), 1.0])
    cbar = fig.colorbar(im, cax=cax)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label("similarity S", fontsize=9)

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
        _annotate_cells(ax, S, cmap, norm, size)

    # A white halo keeps outlines visible on both dark and light cells.
    halo = [pe.withStroke(linewidth=2.6, foreground="white")]
    for i, j in zip(*np.nonzero(_meets(S, threshold, op)), strict=True):
        rect = Rectangle(
            (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.1, zorder=3
        )
        rect.set_path_effects(halo)
        ax.add_patch(rect)
    pair_colour = OKABE_ITO["vermillion"]
    meets = _meets(S, threshold, op)
    kinds = set()
    for i, j in pairs:
        # Assigned but below the threshold: dashed, since it does not count as a match.
        dash = "solid" if meets[i, j] else (0, (2, 1.5))
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
    ax.set_xlim(-0.5, n_b - 0.5)
    ax.set_ylim(n_a - 0.5, -0.5)

    handles = [
        Patch(
            facecolor="none",
            edgecolor="black",
            linewidth=1.1,
            label=f"S {sym} {threshold:g} (meets threshold)",
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
    # Stacked under narrow matrices, so the legend does not set the figure width.
    ncols = len(handles) if n_b >= 8 else 1
    _legend_below(fig, handles, ncols)
    return fig


def heatmap(
    S,
    a_labels: Sequence,
    b_labels: Sequence,
    *,
    threshold: float,
    op: str,
    title: str,
    out_png,
    pairs: Sequence[tuple[int, int]] | None = None,
    a_ids: Sequence | None = None,
    b_ids: Sequence | None = None,
    a_name: str = "A (reference)",
    b_name: str = "B",
    diagonal: bool = True,
    out_svg=None,
) -> Path:
    """Annotated similarity matrix (rows = A, the reference; columns = B).

    Cells meeting the threshold are outlined; ``pairs`` (Hungarian (i, j)) get a
    thick vermillion inner outline and a corner dot, and (``diagonal``) rows and
    columns are reordered so the pairs sit on the diagonal. Pass ``a_ids``/``b_ids``
    to have labels like "H03 Guilt and obligation".
    """
    fig = heatmap_figure(
        S,
        a_labels,
        b_labels,
        threshold=threshold,
        op=op,
        title=title,
        pairs=pairs,
        a_ids=a_ids,
        b_ids=b_ids,
        a_name=a_name,
        b_name=b_name,
        diagonal=diagonal,
    )
    return save_png(fig, out_png, out_svg)


# ---------------------------------------------------------------------------
# sweeps


def _require(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {', '.join(missing)}")


def _comparisons(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(set_a, set_b) pairs in order of first appearance."""
    seen = dict.fromkeys(zip(df["set_a"].astype(str), df["set_b"].astype(str), strict=True))
    return list(seen)


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    ncols = max(1, min(max_cols, n))
    return math.ceil(max(n, 1) / ncols), ncols


def _op_of(df: pd.DataFrame) -> str | None:
    if "op" not in df.columns:
        return None
    ops = df["op"].dropna().astype(str).unique()
    return ops[0] if len(ops) == 1 and ops[0] in _OP_SYMBOL else None


def _xlabel(op: str | None) -> str:
    return f"threshold θ (match if S {_OP_SYMBOL[op]} θ)" if op else "threshold θ"


def _mark_thresholds(ax, thresholds: Sequence[float]) -> None:
    for t in thresholds:
        ax.axvline(float(t), **THRESHOLD_STYLE, zorder=1)


def _style_panel(ax) -> None:
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(True, color="0.9", linewidth=0.6)
    ax.tick_params(labelsize=8)


def sweep_curves_figure(sweep: pd.DataFrame, *, thresholds: Sequence[float], title: str) -> Figure:
    _require(sweep, ["set_a", "set_b", "threshold", *SWEEP_METRICS], "sweep table")
    comps = _comparisons(sweep)
    nrows, ncols = _grid(len(comps))
    fig = _new_figure(4.2 * ncols, 3.2 * nrows + 1.0)
    fig.suptitle(title, fontsize=11)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax in axes[len(comps) :]:
        fig.delaxes(ax)
    xlabel = _xlabel(_op_of(sweep))
    if not comps:
        axes[0].text(
            0.5, 0.5, "no sweep rows", ha="center", va="center", transform=axes[0].transAxes
        )
    for k, (ax, (a, b)) in enumerate(zip(axes[: len(comps)], comps, strict=True)):
        rows = sweep[(sweep["set_a"].astype(str) == a) & (sweep["set_b"].astype(str) == b)]
        rows = rows.sort_values("threshold", kind="stable")
        _mark_thresholds(ax, thresholds)
        for col, (label, colour, dash, lw) in SWEEP_METRICS.items():
            ax.plot(
                rows["threshold"],
                rows[col],
                color=colour,
                linestyle=dash,
                linewidth=lw,
                label=label,
                zorder=2,
            )
        sizes = ""
        if {"n_a", "n_b"} <= set(rows.columns) and len(rows):
            sizes = f"  (A={int(rows['n_a'].iloc[0])}, B={int(rows['n_b'].iloc[0])})"
        ax.set_title(f"{a} vs {b}{sizes}", fontsize=9)
        _style_panel(ax)
        if k % ncols == 0:
            ax.set_ylabel("score", fontsize=9)
        if k >= len(comps) - ncols:  # lowest panel of its column
            ax.set_xlabel(xlabel, fontsize=9)
            ax.tick_params(labelbottom=True)
    handles = [
        Line2D([], [], color=c, linestyle=d, linewidth=lw, label=lab)
        for lab, c, d, lw in SWEEP_METRICS.values()
    ]
    handles.append(Line2D([], [], **THRESHOLD_STYLE, label="configured threshold"))
    _legend_below(fig, handles, min(3, len(handles)))
    return fig


def sweep_curves(
    sweep: pd.DataFrame, *, thresholds: list[float], title: str, out_png, out_svg=None
) -> Path:
    """Small multiples, one panel per (set_a, set_b): metrics vs threshold."""
    fig = sweep_curves_figure(sweep, thresholds=thresholds, title=title)
    return save_png(fig, out_png, out_svg)


METRIC_LABELS = {
    "hungarian_f1": "Hungarian F1 (one-to-one)",
    "true_jaccard": "True Jaccard",
    "f1": "Coverage F1",
    "hit_rate": "Hit rate (A covered)",
    "recall": "Recall (A covered)",
    "precision": "Precision (B covered)",
    "raza_jaccard": "Raza Jaccard (for comparison)",
    "maxcard_f1": "Max-cardinality F1",
    "similarity_f1": "Similarity F1",
}


def methods_side_by_side_figure(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, list[float]],
    metric: str = "hungarian_f1",
) -> Figure:
    if not sweeps:
        raise ValueError("no methods to plot")
    for name, df in sweeps.items():
        _require(df, ["set_a", "set_b", "threshold", metric], f"sweep table of method {name!r}")
    # Same comparison, same colour and dash in every panel.
    labels = list(
        dict.fromkeys(f"{a} vs {b}" for df in sweeps.values() for a, b in _comparisons(df))
    )
    style = {
        lab: (
            LINE_COLOURS[i % len(LINE_COLOURS)],
            LINE_STYLES[(i // len(LINE_COLOURS)) % len(LINE_STYLES)],
        )
        for i, lab in enumerate(labels)
    }
    nrows, ncols = _grid(len(sweeps))
    fig = _new_figure(4.2 * ncols, 3.2 * nrows + 1.0)
    pretty = METRIC_LABELS.get(metric, metric)
    fig.suptitle(f"{pretty} by threshold: each method on its own (never averaged)", fontsize=11)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax in axes[len(sweeps) :]:
        fig.delaxes(ax)
    for k, (ax, (name, df)) in enumerate(zip(axes[: len(sweeps)], sweeps.items(), strict=True)):
        _mark_thresholds(ax, thresholds.get(name, []))
        for a, b in _comparisons(df):
            rows = df[(df["set_a"].astype(str) == a) & (df["set_b"].astype(str) == b)]
            rows = rows.sort_values("threshold", kind="stable")
            lab = f"{a} vs {b}"
            colour, dash = style[lab]
            ax.plot(
                rows["threshold"],
                rows[metric],
                color=colour,
                linestyle=dash,
                linewidth=1.8,
                label=lab,
                zorder=2,
            )
        if df.empty:
            ax.text(
                0.5,
                0.5,
                "no sweep rows",
                ha="center",
                va="center",
                transform=ax.transAxes,
                fontsize=9,
            )
        ax.set_title(name, fontsize=10)
        _style_panel(ax)
        if k % ncols == 0:
            ax.set_ylabel(pretty, fontsize=9)
        if k >= len(sweeps) - ncols:  # lowest panel of its column
            ax.set_xlabel(_xlabel(_op_of(df)), fontsize=9)
            ax.tick_params(labelbottom=True)
    handles = [
        Line2D([], [], color=c, linestyle=d, linewidth=1.8, label=lab)
        for lab, (c, d) in style.items()
    ]
    handles.append(Line2D([], [], **THRESHOLD_STYLE, label="configured threshold(s)"))
    _legend_below(fig, handles, min(3, len(handles)))
    return fig


def methods_side_by_side(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, list[float]],
    metric: str = "hungarian_f1",
    out_png,
    out_svg=None,
) -> Path:
    """One panel per method (same y-scale), one line per comparison."""
    return save_png(
        methods_side_by_side_figure(sweeps, thresholds=thresholds, metric=metric),
        out_png,
        out_svg,
    )


# ---------------------------------------------------------------------------
# distributions (never means: box = quartiles, whiskers = min and max, every point shown)

SIDE_COLOURS = {"a": OKABE_ITO["blue"], "b": OKABE_ITO["orange"]}
CATEGORY_STYLE = {
    # category: (label, colour, hatch, text colour); hatches tell them apart without colour.
    "confident_unique": ("confident unique", OKABE_ITO["blue"], "", "white"),
    "ambiguous": ("ambiguous", OKABE_ITO["sky_blue"], "//", "black"),
    "clear_but_poor": ("clear but poor", OKABE_ITO["orange"], "..", "black"),
    "no_good_match": ("no good match", OKABE_ITO["vermillion"], "xx", "black"),
}
THEME_TABLE_COLUMNS = [
    "set_a",
    "set_b",
    "side",
    "hungarian_similarity",
    "gap_abs",
    "category",
    "category_threshold",
]


def _theme_subsets(themes: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    return [
        (a, b, themes[(themes["set_a"].astype(str) == a) & (themes["set_b"].astype(str) == b)])
        for a, b in _comparisons(themes)
    ]


def _matched_mask(a_rows: pd.DataFrame, op: str) -> tuple[np.ndarray, np.ndarray]:
    s = pd.to_numeric(a_rows["hungarian_similarity"], errors="coerce").to_numpy(float)
    t = pd.to_numeric(a_rows["category_threshold"], errors="coerce").to_numpy(float)
    return np.isfinite(s) & _meets(s, t, op), s


def matched_similarities(rows: pd.DataFrame, op: str) -> np.ndarray:
    """Similarities of the one-to-one pairs that meet the category threshold (side A rows).

    The same pairs as comparisons.csv's matched_sim_* quartiles at the first threshold.
    """
    a = rows[rows["side"] == "a"]
    keep, s = _matched_mask(a, op)
    return s[keep]


def matched_pairs(themes: pd.DataFrame, op: str) -> pd.DataFrame:
    """set_a, a_id, set_b, b_id, similarity of every one-to-one pair meeting the threshold."""
    _require(themes, [*THEME_TABLE_COLUMNS, "theme_id", "hungarian_partner_id"], "themes table")
    a = themes[themes["side"] == "a"]
    keep, s = _matched_mask(a, op)
    a = a[keep]
    return pd.DataFrame(
        {
            "set_a": a["set_a"].astype(str).to_numpy(),
            "a_id": a["theme_id"].astype(str).to_numpy(),
            "set_b": a["set_b"].astype(str).to_numpy(),
            "b_id": a["hungarian_partner_id"].astype(str).to_numpy(),
            "similarity": s[keep],
        }
    )


def thresholds_text(themes: pd.DataFrame) -> str:
    """The category threshold(s) of a themes table, e.g. "0.5"."""
    t = pd.to_numeric(themes["category_threshold"], errors="coerce").dropna()
    return ", ".join(f"{x:g}" for x in sorted(set(t))) or "θ"


def _strip(ax, values: np.ndarray, y: float, colour: str, spread: float = 0.12) -> None:
    """Every value as a dot, spread vertically in a fixed pattern (no random jitter)."""
    if not len(values):
        return
    offsets = ((np.arange(len(values)) % 5) - 2) / 2 * spread
    ax.scatter(
        values,
        y + offsets,
        s=14,
        color=colour,
        edgecolor="white",
        linewidth=0.5,
        alpha=0.9,
        zorder=3,
    )


def _box(ax, values: np.ndarray, y: float, colour: str, width: float) -> None:
    """Box Q1–Q3 with the median; whiskers at min and max (numpy's default percentiles)."""
    if not len(values):
        return
    ax.boxplot(
        [values],
        positions=[y],
        orientation="horizontal",
        widths=width,
        whis=(0, 100),
        showfliers=False,
        patch_artist=True,
        manage_ticks=False,
        boxprops={"facecolor": "white", "edgecolor": colour, "linewidth": 1.4},
        medianprops={"color": colour, "linewidth": 2.4},
        whiskerprops={"color": colour, "linewidth": 1.1},
        capprops={"color": colour, "linewidth": 1.1},
        zorder=2,
    )


def _count_note(ax, y: float, text: str) -> None:
    ax.text(1.01, y, text, transform=ax.get_yaxis_transform(), va="center", ha="left", fontsize=7)


def distributions_figure(themes: pd.DataFrame, *, op: str, gamma: float, title: str) -> Figure:
    """Left: similarity of the one-to-one matches; right: gap best − second, A and B themes."""
    _require(themes, THEME_TABLE_COLUMNS, "themes table")
    sym = _op_symbol(op)
    subsets = _theme_subsets(themes)
    n = max(len(subsets), 1)
    fig = _new_figure(9.5, 1.6 + 0.75 * n)
    fig.suptitle(title, fontsize=11)
    ax_sim, ax_gap = fig.subplots(1, 2, sharey=True)
    thetas = sorted(set(pd.to_numeric(themes["category_threshold"], errors="coerce").dropna()))
    for t in thetas:
        ax_sim.axvline(float(t), **THRESHOLD_STYLE, zorder=1)
    ax_gap.axvline(gamma, **THRESHOLD_STYLE, zorder=1)
    gap_max, all_sims = 0.05, []
    for k, (_, _, rows) in enumerate(subsets):
        sims = matched_similarities(rows, op)
        all_sims.append(sims)
        _box(ax_sim, sims, k, OKABE_ITO["green"], 0.5)
        _strip(ax_sim, sims, k, OKABE_ITO["green"])
        _count_note(ax_sim, k, f"n={len(sims)}")
        if not len(sims):
            ax_sim.text(0.5, k, "no one-to-one match meets θ", ha="center", va="center", fontsize=7)
        notes = []
        for side, dy in (("a", -0.2), ("b", 0.2)):
            g = pd.to_numeric(rows.loc[rows["side"] == side, "gap_abs"], errors="coerce")
            g = g[np.isfinite(g)].to_numpy(float)
            _box(ax_gap, g, k + dy, SIDE_COLOURS[side], 0.3)
            _strip(ax_gap, g, k + dy, SIDE_COLOURS[side], spread=0.06)
            notes.append(f"{side.upper()} n={len(g)}")
            if len(g):
                gap_max = max(gap_max, float(g.max()))
        _count_note(ax_gap, k, "\n".join(notes))
    labels = [wrap_label(f"{a} vs {b}", width=22) for a, b, _ in subsets]
    ax_sim.set_yticks(range(len(subsets)), labels, fontsize=8)
    ax_sim.set_ylim(len(subsets) - 0.5, -0.5)
    lo = min([0.0, *(float(v.min()) for v in all_sims if len(v))])
    ax_sim.set_xlim(lo, 1.0)
    ax_gap.set_xlim(0, gap_max * 1.08)
    theta_txt = thresholds_text(themes)
    ax_sim.set_title(f"one-to-one matches with S {sym} {theta_txt}", fontsize=9)
    ax_sim.set_xlabel("similarity S of the matched pair", fontsize=9)
    ax_gap.set_title("distinctiveness of every theme", fontsize=9)
    ax_gap.set_xlabel("gap = best − second-best similarity", fontsize=9)
    for ax in (ax_sim, ax_gap):
        ax.grid(True, axis="x", color="0.9", linewidth=0.6)
        ax.tick_params(labelsize=8)
    if not subsets:
        ax_sim.text(
            0.5, 0.5, "no comparisons", ha="center", va="center", transform=ax_sim.transAxes
        )
    handles = [
        Patch(facecolor="white", edgecolor=OKABE_ITO["green"], label="matched pairs"),
        Patch(facecolor="white", edgecolor=SIDE_COLOURS["a"], label="themes of A (reference)"),
        Patch(facecolor="white", edgecolor=SIDE_COLOURS["b"], label="themes of B"),
        Line2D([], [], **THRESHOLD_STYLE, label=f"θ (left), γ = {gamma:g} (right)"),
    ]
    _legend_below(
        fig,
        handles,
        4,
        title="box: quartiles and median; whiskers: min and max; dots: every value",
        title_fontsize=7,
    )
    return fig


def distributions(
    themes: pd.DataFrame, *, op: str, gamma: float, title: str, out_png, out_svg=None
) -> Path:
    """Matched-pair similarity and gap distributions, one row per comparison."""
    return save_png(distributions_figure(themes, op=op, gamma=gamma, title=title), out_png, out_svg)


def category_counts(rows: pd.DataFrame, side: str) -> dict[str, int]:
    cats = rows.loc[rows["side"] == side, "category"].astype(str)
    return {c: int((cats == c).sum()) for c in CATEGORY_STYLE}


def confidence_figure(themes: pd.DataFrame, *, op: str, gamma: float, title: str) -> Figure:
    """The four-way confidence profile: one stacked bar per side of each comparison."""
    _require(themes, THEME_TABLE_COLUMNS, "themes table")
    sym = _op_symbol(op)
    subsets = _theme_subsets(themes)
    bars = []  # (label, counts)
    for a, b, rows in subsets:
        for side, name in (("a", a), ("b", b)):
            counts = category_counts(rows, side)
            total = sum(counts.values())
            bars.append((wrap_label(f"{a} vs {b}: {side.upper()} = {name} ({total})", 34), counts))
    fig = _new_figure(8.5, 1.8 + 0.42 * max(len(bars), 1))
    fig.suptitle(title, fontsize=11)
    ax = fig.add_subplot()
    for y, (_, counts) in enumerate(bars):
        total = sum(counts.values())
        left = 0.0
        for cat, n in counts.items():
            if not total or not n:
                continue
            share = n / total
            _, colour, hatch, ink = CATEGORY_STYLE[cat]
            ax.barh(
                y,
                share,
                left=left,
                height=0.7,
                color=colour,
                hatch=hatch,
                edgecolor="white",
                linewidth=0.8,
                label=cat,
            )
            if share >= 0.08:
                ax.text(
                    left + share / 2,
                    y,
                    str(n),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color=ink,
                    bbox={"boxstyle": "round,pad=0.35", "facecolor": colour, "edgecolor": "none"},
                )
            left += share
    ax.set_yticks(range(len(bars)), [lab for lab, _ in bars], fontsize=8)
    ax.set_ylim(len(bars) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the set's themes (numbers in the bars: theme counts)", fontsize=9)
    ax.tick_params(labelsize=8, length=0, axis="y")
    # A thin line between the comparisons (pairs of bars).
    for k in range(1, len(subsets)):
        ax.axhline(2 * k - 0.5, color="0.6", linewidth=0.6)
    t = thresholds_text(themes)
    rules = {
        "confident_unique": f"best S {sym} {t}, gap ≥ {gamma:g}",
        "ambiguous": f"best S {sym} {t}, gap < {gamma:g}",
        "clear_but_poor": f"below θ, gap ≥ {gamma:g}",
        "no_good_match": f"below θ, gap < {gamma:g}",
    }
    handles = [
        Patch(facecolor=c, hatch=h, edgecolor="white", label=f"{lab} ({rules[k]})")
        for k, (lab, c, h, _) in CATEGORY_STYLE.items()
    ]
    _legend_below(fig, handles, 2)
    if not bars:
        ax.text(0.5, 0.5, "no comparisons", ha="center", va="center", transform=ax.transAxes)
    return fig


def confidence_profile(
    themes: pd.DataFrame, *, op: str, gamma: float, title: str, out_png, out_svg=None
) -> Path:
    """Stacked bars of the four match categories, per side of each comparison."""
    return save_png(confidence_figure(themes, op=op, gamma=gamma, title=title), out_png, out_svg)


# ---------------------------------------------------------------------------
# theme map (seed 002: 2-D PCA scatter)

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
    _require(points, ["set", "theme_id", "x", "y"], "theme map points")
    _require(links, ["set_a", "a_id", "set_b", "b_id"], "theme map links")
    sets = list(dict.fromkeys(points["set"].astype(str)))
    n = len(points)
    size = 6.5 if n <= 60 else 8.5
    fig = _new_figure(size + 0.5, size)
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
    _legend_below(fig, handles, min(4, len(handles)))
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


# ---------------------------------------------------------------------------
# run consistency (seeds 002-004)


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
    fig = _new_figure(max(5.0, 3.4 + _span(n)), max(4.0, _span(n) + 2.6))
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
    span = max(_span(n), 2.5)  # a slim colourbar even for two runs
    cax = ax.inset_axes([1.0 + 0.15 / span, 0.0, 0.2 / span, 1.0])
    cbar = fig.colorbar(im, cax=cax)
    cbar.ax.tick_params(labelsize=8)
    cbar.set_label("similarity between runs", fontsize=9)
    size = 8 if n <= 25 else 6
    ax.set_xticks(range(n), cols, rotation=45, ha="right", rotation_mode="anchor", fontsize=size)
    ax.set_yticks(range(n), rows, fontsize=size)
    ax.tick_params(length=0)
    if n <= 25:
        _annotate_cells(ax, M, cmap, norm, 9 if n <= 10 else 7)
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
