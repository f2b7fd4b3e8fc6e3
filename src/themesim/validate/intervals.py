"""Coverage, width and containment of every set-level interval (metrics/intervals/intervals.py).

For each design (validate/designs.py) the population value of every metric is the mean of
the metric over `truth` independent draws; then `draws` further draws each get their
intervals, and coverage is the share of draws whose interval holds the population value.
A metric undefined in a draw (matched-similarity quartiles with no match) is left out of
that draw, and its population value is its mean over the draws where it is defined.

Designs with domain-correlated matches (validate/designs.py `domains`) pass their declared
groups (if any) to the intervals, and also measure each count's ICC sensitivity at the
design's true ICC (rows with `interval` icc). Without groups declared, the primary intervals
assume independent themes, which the design breaks: they are measured and shown, outside the
contract; the sensitivity at the true ICC is required there. With groups declared the
primary intervals are required and the sensitivity is shown.

A draw without a match at theta is flagged `no_match` at run time (metrics/contract.py: outside
the 95 % interval's contract, its worst case in `<count>_bound_low/_high`): there `coverage`
reads each count off its bound, as the flag tells a reader to. `coverage_95_every_draw` is the
95 % interval on every draw, flagged or not, shown as its own summary row (not required).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from themesim.metrics.intervals.intervals import (
    CI_METRICS,
    COUNT_METRICS,
    interval_table,
    metric_method,
)
from themesim.metrics.sets.coverage import best_two, score_arrays
from themesim.metrics.sets.distinctiveness import GAP_COLUMNS, side_summary
from themesim.validate.core import (
    COVERAGE_FLOOR,
    Scope,
    check_grid,
    interval_rows,
    rng_for,
    row,
    summary_frame,
)
from themesim.validate.designs import THETA, grid
from themesim.validate.parallel import starmap

AREA = "intervals"
LEVEL = 0.95
SIZES = {
    "small": {"truth": 1000, "draws": 200},
    "full": {"truth": 5000, "draws": 1000},
}


def estimates(S, theta: float = THETA, gamma: float = 0.15) -> np.ndarray:
    """CI_METRICS of one matrix at one threshold, in CI_METRICS order."""
    s = score_arrays(S, [theta])
    t = np.array([theta])
    sides = []
    for M in (S, S.T):
        _, best, second = best_two(M)
        sides.append(side_summary(best, best - second, t, "ge", gamma)[0])
    gaps = dict(zip(GAP_COLUMNS, np.concatenate(sides), strict=True))
    return np.array(
        [float(np.asarray(s[m] if m in s else gaps[m]).reshape(-1)[0]) for m in CI_METRICS]
    )


def measure(design, seed: int, truth_draws: int, draws: int) -> pd.DataFrame:
    """One row per metric: population value, coverage, mean width, containment."""
    rng = rng_for(seed, AREA, design.name, "truth")
    theta = design.theta
    truth = np.array([estimates(design.draw(rng)[0], theta) for _ in range(truth_draws)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # no match in any draw: NaN
        truth = np.nanmean(truth, axis=0)
    rng = rng_for(seed, AREA, design.name, "draws")
    icc = getattr(design, "icc", 0.0)
    groups_a, groups_b = design.groups() if hasattr(design, "groups") else (None, None)
    metrics = list(CI_METRICS) + (list(COUNT_METRICS) if icc else [])
    kinds = ["ci"] * len(CI_METRICS) + (["icc"] * len(COUNT_METRICS) if icc else [])
    cols = [f"{m}_{k}_{e}" for m, k in zip(metrics, kinds, strict=True) for e in ("low", "high")]
    pos = [CI_METRICS.index(m) for m in metrics]
    truth = truth[pos]
    # where a row is flagged no_match (metrics/contract.py), a count is read off its bound
    is_count = [k == "ci" and m in COUNT_METRICS for m, k in zip(metrics, kinds, strict=True)]
    bound_cols = []
    for i, (m, c) in enumerate(zip(metrics, is_count, strict=True)):
        bound_cols += [f"{m}_bound_low", f"{m}_bound_high"] if c else cols[2 * i : 2 * i + 2]
    lo = np.empty((draws, len(metrics)))
    hi = np.empty_like(lo)
    est = np.empty_like(lo)
    raw_lo, raw_hi = np.empty_like(lo), np.empty_like(lo)
    no_match = np.zeros(draws, dtype=bool)
    methods = set()
    k_pairs = CI_METRICS.index("n_match_pairs")
    for i in range(draws):
        S = design.draw(rng)[0]
        tab = interval_table(S, [theta], groups_a=groups_a, groups_b=groups_b, icc=icc or None)
        methods.add(tab["ci_method"].iloc[0])
        vals = tab.iloc[0][cols].to_numpy(np.float64)
        raw_lo[i], raw_hi[i] = vals[0::2], vals[1::2]
        e = estimates(S, theta)
        no_match[i] = e[k_pairs] == 0
        if no_match[i]:
            vals = tab.iloc[0][bound_cols].to_numpy(np.float64)
        lo[i], hi[i] = vals[0::2], vals[1::2]
        est[i] = e[pos]
    ok = ~(np.isnan(lo) | np.isnan(hi) | np.isnan(est))
    eps = 1e-9
    covered = (lo - eps <= truth) & (truth <= hi + eps)
    raw_covered = (raw_lo - eps <= truth) & (truth <= raw_hi + eps)
    contains = (lo - eps <= est) & (est <= hi + eps)
    n_ok = ok.sum(axis=0)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = pd.DataFrame(
            {
                "design": design.name,
                "kind": design.kind,
                "n_a": design.n_a,
                "n_b": design.n_b,
                "metric": metrics,
                "interval": kinds,
                "population_value": truth,
                "draws": n_ok,
                "coverage": np.where(n_ok > 0, (covered & ok).sum(0) / np.maximum(n_ok, 1), np.nan),
                # the 95 % interval on every draw, flagged no_match or not (shown)
                "coverage_95_every_draw": np.where(
                    n_ok > 0, (raw_covered & ok).sum(0) / np.maximum(n_ok, 1), np.nan
                ),
                "no_match_share": float(no_match.mean()),
                "mean_width": np.nanmean(np.where(ok, hi - lo, np.nan), axis=0),
                "contains_estimate": np.where(
                    n_ok > 0, (contains & ok).sum(0) / np.maximum(n_ok, 1), np.nan
                ),
                "zero_width_share": np.where(
                    n_ok > 0, ((hi - lo <= eps) & ok).sum(0) / np.maximum(n_ok, 1), np.nan
                ),
                "ci_method": " | ".join(sorted(methods)),
                "stress": design.stress,
                "icc": icc,
                "groups": groups_a is not None,
            }
        )
    return out


def run(grid_name: str, seed: int, designs=None, size: dict | None = None):
    """(detail, summary) of the grid's designs (or of `designs`) at the grid's size (or at
    `size`, {"truth": ..., "draws": ...})."""
    check_grid(grid_name)
    size = size or SIZES[grid_name]

    designs = grid(grid_name) if designs is None else designs
    tasks = [(d, seed, size["truth"], size["draws"]) for d in designs]
    detail = pd.concat(starmap(measure, tasks), ignore_index=True)
    return detail, summarise(detail)


def summarise(detail: pd.DataFrame) -> pd.DataFrame:
    """The summary rows (validate/core.py) of measure()'s detail rows."""
    rows = []
    for r in detail.itertuples():
        if r.draws == 0:
            continue
        procedure = metric_method(r.metric)
        if r.interval == "icc":
            procedure = f"clopper-pearson at design effect 1 + (c - 1) icc, icc {r.icc:g}"
        # undeclared domain correlation breaks the primary interval's model (themes
        # independent): shown, and the sensitivity at the true ICC is required instead
        primary_outside = r.icc > 0 and not r.groups
        shown = r.stress or (r.interval == "icc") == (not primary_outside)
        at = Scope(AREA, r.design, n_a=r.n_a, n_b=r.n_b, required=False if shown else None)
        rows += interval_rows(
            at, r.metric, procedure, r.coverage, r.mean_width, r.contains_estimate, r.draws,
            nominal=LEVEL,
        )  # fmt: skip
        if r.no_match_share > 0 and r.interval == "ci" and r.metric in COUNT_METRICS:
            # the rows above read a count off its bound where no match is seen (the run-time
            # flag no_match); the 95 % interval on those draws too, shown
            rows.append(
                row(
                    replace(at, required=False), r.metric,
                    f"{procedure} (95 % interval also where no_match)", "coverage",
                    r.coverage_95_every_draw, r.draws, nominal=LEVEL,
                )
            )  # fmt: skip
    return summary_frame(rows)


