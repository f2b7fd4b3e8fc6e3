"""The verdicts rule: results/report/verdicts.csv from each method's similarity tables
(metrics.verdicts.rows), with what the study's design could reach (validate.verdicts.power)
beside each primary row (docs/verdicts.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from themesim.io.files import write_csv
from themesim.io.themes import read_themes_parquet, theme_groups
from themesim.metrics.thresholds import read_thresholds
from themesim.metrics.verdicts.equivalence import verdict_table
from themesim.metrics.verdicts.rows import (
    PRIMARY,
    MethodData,
    Settings,
    default_primary,
    generator_rows,
)
from themesim.report.tables import (
    COMPARISON_COLUMNS,
    TEXT_COLUMNS,
    THEME_COLUMNS,
    THEME_TEXT_COLUMNS,
    only_method,
    read_table,
)
from themesim.similarity import read_similarity
from themesim.steps.job import Job
from themesim.study.names import pair_name
from themesim.validate.verdicts import Design, feasible, power

# draws of the design's simulation behind each primary row's power columns
POWER_DRAWS = 100


def _reader(folder: str, ids: dict[str, list[str]]):
    """similarity(a, b) of a method's folder: a__vs__b, or b__vs__a transposed."""

    @cache
    def similarity(a: str, b: str) -> np.ndarray:
        for x, y, flip in ((a, b, False), (b, a, True)):
            path = os.path.join(folder, f"{pair_name(x, y)}.parquet")
            if os.path.exists(path):
                S = read_similarity(path, ids[x], ids[y])
                return S.T if flip else S
        raise FileNotFoundError(
            f"{folder}: no similarity table of {a} and {b}; rerun the similarity rule"
        )

    return similarity


def _kappas(path: str, ids: dict[str, list[str]]):
    """kappa(a, b) from grounding_pairs.csv (basis coder): the coder's κ of every theme
    pair, 0 where a pair is missing or its κ undefined."""
    table = pd.read_csv(path, dtype={"a_id": str, "b_id": str, "set_a": str, "set_b": str})
    table = table[table["grounding_basis"] == "coder"]

    def kappa(a: str, b: str) -> np.ndarray:
        out = np.zeros((len(ids[a]), len(ids[b])))
        pos_a = {t: i for i, t in enumerate(ids[a])}
        pos_b = {t: i for i, t in enumerate(ids[b])}
        for x, y, flip in ((a, b, False), (b, a, True)):
            rows = table[(table["set_a"] == x) & (table["set_b"] == y)]
            for r in rows.itertuples():
                i, j = (r.b_id, r.a_id) if flip else (r.a_id, r.b_id)
                if i in pos_a and j in pos_b and pd.notna(r.kappa):
                    out[pos_a[i], pos_b[j]] = float(r.kappa)
        return out

    return kappa


def method_data(method, *, thresholds, similarity, ids, fit=None, grounding_pairs=None):
    fit_table = pd.read_csv(fit) if fit else None
    return MethodData(
        method=method,
        thresholds=read_thresholds(thresholds),
        similarity=_reader(similarity, ids),
        fit=fit_table,
        kappa=_kappas(grounding_pairs, ids) if grounding_pairs else None,
    )


def theme_ids(theme_tables: dict[str, str]) -> tuple[dict, dict]:
    """(set -> its theme ids in order, set -> each theme's declared group or None)."""
    ids, groups = {}, {}
    for name, path in theme_tables.items():
        df = read_themes_parquet(path)
        ids[name] = [str(x) for x in df["theme_id"]]
        g = theme_groups(df)
        groups[name] = [g[t] for t in ids[name]]
    return ids, groups


def power_columns(row: dict, groups_declared: bool, seed: int = 0) -> dict:
    """What the study's design could reach at its margin, by the probit model's simulation
    at its sizes and its analysts' agreement (validate.verdicts.power): P(equivalent) and
    P(equivalent, non-inferior or better) when the generator is as good as the analysts,
    P(worse) at twice the margin below them and P(better) at twice the margin above."""
    route = row["evidence"] if row["evidence"] in ("matched", "strength") else None
    h = row.get("human_human", np.nan)
    if route is None or not np.isfinite(h) or row.get("n_analysts", 0) < 2:
        return {}
    m = float(row["margin"])
    base = Design(
        themes=max(int(round(row["n_themes_analysts"])), 2),
        gen_themes=max(int(round(row["n_themes_generator"])), 2),
        runs=int(row["n_runs"]), analysts=int(row["n_analysts"]),
        p_h=float(np.clip(h, 0.05, 0.95)), groups=groups_declared,
    )  # fmt: skip
    out, sims = {}, {}  # one simulation per difference: both words at 0 read the same draws
    for diff, key, words in ((0.0, "power_equivalent", ("equivalent",)),
                             (0.0, "power_non_inferior", ("equivalent", "non-inferior", "better")),
                             (-2 * m, "power_worse", ("worse",)),
                             (2 * m, "power_better", ("better",))):  # fmt: skip
        d = Design(**{**vars(base), "diff": diff})
        if not feasible(d):
            out[key] = np.nan
            continue
        if diff not in sims:
            sims[diff] = power(d, route, POWER_DRAWS, seed, margin=m, alpha=float(row["alpha"]))
        out[key] = float(sum(sims[diff][f"p_{w}"] for w in words))
    return out


