"""One comparison's labelings as every grounding statistic reads them: the summary row, its
jackknife replicates and the shift test's draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Labelings:
    """A, B: boolean segments × themes label matrices; top_a, top_b: each segment's top-1
    theme (-1 = unlabelled); S: the text similarity (A themes × B themes) on the method's
    scale; tpairs: its text Hungarian pairs (None: the comparison is not text-scored);
    min_iou: the IoU a grounded pair needs."""

    A: np.ndarray
    B: np.ndarray
    top_a: np.ndarray
    top_b: np.ndarray
    S: np.ndarray
    tpairs: list | None
    min_iou: float
