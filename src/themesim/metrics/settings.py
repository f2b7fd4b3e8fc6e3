"""Study-wide settings of the metric families beyond coverage (docs/metrics.md).

The one source of their defaults: the schema's metrics: defaults are held equal to these
by tests/test_kinds.py.
"""

from __future__ import annotations

import copy

DEFAULT_METRICS: dict = {
    "gamma": 0.15,
    "baseline_z": 2.0,
    "bootstrap": {"n": 1000, "seed": 0},
    "null_model": {"k": 100, "seed": 0, "alpha": 0.05},
    "transport": {"reg": 0.05, "reg_m": 1.0, "min_share": 0.2},
    "quality": {"alpha": 0.5, "beta": 0.5, "keywords_top_k": 5},
}

# Default threshold of a method on the within-set z scale (docs/thresholds.md).
Z_THRESHOLD = 2.0

# Rated pairs that calibrate methods (docs/thresholds.md); the schema's calibration:
# defaults are held equal to these by tests/test_calibration.py.
DEFAULT_CALIBRATION: dict = {
    "pairs": None,
    "positive_from": None,
    "bootstrap": {"n": 1000, "seed": 0},
}


def _merged(defaults: dict, user: dict | None) -> dict:
    out = copy.deepcopy(defaults)
    for key, value in (user or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def calibration_settings(user: dict | None) -> dict:
    """DEFAULT_CALIBRATION with the user's `calibration:` merged in, one level deep."""
    return _merged(DEFAULT_CALIBRATION, user)


def metrics_settings(user: dict | None) -> dict:
    """DEFAULT_METRICS with the user's values merged in, one level deep."""
    return _merged(DEFAULT_METRICS, user)
