"""The equivalence verdict (metrics/verdicts/equivalence.py): its error at the margin, the coverage
of the difference's interval, and its power.

A design fixes the reference size n, the second analyst's match rate p_h (share of A's themes
it matches one-to-one), the true difference d = p_b - p_h and the correlation rho (phi) of
the two flags over A's themes. Each A theme then falls in one cell of the paired 2 x 2 table
(both, only B, only the analyst, neither) with known probabilities, so:

- exact rows: every 2 x 2 table of n themes is enumerated with its multinomial probability;
  P(verdict), coverage and mean width are exact (mc_se 0);
- simulated rows (the whole path the report takes): theme sets are drawn with those matches
  planted in similarity matrices, the Hungarian assignment at θ = 0.5 gives each A theme's
  flags, and the verdict is counted over the draws.

At d = -margin and d = +margin P(equivalent) is the equivalence test's type-I error; at
d = -margin P(worse) is the error of the "worse" verdict; both are held against alpha.
The designs (sizes 6-30, and 40 and 60 where equivalence within 0.10 becomes possible at
all; analyst rates 0.3-0.9, rho 0-0.6) are not the grid the continuity adjustment was
checked on (docs/metrics.md).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.special import gammaln, xlogy

from themesim.metrics.sets.coverage import check_matrix, hungarian_pairs
from themesim.metrics.thresholds import matches
from themesim.metrics.verdicts.equivalence import equivalence_test
from themesim.metrics.verdicts.paired import paired_interval
from themesim.validate.core import Scope, check_grid, rng_for, row, summary_frame

AREA = "equivalence"
MARGIN = 0.10
ALPHA = 0.05
THETA = 0.5
GRIDS = {
    "small": {
        "n": [6, 11, 19, 30, 40],
        "p_h": [0.5, 0.8],
        "rho": [0.0, 0.5],
        "simulated": [(36, 0.8, 0.5)],
        "draws": 400,
    },
    "full": {
        "n": [*range(6, 31), 40, 60],
        "p_h": [0.3, 0.5, 0.65, 0.8, 0.9],
        "rho": [0.0, 0.3, 0.6],
        "simulated": [
            (8, 0.6, 0.0),
            (16, 0.8, 0.4),
            (24, 0.7, 0.3),
            (30, 0.5, 0.6),
            (40, 0.9, 0.6),
            (60, 0.65, 0.3),
        ],
        "draws": 4000,
    },
}
# Differences measured per design: the margins (errors), 0 (power of `equivalent`),
# twice the margin below (power of `worse`) and a coverage point in between.
DIFFERENCES = (-2 * MARGIN, -MARGIN, -MARGIN / 2, 0.0, MARGIN)
PROCEDURE = "SCAS paired interval, TOST at the margin"


def cells(p_h: float, d: float, rho: float):
    """(both, only B, only the analyst, neither) probabilities, or None when the design is
    impossible (a probability outside [0, 1])."""
    p_b = p_h + d
    if not (0 <= p_b <= 1):
        return None
    p11 = p_b * p_h + rho * np.sqrt(p_b * (1 - p_b) * p_h * (1 - p_h))
    p = np.array([p11, p_b - p11, p_h - p11, 1 - p_b - p_h + p11])
    if (p < -1e-12).any():
        return None
    p = np.clip(p, 0.0, None)
    return p / p.sum()


@functools.cache
def _tables(n: int) -> np.ndarray:
    """Every 2 x 2 table (a, b, c, d) of n units, (T, 4)."""
    out = [
        (a, b, c, n - a - b - c)
        for a in range(n + 1)
        for b in range(n + 1 - a)
        for c in range(n + 1 - a - b)
    ]
    return np.array(out, dtype=np.int64)


@functools.cache
def _intervals(n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    t = _tables(n)
    lo, hi = paired_interval(t[:, 0], t[:, 1], t[:, 2], t[:, 3], level)
    return np.asarray(lo), np.asarray(hi)


def _probabilities(n: int, p: np.ndarray) -> np.ndarray:
    t = _tables(n).astype(np.float64)
    log = gammaln(n + 1) - gammaln(t + 1).sum(axis=1) + xlogy(t, p).sum(axis=1)
    return np.exp(log)


def exact(n: int, p: np.ndarray, d: float, margin: float = MARGIN, alpha: float = ALPHA):
    """P(equivalent), P(worse), P(better), P(lower end above -margin), coverage of the
    (1 - 2 alpha) and (1 - alpha) intervals and the first's mean width, for n themes and cell
    probabilities p, true difference d."""
    prob = _probabilities(n, p)
    lo, hi = _intervals(n, round(1 - 2 * alpha, 12))
    lo95, hi95 = _intervals(n, round(1 - alpha, 12))
    eps = 1e-9
    eq = (lo > -margin) & (hi < margin)
    return {
        "p_equivalent": float(prob[eq].sum()),
        "p_worse": float(prob[hi < 0].sum()),  # wholly below 0 (docs/verdicts.md)
        "p_better": float(prob[lo > 0].sum()),
        "p_above_minus_margin": float(prob[lo > -margin].sum()),  # non-inferior or more
        "coverage_tost": float(prob[(lo - eps <= d) & (d <= hi + eps)].sum()),
        "coverage": float(prob[(lo95 - eps <= d) & (d <= hi95 + eps)].sum()),
        "mean_width": float((prob * (hi - lo)).sum()),
        "tables": int(prob.size),
    }


def hungarian_matched(S, threshold: float, op: str = "ge") -> np.ndarray:
    """Per theme of A (rows of S): matched one-to-one at the threshold (metrics.sets.coverage's
    Hungarian assignment, the pair kept when S op threshold)."""
    S = check_matrix(S)
    rows, cols = hungarian_pairs(S)
    flags = np.zeros(S.shape[0], dtype=bool)
    flags[rows[matches(S[rows, cols], threshold, op)]] = True
    return flags


def _planted(rng, flags: np.ndarray, n_b: int) -> np.ndarray:
    """A similarity matrix whose Hungarian pairs at THETA are exactly the flagged A themes:
    partners at 0.65-0.95, every other cell at 0-0.3 (an augmenting path trades k pairs of at
    least 0.65 for k + 1 cells of at most 0.3, which never pays)."""
    n_a = flags.size
    S = rng.uniform(0.0, 0.3, size=(n_a, n_b))
    rows = np.flatnonzero(flags)
    cols = rng.permutation(n_b)[: rows.size]
    S[rows, cols] = rng.uniform(0.65, 0.95, size=rows.size)
    return S


def simulate(n: int, p: np.ndarray, draws: int, rng) -> dict:
    """Shares of draws whose interval makes each claim (exact()'s keys), each draw through
    matrices and the Hungarian assignment."""
    counts = dict.fromkeys(("p_equivalent", "p_worse", "p_better", "p_above_minus_margin"), 0)
    for _ in range(draws):
        cell = rng.choice(4, size=n, p=p)
        x, y = np.isin(cell, (0, 1)), np.isin(cell, (0, 2))
        n_b = n + int(rng.integers(0, 3))  # B and the analyst may have a theme or two more
        fx = hungarian_matched(_planted(rng, x, n_b), THETA)
        fy = hungarian_matched(_planted(rng, y, n + int(rng.integers(0, 3))), THETA)
        if not (np.array_equal(fx, x) and np.array_equal(fy, y)):
            raise AssertionError("planted matches not recovered by the Hungarian assignment")
        t = equivalence_test(fx, fy, MARGIN, ALPHA)
        lo, hi = t["difference_ci_low"], t["difference_ci_high"]
        counts["p_equivalent"] += t["verdict"] == "equivalent"
        counts["p_worse"] += hi < 0
        counts["p_better"] += lo > 0
        counts["p_above_minus_margin"] += lo > -MARGIN
    return {k: v / draws for k, v in counts.items()}


def _design(n, p_h, d, rho) -> str:
    return f"n={n},p_h={p_h:g},d={d:+.2f},rho={rho:g}"


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    g = GRIDS[grid_name]
    detail, rows = [], []
    for n in g["n"]:
        for p_h in g["p_h"]:
            for rho in g["rho"]:
                for d in DIFFERENCES:
                    p = cells(p_h, d, rho)
                    if p is None:
                        continue
                    e = exact(n, p, d)
                    name = _design(n, p_h, d, rho)
                    detail.append(
                        {"design": name, "n_a": n, "p_h": p_h, "d": d, "rho": rho}
                        | {"kind": "exact"}
                        | e
                    )
                    rows += _summary_rows(name, n, d, e, draws=e["tables"], mc_se=0.0)
    for n, p_h, rho in g["simulated"]:
        for d in (-MARGIN, MARGIN, 0.0):
            p = cells(p_h, d, rho)
            name = _design(n, p_h, d, rho)
            sim = simulate(n, p, g["draws"], rng_for(seed, AREA, name))
            e = exact(n, p, d)
            detail.append(
                {"design": name, "n_a": n, "p_h": p_h, "d": d, "rho": rho, "kind": "simulated"}
                | sim
                | {f"exact_{k}": e[k] for k in sim}
                | {"draws": g["draws"]}
            )
            procedure = PROCEDURE + " (simulated theme sets, Hungarian at θ 0.5)"
            rows += _error_rows(name, n, d, sim, g["draws"], procedure)
    return pd.DataFrame(detail), summary_frame(rows)


def _error_rows(name, n, d, p, draws, procedure, mc_se=None) -> list[dict]:
    """type1_error of each claim where its null holds (equivalent and non-inferior at the
    margin, worse and better at 0), power at 0 (equivalent) and twice the margin below
    (worse). p: exact()'s or simulate()'s shares."""

    def measured(quantity, prop, value, nominal=np.nan):
        return row(Scope(AREA, name, n_a=n), quantity, procedure, prop, value, draws,
                   nominal=nominal, mc_se=mc_se)  # fmt: skip

    out = []
    if np.isclose(abs(d), MARGIN):
        out.append(measured("verdict equivalent", "type1_error", p["p_equivalent"], ALPHA))
    if np.isclose(d, -MARGIN):
        out.append(measured("verdict non-inferior", "type1_error", p["p_above_minus_margin"],
                            ALPHA))  # fmt: skip
    if np.isclose(d, 0.0):
        out.append(measured("verdict worse", "type1_error", p["p_worse"], ALPHA))
        out.append(measured("verdict better", "type1_error", p["p_better"], ALPHA))
        out.append(measured("verdict equivalent", "power", p["p_equivalent"]))
    if np.isclose(d, -2 * MARGIN):
        out.append(measured("verdict worse", "power", p["p_worse"]))
    return out


def _summary_rows(name, n, d, e, draws, mc_se) -> list[dict]:
    """The exact rows of one design: errors and power, coverage at both levels, width."""
    out = _error_rows(name, n, d, e, draws, PROCEDURE, mc_se)
    for prop, value, nominal in (
        ("coverage", e["coverage"], 1 - ALPHA),
        ("coverage_tost_level", e["coverage_tost"], 1 - 2 * ALPHA),
        ("mean_width", e["mean_width"], np.nan),
    ):
        out.append(
            row(
                Scope(AREA, name, n_a=n),
                "difference",
                "SCAS paired interval",
                prop,
                value,
                draws,
                nominal=nominal,
                mc_se=mc_se,
            )  # fmt: skip
        )
    return out
