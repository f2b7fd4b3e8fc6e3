"""A method's match rule as the metrics job resolved it: its thresholds, the op and the scale
they refer to, and the one comparison "S op θ" every metric family and figure makes.

The metrics job writes them once, as results/metrics/{method}/thresholds.csv (one row per
configured threshold, in configured order); the plots, grounding and report read that table
and never resolve a threshold, an op or a scale again (docs/metrics.md#thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.metrics.isotonic import map_calibrated

OPS = ("ge", "gt")
THRESHOLD_COLUMNS = ["method", "threshold", "op", "scale", "clamp", "source"]
FROM_CONFIG = "config"
FROM_CALIBRATION = "calibrated (F1-max)"


def check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")


def matches(S, threshold, op: str = "ge") -> np.ndarray:
    """S op threshold: "ge" S >= θ (the seeds' definition), "gt" S > θ. A NaN score matches
    nothing. θ may be an array that broadcasts against S."""
    check_op(op)
    S = np.asarray(S, dtype=np.float64)
    return S >= threshold if op == "ge" else S > threshold


@dataclass(frozen=True)
class Thresholds:
    """One method's thresholds.csv: its thresholds (the first draws the heatmaps and decides
    grounding's text side), where each came from, the op and the scale they refer to."""

    values: list[float]
    sources: list[str]
    scale: str
    clamp: bool
    op: str

    @property
    def first(self) -> float:
        return self.values[0]

    def calibrated(self) -> list[bool]:
        return [s == FROM_CALIBRATION for s in self.sources]


def threshold_table(method: str, values, sources, op: str, scale: str, clamp: bool) -> pd.DataFrame:
    """thresholds.csv's rows: one per threshold, in configured order. Each threshold is
    written exactly (repr): write_csv's 10 digits could move a calibrated θ off the score it
    was fitted at, and flip a decision at that score."""
    check_op(op)
    return pd.DataFrame(
        {
            "method": method,
            "threshold": [repr(float(t)) for t in values],
            "op": op,
            "scale": scale,
            "clamp": bool(clamp),
            "source": list(sources),
        },
        columns=THRESHOLD_COLUMNS,
    )


def read_thresholds(path) -> Thresholds:
    t = pd.read_csv(path, dtype={"method": str, "op": str, "scale": str, "source": str})
    if t.empty:
        raise ValueError(f"{path}: no thresholds")
    missing = [c for c in THRESHOLD_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(
            f"{path}: no column {', '.join(missing)}; it was written by an older themesim: "
            "run the workflow again to rewrite it"
        )
    op = str(t["op"].iloc[0])
    try:
        check_op(op)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return Thresholds(
        values=t["threshold"].astype(float).tolist(),
        sources=t["source"].tolist(),
        scale=str(t["scale"].iloc[0]),
        clamp=bool(t["clamp"].iloc[0]),
        op=op,
    )


CALIBRATED = "calibrated"


def resolve_thresholds(thresholds, summary: dict, fit: pd.DataFrame | None = None):
    """Thresholds with `calibrated` replaced by the F1-maximising threshold; with a fit
    (scale: calibrated) that threshold is mapped to its P(match). Also the source of each.
    The metrics job alone calls this (without the calibration module's scikit-learn);
    everything after it reads thresholds.csv."""
    out, source = [], []
    for t in thresholds:
        if t == CALIBRATED:
            value = float(summary["f1_threshold"])
            if fit is not None:
                value = float(map_calibrated(value, fit))
            out.append(value)
            source.append(FROM_CALIBRATION)
        else:
            out.append(float(t))
            source.append(FROM_CONFIG)
    return out, source
