"""The verdicts with the margin read from the analysts' spread (metrics/verdicts/analyst_margin.py):
their error at the true margin and the bound's own error, on the verdict designs
(validate/verdicts.py) with three or more analysts.

The true margin of a design is the SD over comparators c ~ N(0, sd_analyst) of an
analyst's agreement on the route's scale (Gauss-Hermite quadrature over c, every other
factor at its distribution), the population value of what the bound estimates. Each design
is run at differences -margin, 0 and +margin: `equivalent` at either margin and
`non-inferior` (or better) at -margin are errors, the bound above the true margin is the
bound's error, and `equivalent` at 0 is the power a margin this small leaves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from themesim.metrics.verdicts.analyst_margin import MARGIN_ANALYSTS
from themesim.validate.core import row
from themesim.validate.verdicts import (
    ALPHA,
    AREA,
    ROUTES,
    Design,
    random_factors,
    sd_domain,
    simulate,
    solve,
)

# Written before the verdict read its margin from the analysts on any of them: 3-5
# analysts, analyst spreads from the suite's default (0.3) to wide, a ceiling design and
# declared domains.
MARGIN_DESIGNS = [
    Design(themes=10, runs=3, analysts=3, p_h=0.7, sd_analyst=0.8),
    Design(themes=12, runs=1, analysts=4, p_h=0.65, sd_analyst=0.6),
    Design(themes=15, runs=5, analysts=4, p_h=0.8, sd_analyst=0.5, icc=0.16),
    Design(themes=8, runs=2, analysts=3, p_h=0.6, sd_analyst=1.0, icc=0.64, groups=True),
    Design(themes=14, runs=3, analysts=5, p_h=0.75, sd_analyst=0.3),
    Design(themes=10, runs=3, analysts=3, p_h=0.85, sd_analyst=0.6),
]
MARGIN_GRIDS = {"small": MARGIN_DESIGNS[:2], "full": MARGIN_DESIGNS}


def true_margin(d: Design, route: str) -> float:
    """The SD over comparators of an analyst's agreement (the module docstring)."""
    from scipy.special import ndtr

    rand = random_factors(d)
    var_h = 1 + d.sd_theme**2 + d.sd_analyst**2 + d.sd_reference**2
    var_h += sd_domain(d) ** 2 if rand["domains"] else 0.0
    mu = solve(d.p_h, np.zeros(1), var_h, route)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    extra = 1.0 if route == "strength" else 0.0
    g = ndtr((mu + d.sd_analyst * x) / np.sqrt(var_h - d.sd_analyst**2 + extra))
    return float(np.sqrt((w * (g - (w * g).sum()) ** 2).sum()))


def simulate_margin(d: Design, route: str, draws: int, rng, truth: float, alpha=ALPHA) -> dict:
    """P(each verdict) with the margin each draw's analysts give, and P(bound > truth)."""
    return simulate(d, route, draws, rng, margin=MARGIN_ANALYSTS, alpha=alpha, true_margin=truth)


def margin_rows(grid_name: str, seed: int, draws: int):
    """(detail, rows) of the margin designs of a grid (validate/verdicts.py's run)."""
    from themesim.validate.core import rng_for

    detail, rows = [], []
    for base in MARGIN_GRIDS[grid_name]:
        for route in ROUTES:
            m = true_margin(base, route)
            for sign in (-1.0, 0.0, 1.0):
                d = replace(base, diff=sign * m)
                name = f"{route}:{base.name()},margin=analysts,d={sign:+g}margin"
                sim = simulate_margin(d, route, draws, rng_for(seed, AREA, name), m)
                detail.append({"route": route, "design": name} | vars(d) | sim)
                procedure = f"crossed jackknife, {route}, margin from the analysts"

                def err(quantity, value, sim=sim, name=name, procedure=procedure, d=d):
                    return row(AREA, name, quantity, procedure, "type1_error", value,
                               sim["draws"], n_a=d.themes, nominal=ALPHA)  # fmt: skip

                if sign != 0:
                    rows.append(err("verdict equivalent", sim["p_equivalent"]))
                if sign < 0:
                    above = sim["p_non-inferior"] + sim["p_better"]
                    rows.append(err("verdict non-inferior or better", above))
                if sign == 0:
                    # the bound's own error (a Satterthwaite chi^2 reading): shown; the
                    # verdicts' errors above are what it must keep
                    rows.append(row(AREA, name, "margin bound above the true margin", procedure,
                                    "type1_error", sim["p_bound_above"], sim["draws"],
                                    n_a=d.themes, nominal=ALPHA, required=False))  # fmt: skip
                    rows.append(row(AREA, name, "verdict equivalent", procedure, "power",
                                    sim["p_equivalent"], sim["draws"], n_a=d.themes))  # fmt: skip
    return detail, rows
