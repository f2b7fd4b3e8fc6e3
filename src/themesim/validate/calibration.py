"""Calibration: coverage and width of the AUC and threshold intervals, and whether P(match)
re-based to another share of matches is calibrated there (metrics/calibration.py,
docs/thresholds.md).

Simulated rated pairs with theme structure: a pair's score is μ_label + u_a + v_b + e, with
u_a shared by every pair of its A theme and v_b by every pair of its B theme. Designs:
"sparse" as the demo (10 A themes, 4–5 pairs each, B texts drawn from a pool so a few recur;
57 % matches), the same on a logistic scale with heavy-tailed noise ("sparse_logit"), more
pairs ("sparse_large"), and a fully crossed grid (6 × 8, 20 % matches); the full grid also
checks the AUC interval on two score models it was not built on: a grid whose themes'
wording outweighs each pair's noise ("grid_strong_themes") and tight matches among widely
spread non-matches ("sparse_unequal"). The true values are
the statistics on one sample of the same design 300 times larger (themes and pairs alike).
Each draw also fits the isotonic P(match) and scores it on a comparison-sized population of
the same themes' kind at 10 % matches, as rated and re-based (prior shift).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from themesim.metrics import calibration as cal
from themesim.metrics.isotonic import map_calibrated
from themesim.validate.core import Scope, draw_interval_rows, rng_for, row, summary_frame
from themesim.validate.parallel import starmap

AREA = "calibration"
TARGET = 0.10  # the evaluated comparisons' share of matching cells

# name: (layout, A themes, pairs per A theme or B themes, share of matches, link)
DESIGNS = {
    "sparse": ("sparse", 10, 4.4, 0.57, "normal"),
    "sparse_logit": ("sparse", 10, 4.4, 0.57, "logit"),
    "sparse_large": ("sparse", 30, 4.0, 0.5, "normal"),
    "grid": ("grid", 6, 8, 0.2, "normal"),
    # checks of the AUC interval on score models it was not built on (full grid)
    "grid_strong_themes": ("grid", 6, 8, 0.2, "themes"),
    "sparse_unequal": ("sparse", 10, 4.4, 0.57, "unequal"),
}
# procedure: (resampling scheme, smoothing of the thresholds' resamples, the AUC's interval).
# Rows of the AUC under a "score" procedure are named cal.AUC_CI_METHOD; under "percentile"
# the bootstrap's name (the AUC's percentile interval over the same resamples).
PROCEDURES = {
    "pairs_bootstrap": ("pairs", 0.0, "percentile"),  # before issue 23
    cal.CI_METHOD: ("stratified_theme", 1.0, "score"),  # the default
    # the AUC's theme-bootstrap percentile interval (the first round of issue 23)
    "stratified_theme_unsmoothed": ("stratified_theme", 0.0, "percentile"),
    "stratified_bootstrap": ("stratified", 1.0, "percentile"),
    "stratified_oneway_bootstrap": ("stratified_oneway", 1.0, "percentile"),
}
SMALL_BASELINE = "stratified_theme_unsmoothed"  # the AUC's last interval, for comparison
GRIDS = {
    # (designs, draws, resamples, procedures)
    "small": (("sparse", "grid"), 80, 200, ("pairs_bootstrap", cal.CI_METHOD, SMALL_BASELINE)),
    "full": (tuple(DESIGNS), 200, 300, tuple(PROCEDURES)),
}
QUANTITIES = ("auc", "f1_threshold", "youden_threshold")


def simulate(rng: np.random.Generator, design: str, scale: int = 1) -> dict:
    """Scores, labels and theme ids of one set of rated pairs (scale: themes × scale)."""
    layout, n_a, per, share, link = DESIGNS[design]
    n_a *= scale if layout == "sparse" else max(1, scale // 12)
    if layout == "sparse":
        counts = rng.poisson(per - 1, n_a) + 1  # every A theme rated at least once
        a = np.repeat(np.arange(n_a), counts)
        b = rng.integers(0, int(0.7 * a.size) + 1, a.size)  # a few B texts recur
    else:
        n_b = int(per) * max(1, scale // 12)
        a, b = (x.ravel() for x in np.meshgrid(np.arange(n_a), np.arange(n_b), indexing="ij"))
    n = a.size
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, int(round(share * n)), replace=False)] = 1
    return {"s": _scores(rng, y, a, b, link), "y": y, "a": a, "b": b}


def _scores(rng, y, a, b, link: str) -> np.ndarray:
    u = rng.normal(0, 1, a.max() + 1)[a]
    v = rng.normal(0, 1, b.max() + 1)[b]
    if link == "normal":  # cosine-like, matches 0.2 higher
        return np.where(y == 1, 0.65, 0.45) + 0.05 * u + 0.04 * v + 0.06 * rng.normal(0, 1, y.size)
    if link == "themes":  # the themes' wording outweighs the pair's own noise
        return np.where(y == 1, 0.65, 0.45) + 0.08 * u + 0.08 * v + 0.04 * rng.normal(0, 1, y.size)
    if link == "unequal":  # matches tight, non-matches spread wide
        e = rng.normal(0, 1, y.size)
        return np.where(y == 1, 0.62 + 0.02 * e, 0.40 + 0.10 * e) + 0.03 * u + 0.03 * v
    eta = np.where(y == 1, 1.0, -0.6) + 0.5 * u + 0.4 * v + 0.5 * rng.standard_t(4, y.size)
    return 1 / (1 + np.exp(-eta))


def truth(design: str, seed: int) -> dict:
    d = simulate(rng_for(seed, AREA, design, "population"), design, scale=300)
    auc, t_f1, t_j = cal.resample_stats(d["s"], d["y"])
    return {"auc": auc, "f1_threshold": t_f1, "youden_threshold": t_j}


def population(design: str, seed: int, share: float, size: int = 20000) -> tuple:
    """Pairs of new themes at another share of matches: the cells of a comparison."""
    rng = rng_for(seed, AREA, design, "comparison")
    n = size
    a, b = rng.integers(0, n // 4, n), rng.integers(0, n // 4, n)
    y = (rng.random(n) < share).astype(np.int64)
    return _scores(rng, y, a, b, DESIGNS[design][4]), y


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over equal-count bins of P: Σ share · |mean P − rate|."""
    order = np.argsort(p, kind="stable")
    err = 0.0
    for part in np.array_split(order, bins):
        err += part.size / p.size * abs(p[part].mean() - y[part].mean())
    return float(err)


