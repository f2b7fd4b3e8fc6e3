"""A generator against human analysts: the difference of two agreements and its interval
(docs/verdicts.md).

The data of one verdict: K analysts and R runs of one generator, and for every pair of sets
the verdict reads (each analyst with each run: the generator's cells; each two analysts: the
humans' cells) the table of evidence between their themes (0/1 matches at the threshold, or
a strength) and the similarity that names each theme's best partner. Each cell's agreement
is read from both sides at one set size k (metrics.rarefied):

    G = mean over the K x R generator cells of A(r, g),
    H = mean over the K (K - 1) / 2 analyst pairs of A(r, h),
    D = G - H.

**The interval: a random-effects model of the cells, fitted by moments.** A cell's agreement
is A(x, y) = mu_type + e_x + e_y + xi_xy: e the writers' own effects (a careful analyst
agrees more with everyone), random where the factor is (analysts from three analysts, runs
from three runs; below that the verdict is about these writers), and xi what the writers'
themes happened to be. Then

    Var D = V_themes + sigma_A^2 / K + sigma_G^2 / R,

each analyst's effect entering D with weight -1/K (once in G, twice in H) and each run's with
1/R. V_themes is the jackknife over the themes (each set's themes one sample: Arvesen 1969,
"Jackknifing U-statistics", Ann. Math. Statist. 40: 2076-2100), linearised: a theme's
influence is what leaving its own values out of its sides moves D by. The two themes of a
good pair score each other, so the influences of two themes that are each other's best
partner in some pair of sets (or share a declared group) are summed together, the dyadic
form of a cluster-robust variance over a dependency graph (Cameron and Miller 2014, "Robust
inference for dyadic data"; Aronow, Samii and Assenova 2015, Political Analysis 23:
564-577), with negative eigenvalues set to 0 (Cameron, Gelbach and Miller 2011).
sigma_A^2 is the spread of the analysts' mean agreement with the runs less what V_themes
gives that spread (the moment estimator of a one-way random effect, truncated at 0),
sigma_G^2 likewise over the runs. The interval is D +- t sqrt(Var D), t at Satterthwaite's
(1946) degrees of freedom of the parts (the linked themes' components - 1, K - 1, R - 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import ndtri, stdtr, stdtrit

from themesim.metrics.verdicts.rarefied import rarefaction_weights

VERDICTS = ("better", "equivalent", "non-inferior", "inconclusive", "worse")
# verdicts.csv's margin_source: the config's fixed margin, or the opt-in ratio test
MARGIN_CONFIG, MARGIN_SPREAD = "config", "analysts' spread (ratio test)"
# A writer factor is random from this many writers; below, the verdict is about these
# writers, and only their themes are sampled.
MIN_RANDOM = 3
CI_METHOD = "random-effects moments: dyadic jackknife over {units}{writers}, Satterthwaite t"


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
    var_themes: float = 0.0
    var_analysts: float = 0.0  # sigma_A^2 / K
    var_runs: float = 0.0  # sigma_G^2 / R
    covers: tuple[str, ...] = field(default_factory=tuple)
    ci_method: str = ""
    p_better: float = np.nan  # one-sided p-values of the words' claims
    p_worse: float = np.nan
    p_non_inferior: float = np.nan
    p_equivalent: float = np.nan
    run_sd: float = np.nan
    analyst_sd: float = np.nan


def _rarefied(sorted_rows: np.ndarray, k: int) -> np.ndarray:
    return sorted_rows @ rarefaction_weights(sorted_rows.shape[1], min(k, sorted_rows.shape[1]))


def _writer_variance(means: np.ndarray, spread: float) -> float:
    """Moment estimate of the writers' own variance: the spread of their means less what
    their themes alone give it (`spread`: tr(P C P) / (n - 1), C the themes' variance
    matrix of the means), at least 0."""
    return max(float(means.var(ddof=1) - spread), 0.0)


def _spread(psi: np.ndarray, adj) -> float:
    """tr(P C P) / (n - 1) of C = psi' (I + adj) psi, the themes' variance matrix of n
    means (psi: themes x n), without forming C: tr(C) - 1'C1 / n, over n - 1."""
    n = psi.shape[1]
    if n < 2:
        return 0.0
    trace = float((psi * (psi + adj @ psi)).sum())
    s = psi.sum(axis=1)
    total = float(s @ (s + adj @ s))
    return (trace - total / n) / (n - 1)


def _satterthwaite(parts: list[tuple[float, float]]) -> float:
    total = sum(v for v, _ in parts)
    denom = sum(v**2 / df for v, df in parts if df > 0 and v > 0)
    return total**2 / denom if denom > 0 else np.inf


def _quantile(df: float, alpha: float) -> float:
    return float(stdtrit(df, 1 - alpha) if np.isfinite(df) else ndtri(1 - alpha))


