"""A generator against human analysts: the difference of two agreements and its interval
(docs/verdicts.md).

The data of one verdict: K analysts and R runs of one generator, and for every pair of
sets the verdict reads (each analyst with each run: the generator's cells; each two
analysts: the humans' cells) the table of evidence between their themes (0/1 matches at the
threshold, or a strength) and the similarity that names each theme's best partner. Each
cell's agreement is read from both sides at one set size k (metrics.rarefied):

    G = mean over the K x R generator cells of A(r, g),
    H = mean over the K (K - 1) / 2 analyst pairs of A(r, h),
    D = G - H.

**The interval.** Each theme's value in a cell depends on its own set and on its partner in
the other set, and the two themes of a good pair score each other: the values are dyadic.
Their sampling units are the random factors of the study: a writer (an analyst from three
analysts, a run from three runs) whose factor is random, with every theme it wrote (an
ultimate cluster: Kalton 1979, "Ultimate cluster sampling", JRSS A 142: 223-234); else each
theme, or its declared group (the same label across sets one unit). A value belongs to the
units of its theme and of its partner. The variance is the multiway delete-one jackknife
over those units, with the inclusion-exclusion of Cameron, Gelbach and Miller (2011,
"Robust inference with multiway clustering", JBES 29: 238-249) for values that share two
units, which is the dyadic-robust variance of Cameron and Miller (2014, "Robust inference
for dyadic data"; Aronow, Samii and Assenova 2015, Political Analysis 23: 564-577):

    V = sum over unit sets Q of (-1)^(|Q| + 1) (G_Q - 1) / G_Q sum_q (D_(-q) - mean)^2,

D_(-q) the difference recomputed without the values that belong to every unit of q (each
side of each cell re-averaged; the rarefied values themselves are not recomputed). Each part
holds G_Q - 1 degrees of freedom; the interval is D +- t * sqrt(V) at Satterthwaite's
(1946) degrees of freedom of the sum. Where the inclusion-exclusion leaves V below its
largest one-way part (possible in small samples), that part is used (CGM 2011).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy import sparse
from scipy.special import stdtr, stdtrit

from themesim.metrics.rarefied import pair_values

VERDICTS = ("better", "equivalent", "non-inferior", "inconclusive", "worse")
# A factor is random (its writers sampling units) from this many of them; below, the verdict
# is about these writers, and their themes are the units.
MIN_RANDOM = 3
CI_METHOD = "dyadic multiway jackknife over {units}, Satterthwaite t"


@dataclass
class Study:
    """One verdict's inputs. tables[(x, y)]: (evidence, similarity), two (n_x, n_y) arrays
    for every analyst x with every run y and every two analysts x before y (in `analysts`
    order); groups[set]: a declared group label per theme (None: undeclared)."""

    analysts: list[str]
    runs: list[str]
    tables: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]
    groups: dict[str, list] | None = None
    k: int | None = None  # the common set size; None: the smallest set of the verdict

    def sizes(self) -> dict[str, int]:
        out = {}
        for (x, y), (ev, _) in self.tables.items():
            out[x], out[y] = ev.shape
        return out


@dataclass
class Result:
    difference: float
    ci_low: float
    ci_high: float
    level: float
    generator: float  # G
    human: float  # H (NaN with one analyst)
    generator_ci_low: float
    generator_ci_high: float
    se: float
    df: float
    k: int
    n_runs: int
    n_analysts: int
    n_themes_generator: float  # mean over runs
    n_themes_analysts: float  # mean over analysts
    n_units: int  # sampling units of the interval
    covers: tuple[str, ...] = field(default_factory=tuple)
    ci_method: str = ""
    parts: dict = field(default_factory=dict)  # unit kind -> its signed variance part
    p_better: float = np.nan  # one-sided p-values of the words' claims
    p_worse: float = np.nan
    p_non_inferior: float = np.nan
    p_equivalent: float = np.nan
    run_sd: float = np.nan
    analyst_sd: float = np.nan


def _units(name, theme, random, groups):
    """The sampling units of one theme: its writer where the writer's factor is random,
    its declared group where it has one, else the theme itself."""
    out = [("writer", name)] if random else []
    label = groups.get(name, [None] * (theme + 1))[theme] if groups else None
    if label is not None:
        out.append(("group", label))
    elif not random:
        out.append(("theme", name, theme))
    return out


def _kind(unit, runs) -> str:
    if unit[0] == "writer":
        return "runs" if unit[1] in runs else "analysts"
    if unit[0] == "group":
        return "groups"
    return "themes"


class _Values:
    """Every value of the verdict: its cell's side, its evidence, its units."""

    def __init__(self, study: Study, random_analysts: bool, random_runs: bool):
        K, R = len(study.analysts), len(study.runs)
        sizes = study.sizes()
        self.k = study.k or min(sizes.values())
        groups = study.groups or {}
        rand = {a: random_analysts for a in study.analysts} | {g: random_runs for g in study.runs}
        cells = [(r, g, "gen", 1 / (K * R)) for r in study.analysts for g in study.runs]
        if K >= 2:
            w = 2 / (K * (K - 1))
            cells += [(x, y, "hum", w) for x, y in combinations(study.analysts, 2)]
        self.cells = cells
        value, side, units = [], [], []
        for c, (x, y, _, _) in enumerate(cells):
            ev, sim = study.tables[(x, y)]
            a_r, b_r, a_c, b_c = pair_values(
                np.asarray(ev, dtype=np.float64), np.asarray(sim, dtype=np.float64), self.k
            )
            for s, (own, other, a, best) in enumerate(((x, y, a_r, b_r), (y, x, a_c, b_c))):
                for t in range(a.size):
                    value.append(a[t])
                    side.append(2 * c + s)
                    mine = _units(own, t, rand[own], groups)
                    theirs = _units(other, int(best[t]), rand[other], groups)
                    units.append(tuple(dict.fromkeys(mine + theirs)))
        self.value = np.array(value)
        self.side = np.array(side)
        self.units = units
        self.kinds = {u: _kind(u, study.runs) for each in units for u in each}

    def statistic(self, drop=None):
        """(G, H) with the values flagged in `drop` (keys x values, sparse) left out: one
        row per deletion; no drop: the full estimate."""
        n_sides = 2 * len(self.cells)
        onehot = sparse.csr_matrix(
            (np.ones(self.value.size), (np.arange(self.value.size), self.side)),
            shape=(self.value.size, n_sides),
        )
        total = onehot.T @ self.value
        count = np.asarray(onehot.sum(axis=0)).ravel()
        if drop is None:
            sums, counts = total[None, :], count[None, :]
        else:
            sums = total[None, :] - (drop @ onehot.multiply(self.value[:, None])).toarray()
            counts = count[None, :] - (drop @ onehot).toarray()
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / counts, np.nan)
        cell = 0.5 * (means[:, 0::2] + means[:, 1::2])  # deletions x cells
        out = []
        for kind in ("gen", "hum"):
            cols = [i for i, c in enumerate(self.cells) if c[2] == kind]
            if not cols:
                out.append(np.full(cell.shape[0], np.nan))
                continue
            w = np.array([self.cells[i][3] for i in cols])
            part = cell[:, cols]
            ok = np.isfinite(part)
            wsum = (ok * w).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.where(wsum > 0, np.nansum(part * w, axis=1) / wsum, np.nan))
        return out[0], out[1]