def run(grid: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    designs, draws, n_boot, procedures = GRIDS[grid]
    tasks = [(design, seed, draws, n_boot, procedures) for design in designs]
    detail = [r for part in starmap(_design, tasks) for r in part]  # designs in parallel
    df = pd.DataFrame(detail)
    rows = []
    for (design, q, proc), part in df.groupby(["design", "quantity", "procedure"], sort=False):
        rows.extend(_summary_rows(design, q, proc, part))
    return df, summary_frame(rows)


def _design(design: str, seed: int, draws: int, n_boot: int, procedures) -> list[dict]:
    """The detail rows of one design (its own generators: the same on any worker)."""
    detail = []
    true = truth(design, seed)
    s_pop, y_pop = population(design, seed, TARGET)
    rng = rng_for(seed, AREA, design)
    for k in range(draws):
        d = simulate(rng, design)
        for proc in procedures:
            scheme, smooth, auc_method = PROCEDURES[proc]
            procedure = cal.IntervalProcedure(scheme, smooth, auc_method)
            out = cal.calibrate(d["s"], d["y"], n_boot=n_boot, seed=k, themes_a=d["a"],
                                themes_b=d["b"], procedure=procedure)  # fmt: skip
            for q in QUANTITIES:
                name = cal.AUC_CI_METHOD if q == "auc" and auc_method == "score" else proc
                detail.append(
                    {"design": design, "draw": k, "quantity": q, "procedure": name}
                    | {"estimate": out[q], "ci_low": out[f"{q}_ci_low"]}
                    | {"ci_high": out[f"{q}_ci_high"], "truth": true[q]}
                )
        fit = cal.isotonic_fit(d["s"], d["y"])
        prevalence = float(d["y"].mean())
        for name, target in (("as_rated", None), ("prior_shift_rebased", TARGET)):
            p = map_calibrated(s_pop, cal.with_prevalence(fit, prevalence, target))
            detail.append(
                {"design": design, "draw": k, "quantity": "p_match", "procedure": name}
                | {"estimate": ece(p, y_pop), "mean_p": float(p.mean())}
            )
    return detail


def _summary_rows(design: str, q: str, proc: str, part: pd.DataFrame) -> list[dict]:
    n = len(part)
    if q == "p_match":
        e = part["estimate"]
        m = part["mean_p"]
        at = Scope(AREA, design)
        return [
            row(at, q, proc, "calibration_error", float(e.mean()), n,
                mc_se=float(e.std(ddof=1) / math.sqrt(n))),
            row(at, q, proc, "mean_p_minus_rate", float(m.mean() - TARGET), n,
                nominal=0.0, mc_se=float(m.std(ddof=1) / math.sqrt(n))),
        ]  # fmt: skip
    ok = part.dropna(subset=["ci_low", "ci_high"])
    # the earlier and alternative procedures are shown, not bound: themesim prints the default
    required = proc in (cal.CI_METHOD, cal.AUC_CI_METHOD)
    return draw_interval_rows(Scope(AREA, design, required=required), q, proc, ok)