@dataclass
class _Fit:
    """The estimates (D, G, H), their variance matrix and each one's degrees of freedom."""

    est: np.ndarray  # D, G, H
    cov: np.ndarray  # (3, 3)
    df: np.ndarray  # (3,)

    def limits(self, alpha: float):
        """((D low, high), (G low, high)) at level 1 - 2 alpha: Student's t at each one's
        degrees of freedom."""
        d, g, _ = self.est
        q = [_quantile(f, alpha) for f in self.df]
        sd = np.sqrt(np.diag(self.cov))
        return (d - q[0] * sd[0], d + q[0] * sd[0]), (g - q[1] * sd[1], g + q[1] * sd[1])

    def p_above(self, bound: float) -> float:
        """One-sided p-value of 'D is above bound' (Student's t at D's degrees of freedom:
        the interval inverted)."""
        se, df = float(np.sqrt(self.cov[0, 0])), float(self.df[0])
        if not se > 0:
            return 0.0 if self.est[0] > bound else 1.0
        return float(stdtr(df if np.isfinite(df) else 1e12, -(self.est[0] - bound) / se))

    def p_below(self, bound: float) -> float:
        """One-sided p-value of 'D is below bound'."""
        se, df = float(np.sqrt(self.cov[0, 0])), float(self.df[0])
        if not se > 0:
            return 0.0 if self.est[0] < bound else 1.0
        return float(stdtr(df if np.isfinite(df) else 1e12, (self.est[0] - bound) / se))


def _pair_values(ev: np.ndarray, sim: np.ndarray, k: int):
    """One pair of sets: (its agreement, x's themes' values, y's themes' values, the
    mutual best partners (i, j) by similarity)."""
    rows = _rarefied(-np.sort(-ev, axis=1), k)
    cols = _rarefied(-np.sort(-ev.T, axis=1), k)
    best_r, best_c = np.argmax(sim, axis=1), np.argmax(sim, axis=0)
    mutual = [(i, int(j)) for i, j in enumerate(best_r) if best_c[j] == i]
    return 0.5 * (rows.mean() + cols.mean()), rows, cols, mutual


def _statistics(K: int, R: int) -> tuple[list, np.ndarray]:
    """The cells (analyst with run, then analyst pairs) and each cell's weight in the
    statistics D, G, H, the analysts' mean agreement with the runs (K) and the runs' with
    the analysts (R): a (cells, 3 + K + R) matrix."""
    gen = [(r, g) for r in range(K) for g in range(R)]
    hum = list(combinations(range(K), 2))
    w = np.zeros((len(gen) + len(hum), 3 + K + R))
    for c, (r, g) in enumerate(gen):
        w[c, [0, 1]] = 1 / (K * R)
        w[c, 3 + r] = 1 / R
        w[c, 3 + K + g] = 1 / K
    for c in range(len(gen), len(gen) + len(hum)):
        w[c, 0], w[c, 2] = -1 / len(hum), 1 / len(hum)
    return gen + hum, w


def _theme_variance(study: Study, k: int, weights: np.ndarray, cells: list):
    """(the statistics, the themes' variance matrix of D, G, H, the themes' spread of the
    analysts' and of the runs' means (_spread), the degrees of freedom).

    Each theme's influence is what leaving its own values out of its sides moves the
    statistics by (the delete-one jackknife of each side's mean, (n - 1)/n scaled); two
    themes that are each other's best partner in some pair of sets, or share a declared
    group, move together, so the variance is the influences' sum over every such link as
    well as each theme's own (a dependency-graph jackknife: Cameron and Miller's dyadic
    form). Degrees of freedom: the linked components - 1."""
    sizes = study.sizes()
    order = list(study.analysts) + list(study.runs)
    n_rows = len(study.analysts)
    index = {(x, t): i for i, (x, t) in enumerate((x, t) for x in order for t in range(sizes[x]))}
    psi = np.zeros((len(index), weights.shape[1]))
    values = np.zeros(len(cells))
    links = []
    for c, (x, y) in enumerate(cells):
        ev, sim = (np.asarray(a, dtype=np.float64) for a in study.tables[(x, y)])
        values[c], rows, cols, mutual = _pair_values(ev, sim, k)
        for name, side in ((x, rows), (y, cols)):
            n = side.size
            # leaving theme t's value out moves the side's mean by (mean - a_t) / (n - 1)
            move = 0.5 * (side.mean() - side) / (n - 1) * np.sqrt((n - 1) / n)
            at = [index[(name, t)] for t in range(n)]
            psi[at] += np.outer(move, weights[c])
        links += [(index[(x, i)], index[(y, j)]) for i, j in mutual]
    by_label: dict = {}  # a declared group: the same label in every set
    for x, labels in (study.groups or {}).items():
        for t, label in enumerate(labels or []):
            if label is not None and (x, t) in index:
                by_label.setdefault(label, []).append(index[(x, t)])
    for members in by_label.values():
        links += list(combinations(members, 2))
    n_themes = len(index)
    if links:
        i, j = np.array(links).T
        keep = i != j
        i, j = i[keep], j[keep]
    else:
        i = j = np.zeros(0, dtype=np.int64)
    # each link once whichever way it was found, both ways in the matrix
    pairs = np.unique(np.sort(np.stack([i, j], axis=1), axis=1), axis=0) if i.size else i
    ends = (np.r_[pairs[:, 0], pairs[:, 1]], np.r_[pairs[:, 1], pairs[:, 0]]) if i.size else (i, j)
    adj = sparse.csr_matrix((np.ones(ends[0].size), ends), shape=(n_themes, n_themes))
    head = psi[:, :3]
    cov = head.T @ head + head.T @ (adj @ head)
    # a dependency graph's sum need not be positive semi-definite: its negative
    # eigenvalues are set to 0 (Cameron, Gelbach and Miller 2011)
    vals, vecs = np.linalg.eigh(cov)
    cov = (vecs * np.clip(vals, 0, None)) @ vecs.T
    spreads = (_spread(psi[:, 3 : 3 + n_rows], adj), _spread(psi[:, 3 + n_rows :], adj))
    n_comp = int(connected_components(adj, directed=False)[0])
    return values @ weights, cov, spreads, max(n_comp - 1, 1)


