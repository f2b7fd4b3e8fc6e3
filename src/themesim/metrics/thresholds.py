"""A method's thresholds as the metrics job resolved them, and the scale they refer to.

The metrics job writes them once, as results/metrics/{method}/thresholds.csv (one row per
configured threshold, in configured order); the plots, grounding and report read that table
and never resolve a threshold or a scale again (docs/metrics.md#thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

THRESHOLD_COLUMNS = ["method", "threshold", "scale", "clamp", "source"]
FROM_CONFIG = "config"
FROM_CALIBRATION = "calibrated (F1-max)"


@dataclass(frozen=True)
class Thresholds:
    """One method's row of thresholds.csv: its thresholds (the first draws the heatmaps and
    decides grounding's text side), where each came from, and the scale they refer to."""

    values: list[float]
    sources: list[str]
    scale: str
    clamp: bool

    @property
    def first(self) -> float:
        return self.values[0]

    def calibrated(self) -> list[bool]:
        return [s == FROM_CALIBRATION for s in self.sources]


def threshold_table(method: str, values, sources, scale: str, clamp: bool) -> pd.DataFrame:
    """thresholds.csv's rows: one per threshold, in configured order. Each threshold is
    written exactly (repr): write_csv's 10 digits could move a calibrated θ off the score it
    was fitted at, and flip a decision at that score."""
    return pd.DataFrame(
        {
            "method": method,
            "threshold": [repr(float(t)) for t in values],
            "scale": scale,
            "clamp": bool(clamp),
            "source": list(sources),
        },
        columns=THRESHOLD_COLUMNS,
    )


def read_thresholds(path) -> Thresholds:
    t = pd.read_csv(path, dtype={"method": str, "scale": str, "source": str})
    if t.empty:
        raise ValueError(f"{path}: no thresholds")
    return Thresholds(
        values=t["threshold"].astype(float).tolist(),
        sources=t["source"].tolist(),
        scale=str(t["scale"].iloc[0]),
        clamp=bool(t["clamp"].iloc[0]),
    )