def _jackknife_parts(values: _Values, pick):
    """The signed variance parts of the statistic `pick(G, H)`: {signature: (sign * V_Q,
    degrees of freedom)} over every set of units that some value belongs to."""
    keys: dict[tuple, list[int]] = {}
    for i, units in enumerate(values.units):
        for size in range(1, len(units) + 1):
            for q in combinations(sorted(units), size):
                keys.setdefault(q, []).append(i)
    order = list(keys)
    rows = np.repeat(np.arange(len(order)), [len(keys[q]) for q in order])
    cols = np.concatenate([keys[q] for q in order])
    drop = sparse.csr_matrix(
        (np.ones(rows.size), (rows, cols)), shape=(len(order), values.value.size)
    )
    g, h = values.statistic(drop)
    theta = pick(g, h)
    by_sig: dict[tuple, list[float]] = {}
    for q, t in zip(order, theta, strict=True):
        sig = tuple(sorted(values.kinds[u] for u in q))
        by_sig.setdefault(sig, []).append(t)
    parts = {}
    for sig, ts in by_sig.items():
        ts = np.asarray(ts)
        ts = ts[np.isfinite(ts)]
        n = ts.size
        if n < 2:
            continue
        v = (n - 1) / n * float(((ts - ts.mean()) ** 2).sum())
        parts[sig] = ((-1) ** (len(sig) + 1) * v, n - 1)
    return parts


def _combine(parts) -> tuple[float, float]:
    """(variance, Satterthwaite df) of the signed parts; never below the largest one-way
    part."""
    if not parts:
        return 0.0, np.inf
    var = sum(v for v, _ in parts.values())
    one_way = max((v for sig, (v, _) in parts.items() if len(sig) == 1), default=0.0)
    if var < one_way:
        sig = max((s for s in parts if len(s) == 1), key=lambda s: parts[s][0])
        return one_way, float(parts[sig][1])
    denom = sum(v**2 / df for v, df in parts.values() if df > 0)
    return var, (var**2 / denom if denom > 0 else np.inf)