def difference(study: Study, alpha: float = 0.05, margin: float = 0.1) -> Result:
    """D, G and H with their (1 - 2 alpha) intervals and the words' p-values."""
    analysts, runs = list(study.analysts), list(study.runs)
    K, R = len(analysts), len(runs)
    if K < 1 or R < 1:
        raise ValueError("a verdict needs one analyst and one run at least")
    sizes = study.sizes()
    if min(sizes.values()) < 2:
        raise ValueError("every set of a verdict needs two themes at least")
    k = study.k or min(sizes.values())
    idx, weights = _statistics(K, R)
    cells = [(analysts[a], runs[g]) for a, g in idx[: K * R]]
    cells += [(analysts[a], analysts[b]) for a, b in idx[K * R :]]
    est, sampling, (spread_a, spread_g), df_t = _theme_variance(study, k, weights, cells)
    if K < 2:
        est[0] = est[2] = np.nan
    rows, cols = slice(3, 3 + K), slice(3 + K, 3 + K + R)
    sig_a = _writer_variance(est[rows], spread_a) if K >= MIN_RANDOM else 0.0
    sig_g = _writer_variance(est[cols], spread_g) if R >= MIN_RANDOM else 0.0
    # each analyst's effect enters G once (1/K) and H twice (2/K); each run's G (1/R)
    va, vr = sig_a / K, sig_g / R
    writers = np.array([[va + vr, vr - va, -2 * va],
                        [vr - va, va + vr, 2 * va],
                        [-2 * va, 2 * va, 4 * va]])  # fmt: skip
    cov = sampling[:3, :3] + writers
    df = np.array([
        _satterthwaite([(sampling[0, 0], df_t), (va, K - 1), (vr, R - 1)]),
        _satterthwaite([(sampling[1, 1], df_t), (va, K - 1), (vr, R - 1)]),
        _satterthwaite([(sampling[2, 2], df_t), (4 * va, K - 1)]),
    ])  # fmt: skip
    fit = _Fit(est[:3], cov, df)
    (low, high), (g_low, g_high) = fit.limits(alpha)
    units = "themes" if not study.groups else "themes and declared groups"
    spreads = ", analysts' spread" if K >= MIN_RANDOM else ""
    spreads += ", runs' spread" if R >= MIN_RANDOM else ""
    covers = ["themes"] + (["runs"] if R >= MIN_RANDOM else [])
    covers += ["analysts"] if K >= MIN_RANDOM else []
    declared = any(x is not None for v in (study.groups or {}).values() for x in v)
    covers += ["groups"] if declared else []
    res = Result(
        difference=np.nan, ci_low=np.nan, ci_high=np.nan, level=1 - 2 * alpha,
        generator=float(est[1]), human=float(est[2]), generator_ci_low=float(g_low),
        generator_ci_high=float(g_high), se=np.nan, df=np.nan, k=k, n_runs=R, n_analysts=K,
        n_themes_generator=float(np.mean([sizes[x] for x in runs])),
        n_themes_analysts=float(np.mean([sizes[x] for x in analysts])),
        var_themes=float(sampling[0, 0]), var_analysts=va, var_runs=vr, covers=tuple(covers),
        ci_method=CI_METHOD.format(units=units, writers=spreads),
        run_sd=float(est[cols].std(ddof=1)) if R >= 2 else np.nan,
        analyst_sd=float(est[rows].std(ddof=1)) if K >= 2 else np.nan,
    )  # fmt: skip
    if K < 2:
        return res
    res.difference, res.se, res.df = float(est[0]), float(np.sqrt(cov[0, 0])), float(df[0])
    res.ci_low, res.ci_high = low, high
    res.p_better, res.p_worse = fit.p_above(0.0), fit.p_below(0.0)
    res.p_non_inferior = fit.p_above(-margin)
    res.p_equivalent = max(res.p_non_inferior, fit.p_below(margin))
    return res


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
