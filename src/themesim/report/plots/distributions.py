"""Distributions of matched similarities and gaps, and the four-way confidence profile.

Never means: box = quartiles, whiskers = min and max, every point shown.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from themesim.metrics.thresholds import matches
from themesim.report.format import op_symbol
from themesim.report.plots.common import (
    OKABE_ITO,
    THRESHOLD_STYLE,
    comparisons,
    legend_below,
    new_figure,
    require_columns,
    saving,
    wrap_label,
)
from themesim.report.plots.pair_limit import over_limit, shown_pairs

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


def _theme_subsets(themes: pd.DataFrame, pairs=None) -> list[tuple[str, str, pd.DataFrame]]:
    return [
        (a, b, themes[(themes["set_a"].astype(str) == a) & (themes["set_b"].astype(str) == b)])
        for a, b in (comparisons(themes) if pairs is None else pairs)
    ]


def _limited(themes: pd.DataFrame, reference, max_panels):
    """(subsets drawn one by one, number of comparisons if a pooled summary follows, else
    None): above ``max_panels`` comparisons only the reference's, then all of them pooled."""
    pairs = comparisons(themes)
    if not over_limit(len(pairs), max_panels):
        return _theme_subsets(themes, pairs), None
    return _theme_subsets(themes, shown_pairs(pairs, reference, max_panels)), len(pairs)


def _matched_mask(a_rows: pd.DataFrame, op: str) -> tuple[np.ndarray, np.ndarray]:
    s = pd.to_numeric(a_rows["hungarian_similarity"], errors="coerce").to_numpy(float)
    t = pd.to_numeric(a_rows["category_threshold"], errors="coerce").to_numpy(float)
    return np.isfinite(s) & matches(s, t, op), s


def matched_similarities(rows: pd.DataFrame, op: str) -> np.ndarray:
    """Similarities of the one-to-one pairs that meet the category threshold (side A rows).

    The same pairs as comparisons.csv's matched_sim_* quartiles at the first threshold.
    """
    a = rows[rows["side"] == "a"]
    keep, s = _matched_mask(a, op)
    return s[keep]


def matched_pairs(themes: pd.DataFrame, op: str) -> pd.DataFrame:
    """set_a, a_id, set_b, b_id, similarity of every one-to-one pair meeting the threshold."""
    require_columns(
        themes, [*THEME_TABLE_COLUMNS, "theme_id", "hungarian_partner_id"], "themes table"
    )
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


def _similarity_row(ax, k: int, rows: pd.DataFrame, op: str, dots: bool) -> np.ndarray:
    """Row ``k`` of the left panel: the similarities of one comparison's matched pairs
    (box, and with ``dots`` every value), which it returns."""
    sims = matched_similarities(rows, op)
    _box(ax, sims, k, OKABE_ITO["green"], 0.5)
    if dots:
        _strip(ax, sims, k, OKABE_ITO["green"])
    _count_note(ax, k, f"n={len(sims)}")
    if not len(sims):
        ax.text(0.5, k, "no one-to-one match meets θ", ha="center", va="center", fontsize=7)
    return sims


def _gap_row(ax, k: int, rows: pd.DataFrame, dots: bool) -> float:
    """Row ``k`` of the right panel: the gaps of one comparison's A themes (above) and B
    themes (below); returns the largest gap drawn (0 without any)."""
    notes, largest = [], 0.0
    for side, dy in (("a", -0.2), ("b", 0.2)):
        g = pd.to_numeric(rows.loc[rows["side"] == side, "gap_abs"], errors="coerce")
        g = g[np.isfinite(g)].to_numpy(float)
        _box(ax, g, k + dy, SIDE_COLOURS[side], 0.3)
        if dots:
            _strip(ax, g, k + dy, SIDE_COLOURS[side], spread=0.06)
        notes.append(f"{side.upper()} n={len(g)}")
        if len(g):
            largest = max(largest, float(g.max()))
    _count_note(ax, k, "\n".join(notes))
    return largest


