"""The verdicts area of the suite: the probit model's designs (validate/verdicts.py) and the
ideas model's (validate/verdict_ideas.py) on each grid (validate/verdict_designs.py), at each
difference and route, and the segments route (validate/verdict_segments.py). Its own module
so the models import none of them."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from themesim.validate.core import check_grid, rng_for, summary_frame
from themesim.validate.verdict_designs import DIFFERENCES, GRIDS, IDEA_GRIDS, SEGMENT_GRIDS
from themesim.validate.verdict_ideas import Fixed, study
from themesim.validate.verdict_segments import segment_rows, simulate_segments
from themesim.validate.verdicts import (
    AREA,
    ROUTES,
    design_rows,
    equal_quality_rows,
    feasible,
    simulate,
)

PROBIT = "dyadic moments, probit"
IDEAS = "dyadic moments, ideas"


def _probit(grid: dict, seed: int):
    detail, rows = [], []
    for base in grid["designs"]:
        for diff in DIFFERENCES:
            d = replace(base, diff=diff)
            if not feasible(d):
                continue
            for route in ROUTES:
                sim = simulate(d, route, grid["draws"], rng_for(seed, AREA, route, d.name()))
                detail.append({"model": "probit", "route": route, "design": d.name()}
                              | vars(d) | sim)  # fmt: skip
                rows += design_rows(f"{route}:{d.name()}", d.themes, diff, sim, PROBIT)
    return detail, rows


def _studies(d, fixed: Fixed, shift: float, route: str):
    return lambda rng: study(d, fixed.data, fixed.held, shift, route, rng)


def _ideas(grid: dict, seed: int):
    """Each design's generator shift solved for each difference (its truth, by the mean of
    `truth_draws` studies); a difference no shift reaches is left out and listed. A design
    whose generator writes its own number of themes is also run at shift 0, the generator
    exactly as good as the analysts: its `better` and `worse` are errors there."""
    detail, rows = [], []
    for base in grid["designs"]:
        for route in ROUTES:
            fixed = Fixed(base, seed, route, grid["truth_draws"])
            reads = [(diff, fixed.solve(diff)) for diff in DIFFERENCES]
            if base.m != base.themes:
                reads.append((None, 0.0))
            for diff, shift in reads:
                d = replace(base, diff=0.0 if diff is None else diff)
                name = d.name() if diff is not None else d.name() + ",equal quality"
                if shift is None:
                    detail.append({"model": "ideas", "route": route, "design": name,
                                   "unreachable": True} | vars(d))  # fmt: skip
                    continue
                truth = diff if diff is not None else fixed.truth(0.0)
                sim = simulate(
                    d, route, grid["draws"], rng_for(seed, AREA, "ideas", route, name),
                    draw_study=_studies(d, fixed, shift, route), truth=truth,
                )  # fmt: skip
                detail.append({"model": "ideas", "route": route, "design": name,
                               "shift": shift} | vars(d) | sim)  # fmt: skip
                if diff is None:
                    rows += equal_quality_rows(f"{route}:{name}", d.themes, sim, IDEAS)
                else:
                    rows += design_rows(f"{route}:{name}", d.themes, diff, sim, IDEAS)
    return detail, rows


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    detail, rows = _probit(GRIDS[grid_name], seed)
    more, extra = _ideas(IDEA_GRIDS[grid_name], seed)
    detail += more
    rows += extra
    for d in SEGMENT_GRIDS[grid_name]:
        sim = simulate_segments(d, GRIDS[grid_name]["draws"], rng_for(seed, AREA, d.name()))
        detail.append({"model": "segments", "route": "segments", "design": d.name()}
                      | vars(d) | sim)  # fmt: skip
        rows += segment_rows(d, sim)
    return pd.DataFrame(detail), summary_frame(rows)
