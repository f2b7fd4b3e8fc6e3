"""The calibration rule: one method's scores of the rated pairs, summary, fit and figure."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.io.files import write_csv
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind
from themesim.metrics.calibration import (
    MIN_PER_LABEL,
    calibrate,
    isotonic_fit,
    read_rated_pairs,
    resample_stats,
    theme_ids,
    with_prevalence,
)
from themesim.report.calibration_plot import calibration_plot
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def pair_scores(kind: str, spec: dict, texts: tuple, *, threads=None, **reads) -> np.ndarray:
    """The method's score of every rated pair (texts: text_a, text_b), made by its kind
    (themesim.kinds) as the method makes its matrices; NaN where the method cannot score a
    pair.

    reads: what the kind's Kind.pair_scores reads beside the texts: its `cache`, the
    study's embedding files (`study_embeddings`) and, for a kind that reads score matrices
    made elsewhere, `themes` (set -> theme parquet, read here) and `matrices` ((a, b) ->
    matrix file)."""
    k = get_kind(kind)
    if not k.calibrates:
        raise ValueError(f"no calibration for method kind {kind!r}")
    themes = reads.pop("themes", None) or {}
    tables = {s: read_themes_parquet(p) for s, p in themes.items()}
    return k.pair_scores(spec, *texts, threads=threads, tables=tables, **reads)


def scored_pairs(pairs: pd.DataFrame, scores, *, method: str, kind: str, pairs_file):
    """The rated pairs the method scored, with their scores; the others are left out (logged).

    Too few left (fewer than MIN_PER_LABEL of a label) is an InputError naming the file, the
    method and the kind's fix."""
    scores = np.asarray(scores, dtype=np.float64)
    kept = ~np.isnan(scores)
    if not kept.all():
        left = pairs.loc[~kept, "text_a"].head(3).tolist()
        log.info(
            "%s: %d of %d rated pairs have no score and are left out (e.g. %s)",
            method,
            int((~kept).sum()),
            len(pairs),
            "; ".join(repr(t[:60]) for t in left),
        )
    out = pairs.loc[kept].reset_index(drop=True).assign(score=scores[kept])
    n_pos = int(out["label"].sum())
    if min(n_pos, len(out) - n_pos) < MIN_PER_LABEL:
        raise InputError(
            str(pairs_file),
            f"method {method} scores only {len(out)} of its {len(pairs)} rated pairs "
            f"({n_pos} matches, {len(out) - n_pos} non-matches; calibration needs "
            f"{MIN_PER_LABEL} of each)",
            get_kind(kind).unscored_pairs_fix,
        )
    return out


CROSSFIT_COLUMNS = [
    "method",
    "set_a",
    "set_b",
    "n_rated_cells",
    "n_pairs_fit",
    "n_positive_fit",
    "auc",
    "f1_threshold",
    "youden_threshold",
    "f1_threshold_all",
    "in_sample",
]


def _norm(text) -> str:
    return " ".join(str(text).split())


def rated_cells(pairs: pd.DataFrame, comparisons, texts: dict) -> dict:
    """(set_a, set_b) -> boolean mask of the rated pairs that are cells of that comparison:
    text_a is the text of one of its A themes and text_b of a B theme, or the other way
    round (texts as the study renders them, runs of white space as one space)."""
    ta, tb = pairs["text_a"].map(_norm), pairs["text_b"].map(_norm)
    out = {}
    for a, b in comparisons:
        in_a, in_b = set(texts[a]), set(texts[b])
        fwd = ta.isin(in_a) & tb.isin(in_b)
        out[(a, b)] = (fwd | (tb.isin(in_a) & ta.isin(in_b))).to_numpy()
    return out


