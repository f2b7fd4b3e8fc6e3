"""The verdicts' second generative model: themes as written ideas (docs/validity.md).

Structurally unlike the probit model (validate/verdicts.py), which draws each pair's
strength from additive crossed effects on a latent scale: here similarity comes from
geometry and from which ideas each writer happens to pick.

- The data hold `ideas` latent ideas, unit vectors in `dim` dimensions; each idea belongs to
  one of `domains` domains and shares `domain_share` of its variance with the domain's
  direction (ideas of one domain resemble each other). Each idea has a salience, lognormal
  with SD `salience_sd`: how readily a reader notices it.
- A writer (an analyst, or one run of the generator) writes n themes: it picks n distinct
  ideas by salience (Gumbel top-n: sampling without replacement in proportion to salience),
  and writes each as the idea's vector plus noise of SD `noise` times its own factor
  exp(writer_sd z) (a careful or careless writer), plus its own style (a vector of SD
  `style` shared by its themes), normalised.
- Themes are compared by cosine similarity; the strength scale maps the cosine through a
  fixed calibration-like curve Phi((cos - 0.45) / 0.12), and a match is a strength of 0.5
  or more (cosine 0.45).
- The generator's runs write like the analysts with noise `noise` exp(-shift), and pick their
  ideas by salience to the power exp(shift / 2): shift > 0 a writer who is more precise and
  finds the ideas readers notice, < 0 a vaguer one who strays to ideas few notice; `shift` is
  solved so that the true difference is `diff`.

The data (ideas, their domains and salience) are fixed per design: the verdict is about the
study's own data. Analysts are redrawn every study from three analysts on (a random factor of
the estimand), runs from three runs on; below that their writers are drawn once per design
and held, so the truth is conditional on them. The truth is the mean of the estimate over
`truth_draws` studies (common random numbers across shifts).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from themesim.metrics.verdicts.difference import MIN_RANDOM, Study
from themesim.metrics.verdicts.rarefied import agreement
from themesim.validate.core import rng_for

AREA = "verdicts"
MODEL = "ideas"
C0, S0 = 0.45, 0.12  # the strength curve: Phi((cos - C0) / S0); a match from cos >= C0


@dataclass(frozen=True)
class IdeaDesign:
    themes: int = 10  # each analyst's themes
    gen_themes: int = 0  # each run's themes (0: as many as an analyst)
    runs: int = 3
    analysts: int = 3
    ideas: int = 30
    domains: int = 5
    domain_share: float = 0.3
    salience_sd: float = 1.0
    noise: float = 0.55
    writer_sd: float = 0.25  # analyst-to-analyst spread of carefulness (log scale)
    run_sd: float = 0.15  # run-to-run spread of carefulness (log scale)
    style: float = 0.2
    groups: bool = False  # analysts declare each theme's domain as its group
    dim: int = 64
    diff: float = 0.0

    @property
    def m(self) -> int:
        return self.gen_themes or self.themes

    def name(self) -> str:
        out = (
            f"{MODEL}:n={self.themes},m={self.m},R={self.runs},K={self.analysts},"
            f"I={self.ideas},sal={self.salience_sd:g},d={self.diff:+.2f}"
        )
        out += ",groups" if self.groups else ""
        return out + "".join(
            f",{k}={getattr(self, k):g}" for k, v in _DEFAULTS.items() if getattr(self, k) != v
        )

    def fixed_name(self) -> str:
        """The design without its difference: what fixes its data and held writers."""
        return replace(self, diff=0.0).name()


_DEFAULTS = {
    f.name: f.default
    for f in fields(IdeaDesign)
    if f.name in ("domains", "domain_share", "noise", "writer_sd", "run_sd", "style", "dim")
}


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@dataclass
class _Data:
    vectors: np.ndarray  # (ideas, dim)
    log_salience: np.ndarray
    domain: np.ndarray


def data(d: IdeaDesign, rng) -> _Data:
    dom = _unit(rng.normal(size=(d.domains, d.dim)))
    domain = np.arange(d.ideas) % d.domains
    own = _unit(rng.normal(size=(d.ideas, d.dim)))
    vec = _unit(np.sqrt(d.domain_share) * dom[domain] + np.sqrt(1 - d.domain_share) * own)
    return _Data(vec, rng.normal(0, d.salience_sd, d.ideas), domain)


@dataclass
class _Writer:
    care: float  # multiplies the noise
    style: np.ndarray


def writer(d: IdeaDesign, rng, sd: float) -> _Writer:
    return _Writer(
        float(np.exp(sd * rng.normal())), d.style * rng.normal(size=d.dim) / np.sqrt(d.dim)
    )


def write(d: IdeaDesign, data_: _Data, w: _Writer, n: int, shift: float, rng):
    """(theme vectors, their ideas) of one set of n themes (shift 0: an analyst)."""
    keys = np.exp(shift / 2) * data_.log_salience + rng.gumbel(size=data_.log_salience.size)
    ideas = np.argsort(-keys, kind="stable")[:n]
    z = rng.normal(size=(n, d.dim)) / np.sqrt(d.dim)
    noise = d.noise * np.exp(-shift)
    return _unit(data_.vectors[ideas] + noise * w.care * z + w.style), ideas


def _tables(x, y, route):
    cos = x @ y.T
    strength = ndtr((cos - C0) / S0)
    ev = (strength >= 0.5).astype(np.float64) if route == "matched" else strength
    return ev, cos


def study(d: IdeaDesign, data_: _Data, held: dict, shift: float, route: str, rng) -> Study:
    """One simulated study: K analysts and R runs written on the design's data; held:
    the writers held fixed ('analysts', 'runs': lists, or None where the factor is random)."""
    K, R = d.analysts, d.runs
    an = held["analysts"] or [writer(d, rng, d.writer_sd) for _ in range(K)]
    rn = held["runs"] or [writer(d, rng, d.run_sd) for _ in range(R)]
    names_a = [f"analyst{i + 1}" for i in range(K)]
    names_r = [f"run{i + 1}" for i in range(R)]
    sets, ideas = {}, {}
    for name, w in zip(names_a, an, strict=True):
        sets[name], ideas[name] = write(d, data_, w, d.themes, 0.0, rng)
    for name, w in zip(names_r, rn, strict=True):
        sets[name], ideas[name] = write(d, data_, w, d.m, shift, rng)
    tables = {}
    for i, a in enumerate(names_a):
        for r in names_r:
            tables[(a, r)] = _tables(sets[a], sets[r], route)
        for b in names_a[i + 1 :]:
            tables[(a, b)] = _tables(sets[a], sets[b], route)
    groups = None
    if d.groups:
        groups = {a: [int(data_.domain[i]) for i in ideas[a]] for a in names_a}
        groups |= {r: [None] * d.m for r in names_r}
    return Study(names_a, names_r, tables, groups)


def point(s: Study) -> float:
    """D of one study (the estimate the truth is the mean of)."""
    k = min(s.sizes().values())
    gen = [agreement(*s.tables[(a, r)], k) for a in s.analysts for r in s.runs]
    hum = [agreement(*s.tables[(a, b)], k) for (a, b) in s.tables if b in s.analysts]
    return float(np.mean(gen) - np.mean(hum))


class Fixed:
    """A design's data and held writers, and its truth as a function of the shift."""

    def __init__(self, d: IdeaDesign, seed: int, route: str, truth_draws: int = 1000):
        self.d, self.route, self.seed, self.truth_draws = d, route, seed, truth_draws
        rng = rng_for(seed, AREA, MODEL, "fixed", d.fixed_name())
        self.data = data(d, rng)
        self.held = {
            "analysts": None
            if d.analysts >= MIN_RANDOM
            else [writer(d, rng, d.writer_sd) for _ in range(d.analysts)],
            "runs": None
            if d.runs >= MIN_RANDOM
            else [writer(d, rng, d.run_sd) for _ in range(d.runs)],
        }

    def truth(self, shift: float) -> float:
        rng = rng_for(self.seed, AREA, MODEL, "truth", self.route, self.d.fixed_name())
        return float(
            np.mean([point(study(self.d, self.data, self.held, shift, self.route, rng))
                     for _ in range(self.truth_draws)])
        )  # fmt: skip

    def solve(self, diff: float) -> float | None:
        """The shift whose truth is `diff` (None where no shift in [-4, 4] reaches it)."""
        lo, hi = -4.0, 4.0
        f_lo, f_hi = self.truth(lo) - diff, self.truth(hi) - diff
        if f_lo * f_hi > 0:
            return None
        return float(brentq(lambda s: self.truth(s) - diff, lo, hi, xtol=1e-3))