def distributions_figure(
    themes: pd.DataFrame,
    *,
    op: str,
    gamma: float,
    title: str,
    reference: str | None = None,
    max_panels: int | None = None,
) -> Figure:
    """Left: similarity of the one-to-one matches; right: gap best − second, A and B themes.

    Above ``max_panels`` comparisons: rows of the reference's, then one row of every
    comparison's values pooled (box only: no dot per value)."""
    require_columns(themes, THEME_TABLE_COLUMNS, "themes table")
    sym = op_symbol(op)
    subsets, pooled = _limited(themes, reference, max_panels)
    if pooled is not None:
        subsets = [*subsets, ("", "", themes)]
    n = max(len(subsets), 1)
    fig = new_figure(9.5, 1.6 + 0.75 * n)
    fig.suptitle(title, fontsize=11)
    ax_sim, ax_gap = fig.subplots(1, 2, sharey=True)
    thetas = sorted(set(pd.to_numeric(themes["category_threshold"], errors="coerce").dropna()))
    for t in thetas:
        ax_sim.axvline(float(t), **THRESHOLD_STYLE, zorder=1)
    ax_gap.axvline(gamma, **THRESHOLD_STYLE, zorder=1)
    gap_max, all_sims = 0.05, []
    for k, (_, _, rows) in enumerate(subsets):
        # the pooled row (the last) is a box only: a dot per value of every comparison is noise
        dots = pooled is None or k < len(subsets) - 1
        all_sims.append(_similarity_row(ax_sim, k, rows, op, dots))
        gap_max = max(gap_max, _gap_row(ax_gap, k, rows, dots))
    labels = [wrap_label(f"{a} vs {b}", width=22) for a, b, _ in subsets]
    if pooled is not None:
        labels[-1] = wrap_label(f"all {pooled:,} comparisons, pooled", width=22)
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
    legend_below(
        fig,
        handles,
        4,
        title="box: quartiles and median; whiskers: min and max; dots: every value",
        title_fontsize=7,
    )
    return fig


distributions = saving(
    distributions_figure,
    "distributions",
    """Matched-pair similarity and gap distributions, one row per comparison (above
    ``max_panels``: the reference's and all pooled).""",
)


def category_counts(rows: pd.DataFrame, side: str) -> dict[str, int]:
    cats = rows.loc[rows["side"] == side, "category"].astype(str)
    return {c: int((cats == c).sum()) for c in CATEGORY_STYLE}


def _confidence_bars(themes: pd.DataFrame, subsets: list, pooled: int | None) -> list:
    """(label, category counts) of each bar: both sides of each comparison drawn, then
    (``pooled``: the number of comparisons) each side's counts summed over all of them."""
    bars = []
    for a, b, rows in subsets:
        for side, name in (("a", a), ("b", b)):
            counts = category_counts(rows, side)
            total = sum(counts.values())
            bars.append((wrap_label(f"{a} vs {b}: {side.upper()} = {name} ({total})", 34), counts))
    if pooled is not None:
        for side in ("a", "b"):
            counts = category_counts(themes, side)
            total = sum(counts.values())
            label = f"all {pooled:,} comparisons: every {side.upper()} ({total:,})"
            bars.append((wrap_label(label, 34), counts))
    return bars


def _stacked_bar(ax, y: int, counts: dict[str, int]) -> None:
    """One bar at ``y``: each category's share of the themes, its count written inside
    where the segment is wide enough."""
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


def confidence_figure(
    themes: pd.DataFrame,
    *,
    op: str,
    gamma: float,
    title: str,
    reference: str | None = None,
    max_panels: int | None = None,
) -> Figure:
    """The four-way confidence profile: one stacked bar per side of each comparison (above
    ``max_panels`` comparisons: the reference's, then each side's counts summed over all)."""
    require_columns(themes, THEME_TABLE_COLUMNS, "themes table")
    sym = op_symbol(op)
    subsets, pooled = _limited(themes, reference, max_panels)
    bars = _confidence_bars(themes, subsets, pooled)
    if pooled is not None:
        subsets = [*subsets, ("", "", themes)]
    fig = new_figure(8.5, 1.8 + 0.42 * max(len(bars), 1))
    fig.suptitle(title, fontsize=11)
    ax = fig.add_subplot()
    for y, (_, counts) in enumerate(bars):
        _stacked_bar(ax, y, counts)
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
    legend_below(fig, handles, 2)
    if not bars:
        ax.text(0.5, 0.5, "no comparisons", ha="center", va="center", transform=ax.transAxes)
    return fig


confidence_profile = saving(
    confidence_figure,
    "confidence_profile",
    """Stacked bars of the four match categories, per side of each comparison (above
    ``max_panels``: the reference's and the sums over all).""",
)


# The report_parts job draws these (report/figures.py names them) with the method's tables
# (steps.report_parts.MethodTables).


def _draw(tables, save, what: str, out_png, out_svg) -> Path:
    return tables.draw(
        save,
        tables.themes_table,
        what,
        out_png=out_png,
        out_svg=out_svg,
        op=tables.op,
        gamma=tables.gamma,
    )


def draw_distributions(tables, *, out_png, out_svg=None) -> Path:
    return _draw(
        tables, distributions, "matched similarity and gap per comparison", out_png, out_svg
    )


def draw_confidence(tables, *, out_png, out_svg=None) -> Path:
    return _draw(
        tables, confidence_profile, "how confidently each theme is matched", out_png, out_svg
    )
