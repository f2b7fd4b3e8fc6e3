"""Coverage, width and containment of every set-level interval (metrics/intervals.py).

For each design (validate/designs.py) the population value of every metric is the mean of
the metric over `truth` independent draws; then `draws` further draws each get their
intervals, and coverage is the share of draws whose interval holds the population value.
A metric undefined in a draw (matched-similarity quartiles with no match) is left out of
that draw, and its population value is its mean over the draws where it is defined.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from themesim.metrics.coverage import _best_two, score_arrays
from themesim.metrics.distinctiveness import GAP_COLUMNS, _side_summary
from themesim.metrics.intervals import CI_METRICS, interval_table, metric_method
from themesim.validate.core import check_grid, interval_rows, rng_for, summary_frame
from themesim.validate.designs import THETA, grid

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
        _, best, second = _best_two(M)
        sides.append(_side_summary(best, best - second, t, "ge", gamma)[0])
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
    lo = np.empty((draws, len(CI_METRICS)))
    hi = np.empty_like(lo)
    est = np.empty_like(lo)
    methods = set()
    for i in range(draws):
        S, W_a, W_b = design.draw(rng)
        tab = interval_table(S, [theta], W_a=W_a, W_b=W_b)
        methods.add(tab["ci_method"].iloc[0])
        vals = tab.iloc[0][[f"{m}_ci_{e}" for m in CI_METRICS for e in ("low", "high")]]
        vals = vals.to_numpy(np.float64)
        lo[i], hi[i] = vals[0::2], vals[1::2]
        est[i] = estimates(S, theta)
    ok = ~(np.isnan(lo) | np.isnan(hi) | np.isnan(est))
    eps = 1e-9
    covered = (lo - eps <= truth) & (truth <= hi + eps)
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
                "metric": CI_METRICS,
                "population_value": truth,
                "draws": n_ok,
                "coverage": np.where(n_ok > 0, (covered & ok).sum(0) / np.maximum(n_ok, 1), np.nan),
                "mean_width": np.nanmean(np.where(ok, hi - lo, np.nan), axis=0),
                "contains_estimate": np.where(
                    n_ok > 0, (contains & ok).sum(0) / np.maximum(n_ok, 1), np.nan
                ),
                "zero_width_share": np.where(
                    n_ok > 0, ((hi - lo <= eps) & ok).sum(0) / np.maximum(n_ok, 1), np.nan
                ),
                "ci_method": " | ".join(sorted(methods)),
                "stress": design.stress,
            }
        )
    return out


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    size = SIZES[grid_name]
    from themesim.validate._parallel import starmap

    tasks = [(d, seed, size["truth"], size["draws"]) for d in grid(grid_name)]
    detail = pd.concat(starmap(measure, tasks), ignore_index=True)
    rows = []
    for r in detail.itertuples():
        if r.draws == 0:
            continue
        common = {"n_a": r.n_a, "n_b": r.n_b}
        if r.stress:
            common["required"] = False
        rows += interval_rows(
            AREA, r.design, r.metric, metric_method(r.metric), r.coverage, r.mean_width,
            r.contains_estimate, r.draws, nominal=LEVEL, **common,
        )  # fmt: skip
    return detail, summary_frame(rows)