def _quantile(df: float, alpha: float) -> float:
    from scipy.special import ndtri

    return float(stdtrit(df, 1 - alpha) if np.isfinite(df) else ndtri(1 - alpha))


def _p_above(estimate: float, bound: float, se: float, df: float) -> float:
    """One-sided p-value of 'the truth is above `bound`'."""
    if not se > 0:
        return 0.0 if estimate > bound else 1.0
    t = (estimate - bound) / se
    return float(1 - stdtr(df, t)) if np.isfinite(df) else float(1 - stdtr(1e9, t))


def difference(study: Study, alpha: float = 0.05, margin: float = 0.1) -> Result:
    """D, G and H with their (1 - 2 alpha) intervals and the words' p-values."""
    K, R = len(study.analysts), len(study.runs)
    if K < 1 or R < 1:
        raise ValueError("a verdict needs one analyst and one run at least")
    random_a, random_r = K >= MIN_RANDOM, R >= MIN_RANDOM
    values = _Values(study, random_a, random_r)
    g, h = (float(v[0]) for v in values.statistic())
    level = 1 - 2 * alpha
    parts_g = _jackknife_parts(values, lambda gg, hh: gg)
    var_g, df_g = _combine(parts_g)
    q_g = _quantile(df_g, alpha)
    sizes = study.sizes()
    covers = ["themes"] + (["runs"] if random_r else []) + (["analysts"] if random_a else [])
    if study.groups and any(x is not None for v in study.groups.values() for x in v):
        covers.append("groups")
    kinds = sorted({k for k in values.kinds.values()})
    res = Result(
        difference=np.nan, ci_low=np.nan, ci_high=np.nan, level=level, generator=g,
        human=h, generator_ci_low=g - q_g * np.sqrt(var_g),
        generator_ci_high=g + q_g * np.sqrt(var_g), se=np.nan, df=np.nan, k=values.k,
        n_runs=R, n_analysts=K,
        n_themes_generator=float(np.mean([sizes[x] for x in study.runs])),
        n_themes_analysts=float(np.mean([sizes[x] for x in study.analysts])),
        n_units=len({u for each in values.units for u in each}), covers=tuple(covers),
        ci_method=CI_METHOD.format(units=" + ".join(kinds)),
    )  # fmt: skip
    per_run = [
        np.mean([_cell(values, r, x) for r in study.analysts]) for x in study.runs
    ]  # fmt: skip
    res.run_sd = float(np.std(per_run, ddof=1)) if R >= 2 else np.nan
    if K < 2:
        return res
    pairs = [_cell(values, x, y) for x, y in combinations(study.analysts, 2)]
    res.analyst_sd = float(np.std(pairs, ddof=1)) if len(pairs) >= 2 else np.nan
    parts = _jackknife_parts(values, lambda gg, hh: gg - hh)
    var, df = _combine(parts)
    se = float(np.sqrt(var))
    q = _quantile(df, alpha)
    d = g - h
    res.difference, res.se, res.df = d, se, df
    res.ci_low, res.ci_high = d - q * se, d + q * se
    res.parts = {"+".join(sig): v for sig, (v, _) in parts.items()}
    res.p_better = _p_above(d, 0.0, se, df)
    res.p_worse = _p_above(-d, 0.0, se, df)
    res.p_non_inferior = _p_above(d, -margin, se, df)
    res.p_equivalent = max(res.p_non_inferior, _p_above(-d, -margin, se, df))
    return res


def _cell(values: _Values, x: str, y: str) -> float:
    for c, (a, b, _, _) in enumerate(values.cells):
        if (a, b) == (x, y):
            sides = [values.value[values.side == 2 * c + s].mean() for s in (0, 1)]
            return 0.5 * (sides[0] + sides[1])
    raise KeyError((x, y))


def verdict(low: float, high: float, margin: float) -> str:
    """The word for a (1 - 2 alpha) interval of D against +-margin (CONSORT: Piaggio et
    al. 2012): inside +-margin `equivalent`; else wholly above 0 `better`, wholly below 0
    `worse`, above -margin `non-inferior`, otherwise `inconclusive`; '' without one."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    if -margin < low and high < margin:
        return "equivalent"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if low > -margin:
        return "non-inferior"
    return "inconclusive"


def word_from_p(p: dict, alpha: float) -> str:
    """The same decision from the words' one-sided p-values (adjusted for multiplicity
    where several generators' primary rows are read together): equivalent, better, worse,
    non-inferior, in that order, at alpha; else inconclusive."""
    if not np.isfinite(p.get("p_equivalent", np.nan)):
        return ""
    for name, key in (("equivalent", "p_equivalent"), ("better", "p_better"),
                      ("worse", "p_worse"), ("non-inferior", "p_non_inferior")):  # fmt: skip
        if p[key] <= alpha:
            return name
    return "inconclusive"
