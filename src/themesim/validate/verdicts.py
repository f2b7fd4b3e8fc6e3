"""The verdicts of a generator against human analysts (metrics/verdicts/crossed.py): their error at
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

from dataclasses import dataclass, fields

import numpy as np

from themesim.metrics.verdicts.crossed import MIN_RANDOM_RUNS, VERDICTS, crossed_difference, word
from themesim.validate.core import rng_for, row

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


def sd_domain(d: Design) -> float:
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


def solve(target, shift, var, route) -> float | None:
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
    sd_v = sd_domain(d)
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
    mu_h = solve(d.p_h, shift_h, var_h, scale)
    mu_g = solve(d.p_h + d.diff, shift_g, var_g, scale)
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
    margin "analysts": each draw's own, from three analysts on (metrics.verdicts.analyst_margin),
    below three MARGIN; with the design's true_margin also P(that margin above it) and the
    margins' mean (validate/verdict_margin.py)."""
    from themesim.metrics.verdicts.analyst_margin import MARGIN_ANALYSTS, analysts_spread

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


def design_rows(d: Design, route: str, sim: dict) -> list[dict]:
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
