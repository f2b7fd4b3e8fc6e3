"""results/report/verdicts.csv's generator rows: per method, threshold, route and generator,
the rarefied two-sided agreement of the generator with the analysts against theirs with each
other (metrics/verdicts/rarefied.py, metrics/verdicts/difference.py; docs/verdicts.md).

Routes (`evidence`), each read from the pair's whole similarity table on the method's scale:

- `matched`: 1 where two themes match at the threshold (S op θ), else 0;
- `strength`: the similarity itself on the method's scale, or the calibrated P(match) where
  the method has an isotonic fit on the cosine scale (the fit is held fixed);
- `segments` (where grounding ran): Cohen's κ over the transcript segments between the two
  themes, both applied by the automatic coder.

One row per generator is the study's primary comparison (`verdict.primary`: a method, a
route and a threshold fixed before the data); its words across generators are read at
Benjamini and Hochberg's false discovery rate (`p_adjusted`). Every other row is a
sensitivity analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import stdtrit
from scipy.stats import chi2
from statsmodels.stats.multitest import multipletests

from themesim.metrics.isotonic import map_calibrated
from themesim.metrics.method_scale import method_matrix
from themesim.metrics.thresholds import Thresholds, matches
from themesim.metrics.verdicts.difference import (
    MARGIN_CONFIG,
    MARGIN_SPREAD,
    MIN_RANDOM,
    Study,
    difference,
    verdict,
    word_from_p,
)

ROUTES = ("matched", "strength", "segments")
ROLE_GENERATOR = "generator"
PRIMARY, SENSITIVITY = "primary", "sensitivity"
NOT_MADE = "a comparison it needs was not made by this method (its comparisons: setting)"
ONE_ANALYST = (
    "one analyst: no human-human agreement to compare with (the agreement is shown with its "
    "interval; a second analyst's coding would give a verdict)"
)
# the claim each word makes, as the p-value columns name it
CLAIMS = {"equivalent": "p_equivalent", "better": "p_better", "worse": "p_worse",
          "non-inferior": "p_non_inferior", "inconclusive": "p_non_inferior"}  # fmt: skip


@dataclass
class MethodData:
    """What a method's verdicts read: its thresholds, its raw similarity tables
    (similarity(a, b): rows a's themes, columns b's, in the sets' theme order), its isotonic
    fit (or None) and, where grounding ran, the coder's κ tables (kappa(a, b), or None)."""

    method: str
    thresholds: Thresholds
    similarity: Callable[[str, str], np.ndarray]
    fit: pd.DataFrame | None = None
    kappa: Callable[[str, str], np.ndarray] | None = None
    # (a, b) -> the pair's table on the method's scale: every threshold, route and generator
    # reads the same one (the analysts' pairs once per generator)
    scaled: dict = field(default_factory=dict, repr=False, compare=False)


def _on_scale(m: MethodData, a: str, b: str) -> np.ndarray:
    if (a, b) in m.scaled:
        return m.scaled[a, b]
    t = m.thresholds
    extra = {}
    if t.scale == "z":
        extra = {"W_a": m.similarity(a, a), "W_b": m.similarity(b, b)}
    S, _ = method_matrix(m.similarity(a, b), scale=t.scale, clamp=t.clamp, fit=m.fit, **extra)
    S = np.nan_to_num(np.asarray(S, dtype=np.float64), nan=-np.inf)
    S.setflags(write=False)  # shared by every reader
    m.scaled[a, b] = S
    return S


def route_table(m: MethodData, route: str, threshold: float, a: str, b: str):
    """(evidence, similarity) of one pair on a route."""
    S = _on_scale(m, a, b)
    order = np.where(np.isfinite(S), S, -1e9)
    if route == "matched":
        return matches(S, threshold, m.thresholds.op).astype(np.float64), order
    if route == "strength":
        if m.fit is not None and m.thresholds.scale == "cosine":
            return np.asarray(map_calibrated(np.clip(order, -1, 1), m.fit), np.float64), order
        return np.where(np.isfinite(S), S, 0.0), order
    k = np.asarray(m.kappa(a, b), dtype=np.float64)
    return np.nan_to_num(k, nan=0.0), order


def metric_name(m: MethodData, route: str) -> str:
    if route == "matched":
        return "match"
    if route == "segments":
        return "kappa"
    if m.fit is not None and m.thresholds.scale == "cosine":
        return "p_match"
    return "similarity"


def study_for(m, route, threshold, analysts, runs, groups) -> Study:
    cells = [(r, g) for r in analysts for g in runs]
    cells += [(x, y) for i, x in enumerate(analysts) for y in analysts[i + 1 :]]
    tables = {c: route_table(m, route, threshold, *c) for c in cells}
    mine = None
    if groups:
        mine = {s: groups.get(s) for s in [*analysts, *runs]}
        if not any(v and any(x is not None for x in v) for v in mine.values()):
            mine = None
    return Study(list(analysts), list(runs), tables, mine)


@dataclass
class Settings:
    margin: float
    alpha: float
    margin_from: str = "convention"
    primary: dict | None = None  # {method, route, threshold}


def _is_primary(p: dict | None, method: str, route: str, threshold: float) -> bool:
    return (
        bool(p)
        and p["method"] == method
        and p["route"] == route
        and np.isclose(float(p["threshold"]), float(threshold))
    )


def generator_rows(
    methods: list[MethodData],
    *,
    reference: str,
    analysts: list[str],
    generators: dict[str, list[str]],
    settings: Settings,
    groups: dict[str, list] | None = None,
) -> list[dict]:
    """One row per method, threshold, route and generator (docs/verdicts.md)."""
    panel = _Panel(reference, analysts, groups)
    out = []
    for m in methods:
        routes = [r for r in ROUTES if r != "segments" or m.kappa is not None]
        for threshold in m.thresholds.values:
            for route in routes:
                for name, runs in generators.items():
                    out.append(_row(m, route, threshold, panel, name, runs, settings))
    adjust_primary(out, settings.alpha)
    return out


@dataclass(frozen=True)
class _Panel:
    """What every generator is read against: the reference, the analysts and the sets'
    declared theme groups (or None)."""

    reference: str
    analysts: list[str]
    groups: dict[str, list] | None


def _row(m, route, threshold, panel: _Panel, name, runs, settings) -> dict:
    analysts = panel.analysts
    primary = _is_primary(settings.primary, m.method, route, threshold)
    row = {
        "method": m.method, "set_a": panel.reference, "set_b": name, "threshold": threshold,
        "op": m.thresholds.op, "role": ROLE_GENERATOR, "second_analyst": ", ".join(analysts[1:]),
        "metric": metric_name(m, route), "margin": settings.margin, "alpha": settings.alpha,
        "n_runs": len(runs), "n_analysts": len(analysts), "evidence": route,
        "margin_source": MARGIN_CONFIG, "leads": primary, "primary": primary,
        "analysis": PRIMARY if primary else SENSITIVITY, "generator_runs": ", ".join(runs),
        "difference_ci_level": 1 - 2 * settings.alpha, "verdict": "", "ci_method": "",
        "withheld": "",
    }  # fmt: skip
    try:
        study = study_for(m, route, threshold, analysts, runs, panel.groups)
        res = difference(study, settings.alpha, settings.margin)
    except ValueError as e:  # a set of one theme: no rarefied agreement
        return row | {"withheld": str(e)}
    except FileNotFoundError:  # a method restricted by its `comparisons:` setting
        return row | {"withheld": NOT_MADE}
    row |= {
        "n_a": res.n_themes_analysts, "n_themes_analysts": res.n_themes_analysts,
        "n_themes_generator": res.n_themes_generator, "common_size": res.k,
        "agreement": res.generator, "agreement_ci_low": res.generator_ci_low,
        "agreement_ci_high": res.generator_ci_high, "human_human": res.human,
        "difference": res.difference, "difference_ci_low": res.ci_low,
        "difference_ci_high": res.ci_high, "difference_se": res.se, "difference_df": res.df,
        "run_sd": res.run_sd, "analyst_sd": res.analyst_sd, "covers": " + ".join(res.covers),
        "ci_method": res.ci_method, "p_better": res.p_better, "p_worse": res.p_worse,
        "p_non_inferior": res.p_non_inferior, "p_equivalent": res.p_equivalent,
        "var_themes": res.var_themes, "var_analysts": res.var_analysts,
        "var_runs": res.var_runs,
    }  # fmt: skip
    if len(analysts) < 2:
        return row | {"withheld": ONE_ANALYST}
    row["verdict"] = verdict(res.ci_low, res.ci_high, settings.margin)
    if settings.margin_from == "analysts":
        row |= spread_test(res, settings.alpha)
    return row


def spread_test(res, alpha: float) -> dict:
    """margin_from analysts (opt-in): is |D| below the analysts' own spread sigma_A (the SD
    of an analyst's effect on the agreement)? A level-alpha test of |D| >= sigma_A by the
    joint region of D and sigma_A (Bonferroni: alpha / 2 each): the (1 - alpha) interval of
    D lies within +- the one-sided (1 - alpha / 2) lower bound of sigma_A, read on the
    analysts' K - 1 degrees of freedom (a scaled chi-square). The spread itself is shown as
    `margin_analysts`, its bound as `margin_analysts_low`."""
    k = res.n_analysts
    spread = float(np.sqrt(max(res.var_analysts * k, 0.0)))
    if k < MIN_RANDOM:
        return {"margin_analysts": np.nan, "margin_analysts_low": np.nan}
    low = spread * float(np.sqrt((k - 1) / chi2.ppf(1 - alpha / 2, k - 1)))
    half = max(res.difference - res.ci_low, res.ci_high - res.difference)
    q_half = float(stdtrit(res.df, 1 - alpha / 2)) if np.isfinite(res.df) else 1.96
    q_full = float(stdtrit(res.df, 1 - alpha)) if np.isfinite(res.df) else 1.645
    wide = half * q_half / q_full  # the (1 - alpha) interval from the (1 - 2 alpha) one
    inside = abs(res.difference) + wide < low
    return {
        "margin_analysts": spread, "margin_analysts_low": low, "margin": low,
        "margin_source": MARGIN_SPREAD,
        "verdict": "equivalent" if inside else verdict(res.ci_low, res.ci_high, 0.0),
    }  # fmt: skip


def adjust_primary(rows: list[dict], alpha: float) -> None:
    """Each generator's primary words read at Benjamini and Hochberg's false discovery rate
    across generators (statsmodels' fdr_bh), family by family; `p_value` is the raw p of the
    word's claim, `p_adjusted` the adjusted one."""
    prim = [r for r in rows if r.get("primary") and np.isfinite(r.get("p_equivalent", np.nan))]
    if not prim:
        return
    adjusted = {}
    for key in ("p_equivalent", "p_better", "p_worse", "p_non_inferior"):
        p = np.array([r[key] for r in prim], dtype=np.float64)
        adjusted[key] = multipletests(p, alpha=alpha, method="fdr_bh")[1]
    for i, r in enumerate(prim):
        adj = {k: float(v[i]) for k, v in adjusted.items()}
        if r.get("margin_source") != MARGIN_SPREAD:
            r["verdict"] = word_from_p(adj, alpha)
        claim = CLAIMS.get(r["verdict"], "p_non_inferior")
        r["p_value"], r["p_adjusted"] = r[claim], adj[claim]


def default_primary(methods: list[MethodData], preferred: list[str]) -> dict | None:
    """The primary comparison when the config names none: the first of `preferred` methods
    (the study's embedding methods, in config order) that has a threshold fixed before the
    data (not calibrated), on the matched route at its first such threshold."""
    by_name = {m.method: m for m in methods}
    for name in [*preferred, *by_name]:
        m = by_name.get(name)
        if m is None:
            continue
        for value, fitted in zip(m.thresholds.values, m.thresholds.calibrated(), strict=True):
            if not fitted:
                return {"method": name, "route": "matched", "threshold": value}
    return None
