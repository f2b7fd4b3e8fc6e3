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
from matplotlib import colormaps
from matplotlib import patheffects as pe
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from .fileio import atomic_path

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


def _op_symbol(op: str) -> str:
    try:
        return _OP_SYMBOL[op]
    except KeyError:
        raise ValueError(f"op must be 'ge' or 'gt', got {op!r}") from None


# ---------------------------------------------------------------------------
# saving


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig: Figure, out_png) -> Path:
    """Save at 150 dpi without the version stamp, so reruns are byte-identical."""
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
        for i in range(n_a):
            for j in range(n_b):
                v = S[i, j]
                if not np.isfinite(v):
                    continue
                r, g, b, _ = cmap(norm(v))
                light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5
                ax.text(
                    j,
                    i,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="black" if light else "white",
                )

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
    # Accept lists, tuples or an (k, 2) array of indices.
    pairs = [] if pairs is None else [(int(i), int(j)) for i, j in pairs]
    kinds = set()
    for i, j in pairs:
        if not (0 <= i < n_a and 0 <= j < n_b):
            raise ValueError(f"pair {(i, j)} is outside the {n_a}×{n_b} matrix")
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
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, fontsize=8, frameon=False)
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
) -> Path:
    """Annotated similarity matrix (rows = A, the reference; columns = B).

    Cells meeting the threshold are outlined; ``pairs`` (Hungarian (i, j)) get a
    thick vermillion inner outline and a corner dot. Pass ``a_ids``/``b_ids`` to
    have labels like "H03 Guilt and obligation".
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
    )
    return save_png(fig, out_png)


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
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(3, len(handles)),
        fontsize=8,
        frameon=False,
    )
    return fig


def sweep_curves(sweep: pd.DataFrame, *, thresholds: list[float], title: str, out_png) -> Path:
    """Small multiples, one panel per (set_a, set_b): metrics vs threshold."""
    return save_png(sweep_curves_figure(sweep, thresholds=thresholds, title=title), out_png)


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
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(3, len(handles)),
        fontsize=8,
        frameon=False,
    )
    return fig


def methods_side_by_side(
    sweeps: dict[str, pd.DataFrame],
    *,
    thresholds: dict[str, list[float]],
    metric: str = "hungarian_f1",
    out_png,
) -> Path:
    """One panel per method (same y-scale), one line per comparison."""
    return save_png(
        methods_side_by_side_figure(sweeps, thresholds=thresholds, metric=metric), out_png
    )