def second_analyst_power(row: dict, seed: int = 0) -> float:
    """One analyst: P(equivalent or non-inferior) that a second analyst's coding of as many
    themes would give, were the generator as good as an analyst (its agreement standing in
    for theirs)."""
    g = row.get("agreement", np.nan)
    if row["evidence"] not in ("matched", "strength") or not np.isfinite(g):
        return np.nan
    d = Design(
        themes=max(int(round(row["n_themes_analysts"])), 2),
        gen_themes=max(int(round(row["n_themes_generator"])), 2),
        runs=int(row["n_runs"]), analysts=2, p_h=float(np.clip(g, 0.05, 0.95)),
    )  # fmt: skip
    if not feasible(d):
        return np.nan
    sim = power(d, row["evidence"], POWER_DRAWS, seed, margin=float(row["margin"]),
                alpha=float(row["alpha"]))  # fmt: skip
    return float(sim["p_equivalent"] + sim["p_non-inferior"] + sim["p_better"])


@dataclass(frozen=True)
class VerdictDesign:
    """What the verdicts are read against: the reference, the analysts, each generator's
    runs, `equivalence` {margin, alpha, margin_from}, verdict.primary (None: the default)
    and the methods a default primary prefers (own embeddings)."""

    reference: str
    analysts: list
    generators: dict
    equivalence: dict
    primary: dict | None
    preferred: list


def generator_table(
    methods: dict[str, dict], theme_tables: dict[str, str], d: VerdictDesign
) -> list[dict]:
    """The generator rows of verdicts.csv. methods: name -> {thresholds, similarity (its
    folder), fit, grounding_pairs} paths."""
    ids, groups = theme_ids(theme_tables)
    data = [method_data(name, ids=ids, **paths) for name, paths in methods.items()]
    eq = d.equivalence
    settings = Settings(
        margin=float(eq["margin"]), alpha=float(eq["alpha"]),
        margin_from=eq.get("margin_from", "convention"),
        primary=d.primary or default_primary(data, d.preferred),
    )  # fmt: skip
    rows = generator_rows(
        data, reference=d.reference, analysts=d.analysts, generators=d.generators,
        settings=settings, groups=groups,
    )  # fmt: skip
    declared = any(g is not None for v in groups.values() for g in v)
    for row in rows:
        if row.get("analysis") != PRIMARY:
            continue
        if len(d.analysts) >= 2:
            row |= power_columns(row, declared)
        else:
            row["second_analyst_power"] = second_analyst_power(row)
    return rows


def verdict_frame(
    comparisons: dict[str, str],
    themes: dict[str, str],
    methods: dict[str, dict],
    theme_tables: dict[str, str],
    d: VerdictDesign,
) -> pd.DataFrame:
    """results/report/verdicts.csv: the generator rows, then each set against each second
    analyst (metrics.verdicts.equivalence.verdict_table). comparisons, themes: method ->
    its comparisons.csv and themes.csv."""
    comps, tabs = {}, {}
    for method, path in comparisons.items():
        what = f"comparisons CSV of method {method!r}"
        comp = read_table(path, what, COMPARISON_COLUMNS, TEXT_COLUMNS)
        comps[method] = only_method(comp, method, path, "comparisons CSV")
        if method in themes:
            what = f"themes CSV of method {method!r}"
            th = read_table(themes[method], what, THEME_COLUMNS, THEME_TEXT_COLUMNS)
            tabs[method] = only_method(th, method, themes[method], "themes CSV")
    rows = generator_table(methods, theme_tables, d)
    eq = d.equivalence
    return verdict_table(
        comps, tabs, reference=d.reference, group=d.analysts if len(d.analysts) > 1 else (),
        margin=float(eq["margin"]), alpha=float(eq["alpha"]),
        margin_from=eq.get("margin_from", "convention"), generator_rows=rows,
    )  # fmt: skip


def verdicts(job: Job) -> None:
    """The verdicts rule (inputs.jobs.verdicts): verdict_frame of the study's files, written
    to its output. Each method's files by method: comparisons.csv, thresholds.csv,
    themes.csv, the similarity manifest (its folder holds the pair tables)."""
    i, p = job.input, job.params
    methods = {}
    for m in p["methods"]:
        paths = {
            "thresholds": i["thresholds"][m],
            "similarity": os.path.dirname(i["similarity"][m]),
        }
        if m in i["calibration_fits"]:
            paths["fit"] = i["calibration_fits"][m]
        if m in i["grounding_pairs"]:
            paths["grounding_pairs"] = i["grounding_pairs"][m]
        methods[m] = paths
    design = VerdictDesign(
        reference=p["reference"], analysts=list(p["analysts"]),
        generators={k: list(v) for k, v in p["generators"].items()},
        equivalence=dict(p["equivalence"]), primary=p["primary"] or None,
        preferred=list(p["preferred"]),
    )  # fmt: skip
    table = verdict_frame(i["comparisons"], i["themes_tables"], methods, i["themes"], design)
    write_csv(table, job.output["verdicts"])
