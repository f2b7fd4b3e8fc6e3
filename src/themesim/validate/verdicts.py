"""The verdicts of a generator against human analysts (metrics/verdicts/difference.py):
their error at each word's boundary, the interval's coverage and the power, on the probit
model (docs/verdicts.md, docs/validity.md). The second model is validate/verdict_ideas.py.

The probit model. The data hold L slots (ideas), L the largest set of the design; slot s
belongs to domain s mod `domains`. Each writer (an analyst, or one run of the generator)
covers as many distinct slots as it writes themes, uniformly at random. Two themes on the
same slot meet through a latent strength

    y = mu_type + c_x + c_y + u_t + u_u + v_(domain, type) + e,    e ~ N(0, 1),

c: the two writers' effects (run-to-run SD sd_run, analyst-to-analyst sd_analyst; one
effect per writer, whichever side of the pair it is on, so the designs' sd_reference no
longer enters), u: each theme's findability (SD sd_theme), v: a domain effect per type
(the generator's and the analysts' own, with intraclass correlation icc); themes on
different slots do not match (evidence 0). The routes: `matched`, 1 when y > 0;
`strength`, Phi(y). A theme's rarefied best evidence against a set of m themes is then its
pair's evidence times k/m when the set covers its slot, so the agreement at k is (k / L)
times the mean evidence of a shared slot, whatever the sets' sizes.

mu_type is solved per study so that the analysts' agreement at their own size is p_h and
the difference at the verdict's k is `diff` exactly, given the factors the estimand holds
fixed (runs below three, analysts below three, domains when not declared): every study
knows its truth. The designs (validate/verdict_designs.py) were written before the
procedure was run on them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from themesim.metrics.verdicts.difference import MIN_RANDOM, VERDICTS, Study, difference, verdict
from themesim.metrics.verdicts.rows import spread_test
from themesim.validate.core import Scope, rng_for, row

AREA = "verdicts"
MARGIN = 0.10
ALPHA = 0.05
ROUTES = ("matched", "strength")
POWER_DIFF = -0.30


@dataclass(frozen=True)
class Design:
    themes: int = 10  # each analyst's themes
    runs: int = 3
    analysts: int = 3
    p_h: float = 0.7  # the analysts' agreement at their own size, on the route's scale
    diff: float = 0.0  # the generator's agreement minus the analysts', at the verdict's k
    icc: float = 0.0  # domain intraclass correlation of the latent strengths
    domains: int = 4
    groups: bool = False  # the domains declared (a `group` column) or not
    sd_theme: float = 0.8
    sd_run: float = 0.3
    sd_analyst: float = 0.3
    sd_reference: float = 0.3
    gen_themes: int = 0  # each run's themes (0: as many as an analyst)

    @property
    def m(self) -> int:
        return self.gen_themes or self.themes

    @property
    def slots(self) -> int:
        return max(self.themes, self.m)

    @property
    def k(self) -> int:
        return min(self.themes, self.m)

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
    if f.name in ("domains", "sd_theme", "sd_run", "sd_analyst", "sd_reference", "gen_themes")
}


def sd_domain(d: Design) -> float:
    return float(np.sqrt(d.icc * (2 * d.sd_theme**2 + 1) / (1 - d.icc))) if d.icc > 0 else 0.0


def sd_writer(d: Design) -> float:
    return d.sd_analyst


def random_factors(d: Design) -> dict:
    """Which factors the estimand averages over (the interval's `covers`)."""
    return {"runs": d.runs >= MIN_RANDOM, "analysts": d.analysts >= MIN_RANDOM,
            "domains": d.groups}  # fmt: skip


def _mean_evidence(mu, shift, var, route) -> float:
    """Mean over cells of P(y > 0) or E Phi(y), y ~ N(mu + shift, var)."""
    extra = 1.0 if route == "strength" else 0.0
    return float(ndtr((mu + shift) / np.sqrt(var + extra)).mean())


def solve(target, shift, var, route) -> float | None:
    """The mu whose mean evidence over the cells is target, or None outside (0, 1)."""
    if not 0 < target < 1:
        return None
    return float(brentq(lambda m: _mean_evidence(m, shift, var, route) - target, -60, 60))


def targets(d: Design) -> tuple[float, float]:
    """The mean evidence of a shared slot for the analysts' and the generator's pairs."""
    e_h = d.p_h * d.slots / d.themes
    return e_h, e_h + d.diff * d.slots / d.k


def feasible(d: Design) -> bool:
    return all(0 < e < 1 for e in targets(d))


def draw(d: Design, route: str, rng) -> Study | None:
    """One simulated study (metrics.dyadic.Study), or None when this draw's held factors put
    an agreement out of reach."""
    K, R, L = d.analysts, d.runs, d.slots
    rand = random_factors(d)
    sd_v = sd_domain(d)
    domain = np.arange(L) % d.domains
    v = {"gen": rng.normal(0, sd_v, d.domains), "hum": rng.normal(0, sd_v, d.domains)}
    c = {f"run{j + 1}": x for j, x in enumerate(rng.normal(0, d.sd_run, R))}
    c |= {f"analyst{j + 1}": x for j, x in enumerate(rng.normal(0, sd_writer(d), K))}
    analysts, runs = [f"analyst{j + 1}" for j in range(K)], [f"run{j + 1}" for j in range(R)]
    # the truth given the held factors: every (pair of writers, slot) cell alike
    var = 1 + 2 * d.sd_theme**2 + (sd_v**2 if rand["domains"] else 0.0)
    var_g = var + (d.sd_run**2 if rand["runs"] else 0)
    var_g += sd_writer(d) ** 2 if rand["analysts"] else 0
    var_h = var + (2 * sd_writer(d) ** 2 if rand["analysts"] else 0)

    def shifts(pairs, kind):
        def held_effect(w):  # a writer's effect where its factor is held, else 0
            random = rand["analysts"] if w in analysts else rand["runs"]
            return 0.0 if random else c[w]

        held = np.array([held_effect(x) + held_effect(y) for x, y in pairs])
        dom = np.zeros(d.domains) if rand["domains"] else v[kind]
        return (held[:, None] + dom[None, domain]).ravel()

    gen_pairs = [(a, r) for a in analysts for r in runs]
    hum_pairs = [(a, b) for i, a in enumerate(analysts) for b in analysts[i + 1 :]]
    e_h, e_g = targets(d)
    mu_h = solve(e_h, shifts(hum_pairs, "hum"), var_h, route)
    mu_g = solve(e_g, shifts(gen_pairs, "gen"), var_g, route)
    if mu_h is None or mu_g is None:
        return None
    sizes = {a: d.themes for a in analysts} | {r: d.m for r in runs}
    slots = {x: rng.permutation(L)[:n] for x, n in sizes.items()}
    find = {x: rng.normal(0, d.sd_theme, n) for x, n in sizes.items()}
    tables = {}
    for x, y in gen_pairs + hum_pairs:
        kind, mu = ("gen", mu_g) if y in runs else ("hum", mu_h)
        where = {s: j for j, s in enumerate(slots[y])}
        ev = np.zeros((sizes[x], sizes[y]))
        order = rng.normal(-3.0, 1.0, ev.shape)  # a theme without a slot's partner: any
        for i, s in enumerate(slots[x]):
            j = where.get(s)
            if j is None:
                continue
            lat = mu + c[x] + c[y] + find[x][i] + find[y][j] + v[kind][domain[s]] + rng.normal()
            ev[i, j] = float(lat > 0) if route == "matched" else float(ndtr(lat))
            order[i, j] = lat
        tables[(x, y)] = (ev, order)
    groups = None
    if d.groups:
        groups = {a: [int(domain[s]) for s in slots[a]] for a in analysts}
        groups |= {r: [None] * d.m for r in runs}
    return Study(analysts, runs, tables, groups)


def simulate(d: Design, route: str, draws: int, rng, margin=MARGIN, alpha=ALPHA,
             draw_study=None, truth=None) -> dict:  # fmt: skip
    """P(each verdict), the (1 - 2 alpha) interval's coverage and mean width over draws.
    draw_study(rng) -> Study or None, truth: the difference the studies estimate (the
    probit model: d.diff; the ideas model passes its own). margin "analysts": each study's
    word by the test of |D| below its analysts' spread (metrics.verdicts.rows.spread_test),
    from three analysts on."""
    draw_study = draw_study or (lambda g: draw(d, route, g))
    truth = d.diff if truth is None else truth
    counts = dict.fromkeys(VERDICTS, 0)
    covered, width, done = 0, 0.0, 0
    for _ in range(draws):
        s = draw_study(rng)
        if s is None:
            continue
        if margin == "analysts":
            res = difference(s, alpha, MARGIN)
            counts[spread_test(res, alpha)["verdict"] or "inconclusive"] += 1
        else:
            res = difference(s, alpha, margin)
            counts[verdict(res.ci_low, res.ci_high, margin)] += 1
        covered += res.ci_low <= truth <= res.ci_high
        width += res.ci_high - res.ci_low
        done += 1
    n = max(done, 1)
    out = {f"p_{k}": v / n for k, v in counts.items()}
    out["p_above_minus_margin"] = out["p_non-inferior"] + out["p_better"]
    return out | {"coverage": covered / n, "mean_width": width / n, "draws": done,
                  "truth": truth}  # fmt: skip


def power(d: Design, route: str, draws: int = 400, seed: int = 0, margin=MARGIN,
          alpha=ALPHA) -> dict:  # fmt: skip
    """P(each verdict) at one design (the study planner, `themesim power`): the suite's own
    draws for the same design, seed and number of draws."""
    if not feasible(d):
        e_h, e_g = targets(d)
        raise ValueError(
            f"agreements {d.p_h:g} and {d.p_h + d.diff:g} are out of this design's reach: a "
            f"shared idea would need evidence {e_h:.2f} and {e_g:.2f}, which must lie "
            "strictly between 0 and 1"
        )
    rng = rng_for(seed, AREA, route, d.name())
    return simulate(d, route, draws, rng, margin=margin, alpha=alpha)


# the largest set the planner's search tries
MAX_SEARCH_THEMES = 64


def reach(d: Design, route: str, draws: int, seed: int, margin=MARGIN, alpha=ALPHA) -> float:
    """P(equivalent, non-inferior or better) of a generator as good as the analysts."""
    sim = power(replace(d, diff=0.0), route, draws, seed, margin=margin, alpha=alpha)
    return sim["p_equivalent"] + sim["p_non-inferior"] + sim["p_better"]


def smallest(d: Design, route: str, target: float = 0.8, draws: int = 400, seed: int = 0,
             margin=MARGIN, alpha=ALPHA) -> tuple[int, float] | None:  # fmt: skip
    """The fewest themes per analyst (runs, analysts and agreement as in d; the generator
    writing as many) at which a generator as good as the analysts is called equivalent,
    non-inferior or better with probability `target` or more: (themes, that probability),
    or None up to MAX_SEARCH_THEMES. Bisection: the chance grows with the themes."""

    def at(n):
        return reach(replace(d, themes=n, gen_themes=0), route, draws, seed, margin, alpha)

    lo, hi = d.themes, MAX_SEARCH_THEMES
    p_hi = at(hi)
    if p_hi < target:
        return None
    p_lo = at(lo)
    if p_lo >= target:
        return lo, p_lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        p = at(mid)
        lo, hi, p_hi = (lo, mid, p) if p >= target else (mid, hi, p_hi)
    return hi, p_hi


def design_rows(name: str, n: int, diff: float, sim: dict, procedure: str) -> list[dict]:
    """The suite's rows of one design at one difference: each word's error at its boundary,
    the power at POWER_DIFF, and the interval's coverage."""

    where = Scope(AREA, name, n_a=n)

    def err(quantity, value):
        return row(where, quantity, procedure, "type1_error", value, sim["draws"],
                   nominal=ALPHA)  # fmt: skip

    out = []
    if np.isclose(diff, -MARGIN):
        out += [err("verdict equivalent", sim["p_equivalent"]),
                err("verdict non-inferior or better", sim["p_above_minus_margin"])]  # fmt: skip
    if np.isclose(diff, MARGIN):
        out.append(err("verdict equivalent", sim["p_equivalent"]))
    if np.isclose(diff, 0.0):
        out += [err("verdict worse", sim["p_worse"]), err("verdict better", sim["p_better"])]
    if np.isclose(diff, POWER_DIFF):
        out.append(row(where, "verdict worse", procedure, "power", sim["p_worse"],
                       sim["draws"]))  # fmt: skip
    out.append(row(where, "difference", procedure, "coverage_tost_level",
                   sim["coverage"], sim["draws"], nominal=1 - 2 * ALPHA))  # fmt: skip
    return out


def equal_quality_rows(name: str, n: int, sim: dict, procedure: str) -> list[dict]:
    """A generator exactly as good as the analysts but writing its own number of themes:
    `better` and `worse` are errors at any size."""
    return [
        row(Scope(AREA, name, n_a=n), f"verdict {w} at equal quality", procedure,
            "type1_error", sim[f"p_{w}"], sim["draws"], nominal=ALPHA)
        for w in ("worse", "better")
    ]  # fmt: skip
