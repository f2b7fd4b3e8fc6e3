"""Study-wide settings of the metric families beyond coverage (docs/metrics.md).

Their defaults are the schema's metrics:, calibration: and equivalence: (themesim.defaults).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field

from themesim.defaults import section_defaults
from themesim.errors import InputError

log = logging.getLogger("themesim")

MIN_NULL_POOL = 10  # fewest salad texts whose upper tail can be fitted (metrics/sets/nulls.py)

# The distinctiveness gap γ on each scale (docs/thresholds.md): 0.15 on the cosine scale;
# about the same gap near S = 0.6 in angular units; 1.5 within-set standard deviations on
# the z scale (0.15 is 1.8 of them for MiniLM on the demo's theme sets, 3.7 for TF-IDF);
# P(match) units on the calibrated scale.
GAMMA_SCALES = ("cosine", "angular", "calibrated", "z")

# gamma, baseline_z, z_alpha, bootstrap, null_model, transport, intervals (icc: the
# intraclass correlation of the `<metric>_icc_low/_high` sensitivity,
# metrics/intervals/intervals.py; None or 0 = off) and quality.
DEFAULT_METRICS: dict = section_defaults("metrics")

# Default threshold of a method on the within-set z scale (docs/thresholds.md).
Z_THRESHOLD = 2.0

# Rated pairs that calibrate methods (docs/thresholds.md): pairs, positive_from, bootstrap,
# prevalence.
DEFAULT_CALIBRATION: dict = section_defaults("calibration")

# The equivalence verdict of a reference group (metrics/verdicts/equivalence.py): margin, alpha.
DEFAULT_EQUIVALENCE: dict = section_defaults("equivalence")


@dataclass
class Settings:
    """Study-wide family settings (config `metrics:`) plus one method's threshold options."""

    thresholds: list[float]
    op: str = "ge"
    gamma: float = DEFAULT_METRICS["gamma"]["cosine"]  # on the method's scale (gamma_for)
    baseline_z: float = DEFAULT_METRICS["baseline_z"]
    z_alpha: float = DEFAULT_METRICS["z_alpha"]
    bootstrap: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["bootstrap"]))
    null_model: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["null_model"]))
    transport: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["transport"]))
    intervals: dict = field(default_factory=lambda: dict(DEFAULT_METRICS["intervals"]))
    scale: str = "cosine"
    clamp: bool = False


def _merged(defaults: dict, user: dict | None) -> dict:
    out = copy.deepcopy(defaults)
    for key, value in (user or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def _deprecated_null_k(null_model: dict) -> None:
    """metrics.null_model.k (K whole salad sets) is read for one release: 0 still turns the
    null model off; any other K is ignored in favour of `pool`."""
    if "k" not in null_model:
        return
    k = null_model.pop("k")
    if k == 0:
        null_model["pool"] = 0
        what = "k: 0 is read as pool: 0 (null model off)"
    else:
        what = f"k: {k} is ignored; the pool has {null_model['pool']} texts"
    log.warning(
        "config metrics.null_model.k is deprecated and will be removed in the next release "
        "(the null model now embeds one pool of word-salad texts per B set): %s. "
        "Write metrics.null_model.pool instead (default 200; 0 = off).",
        what,
    )


def gamma_for(gamma, scale: str) -> float:
    """γ on a method's scale: a number applies to every scale (the setting before it was
    given per scale); a mapping gives each scale its own, the defaults filling the rest."""
    if isinstance(gamma, dict):
        return float({**DEFAULT_METRICS["gamma"], **gamma}[scale])
    return float(gamma)


def calibration_settings(user: dict | None) -> dict:
    """DEFAULT_CALIBRATION with the user's `calibration:` merged in, one level deep."""
    return _merged(DEFAULT_CALIBRATION, user)


def equivalence_settings(user: dict | None) -> dict:
    """DEFAULT_EQUIVALENCE with the user's `equivalence:` merged in."""
    return _merged(DEFAULT_EQUIVALENCE, user)


def metrics_settings(user: dict | None) -> dict:
    """DEFAULT_METRICS with the user's values merged in, one level deep."""
    out = _merged(DEFAULT_METRICS, user)
    _deprecated_null_k(out["null_model"])
    pool = out["null_model"]["pool"]
    if 0 < pool < MIN_NULL_POOL:
        raise InputError(
            "config metrics.null_model.pool",
            f"{pool} word-salad texts are too few to fit the null's upper tail",
            f"Give at least {MIN_NULL_POOL} (default 200), or 0 to turn the null model off",
        )
    return out
