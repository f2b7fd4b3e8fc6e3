"""A method's score matrix on the scale its thresholds refer to, as the metrics rule puts it.

Raw scores are clamped and made angular as configured (comparison.on_scale), mapped through
the isotonic fit to P(match) under `scale: calibrated`, or standardised against both sets'
within-set spreads under `scale: z` (scales.z_scale). The heatmaps read the matrix from here, so
the pairs they outline are the decisions the metric tables count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

# The colour-bar label of a heatmap on each scale.
SCALE_LABELS = {
    "cosine": "similarity S",  # as scored: cosine, TF-IDF cosine, a judge's or file's score
    "angular": "angular similarity",
    "calibrated": "P(match) (calibrated scale)",
    "z": "within-set z",
}


# The value's symbol in a heatmap's legend ("z ≥ 2").
SCALE_SYMBOLS = {"z": "z", "calibrated": "P(match)"}


def scale_label(scale: str = "cosine", clamp: bool = False) -> str:
    label = SCALE_LABELS.get(scale, f"similarity S ({scale})")
    return f"{label}, clamped to [0, 1]" if clamp and scale != "calibrated" else label


def base_scale(scale: str = "cosine", clamp: bool = False, fit: pd.DataFrame | None = None):
    """Raw scores -> the scale thresholds refer to (before z, which needs within-set matrices)."""
    from themesim.metrics.comparison import Settings, on_scale
    from themesim.metrics.isotonic import map_calibrated

    st = Settings(thresholds=[], scale=scale, clamp=clamp)
    if scale == "calibrated" and fit is None:
        raise ValueError("scale: calibrated needs the method's isotonic fit")

    def to_scale(M) -> np.ndarray:
        M = on_scale(M, st)
        return M if scale != "calibrated" else map_calibrated(M, fit)

    return to_scale


def method_matrix(
    S,
    *,
    scale: str = "cosine",
    clamp: bool = False,
    fit: pd.DataFrame | None = None,
    W_a=None,
    W_b=None,
    to_scale: Callable | None = None,
) -> tuple[np.ndarray, str]:
    """S on the method's scale and a flag ("" unless z is undefined for some theme, whose
    cells are then NaN). W_a, W_b: raw within-set matrices of the two sets (scale: z only)."""
    from themesim.metrics.sets.scales import z_scale

    to_scale = to_scale or base_scale(scale, clamp, fit)
    S0 = to_scale(S)
    if scale != "z":
        return S0, ""
    if W_a is None or W_b is None:
        raise ValueError("scale: z needs the within-set matrices of both sets")
    return z_scale(S0, to_scale(W_a), to_scale(W_b))
