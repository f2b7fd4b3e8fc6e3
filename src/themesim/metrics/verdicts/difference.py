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
themes happened to be, shared by every cell of a set. Then

    Var D = V_themes + sigma_A^2 / K + sigma_G^2 / R,

each analyst's effect entering D with weight -1/K (once in G, twice in H) and each run's with
1/R. V_themes is the jackknife over the themes (Arvesen 1969, "Jackknifing U-statistics",
Ann. Math. Statist. 40: 2076-2100, for a statistic of several independent samples: each
set's themes are one sample), every theme left out in turn with the rarefied values of the
other sets recomputed without it, so a good pair's two themes, which score each other, are
counted together; where theme files declare groups (domains), a group's themes, in every
set, are one unit. sigma_A^2 is the spread of the analysts' mean agreement with the runs
less what V_themes' own jackknife says their themes alone give it (the moment estimator of a
one-way random effect, truncated at 0), sigma_G^2 likewise over the runs. The interval is
D +- t sqrt(V), t at Satterthwaite's (1946) degrees of freedom of the parts (each set's
themes: their number - 1; declared groups: theirs - 1; analysts K - 1; runs R - 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.special import ndtri, stdtr, stdtrit

from themesim.metrics.verdicts.rarefied import rarefaction_weights

VERDICTS = ("better", "equivalent", "non-inferior", "inconclusive", "worse")
# A writer factor is random from this many writers; below, the verdict is about these
# writers, and only their themes are sampled.
MIN_RANDOM = 3
CI_METHOD = "random-effects moments: jackknife over {units}{writers}, Satterthwaite t"


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


def _without_each_column(values: np.ndarray, k: int) -> np.ndarray:
    """(n, m): each row's rarefied best value with column j left out (at k, or at m - 1
    where fewer remain)."""
    n, m = values.shape
    order = np.argsort(-values, axis=1, kind="stable")
    s = np.take_along_axis(values, order, axis=1)
    w = rarefaction_weights(m - 1, min(k, m - 1))
    # leaving out rank r: ranks before it keep their weight, ranks after it move up one
    before = np.concatenate([np.zeros((n, 1)), np.cumsum(s[:, :-1] * w, axis=1)], axis=1)
    after_terms = s[:, 1:] * w  # rank j + 1 takes weight j
    after = np.concatenate(
        [np.cumsum(after_terms[:, ::-1], axis=1)[:, ::-1], np.zeros((n, 1))], axis=1
    )
    by_rank = before + after  # (n, m): value without the column of rank r
    out = np.empty_like(by_rank)
    np.put_along_axis(out, order, by_rank, axis=1)
    return out