def design_table(summary: pd.DataFrame) -> str:
    """One markdown line per design of the area: its coverage rows (required ones, how many
    miss 0.93 beyond two Monte Carlo standard errors, the lowest) and its contains-the-estimate
    rows, counted apart; shown rows (not required) in a column of their own."""
    s = summary[summary["area"] == AREA]
    lines = [
        f"Coverage certified at {COVERAGE_FLOOR} (each row within two Monte Carlo standard "
        f"errors); every interval printed at {LEVEL:.0%}.",
        "",
        "| design | coverage rows required | failing | lowest required | contains-estimate "
        "rows required | failing | coverage rows shown | lowest shown |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for design, g in s.groupby("design", sort=False):
        req = g["required"].astype(bool)
        cov, con = g["property"].eq("coverage"), g["property"].eq("contains_estimate")
        fail = g["passes"].notna() & ~g["passes"].fillna(True).astype(bool)
        shown = cov & ~req

        def low(mask, g=g):
            return f"{g.loc[mask, 'value'].min():.3f}" if mask.any() else "–"

        lines.append(
            f"| {design} | {(cov & req).sum()} | {(cov & fail).sum()} | {low(cov & req)} | "
            f"{(con & req).sum()} | {(con & fail).sum()} | {shown.sum()} | {low(shown)} |"
        )
    failing = s[s["passes"].notna() & ~s["passes"].fillna(True).astype(bool)]
    if len(failing):
        lines += ["", "Failures:", ""]
        lines += [
            f"- {r.design} {r.quantity} {r.property} {r.value:.3f} "
            f"(se {r.mc_se:.3f}, {r.draws} draws)"
            for r in failing.itertuples()
        ]
    return "\n".join(lines) + "\n"