def crossfit_table(method: str, pairs: pd.DataFrame, cells: dict, summary: dict):
    """Per comparison: how many rated pairs are its own cells, and the AUC and thresholds
    of the rated pairs without them (NaN when fewer than MIN_PER_LABEL of a label remain)."""
    s, y = pairs["score"].to_numpy(float), pairs["label"].to_numpy(int)
    rows = []
    for (a, b), mask in cells.items():
        keep = ~mask
        n_pos = int(y[keep].sum())
        auc = t_f1 = t_j = math.nan
        if min(n_pos, int(keep.sum()) - n_pos) >= MIN_PER_LABEL:
            auc, t_f1, t_j = resample_stats(s[keep], y[keep])
        rows.append(
            [method, a, b, int(mask.sum()), int(keep.sum()), n_pos, auc, t_f1, t_j]
            + [summary["f1_threshold"], bool(mask.any())]
        )
    return pd.DataFrame(rows, columns=CROSSFIT_COLUMNS)


def calibration_tables(job: Job) -> None:
    """results/calibration/{method}.csv (summary), its isotonic fit, scores, figure and
    crossfit.csv (per comparison of the method, its rated cells and the calibration
    without them), from the job of inputs.jobs.calibration.

    Its settings: calibration.positive_from (the lowest rating that counts as a match),
    bootstrap, and prevalence, the share of matches P(match) is re-based to (None: the
    rated pairs' own)."""
    p, i, out = job.params, job.input, job.output
    method, settings = p["method"], p["settings"]
    pairs = read_rated_pairs(i["pairs"], settings["positive_from"])
    scores = pair_scores(
        p["kind"],
        p["spec"],
        (pairs["text_a"], pairs["text_b"]),
        cache=p.get("cache"),
        study_embeddings=list(i.get("embeddings", [])),
        threads=job.threads,
        themes=i.get("themes", {}),
        matrices=i.get("matrices", {}),
    )
    pairs = scored_pairs(pairs, scores, method=method, kind=p["kind"], pairs_file=i["pairs"])
    comparisons = [tuple(c) for c in p.get("comparisons", [])]
    cells = rated_cells(pairs, comparisons, _texts(i.get("study_themes", {})))
    summary = _summary(pairs, cells, settings)
    scores, y = pairs["score"].to_numpy(), pairs["label"].to_numpy()
    fit = with_prevalence(isotonic_fit(scores, y), summary["prevalence"], settings["prevalence"])
    write_csv(pd.DataFrame([{"method": method} | summary]), out["summary"])
    write_csv(fit, out["fit"])
    write_csv(pairs, out["scores"])
    if "crossfit" in out:
        write_csv(crossfit_table(method, pairs, cells, summary), out["crossfit"])
    calibration_plot(scores, y, fit, summary, title=f"{method}: calibration", out_png=out["png"])
    log.info("%s: AUC %.3f on %d rated pairs", method, summary["auc"], len(pairs))
    own = summary["n_pairs_in_comparisons"]
    if own:
        log.warning(
            "%s: %d of %d rated pairs are cells of %d of its comparisons and calibrate them "
            "(their thresholds without those pairs: crossfit.csv)",
            method,
            own,
            len(pairs),
            summary["comparisons_in_sample"],
        )


def _texts(study_themes: dict) -> dict:
    """Set -> its themes' texts as the study renders them (runs of white space as one)."""
    return {s: [_norm(t) for t in read_themes_parquet(p)["text"]] for s, p in study_themes.items()}


def _summary(pairs: pd.DataFrame, cells: dict, settings: dict) -> dict:
    """The calibration's summary row: AUC, thresholds and their intervals (metrics.
    calibration.calibrate), the prevalence re-based to, and how many rated pairs are cells
    of the method's comparisons."""
    boot, prevalence = settings["bootstrap"], settings["prevalence"]
    summary = calibrate(
        pairs["score"].to_numpy(),
        pairs["label"].to_numpy(),
        n_boot=boot["n"],
        seed=boot["seed"],
        themes_a=theme_ids(pairs["text_a"]),
        themes_b=theme_ids(pairs["text_b"]),
    )
    own = np.zeros(len(pairs), dtype=bool)
    for mask in cells.values():
        own |= mask
    target = summary["prevalence"] if prevalence is None else float(prevalence)
    return summary | {
        "target_prevalence": target,
        "n_pairs_in_comparisons": int(own.sum()),
        "comparisons_in_sample": int(sum(m.any() for m in cells.values())),
    }
