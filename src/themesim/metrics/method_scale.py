"""A method's score matrix on the scale its thresholds refer to, as the metrics rule puts it.

Raw scores are clamped and made angular as configured (on_scale), mapped through
the isotonic fit to P(match) under `scale: calibrated`, or standardised against both sets'
within-set spreads under `scale: z` (within.z_scale). The heatmaps read the matrix from here, so
the pairs they outline are the decisions the metric tables count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from themesim.metrics.isotonic import map_calibrated
from themesim.metrics.sets.distinctiveness import angular_sim
from themesim.metrics.sets.within import z_scale
from themesim.metrics.settings import Settings

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


def on_scale(S, settings: Settings) -> np.ndarray | None:
    """The matrix on the scale the thresholds refer to (angular, clamped or as is).

    Under `scale: z` this is the base (cosine, maybe clamped) matrix: the z scale needs the
    within-set matrices too (metrics.sets.within.z_scale).
    """
    if S is None:
        return None
    S = np.asarray(S, dtype=np.float64)
    if settings.clamp:
        S = np.clip(S, 0.0, 1.0)
    return angular_sim(S) if settings.scale == "angular" else S


def base_scale(scale: str = "cosine", clamp: bool = False, fit: pd.DataFrame | None = None):
    """Raw scores -> the scale thresholds refer to (before z, which needs within-set matrices)."""
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
    to_scale = to_scale or base_scale(scale, clamp, fit)
    S0 = to_scale(S)
    if scale != "z":
        return S0, ""
    if W_a is None or W_b is None:
        raise ValueError("scale: z needs the within-set matrices of both sets")
    return z_scale(S0, to_scale(W_a), to_scale(W_b))
