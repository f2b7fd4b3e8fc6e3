"""What every part of the validation suite shares: grids, the summary row, Monte Carlo error.

Each area (intervals, nulls, grounding, calibration, transport, z scale, judge noise, demo
recovery, equivalence) is a module of this package with one function
`run(grid: str, seed: int) -> (detail, summary)`: `detail` is the area's own table
(results/validation/{area}.csv), `summary` rows in SUMMARY_COLUMNS, one per measured property,
which `themesim validate` gathers into results/validation/summary.csv and docs/validity.md
quotes. Every draw comes from numpy.random.default_rng seeded from (seed, area, design), so a
rerun gives the same bytes.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

GRIDS = ("small", "full")

SUMMARY_COLUMNS = [
    "area",
    "design",
    "n_a",
    "n_b",
    "quantity",  # the metric or test measured
    "procedure",  # the interval method (ci_method) or test
    "property",  # coverage, mean_width, contains_estimate, type1_error, fdr, power, ...
    "nominal",  # the level the property is held against (0.95, alpha, ...); NaN if none
    "value",
    "mc_se",  # Monte Carlo standard error of value
    "draws",
    "required",  # True where the contract applies (sets of 6 or more themes)
    "passes",  # value meets nominal within Monte Carlo error; NaN where not required
]

# Sets smaller than this are measured and shown, but the contract does not bind them.
MIN_CONTRACT_SIZE = 6
# Nominal coverage 0.95 is held at this floor (METRICS.md "Intervals").
COVERAGE_FLOOR = 0.93
# Properties judged against a level: a row of one needs a finite nominal.
JUDGED_AGAINST_NOMINAL = ("coverage", "type1_error", "fdr", "coverage_tost_level")
# A verdict's (1 - 2 alpha) interval is read for its words at both ends: it should cover
# near its level, neither below (errors) nor far above it (lost power). The upper end holds
# for the verdicts' interval only: an exact interval of one comparison's paired counts
# (the equivalence area) is discrete and covers above its level at small n by construction.
TOST_BAND = (0.88, 0.94)
BANDED_AREAS = ("verdicts",)


def check_grid(grid: str) -> str:
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {GRIDS}, got {grid!r}")
    return grid


def rng_for(seed: int, *parts) -> np.random.Generator:
    """A generator for one design: the same (seed, parts) always gives the same draws."""
    key = "\x1f".join(str(p) for p in (seed, *parts)).encode()
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))


def proportion_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / n) if n else float("nan")


@dataclass(frozen=True)
class Scope:
    """Where a summary row was measured: the area, the design and its set sizes (None where
    the design has no such size); required: whether the contract binds it (None: sets of
    MIN_CONTRACT_SIZE themes or more; False: a stress design, measured and shown outside the
    contract, docs/validity.md says why)."""

    area: str
    design: str
    n_a: int | None = None
    n_b: int | None = None
    required: bool | None = None


def interval_rows(
    at: Scope, quantity, procedure, coverage, mean_width, contains, draws, *, nominal: float
) -> list[dict]:
    """The three rows of one interval on one design: coverage of `nominal`, mean width
    (no MC se) and the share of intervals that contain their estimate (required: 1)."""
    return [
        row(at, quantity, procedure, "coverage", coverage, draws, nominal=nominal),
        row(at, quantity, procedure, "mean_width", mean_width, draws, mc_se=np.nan),
        row(at, quantity, procedure, "contains_estimate", contains, draws, nominal=1.0,
            mc_se=0.0),
    ]  # fmt: skip


def draw_interval_rows(at: Scope, quantity, procedure, draws) -> list[dict]:
    """The coverage, mean width (with its Monte Carlo se) and contains-estimate rows of one
    interval from its draws: a frame with ci_low, ci_high, truth and estimate per draw."""
    lo, hi = draws["ci_low"], draws["ci_high"]
    inside = (lo <= draws["truth"]) & (draws["truth"] <= hi)
    holds = (lo <= draws["estimate"]) & (draws["estimate"] <= hi)
    width = hi - lo
    n = len(draws)
    return [
        row(at, quantity, procedure, "coverage", float(inside.mean()), n, nominal=0.95),
        row(at, quantity, procedure, "mean_width", float(width.mean()), n,
            mc_se=float(width.std(ddof=1) / np.sqrt(n))),
        row(at, quantity, procedure, "contains_estimate", float(holds.mean()), n),
    ]  # fmt: skip


def row(
    at: Scope,
    quantity: str,
    procedure: str,
    prop: str,
    value: float,
    draws: int,
    *,
    nominal: float = float("nan"),
    mc_se: float | None = None,
) -> dict:
    """One summary row; `passes` is judged for coverage (>= COVERAGE_FLOOR, within 2 MC se),
    type-I error and FDR (<= nominal, within 2 MC se) and contains_estimate (== 1) where
    the sets are large enough for the contract (Scope's required). A coverage, type-I error
    or FDR row without a finite nominal is refused (ValueError): NaN would compare False and
    mark a type-I error failed, or leave a row unjudged, without saying so."""
    area, design, n_a, n_b, required = at.area, at.design, at.n_a, at.n_b, at.required
    if prop in JUDGED_AGAINST_NOMINAL and not np.isfinite(nominal):
        raise ValueError(
            f"{area}/{design}/{quantity}: a {prop} row needs a finite nominal level, "
            f"got {nominal!r}"
        )
    if mc_se is None:
        mc_se = proportion_se(value, draws) if 0 <= value <= 1 else float("nan")
    small = min(x for x in (n_a, n_b) if x is not None) if (n_a or n_b) else None
    if required is None:
        required = small is None or small >= MIN_CONTRACT_SIZE
    passes: float | bool = float("nan")
    if required and np.isfinite(value):
        slack = 2 * (mc_se if np.isfinite(mc_se) else 0.0)
        if prop == "coverage":
            passes = bool(value + slack >= COVERAGE_FLOOR)
        elif prop in ("type1_error", "fdr"):
            passes = bool(value - slack <= nominal)
        elif prop == "coverage_tost_level":
            high = TOST_BAND[1] + slack if area in BANDED_AREAS else 1.0
            passes = bool(TOST_BAND[0] - slack <= value <= high)
        elif prop == "contains_estimate":
            passes = bool(value == 1.0)
    return {
        "area": area,
        "design": design,
        "n_a": n_a if n_a is not None else np.nan,
        "n_b": n_b if n_b is not None else np.nan,
        "quantity": quantity,
        "procedure": procedure,
        "property": prop,
        "nominal": nominal,
        "value": value,
        "mc_se": mc_se,
        "draws": draws,
        "required": required,
        "passes": passes,
    }


def summary_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