class _Cell:
    """One pair of sets: its agreement, and its agreement with one theme of each side (or
    none) left out."""

    def __init__(self, ev: np.ndarray, sim: np.ndarray, k: int):
        self.ev, self.k = ev, k
        self.rows = _rarefied(-np.sort(-ev, axis=1), k)  # x's themes against y
        self.cols = _rarefied(-np.sort(-ev.T, axis=1), k)  # y's themes against x
        self.value = 0.5 * (self.rows.mean() + self.cols.mean())
        self.rows_without = _without_each_column(ev, k)  # (n, m): row i without y's j
        self.cols_without = _without_each_column(ev.T, k)  # (m, n): col j without x's i
        # mutual best partners (by similarity): two themes that score each other
        best_r, best_c = np.argmax(sim, axis=1), np.argmax(sim, axis=0)
        self.mutual = [(i, int(j)) for i, j in enumerate(best_r) if best_c[j] == i]

    def without_pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """without() for many (i, j) at once; -1 for none."""
        n, m = self.ev.shape
        has_i, has_j = i >= 0, j >= 0
        ii, jj = np.where(has_i, i, 0), np.where(has_j, j, 0)
        rows_sum = np.where(has_j, self.rows_without.sum(axis=0)[jj], self.rows.sum())
        own_row = np.where(has_j, self.rows_without[ii, jj], self.rows[ii])
        x_side = (rows_sum - np.where(has_i, own_row, 0.0)) / (n - has_i)
        cols_sum = np.where(has_i, self.cols_without.sum(axis=0)[ii], self.cols.sum())
        own_col = np.where(has_i, self.cols_without[jj, ii], self.cols[jj])
        y_side = (cols_sum - np.where(has_j, own_col, 0.0)) / (m - has_j)
        return 0.5 * (x_side + y_side)

    def without(self, i: int | None, j: int | None) -> float:
        """The agreement with x's theme i and y's theme j left out (None: none)."""
        n, m = self.ev.shape
        rows = self.rows if j is None else self.rows_without[:, j]
        cols = self.cols if i is None else self.cols_without[:, i]
        x_side = (rows.sum() - (rows[i] if i is not None else 0.0)) / (n - (i is not None))
        y_side = (cols.sum() - (cols[j] if j is not None else 0.0)) / (m - (j is not None))
        return 0.5 * (x_side + y_side)

    def without_many(self, drop_x, drop_y) -> float:
        """The agreement with several themes of a side left out, recomputed."""
        keep_x = np.ones(self.ev.shape[0], bool)
        keep_y = np.ones(self.ev.shape[1], bool)
        keep_x[drop_x], keep_y[drop_y] = False, False
        if not keep_x.any() or not keep_y.any():  # a set left without themes: no value
            return np.nan
        ev = self.ev[keep_x][:, keep_y]
        # each side at k, or at the other side's size where fewer remain (as `without`)
        rows = _rarefied(-np.sort(-ev, axis=1), self.k)
        cols = _rarefied(-np.sort(-ev.T, axis=1), self.k)
        return 0.5 * (rows.mean() + cols.mean())


