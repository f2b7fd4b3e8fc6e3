"""The calibration rule: one method's scores of the rated pairs, summary, fit and figure."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv

log = logging.getLogger("themesim")


def pair_scores(
    kind: str,
    spec: dict,
    text_a,
    text_b,
    *,
    cache=None,
    study_embeddings=(),
    threads=None,
    themes=None,
    matrices=None,
) -> np.ndarray:
    """The method's score of every rated pair, made by its kind (themesim.kinds) as the
    method makes its matrices; NaN where the method cannot score a pair.

    themes: set -> theme parquet, matrices: (a, b) -> matrix file, for a kind that reads
    score matrices made elsewhere."""
    from themesim.io.themes import read_themes_parquet
    from themesim.kinds import get as get_kind

    k = get_kind(kind)
    if not k.calibrates:
        raise ValueError(f"no calibration for method kind {kind!r}")
    tables = {s: read_themes_parquet(p) for s, p in (themes or {}).items()}
    return k.pair_scores(
        spec,
        text_a,
        text_b,
        cache=cache,
        study_embeddings=study_embeddings,
        threads=threads,
        tables=tables,
        matrices=matrices,
    )


def scored_pairs(pairs: pd.DataFrame, scores, *, method: str, kind: str, pairs_file):
    """The rated pairs the method scored, with their scores; the others are left out (logged).

    Too few left (fewer than MIN_PER_LABEL of a label) is an InputError naming the file, the
    method and the kind's fix."""
    from themesim.errors import InputError
    from themesim.kinds import get as get_kind
    from themesim.metrics.calibration import MIN_PER_LABEL

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


def calibration_tables(
    *,
    method: str,
    kind: str,
    spec: dict,
    pairs_file,
    positive_from=None,
    bootstrap: dict,
    cache=None,
    study_embeddings=(),
    themes=None,
    matrices=None,
    out_csv,
    out_fit,
    out_scores,
    out_png,
    threads=None,
) -> None:
    """results/calibration/{method}.csv (summary), its isotonic fit, scores and figure."""
    from themesim.metrics.calibration import calibrate, isotonic_fit, read_rated_pairs
    from themesim.report.threshold_plots import calibration_plot

    pairs = read_rated_pairs(pairs_file, positive_from)
    scores = pair_scores(
        kind,
        spec,
        pairs["text_a"],
        pairs["text_b"],
        cache=cache,
        study_embeddings=study_embeddings,
        threads=threads,
        themes=themes,
        matrices=matrices,
    )
    pairs = scored_pairs(pairs, scores, method=method, kind=kind, pairs_file=pairs_file)
    scores, y = pairs["score"].to_numpy(), pairs["label"].to_numpy()
    summary = calibrate(scores, y, n_boot=bootstrap["n"], seed=bootstrap["seed"])
    fit = isotonic_fit(scores, y)
    write_csv(pd.DataFrame([{"method": method} | summary]), out_csv)
    write_csv(fit, out_fit)
    write_csv(pairs, out_scores)
    calibration_plot(scores, y, fit, summary, title=f"{method}: calibration", out_png=out_png)
    log.info("%s: AUC %.3f on %d rated pairs", method, summary["auc"], len(pairs))
