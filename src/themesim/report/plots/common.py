"""Shared by every figure: Okabe–Ito colours, labels, the Agg figure, byte-identical saving,
the legend below the axes, cell annotations and the checks on input tables."""

from __future__ import annotations

import inspect
import math
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from themesim.io.files import atomic_path
from themesim.report.fonts import use_fallback_fonts
from themesim.report.format import op_symbol

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

THRESHOLD_STYLE = {"color": "0.35", "linestyle": (0, (4, 3)), "linewidth": 1.0}


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


def theme_labels(labels: Sequence, ids: Sequence | None) -> list[str]:
    if ids is None:
        return [wrap_label(x) for x in labels]
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} ids for {len(labels)} labels")
    return [wrap_label(theme_label(i, x)) for i, x in zip(ids, labels, strict=True)]


# ---------------------------------------------------------------------------
# saving


def new_figure(width: float, height: float) -> Figure:
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
        # The layout the PNG solved is kept: solving it again for the SVG is ~15 % of a
        # figure's saving time, and the SVG then has the PNG's layout.
        fig.set_layout_engine("none")
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


def saving(figure: Callable[..., Figure], name: str, doc: str) -> Callable[..., Path]:
    """The plain function ``name`` of a ``*_figure`` function: its arguments plus ``out_png``
    (and ``out_svg``); draws the figure, saves it with save_png and returns the PNG path.
    One wrapper, so each figure's parameter list is written once."""

    def draw_and_save(*args, out_png, out_svg=None, **kwargs) -> Path:
        return save_png(figure(*args, **kwargs), out_png, out_svg)

    draw_and_save.__name__ = draw_and_save.__qualname__ = name
    draw_and_save.__module__ = figure.__module__
    draw_and_save.__doc__ = doc
    # help() and inspect show the figure's parameters, then the two paths.
    sig = inspect.signature(figure)
    paths = [
        inspect.Parameter("out_png", inspect.Parameter.KEYWORD_ONLY),
        inspect.Parameter("out_svg", inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
    draw_and_save.__signature__ = sig.replace(
        parameters=[*sig.parameters.values(), *paths], return_annotation=Path
    )
    return draw_and_save


def cell_span(n: int) -> float:
    """Inches for n cells: roomy up to 25, then narrower, but always growing."""
    return 0.5 * min(n, 25) + 0.25 * max(n - 25, 0)


def legend_below(fig: Figure, handles, ncols: int, **kw) -> None:
    """The figure's legend in the space below its axes, as every plot here has it."""
    fig.legend(
        handles=handles, loc="outside lower center", ncols=ncols, fontsize=8, frameon=False, **kw
    )


def annotate_cells(ax, M: np.ndarray, cmap, norm, size: float) -> None:
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


def require_columns(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {', '.join(missing)}")


def comparisons(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(set_a, set_b) pairs in order of first appearance."""
    seen = dict.fromkeys(zip(df["set_a"].astype(str), df["set_b"].astype(str), strict=True))
    return list(seen)


def small_multiples(n: int, title: str) -> tuple[Figure, list, int]:
    """A figure of n panels (at most 3 a row) sharing both axes: (figure, axes, columns)."""
    nrows, ncols = panel_grid(n)
    fig = new_figure(4.2 * ncols, 3.2 * nrows + 1.0)
    fig.suptitle(title, fontsize=11)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax in axes[n:]:
        fig.delaxes(ax)
    return fig, axes, ncols


def comparison_rows(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The sweep rows of comparison (a, b), by threshold."""
    rows = df[(df["set_a"].astype(str) == a) & (df["set_b"].astype(str) == b)]
    return rows.sort_values("threshold", kind="stable")


def panel_grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    ncols = max(1, min(max_cols, n))
    return math.ceil(max(n, 1) / ncols), ncols


def threshold_xlabel(op: str) -> str:
    return f"threshold θ (match if S {op_symbol(op)} θ)"


def mark_thresholds(ax, thresholds: Sequence[float]) -> None:
    for t in thresholds:
        ax.axvline(float(t), **THRESHOLD_STYLE, zorder=1)


def style_panel(ax) -> None:
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(True, color="0.9", linewidth=0.6)
    ax.tick_params(labelsize=8)