def _clusters(study: Study, cells: dict, sizes: dict, order: list[str]) -> list[list]:
    """The jackknife's units: themes joined by mutual best partnership in any cell (the two
    themes of a good pair score each other, so they are left out together) and, where theme
    files declare groups, by a shared group label; each unit a list of (set, theme)."""
    index = {(x, t): None for x in order for t in range(sizes[x])}
    index = {key: i for i, key in enumerate(index)}
    parent = list(range(len(index)))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def join(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for (x, y), cell in cells.items():
        for i, j in cell.mutual:
            join(index[(x, i)], index[(y, j)])
    first = {}
    for x, labels in (study.groups or {}).items():
        for t, label in enumerate(labels or []):
            if label is not None and (x, t) in index:
                join(first.setdefault(label, index[(x, t)]), index[(x, t)])
    units: dict[int, list] = {}
    for key, i in index.items():
        units.setdefault(find(i), []).append(key)
    return list(units.values())


def _writer_variance(means: np.ndarray, sampling: np.ndarray) -> float:
    """Moment estimate of the writers' own variance: the spread of their means less what
    their themes alone give it (tr(P C P) / (n - 1), C the themes' variance matrix of the
    means), at least 0."""
    n = means.size
    p = np.eye(n) - 1 / n
    return max(float(means.var(ddof=1) - np.trace(p @ sampling @ p) / (n - 1)), 0.0)


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


def _replicates(study: Study, k: int):
    """(cell names, the cells' values, their values with each unit left out)."""
    sizes = study.sizes()
    gen = [(r, g) for r in study.analysts for g in study.runs]
    names = gen + list(combinations(study.analysts, 2))
    cells = {
        c: _Cell(*(np.asarray(a, dtype=np.float64) for a in study.tables[c]), k) for c in names
    }
    units = _clusters(study, cells, sizes, list(study.analysts) + list(study.runs))
    full = np.array([cells[c].value for c in names])
    table = np.tile(full, (len(units), 1))
    # per cell, each unit's theme on either side (-1: none; -2: two or more, recomputed)
    pick = {x: np.full(len(units), -1) for x in list(study.analysts) + list(study.runs)}
    for u, members in enumerate(units):
        for x, t in members:
            pick[x][u] = t if pick[x][u] == -1 else -2
    for c, (x, y) in enumerate(names):
        i, j = pick[x], pick[y]
        touch = (i != -1) | (j != -1)
        simple = touch & (i >= -1) & (j >= -1)
        table[simple, c] = cells[(x, y)].without_pairs(i[simple], j[simple])
        for u in np.flatnonzero(touch & ~simple):
            dx = [t for s, t in units[u] if s == x]
            dy = [t for s, t in units[u] if s == y]
            table[u, c] = cells[(x, y)].without_many(dx, dy)
    return names, full, table


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
    names, full, table = _replicates(study, k)
    ng = K * R

    def stats(v):  # (..., cells) -> (..., [D, G, H, row means..., column means...])
        with np.errstate(invalid="ignore"):  # a replicate that left a set empty: NaN
            mg = v[..., :ng].mean(axis=-1)
            mh = v[..., ng:].mean(axis=-1) if K >= 2 else np.full(mg.shape, np.nan)
            grid = v[..., :ng].reshape(*v.shape[:-1], K, R)
            head = np.stack([mg - mh, mg, mh], axis=-1)
            return np.concatenate([head, grid.mean(axis=-1), grid.mean(axis=-2)], axis=-1)

    est, reps = stats(full), stats(table)
    # a unit that holds every theme of a set cannot be left out: the jackknife goes without
    # it (its themes stay in the estimate)
    keep = np.isfinite(reps[:, 1]) & (np.isfinite(reps[:, 2]) | (K < 2))
    reps = np.nan_to_num(reps[keep]) if keep.any() else np.zeros((1, reps.shape[1]))
    n_units = reps.shape[0]
    dev = reps - reps.mean(axis=0)
    sampling = (n_units - 1) / n_units * dev.T @ dev  # the delete-a-unit jackknife
    rows, cols = slice(3, 3 + K), slice(3 + K, 3 + K + R)
    sig_a = _writer_variance(est[rows], sampling[rows, rows]) if K >= MIN_RANDOM else 0.0
    sig_g = _writer_variance(est[cols], sampling[cols, cols]) if R >= MIN_RANDOM else 0.0
    # each analyst's effect enters G once (1/K) and H twice (2/K); each run's G (1/R)
    va, vr = sig_a / K, sig_g / R
    writers = np.array([[va + vr, vr - va, -2 * va],
                        [vr - va, va + vr, 2 * va],
                        [-2 * va, 2 * va, 4 * va]])  # fmt: skip
    cov = sampling[:3, :3] + writers
    u = n_units - 1
    df = np.array([
        _satterthwaite([(sampling[0, 0], u), (va, K - 1), (vr, R - 1)]),
        _satterthwaite([(sampling[1, 1], u), (va, K - 1), (vr, R - 1)]),
        _satterthwaite([(sampling[2, 2], u), (4 * va, K - 1)]),
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
    grid = full[:ng].reshape(K, R)
    method = CI_METHOD.format(units=units, writers=spreads)
    res = Result(
        difference=np.nan, ci_low=np.nan, ci_high=np.nan, level=1 - 2 * alpha,
        generator=float(est[1]), human=float(est[2]), generator_ci_low=float(g_low),
        generator_ci_high=float(g_high), se=np.nan, df=np.nan, k=k, n_runs=R, n_analysts=K,
        n_themes_generator=float(np.mean([sizes[x] for x in runs])),
        n_themes_analysts=float(np.mean([sizes[x] for x in analysts])),
        var_themes=float(sampling[0, 0]), var_analysts=va, var_runs=vr, covers=tuple(covers),
        ci_method=method,
        run_sd=float(grid.mean(axis=0).std(ddof=1)) if R >= 2 else np.nan,
        analyst_sd=float(full[ng:].std(ddof=1)) if K >= 3 else np.nan,
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
