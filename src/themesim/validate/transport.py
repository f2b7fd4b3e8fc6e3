"""Transport: what the moved mass means, and the coverage of its intervals.

For each design the population values of ot_total_mass and ot_cost are their means over
`truth` draws; coverage is the share of `draws` further draws whose two-sample jackknife
interval (metrics/sets/transport.py) holds them. ot_mass_scaled is reported per design: about 0
for unrelated sets, rising with the share of matched themes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.metrics.sets.transport import (
    mass_references,
    transport_interval_columns,
    transport_summary,
    unbalanced_plan,
)
from themesim.validate.core import Scope, check_grid, interval_rows, rng_for, row, summary_frame
from themesim.validate.designs import Design

AREA = "transport"
SIZES = {"small": {"truth": 150, "draws": 100}, "full": {"truth": 2000, "draws": 1000}}
QUANTITIES = ["ot_total_mass", "ot_cost"]


def designs(grid_name: str) -> list[Design]:
    if grid_name == "small":
        return [
            Design("planted", 6, 6, 0.0),
            Design("planted", 8, 8, 0.5),
            Design("planted", 10, 10, 1.0),
            Design("topics", 8, 12, 0.6),
        ]
    out = [Design("planted", n, n, pi) for n in (6, 10, 20) for pi in (0.0, 0.5, 1.0)]
    out += [Design("topics", a, b, pi) for a, b in ((8, 12), (20, 20)) for pi in (0.3, 0.9)]
    return out + [Design("granular", 6, 14, 0.8), Design("noisy", 10, 10, 0.5)]


def _values(S):
    plan = unbalanced_plan(S)
    summary = transport_summary(plan, S)
    return plan, summary


def measure(design: Design, seed: int, truth: int, draws: int) -> pd.DataFrame:
    rng = rng_for(seed, AREA, design.name, "truth")
    pop = np.array([[_values(design.draw(rng)[0])[1][q] for q in QUANTITIES] for _ in range(truth)])
    pop = pop.mean(axis=0)
    rng = rng_for(seed, AREA, design.name, "draws")
    hits = np.zeros(len(QUANTITIES))
    width = np.zeros(len(QUANTITIES))
    contains = np.zeros(len(QUANTITIES))
    scaled, floors, ceilings = [], [], []
    for _ in range(draws):
        S = design.draw(rng)[0]
        plan, summary = _values(S)
        ci = transport_interval_columns(plan, S)
        for k, q in enumerate(QUANTITIES):
            lo, hi = ci[q]
            hits[k] += lo <= pop[k] <= hi
            width[k] += hi - lo
            contains[k] += lo <= summary[q] <= hi
        ref = mass_references(S, summary["ot_total_mass"])
        scaled.append(ref["ot_mass_scaled"])
        floors.append(ref["ot_mass_floor"])
        ceilings.append(ref["ot_mass_ceiling"])
    out = pd.DataFrame(
        {
            "design": design.name,
            "n_a": design.n_a,
            "n_b": design.n_b,
            "quantity": QUANTITIES,
            "population_value": pop,
            "draws": draws,
            "coverage": hits / draws,
            "mean_width": width / draws,
            "contains_estimate": contains / draws,
        }
    )
    out["ot_mass_scaled_mean"] = float(np.nanmean(scaled))
    out["ot_mass_floor_mean"] = float(np.mean(floors))
    out["ot_mass_ceiling_mean"] = float(np.mean(ceilings))
    return out


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    size = SIZES[grid_name]
    detail = pd.concat(
        [measure(d, seed, size["truth"], size["draws"]) for d in designs(grid_name)],
        ignore_index=True,
    )
    rows = []
    procedure = "two-sample jackknife-t"
    for r in detail.itertuples():
        rows += interval_rows(
            Scope(AREA, r.design, n_a=r.n_a, n_b=r.n_b), r.quantity, procedure, r.coverage,
            r.mean_width, r.contains_estimate, r.draws, nominal=0.95,
        )  # fmt: skip
    for design, g in detail.groupby("design", sort=False):
        r = g.iloc[0]
        rows.append(
            row(
                Scope(AREA, design, n_a=r.n_a, n_b=r.n_b),
                "ot_mass_scaled",
                "(mass - floor) / (ceiling - floor)",
                "mean_value",
                r.ot_mass_scaled_mean,
                int(r.draws),
                mc_se=np.nan,
            )
        )
    return detail, summary_frame(rows)
