"""The verdicts area of the suite: the model's designs (validate/verdicts.py) on each grid
(validate/verdict_designs.py) at each difference and route, the segments route
(validate/verdict_segments.py) and the margin read from the analysts
(validate/verdict_margin.py). Its own module so the model imports none of them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from themesim.validate.core import check_grid, rng_for, summary_frame
from themesim.validate.verdict_designs import DIFFERENCES, GRIDS, SEGMENT_GRIDS
from themesim.validate.verdict_margin import margin_rows
from themesim.validate.verdict_segments import segment_rows, simulate_segments
from themesim.validate.verdicts import AREA, POWER_DIFF, ROUTES, design_rows, feasible, simulate


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    g = GRIDS[grid_name]
    detail, rows = [], []
    for base in g["designs"]:
        for diff in DIFFERENCES:
            d = replace(base, diff=diff)
            if not feasible(d):
                continue
            # at the power point, the strength route also reads the generator whose matched
            # agreement is 0.3 below: both routes on one generator, not each on its own scale
            reads = [(r, r) for r in ROUTES]
            reads += [("strength", "matched")] if np.isclose(diff, POWER_DIFF) else []
            for route, scale in reads:
                label = route if scale == route else f"{route}@{scale}"
                sim = simulate(d, route, g["draws"], rng_for(seed, AREA, label, d.name()),
                               scale=scale)  # fmt: skip
                detail.append({"route": label, "design": d.name()} | vars(d) | sim)
                rows += design_rows(d, label, sim)
    for d in SEGMENT_GRIDS[grid_name]:
        sim = simulate_segments(d, g["draws"], rng_for(seed, AREA, d.name()))
        detail.append({"route": "segments", "design": d.name()} | vars(d) | sim)
        rows += segment_rows(d, sim)
    more, extra = margin_rows(grid_name, seed, g["draws"])
    detail += more
    rows += extra
    return pd.DataFrame(detail), summary_frame(rows)
