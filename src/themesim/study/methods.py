"""The active methods of a config, with their kind's defaults, checked: kind, keys,
thresholds, calibration; and the threshold sweep."""

from __future__ import annotations

import math

from themesim.defaults import default
from themesim.errors import InputError, did_you_mean
from themesim.kinds import DEFAULT_METHODS, KINDS, method_defaults
from themesim.kinds import get as get_kind
from themesim.study.names import METHOD_NAME


def _check_thresholds(name: str, spec: dict) -> None:
    where = f"config methods.{name}.thresholds"
    kind = get_kind(spec["kind"])
    low, high = kind.threshold_range or (-math.inf, math.inf)
    scores = spec.get("scale", "cosine") if kind.score_name == "cosine" else kind.score_name
    if spec.get("scale") == "z":  # standard deviations, unbounded
        low, high = -math.inf, math.inf
    elif spec.get("scale") in ("angular", "calibrated") or (spec.get("clamp") and low < 0):
        low, high = 0.0, 1.0
    for t in spec["thresholds"]:
        if t == "calibrated":  # resolved from the calibration output (docs/thresholds.md)
            continue
        if not isinstance(t, int | float) or isinstance(t, bool) or not math.isfinite(t):
            raise InputError(
                where, f"{t!r} is not a number", "Give thresholds as numbers, e.g. [0.5]"
            )
        if not low <= t <= high:
            raise InputError(
                where,
                f"{t:g} is outside [{low:g}, {high:g}], the range of this method's {scores} scores",
                f"Give thresholds between {low:g} and {high:g} (a percentage such as 56 "
                "is written 0.56)",
            )
    seen = set()
    for t in spec["thresholds"]:
        if t in seen:  # each threshold is a row of the metric tables: twice would repeat it
            shown = t if isinstance(t, str) else f"{t:g}"
            raise InputError(
                where, f"{shown} is listed twice", "List each threshold once, e.g. [0.5, 0.6]"
            )
        seen.add(t)


MAX_SWEEP_POINTS = 10_001  # step 0.0001 over [0, 1]; more only costs time and memory


def check_sweep(sweep: dict) -> dict:
    sweep = default("sweep") | sweep
    start, stop, step = sweep["start"], sweep["stop"], sweep["step"]
    if stop < start:
        raise InputError(
            "config sweep", f"stop {stop:g} is below start {start:g}", "Swap start and stop"
        )
    if step <= 0 or (stop - start) / step + 1 > MAX_SWEEP_POINTS:
        raise InputError(
            "config sweep.step",
            f"step {step:g} gives {'no' if step <= 0 else f'{(stop - start) / step + 1:.0f}'} "
            f"thresholds between {start:g} and {stop:g}",
            f"Use a step > 0 giving at most {MAX_SWEEP_POINTS} thresholds, e.g. 0.01",
        )
    return {"start": start, "stop": stop, "step": step}


def uses_calibrated(thresholds: list, spec: dict) -> bool:
    """The method resolves a threshold or its scale from its calibration."""
    return "calibrated" in thresholds or spec.get("scale") == "calibrated"


def _check_calibrated(name: str, spec: dict, config: dict) -> None:
    """`calibrated` needs rated pairs and a method kind that can score them."""
    where = f"config methods.{name}"
    if not (config.get("calibration") or {}).get("pairs"):
        raise InputError(
            where,
            "uses calibrated but calibration.pairs is not set",
            "Set calibration: {pairs: data/rated_pairs.csv} (docs/thresholds.md)",
        )
    if not get_kind(spec["kind"]).calibrates:
        raise InputError(
            where,
            f"a {spec['kind']} method cannot be calibrated yet",
            "Give this method numeric thresholds",
        )
    if spec.get("scale") == "z":
        raise InputError(where, "calibrated thresholds are not z scores", "Use scale: cosine")


def _check_keys(name: str, spec: dict) -> None:
    """A setting of another kind (e.g. dir: on an embedding method) is a mistake, not noise."""
    kind = get_kind(spec["kind"])
    for key in spec:
        if key not in kind.accepts:
            owners = [k for k, other in KINDS.items() if key in other.accepts]
            raise InputError(
                f"config methods.{name}.{key}",
                f"{key!r} is a setting of kind {' or '.join(owners)}, not of {kind.name}",
                f"Remove {key}: from {name}, or set kind: to {owners[0]}",
            )


def _unknown_kind(name: str, kind) -> None:
    """A method without a kind that its name does not give, or with a kind that is not one."""
    kinds = ", ".join(KINDS)
    if kind is None:
        raise InputError(
            f"config methods.{name}",
            f"has no kind: and {name!r} is not a built-in method name"
            f"{did_you_mean(name, DEFAULT_METHODS)}, so its kind is unknown",
            f"Add kind: (one of {kinds}), or use a built-in method name "
            f"({', '.join(DEFAULT_METHODS)})",
        )
    raise InputError(
        f"config methods.{name}.kind",
        f"unknown kind {kind!r}{did_you_mean(kind, KINDS)}",
        f"Use one of {kinds}",
    )


def active_methods(config: dict) -> tuple[dict[str, dict], dict[str, list]]:
    """The active methods' settings, defaults applied, and apart from them each one's
    thresholds: those reach the metrics jobs only, never a kind or the similarity side."""
    methods, thresholds = {}, {}
    for name, spec in (config.get("methods") or {}).items():
        spec = method_defaults(name, spec or {})
        if not spec.get("active", True):
            continue
        where = f"config methods.{name}"
        if not METHOD_NAME.fullmatch(name):
            raise InputError(where, "method name has unusable characters", "Rename the method")
        if spec.get("kind") not in KINDS:
            _unknown_kind(name, spec.get("kind"))
        if not spec.get("thresholds"):
            raise InputError(where, "has no thresholds", "Give thresholds: [0.5] or a list")
        _check_keys(name, spec)
        _check_thresholds(name, spec)
        if uses_calibrated(spec["thresholds"], spec):
            _check_calibrated(name, spec, config)
        if spec.get("scale") == "z" and not get_kind(spec["kind"]).within_set_matrices:
            raise InputError(
                f"{where}.scale",
                f"scale z needs within-set similarities, which a {spec['kind']} method lacks",
                "Use scale: cosine for this method",
            )
        thresholds[name] = spec.pop("thresholds")
        get_kind(spec["kind"]).check(name, spec)
        methods[name] = spec
    for name, spec in methods.items():
        get_kind(spec["kind"]).check_study(name, spec, methods)
    if not methods:
        raise InputError("config methods", "no method is active", "Set active: true on one")
    return methods, thresholds
