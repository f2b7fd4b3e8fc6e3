"""The verdicts of a generator against human analysts (metrics/crossed.py): their error at
the margin and their power, on crossed designs of themes, runs and analysts
(docs/verdicts.md, docs/validity.md).

A design draws K analysts, each with n reference themes, and R runs of one generator. Each
comparator j (another analyst, or a run) meets reference theme t of analyst r through a
latent strength

    y = mu_type + c_j + w_r + u_rt + v_(domain, type) + e,    e ~ N(0, 1),

c_j: the comparator (run-to-run or analyst-to-analyst), w_r: the reference analyst's way of
writing themes, u_rt: how findable the theme is (shared by every comparator: the pairing),
v: a domain effect per type (an LLM that misses a whole domain; the analysts' own), with
the domains' intraclass correlation icc = var(v) / (var(v) + var(u) + 1). The routes:

- `matched`: 1 when y > 0 (a one-to-one partner at the threshold), else 0;
- `strength`: Phi(y), a continuous strength on [0, 1] (a calibrated P(match)), matched
  when above 0.5.

mu_type is solved so that the route's human-human agreement is p_h and the difference is
`diff` exactly (probit closed forms), so every row knows its truth. Themes are dealt to
`domains` domains in turn, the same domains for every analyst (they code the same data).
The designs below were written before the procedure was run on them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from themesim.metrics.crossed import MIN_RANDOM_RUNS, VERDICTS, crossed_difference, word
from themesim.validate.core import check_grid, rng_for, row, summary_frame

AREA = "verdicts"
MARGIN = 0.10
ALPHA = 0.05
ROUTES = ("matched", "strength")
POWER_DIFF = -0.30


@dataclass(frozen=True)
class Design:
    themes: int = 10  # reference themes per analyst
    runs: int = 3
    analysts: int = 3
    p_h: float = 0.7  # human-human agreement on the route's scale
    diff: float = 0.0  # generator minus human-human, on the route's scale
    icc: float = 0.0  # domain intraclass correlation of the latent strengths
    domains: int = 4
    groups: bool = False  # the domains declared (a `group` column) or not
    sd_theme: float = 0.8
    sd_run: float = 0.3
    sd_analyst: float = 0.3
    sd_reference: float = 0.3

    def name(self) -> str:
        return (
            f"n={self.themes},R={self.runs},K={self.analysts},p_h={self.p_h:g},"
            f"d={self.diff:+.2f},icc={self.icc:g}" + (",groups" if self.groups else "")
            + "".join(f",{k}={getattr(self, k):g}" for k, v in _DEFAULTS.items()
                      if getattr(self, k) != v)
        )  # fmt: skip


# the model's settings a design name shows only where they differ from these defaults
_DEFAULTS = {
    f.name: f.default
    for f in fields(Design)
    if f.name in ("domains", "sd_theme", "sd_run", "sd_analyst", "sd_reference")
}


def _sd_domain(d: Design) -> float:
    return float(np.sqrt(d.icc * (d.sd_theme**2 + 1) / (1 - d.icc))) if d.icc > 0 else 0.0


def random_factors(d: Design) -> dict:
    """Which factors the estimand averages over (the interval's `covers`): runs from 3,
    analysts from 3, domains when declared; the others are held at the study's own."""
    return {"runs": d.runs >= MIN_RANDOM_RUNS, "analysts": d.analysts >= 3, "domains": d.groups}


def _agreement(mu, shift, var, route) -> float:
    """Mean over cells of P(matched) or E Phi(Y), Y ~ N(mu + shift, var)."""
    from scipy.special import ndtr  # the normal cdf without scipy.stats' per-call cost

    extra = 1.0 if route == "strength" else 0.0
    return float(ndtr((mu + shift) / np.sqrt(var + extra)).mean())


def _solve(target, shift, var, route) -> float | None:
    """The mu whose agreement over the cells is target, or None outside (0, 1)."""
    from scipy.optimize import brentq

    if not 0 < target < 1:
        return None
    return float(brentq(lambda m: _agreement(m, shift, var, route) - target, -60, 60))


def draw(d: Design, route: str, rng, scale: str | None = None):
    """(gen, hum, clusters, truth) of one simulated study: the inputs of crossed_difference
    and the true difference given the factors the estimand holds fixed; None when the
    design's agreement leaves (0, 1) for this draw. scale: the route whose agreements p_h and
    p_h + diff are (default: `route`), so that both routes can be read off one generator."""
    scale = scale or route
    from scipy.special import ndtr

    k, n, runs = d.analysts, d.themes, d.runs
    rand = random_factors(d)
    sd_v = _sd_domain(d)
    domain = np.arange(n) % d.domains
    v_g = rng.normal(0, sd_v, d.domains)[domain]
    v_h = rng.normal(0, sd_v, d.domains)[domain]
    c_run = rng.normal(0, d.sd_run, runs)
    c_an = rng.normal(0, d.sd_analyst, k)
    w = rng.normal(0, d.sd_reference, k)
    # the truth: cells (reference analyst, theme, comparator) with the fixed factors' shifts
    var_g = 1 + d.sd_theme**2 + (sd_v**2 if rand["domains"] else 0.0)
    var_h = var_g
    var_g += d.sd_run**2 if rand["runs"] else 0.0
    var_h += d.sd_analyst**2 + d.sd_reference**2 if rand["analysts"] else 0.0
    var_g += d.sd_reference**2 if rand["analysts"] else 0.0
    fixed_v_g = 0.0 if rand["domains"] else v_g
    fixed_v_h = 0.0 if rand["domains"] else v_h
    shift_g, shift_h = [], []
    for r in range(k):
        ref = 0.0 if rand["analysts"] else w[r]
        run = 0.0 if rand["runs"] else c_run
        shift_g.append((ref + fixed_v_g + np.zeros(n))[:, None] + run + np.zeros((n, runs)))
        others = np.delete(np.arange(k), r)
        an = 0.0 if rand["analysts"] else c_an[others]
        shift_h.append((ref + fixed_v_h + np.zeros(n))[:, None] + an + np.zeros((n, k - 1)))
    shift_g, shift_h = (
        np.concatenate([s.ravel() for s in shift_g]),
        np.concatenate([s.ravel() for s in shift_h]),
    )
    mu_h = _solve(d.p_h, shift_h, var_h, scale)
    mu_g = _solve(d.p_h + d.diff, shift_g, var_g, scale)
    if mu_h is None or mu_g is None:
        return None
    truth = d.diff
    if scale != route:
        truth = _agreement(mu_g, shift_g, var_g, route) - _agreement(mu_h, shift_h, var_h, route)
    gen, hum, clusters = [], [], []
    for r in range(k):
        u = rng.normal(0, d.sd_theme, n)
        base = (w[r] + u)[:, None]
        yg = mu_g + c_run[None, :] + base + v_g[:, None] + rng.normal(0, 1, (n, runs))
        yh = mu_h + c_an[None, :] + base + v_h[:, None] + rng.normal(0, 1, (n, k))
        sg, sh = (yg > 0, yh > 0) if route == "matched" else (ndtr(yg), ndtr(yh))
        sh = sh.astype(np.float64)
        sh[:, r] = np.nan
        gen.append(sg.astype(np.float64))
        hum.append(sh)
        clusters.append(domain if d.groups else r * n + np.arange(n))
    return gen, hum, clusters, truth


def feasible(d: Design) -> bool:
    return 0 < d.p_h < 1 and 0 < d.p_h + d.diff < 1


def simulate(
    d: Design,
    route: str,
    draws: int,
    rng,
    margin=MARGIN,
    alpha=ALPHA,
    scale=None,
    true_margin: float | None = None,
) -> dict:
    """P(each verdict), the (1 - 2 alpha) interval's coverage and mean width over draws.
    margin "analysts": each draw's own, from three analysts on (metrics.analyst_margin),
    below three MARGIN; with the design's true_margin also P(that margin above it) and the
    margins' mean (validate/verdict_margin.py)."""
    from themesim.metrics.analyst_margin import MARGIN_ANALYSTS, analysts_spread

    counts = dict.fromkeys(VERDICTS, 0)
    covered, width = 0, 0.0
    done, margins = 0, []
    for _ in range(draws):
        one = draw(d, route, rng, scale)
        if one is None:  # this draw's fixed factors put the agreement out of (0, 1)
            continue
        gen, hum, clusters, truth = one
        res = crossed_difference(gen, hum, clusters, alpha=alpha)
        m = margin
        if margin == MARGIN_ANALYSTS:
            low = analysts_spread(hum, alpha)[1]
            m = low if np.isfinite(low) else MARGIN
            margins.append(m)
        counts[word(res, m)] += 1
        covered += res.ci_low <= truth <= res.ci_high
        width += res.ci_high - res.ci_low
        done += 1
    draws = max(done, 1)
    out = {f"p_{k}": v / draws for k, v in counts.items()}
    # a claim the verdict words make: worse/better wholly below/above 0, non-inferior above
    # -margin (better and equivalent also say so)
    out["p_below_0"] = out["p_worse"]
    out["p_above_minus_margin"] = out["p_non-inferior"] + out["p_better"]
    if true_margin is not None:
        out |= {
            "p_bound_above": float(np.sum(np.array(margins) > true_margin)) / draws,
            "mean_margin": float(np.mean(margins)) if margins else float("nan"),
            "true_margin": true_margin,
        }
    return out | {"coverage": covered / draws, "mean_width": width / draws, "draws": draws}


def power(
    d: Design, route: str, draws: int = 400, seed: int = 0, margin=MARGIN, alpha=ALPHA
) -> dict:
    """P(each verdict) at one design (the study planner, `themesim power`): the suite's own
    draws for the same design, seed and number of draws."""
    if not feasible(d):
        raise ValueError(
            f"agreements {d.p_h:g} and {d.p_h + d.diff:g} must lie strictly between 0 and 1"
        )
    rng = rng_for(seed, AREA, route, d.name())
    return simulate(d, route, draws, rng, margin=margin, alpha=alpha)


# Written before the procedure was run on any of them (docs/validity.md, "verdicts").
GRIDS = {
    "small": {
        "designs": [
            Design(themes=10, runs=3, analysts=3, p_h=0.7),
            Design(themes=8, runs=1, analysts=2, p_h=0.8),
            Design(themes=15, runs=5, analysts=4, p_h=0.6, icc=0.16),
            Design(themes=12, runs=3, analysts=3, p_h=0.7, icc=0.64, groups=True),
        ],
        "draws": 300,
    },
    "full": {
        "designs": [
            Design(themes=n, runs=r, analysts=k, p_h=p, icc=icc, groups=g)
            for n in (8, 10, 15)
            for r in (1, 3, 5)
            for k in (2, 3, 4)
            for p in (0.6, 0.8)
            for icc, g in ((0.0, False), (0.16, False), (0.16, True), (0.64, True))
        ],
        "draws": 400,
    },
}
# Written after the analyst part and the cell-noise intersection changed (docs/verdicts.md):
# other variance parts, sizes and domain counts than the designs above.
AFTER = [
    Design(themes=12, runs=2, analysts=3, p_h=0.65, sd_theme=1.2, sd_run=0.6, sd_analyst=0.5),
    Design(themes=9, runs=4, analysts=5, p_h=0.75, sd_run=0.1, sd_analyst=0.6, sd_reference=0.6),
    Design(themes=14, runs=3, analysts=3, p_h=0.5, icc=0.3, domains=3, sd_run=0.5),
    Design(themes=11, runs=5, analysts=4, p_h=0.7, icc=0.5, domains=5, groups=True),
    Design(themes=20, runs=1, analysts=3, p_h=0.85, sd_theme=0.5, sd_analyst=0.2),
    Design(themes=8, runs=2, analysts=2, p_h=0.6, sd_run=0.8),
]
# Written after one set against two analysts with declared groups took the design effect
# (metrics/crossed.py, _one_set_two_analysts), before it was run on them.
AFTER_GROUPS = [
    Design(themes=12, runs=1, analysts=2, p_h=0.75, icc=0.3, domains=3, groups=True),
    Design(themes=9, runs=1, analysts=2, p_h=0.85, icc=0.5, domains=5, groups=True),
    Design(
        themes=14, runs=1, analysts=2, p_h=0.65, icc=0.16, domains=6, groups=True, sd_theme=1.0
    ),  # fmt: skip
    Design(themes=10, runs=1, analysts=2, p_h=0.7, icc=0.64, domains=2, groups=True),
]
# Written after the word was withheld below MIN_GROUPS declared groups, before being run.
AFTER_GROUPS += [
    Design(themes=15, runs=3, analysts=3, p_h=0.8, icc=0.5, domains=7, groups=True),
    Design(themes=12, runs=1, analysts=3, p_h=0.85, icc=0.64, domains=6, groups=True),
    Design(themes=13, runs=2, analysts=2, p_h=0.6, icc=0.16, domains=8, groups=True),
]
# Written for one set against two analysts without groups (the pooled paired table), which
# no design after its adoption had: before being run.
AFTER_POOLED = [
    Design(themes=9, runs=1, analysts=2, p_h=0.75),
    Design(themes=14, runs=1, analysts=2, p_h=0.55, sd_theme=1.1, sd_reference=0.5),
    Design(themes=12, runs=1, analysts=2, p_h=0.85, icc=0.3, domains=3),
]
# Written after two runs were taken as fixed (the run part from three runs on,
# metrics.crossed.MIN_RANDOM_RUNS), before being run: two runs with small to large spreads,
# and three runs with a large one (the fewest the run part is read from).
AFTER_RUNS = [
    Design(themes=10, runs=2, analysts=3, p_h=0.7, sd_run=0.6),
    Design(themes=14, runs=2, analysts=2, p_h=0.75, icc=0.16, sd_run=1.0),
    Design(themes=9, runs=2, analysts=4, p_h=0.55, sd_theme=1.1, sd_run=0.4),
    Design(themes=12, runs=3, analysts=2, p_h=0.65, sd_run=0.8),
]
# Written after each part of the interval was read at its own t quantile (Banerjee's form,
# metrics/crossed.py), before being run: large run and analyst spreads at 3-5 runs and 3-4
# analysts, and the ceiling.
AFTER_COMBINE = [
    Design(themes=11, runs=4, analysts=3, p_h=0.75, sd_run=0.9),
    Design(themes=13, runs=3, analysts=4, p_h=0.6, icc=0.16, sd_analyst=0.7),
    Design(themes=8, runs=5, analysts=2, p_h=0.8, sd_theme=1.0, sd_run=0.6),
    Design(themes=15, runs=3, analysts=3, p_h=0.85, sd_run=0.5, sd_analyst=0.5),
]
# Written after the interval on [0, 1] took each side's score limits where a side sits near
# a bound (metrics/crossed.py, _bounded_sides), before being run: floors and ceilings with
# runs, analysts, declared groups and wide theme spreads.
AFTER_BOUNDED = [
    Design(themes=10, runs=3, analysts=3, p_h=0.2),
    Design(themes=13, runs=5, analysts=2, p_h=0.88),
    Design(themes=8, runs=1, analysts=4, p_h=0.87, icc=0.16),
    Design(themes=15, runs=2, analysts=3, p_h=0.8, icc=0.3, domains=5, groups=True, sd_theme=0.5),
    Design(themes=11, runs=3, analysts=4, p_h=0.15, sd_analyst=0.6),
    Design(themes=9, runs=1, analysts=2, p_h=0.9, sd_theme=1.2),
]
# Written after the analyst part was clipped once as a whole (metrics/crossed.py), before
# being run: analyst and reference spreads from none to large, at 3-4 analysts.
AFTER_ANALYSTS = [
    Design(themes=9, runs=3, analysts=3, p_h=0.7, sd_theme=1.1, sd_analyst=0.1, sd_reference=0.1),
    Design(themes=12, runs=1, analysts=4, p_h=0.6, sd_analyst=0.05, sd_reference=0.6),
    Design(themes=8, runs=4, analysts=3, p_h=0.8, sd_analyst=0.1, sd_reference=0.7),
    Design(themes=14, runs=2, analysts=4, p_h=0.55, icc=0.3, sd_analyst=0.2, sd_reference=0.05),
    Design(themes=12, runs=5, analysts=3, p_h=0.75, icc=0.16, domains=6, groups=True,
           sd_reference=0.5),
    Design(themes=15, runs=3, analysts=4, p_h=0.65, sd_analyst=0.5, sd_reference=0.0),
]  # fmt: skip
# Written before the two-analyst ceiling rule was run on them (docs/verdicts.md, "Near a
# bound"): agreements within 0.15 of a bound, two analysts mostly, other sizes and spreads.
AFTER_CEILING = [
    Design(themes=11, runs=2, analysts=2, p_h=0.9, sd_theme=0.6),
    Design(themes=14, runs=4, analysts=2, p_h=0.93, icc=0.16),
    Design(themes=8, runs=3, analysts=2, p_h=0.86, sd_run=0.5),
    Design(themes=12, runs=1, analysts=2, p_h=0.1),
    Design(themes=15, runs=5, analysts=2, p_h=0.95, icc=0.3, domains=5, groups=True),
    Design(themes=9, runs=2, analysts=3, p_h=0.92),
    Design(themes=10, runs=4, analysts=4, p_h=0.89, sd_theme=1.1),
    Design(themes=13, runs=1, analysts=2, p_h=0.84, sd_theme=1.2),
]
# Written after a 0/1 side with no spread was given its themes' room (metrics/crossed.py,
# _wilson's least), before being run: shares that can reach 0 or 1 at 2-4 analysts.
AFTER_FLOOR = [
    Design(themes=8, runs=2, analysts=2, p_h=0.92),
    Design(themes=10, runs=3, analysts=3, p_h=0.94, sd_theme=0.5),
    Design(themes=12, runs=4, analysts=2, p_h=0.08),
    Design(themes=9, runs=5, analysts=4, p_h=0.9, icc=0.16),
    Design(themes=14, runs=2, analysts=2, p_h=0.87, sd_theme=1.0, sd_run=0.6),
    Design(themes=15, runs=3, analysts=2, p_h=0.91, icc=0.3, domains=5, groups=True),
]
# Written after the reference part took only its themes' own noise within declared groups
# (metrics/crossed.py, _nested_noise), before it was run on them: 3-5 analysts, 6-10 groups,
# ICC 0.3-0.8, floors to ceilings.
AFTER_NESTED = [
    Design(themes=10, runs=3, analysts=3, p_h=0.7, icc=0.64, domains=6, groups=True),
    Design(themes=14, runs=4, analysts=4, p_h=0.5, icc=0.64, domains=9, groups=True, sd_theme=0.6),
    Design(themes=9, runs=1, analysts=3, p_h=0.45, icc=0.5, domains=6, groups=True),
    Design(themes=12, runs=5, analysts=4, p_h=0.8, icc=0.4, domains=7, groups=True,
           sd_reference=0.5),
    Design(themes=15, runs=2, analysts=3, p_h=0.35, icc=0.64, domains=10, groups=True,
           sd_theme=1.1),
    Design(themes=11, runs=3, analysts=5, p_h=0.6, icc=0.3, domains=6, groups=True,
           sd_analyst=0.5),
    Design(themes=8, runs=4, analysts=3, p_h=0.75, icc=0.8, domains=8, groups=True),
]  # fmt: skip
# Written after the analysts' side with declared groups at 3+ analysts took limits between
# Wilson's and Wedderburn's (metrics/crossed.py), before it was run on them: near both
# bounds and between, 6-9 groups.
AFTER_GROUP_BOUND = [
    Design(themes=12, runs=3, analysts=3, p_h=0.9, icc=0.5, domains=6, groups=True),
    Design(themes=9, runs=2, analysts=4, p_h=0.86, icc=0.64, domains=7, groups=True,
           sd_theme=1.0),
    Design(themes=15, runs=1, analysts=3, p_h=0.12, icc=0.64, domains=8, groups=True),
    Design(themes=10, runs=5, analysts=3, p_h=0.93, icc=0.3, domains=6, groups=True,
           sd_theme=0.6),
    Design(themes=13, runs=4, analysts=4, p_h=0.2, icc=0.5, domains=9, groups=True, sd_run=0.5),
    Design(themes=11, runs=3, analysts=5, p_h=0.8, icc=0.64, domains=7, groups=True),
]  # fmt: skip
GRIDS["small"]["designs"] += AFTER[:2]
GRIDS["full"]["designs"] += AFTER + AFTER_GROUPS + AFTER_POOLED + AFTER_RUNS + AFTER_COMBINE
GRIDS["full"]["designs"] += AFTER_BOUNDED + AFTER_ANALYSTS + AFTER_CEILING + AFTER_FLOOR
GRIDS["full"]["designs"] += AFTER_NESTED + AFTER_GROUP_BOUND
# Differences per design: the margins (errors of equivalent, non-inferior), 0 (errors of
# better and worse), and the power point.
DIFFERENCES = (-MARGIN, 0.0, MARGIN, POWER_DIFF)


def _rows(d: Design, route: str, sim: dict) -> list[dict]:
    name, n = f"{route}:{d.name()}", d.themes
    procedure = f"crossed jackknife, {route}"

    def err(quantity, value):
        return row(AREA, name, quantity, procedure, "type1_error", value, sim["draws"],
                   n_a=n, nominal=ALPHA)  # fmt: skip

    out = []
    if np.isclose(d.diff, -MARGIN):
        out += [err("verdict equivalent", sim["p_equivalent"]),
                err("verdict non-inferior or better", sim["p_above_minus_margin"])]  # fmt: skip
    if np.isclose(d.diff, MARGIN):
        out.append(err("verdict equivalent", sim["p_equivalent"]))
    if np.isclose(d.diff, 0.0):
        out += [err("verdict worse", sim["p_worse"]), err("verdict better", sim["p_better"])]
    if np.isclose(d.diff, POWER_DIFF):
        out.append(row(AREA, name, "verdict worse", procedure, "power", sim["p_worse"],
                       sim["draws"], n_a=n))  # fmt: skip
    # the (1 - 2 alpha) interval the words read: shown, judged through the errors above
    out.append(row(AREA, name, "difference", procedure, "coverage_tost_level",
                   sim["coverage"], sim["draws"], n_a=n, nominal=1 - 2 * ALPHA))  # fmt: skip
    return out


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
                rows += _rows(d, label, sim)
    for d in SEGMENT_GRIDS[grid_name]:
        sim = simulate_segments(d, g["draws"], rng_for(seed, AREA, d.name()))
        detail.append({"route": "segments", "design": d.name()} | vars(d) | sim)
        rows += _segment_rows(d, sim)
    from themesim.validate.verdict_margin import margin_rows

    more, extra = margin_rows(grid_name, seed, g["draws"])
    detail += more
    rows += extra
    return pd.DataFrame(detail), summary_frame(rows)


# --- The segments route: κ over coded segments, transcripts as clusters -------------------
#
# Each transcript is a run of `segments` passages whose ideas follow a Markov chain (the
# idea stays with probability `stay`, else one of n ideas or none is drawn afresh: topic
# blocks, serial dependence). Every coder (analyst or run) applies theme i to a passage on
# idea i with probability expit(mu + a_coder + u_i + c_t) and to any other passage with
# probability `false_positive`; u_i (the idea's findability) and c_t (the transcript's
# clarity) are shared by every coder. Each set's theme i pairs with theme i. The generator
# is one fixed coder (a = 0: the verdict is about this generator), its runs alike; the
# analysts' a are drawn with SD sd_coder. With sd_coder 0 the generator is one more coder of
# the analysts' kind, so D = 0 whatever the transcripts (the null); with a spread the truth
# (over analysts, themes and transcripts) is the mean of D over the draws. `shift` lowers
# the generator's mu (power).


@dataclass(frozen=True)
class SegmentDesign:
    transcripts: int = 12
    segments: int = 20
    themes: int = 10
    runs: int = 1
    analysts: int = 3
    stay: float = 0.5
    sd_coder: float = 0.0  # analyst-to-analyst (and generator) sensitivity, logit scale
    sd_transcript: float = 0.5
    sd_theme: float = 0.8
    mu: float = 1.0
    false_positive: float = 0.05
    p_none: float = 0.3
    shift: float = 0.0  # the generator's mu minus the analysts' (0: the null)

    def name(self) -> str:
        return (
            f"segments:T={self.transcripts},S={self.segments},n={self.themes},R={self.runs},"
            f"K={self.analysts},stay={self.stay:g},sd_coder={self.sd_coder:g},"
            f"shift={self.shift:+g}"
        )


def _topics(d: SegmentDesign, rng) -> np.ndarray:
    """(transcripts, segments) idea per passage (-1: none), a Markov chain per transcript."""
    z = np.empty((d.transcripts, d.segments), dtype=np.int64)
    weights = np.r_[d.p_none, np.full(d.themes, (1 - d.p_none) / d.themes)]
    fresh = rng.choice(np.arange(-1, d.themes), size=z.shape, p=weights)
    stays = rng.random(z.shape) < d.stay
    z[:, 0] = fresh[:, 0]
    for s in range(1, d.segments):
        z[:, s] = np.where(stays[:, s], z[:, s - 1], fresh[:, s])
    return z


def draw_segments(d: SegmentDesign, rng):
    """(gen, hum, gen_counts, hum_counts, sizes) of one simulated study: each reference
    theme's κ with its partner (crossed_difference's gen, hum) and the per-transcript 2x2
    counts behind them (metrics.generators.leave_one_out_differences)."""
    from scipy.special import expit

    from themesim.metrics.kappa import kappa_counts_array

    z = _topics(d, rng)
    u = rng.normal(0, d.sd_theme, d.themes)
    c = rng.normal(0, d.sd_transcript, d.transcripts)
    k, runs = d.analysts, d.runs
    a = np.r_[rng.normal(0, d.sd_coder, k), 0.0]  # the analysts', then the generator's
    on = z[..., None] == np.arange(d.themes)  # (T, S, n)

    def code(effect):
        p = expit(d.mu + effect + u[None, None, :] + c[:, None, None])
        hit = rng.random(on.shape) < np.where(on, p, d.false_positive)
        return hit.astype(np.int64)

    analysts = [code(a[j]) for j in range(k)]
    gens = [code(a[k] + d.shift) for _ in range(runs)]
    sizes = np.full(d.transcripts, d.segments)

    def counts(x, y):  # (n, T, 3): n_a, n_b, n_both per theme and transcript
        return np.stack([x.sum(axis=1).T, y.sum(axis=1).T, (x * y).sum(axis=1).T], axis=-1)

    def kappa(cube):
        tot = cube.sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            kk = kappa_counts_array(tot[..., 2], tot[..., 0], tot[..., 1], sizes.sum())
        return np.nan_to_num(kk, nan=0.0)

    gen, hum, gen_counts, hum_counts = [], [], [], []
    for r in range(k):
        g = np.stack([counts(analysts[r], x) for x in gens], axis=1)  # (n, R, T, 3)
        h = np.full((d.themes, k, d.transcripts, 3), np.nan)
        for j in range(k):
            if j != r:
                h[:, j] = counts(analysts[r], analysts[j])
        gen_counts.append(g)
        hum_counts.append(h)
        gen.append(kappa(g))
        kh = kappa(h)
        kh[:, r] = np.nan
        hum.append(kh)
    return gen, hum, gen_counts, hum_counts, sizes


def simulate_segments(d: SegmentDesign, draws: int, rng, margin=MARGIN, alpha=ALPHA) -> dict:
    """P(each verdict) of the segments route, and the coverage of the truth: 0 under the
    null (sd_coder 0, shift 0), else the mean of D over the draws."""
    from themesim.metrics.generators import transcript_jackknife

    counts = dict.fromkeys(VERDICTS, 0)
    ends, estimates = [], []
    for _ in range(draws):
        gen, hum, gc, hc, sizes = draw_segments(d, rng)
        extra = transcript_jackknife(gc, hc, sizes)
        res = crossed_difference(gen, hum, alpha=alpha, extra=extra)
        counts[word(res, margin)] += 1
        ends.append((res.ci_low, res.ci_high))
        estimates.append(res.difference)
    null = d.sd_coder == 0 and d.shift == 0
    truth = 0.0 if null else float(np.mean(estimates))
    lo, hi = np.array(ends).T
    out = {f"p_{k}": v / draws for k, v in counts.items()}
    return out | {
        "truth": truth,
        "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
        "mean_width": float(np.mean(hi - lo)),
        "draws": draws,
    }


# Written before the segments route was run on any of them: serial dependence from none to
# strong topic blocks, 6-30 transcripts, one and three runs, two and three analysts; the
# nulls with analyst-to-analyst spread only where three analysts let the interval carry it.
SEGMENT_DESIGNS = [
    SegmentDesign(transcripts=t, runs=r, analysts=k, stay=st, sd_coder=sc)
    for t in (6, 12, 30)
    for st in (0.0, 0.5, 0.9)
    for r, k, sc in ((1, 2, 0.0), (3, 3, 0.0), (3, 3, 0.4))
]
SEGMENT_POWER = [
    SegmentDesign(transcripts=t, runs=3, analysts=3, stay=0.5, shift=-1.0) for t in (6, 12, 30)
]
SEGMENT_GRIDS = {
    "small": [SEGMENT_DESIGNS[6], SEGMENT_DESIGNS[14], SEGMENT_POWER[1]],
    "full": SEGMENT_DESIGNS + SEGMENT_POWER,
}


def _segment_rows(d: SegmentDesign, sim: dict) -> list[dict]:
    procedure = "crossed jackknife + transcripts, segments"
    out = []
    if d.shift == 0 and d.sd_coder == 0:  # the null: D = 0 exactly
        for w in ("worse", "better"):
            out.append(row(AREA, d.name(), f"verdict {w}", procedure, "type1_error",
                           sim[f"p_{w}"], sim["draws"], n_a=d.themes, nominal=ALPHA))  # fmt: skip
    if d.shift < 0:
        out.append(row(AREA, d.name(), "verdict worse", procedure, "power", sim["p_worse"],
                       sim["draws"], n_a=d.themes))  # fmt: skip
    out.append(row(AREA, d.name(), "difference", procedure, "coverage_tost_level",
                   sim["coverage"], sim["draws"], n_a=d.themes, nominal=1 - 2 * ALPHA))  # fmt: skip
    return out
