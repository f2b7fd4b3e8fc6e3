"""Figures: similarity heatmaps, threshold sweeps, methods side by side, distributions,
the theme map, run consistency and the all-pairs overview; one module per figure family,
shared style in ``common``.

Uses the object-oriented matplotlib API with the Agg canvas only, so importing
this package never touches pyplot's global state or the user's backend.
Every ``*_figure`` function returns the :class:`~matplotlib.figure.Figure` (for
inspection in tests); the plain functions save it and return the PNG path.

A new figure family is a new module here (build the figure with ``common.new_figure`` and
save it with ``common.save_png``), re-exported below so ``plots.<name>`` keeps working.
"""

from themesim.report.plots.common import (
    DPI,
    HEATMAP_CMAP,
    LABEL_LINES,
    LABEL_WIDTH,
    LINE_COLOURS,
    LINE_STYLES,
    OKABE_ITO,
    THRESHOLD_STYLE,
    op_symbol,
    save_png,
    theme_label,
    wrap_label,
)
from themesim.report.plots.distributions import (
    CATEGORY_STYLE,
    SIDE_COLOURS,
    THEME_TABLE_COLUMNS,
    category_counts,
    confidence_figure,
    confidence_profile,
    distributions,
    distributions_figure,
    matched_pairs,
    matched_similarities,
    thresholds_text,
)
from themesim.report.plots.heatmap import diagonal_order, heatmap, heatmap_figure
from themesim.report.plots.pairs_overview import pairs_overview, pairs_overview_figure
from themesim.report.plots.runs import (
    runs_groups_figure,
    runs_groups_heatmap,
    runs_heatmap,
    runs_heatmap_figure,
)
from themesim.report.plots.side_by_side import (
    methods_side_by_side,
    methods_side_by_side_figure,
)
from themesim.report.plots.sweep import (
    SWEEP_METRICS,
    sweep_curves,
    sweep_curves_figure,
    sweep_summary_figure,
)
from themesim.report.plots.theme_map import MARKERS, pca_2d, theme_map, theme_map_figure

__all__ = [
    "CATEGORY_STYLE",
    "DPI",
    "HEATMAP_CMAP",
    "LABEL_LINES",
    "LABEL_WIDTH",
    "LINE_COLOURS",
    "LINE_STYLES",
    "MARKERS",
    "OKABE_ITO",
    "SIDE_COLOURS",
    "SWEEP_METRICS",
    "THEME_TABLE_COLUMNS",
    "THRESHOLD_STYLE",
    "category_counts",
    "confidence_figure",
    "confidence_profile",
    "diagonal_order",
    "distributions",
    "distributions_figure",
    "heatmap",
    "heatmap_figure",
    "matched_pairs",
    "matched_similarities",
    "methods_side_by_side",
    "methods_side_by_side_figure",
    "op_symbol",
    "pairs_overview",
    "pairs_overview_figure",
    "pca_2d",
    "runs_groups_figure",
    "runs_groups_heatmap",
    "runs_heatmap",
    "runs_heatmap_figure",
    "save_png",
    "sweep_curves",
    "sweep_curves_figure",
    "sweep_summary_figure",
    "theme_label",
    "theme_map",
    "theme_map_figure",
    "thresholds_text",
    "wrap_label",
]
