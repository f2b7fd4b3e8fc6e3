"""Grounding plots: per comparison the segment-IoU heatmap with the text Hungarian pairs
outlined, per method text similarity against segment IoU over every theme pair."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from themesim.metrics.method_scale import scale_label
from themesim.metrics.sets.coverage import hungarian_pairs
from themesim.report.plots.common import HEATMAP_CMAP, OKABE_ITO, save_png, wrap_label
from themesim.report.plots.heatmap import data_range, diagonal_order
from themesim.report.plots.theme_map import MARKERS, SET_COLOURS


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def theme_order(pairs: pd.DataFrame, a_ids: list, b_ids: list) -> tuple[list, list]:
    """The similarity heatmap's row and column order (one-to-one pairs on the diagonal, from
    the long table's text similarity), so a comparison's two heatmaps read alike; the
    table's own order where its similarity is missing."""
    if "similarity" not in pairs:
        return a_ids, b_ids
    S = pairs.pivot(index="a_id", columns="b_id", values="similarity").loc[a_ids, b_ids]
    S = S.to_numpy(dtype=float)
    if not np.isfinite(S).all() or not S.size:
        return a_ids, b_ids
    rows, cols = hungarian_pairs(S)
    r, c = diagonal_order(S, list(zip(rows.tolist(), cols.tolist(), strict=True)))
    return [a_ids[i] for i in r], [b_ids[j] for j in c]


def iou_heatmap_figure(
    pairs: pd.DataFrame,
    a_names: dict,
    b_names: dict,
    title: str,
    a_name: str = "A",
    b_name: str = "B",
) -> Figure:
    """pairs: one comparison's long table (a_id, b_id, iou, text_pair, similarity); rows =
    A themes, in the similarity heatmap's order; colours span the IoU values seen."""
    a_ids, b_ids = theme_order(
        pairs, list(dict.fromkeys(pairs["a_id"])), list(dict.fromkeys(pairs["b_id"]))
    )
    M = pairs.pivot(index="a_id", columns="b_id", values="iou").loc[a_ids, b_ids].to_numpy()
    text = pairs.pivot(index="a_id", columns="b_id", values="text_pair").loc[a_ids, b_ids]
    n_a, n_b = M.shape
    fig = _figure(2.5 + 0.55 * n_b, 1.6 + 0.4 * n_a)
    ax = fig.add_subplot()
    vmin, vmax = data_range(M)
    im = ax.imshow(M, cmap=HEATMAP_CMAP, vmin=vmin, vmax=vmax, aspect="auto")
    middle = (vmin + vmax) / 2
    for i in range(n_a):
        for j in range(n_b):
            ax.text(
                j,
                i,
                f"{M[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if M[i, j] < middle else "black",
            )
            if bool(text.iat[i, j]):
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.2, edgecolor=OKABE_ITO["orange"]
                    )
                )
    ax.set_xticks(
        range(n_b),
        [wrap_label(str(b_names.get(b, b))) for b in b_ids],
        rotation=60,
        ha="right",
        fontsize=7,
    )
    ax.set_yticks(range(n_a), [wrap_label(str(a_names.get(a, a))) for a in a_ids], fontsize=7)
    ax.set_xlabel(b_name, fontsize=8)
    ax.set_ylabel(a_name, fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, label="segment IoU (outlined: text Hungarian pairs)", shrink=0.8)
    return fig


def iou_heatmap(pairs, a_names, b_names, title, out_png, out_svg=None, a_name="A", b_name="B"):
    fig = iou_heatmap_figure(pairs, a_names, b_names, title, a_name, b_name)
    return save_png(fig, out_png, out_svg)


def text_vs_data_figure(pairs: pd.DataFrame, grounding: pd.DataFrame, method: str) -> Figure:
    """Every theme pair of every comparison: text similarity (x) against segment IoU (y)."""
    comps = list(dict.fromkeys(zip(pairs["set_a"], pairs["set_b"], strict=True)))
    # a qualitative palette of ten distinct hues, and a marker per ten comparisons
    colours = SET_COLOURS
    note = ""
    if len(comps) > len(colours):
        # more comparisons than distinct hues (each analyst the reference in turn): the
        # first reference's only; grounding.csv has every comparison's ρ
        first = comps[0][0]
        kept = [c for c in comps if c[0] == first]
        note = f"; {first}'s {len(kept)} of {len(comps)} comparisons"
        comps = kept
    one_a = len({a for a, _ in comps}) == 1
    fig = _figure(8.0 if len(comps) > 1 else 6.0, max(4.2, 0.16 * len(comps) + 1.0))
    ax = fig.add_subplot()
    for k, (a, b) in enumerate(comps):
        sub = pairs[(pairs["set_a"] == a) & (pairs["set_b"] == b)]
        row = grounding[(grounding["set_a"] == a) & (grounding["set_b"] == b)]
        rho = float(row["text_data_spearman"].iloc[0]) if len(row) else np.nan
        c = colours[k % len(colours)]
        name = b if one_a else f"{a} vs {b}"
        ax.scatter(
            sub["similarity"],
            sub["iou"],
            s=14,
            alpha=0.7,
            color=c,
            marker=MARKERS[(k // len(colours)) % len(MARKERS)],
            label=f"{name} (ρ = {rho:.2f})" if np.isfinite(rho) else f"{name} (ρ undefined)",
        )
        tp = sub[sub["text_pair"]]
        ax.scatter(tp["similarity"], tp["iou"], s=40, facecolors="none", edgecolors=c, lw=1.2)
    ax.set_xlabel(_text_axis(grounding))
    ax.set_ylabel("segment IoU")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{method}: text vs data (rings: text Hungarian pairs{note})", fontsize=9)
    # beside the axes: one entry per comparison would cover the points inside them
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return fig


def _text_axis(grounding: pd.DataFrame) -> str:
    """The x label: text similarity on the scale the text pairs were decided on."""
    scales = grounding["scale"].unique() if "scale" in grounding else []
    if len(scales) != 1 or scales[0] == "cosine":
        return "text similarity"
    return f"text similarity: {scale_label(scales[0])}"


def text_vs_data(pairs, grounding, method, out_png, out_svg=None):
    return save_png(text_vs_data_figure(pairs, grounding, method), out_png, out_svg)
