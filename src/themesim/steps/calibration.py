"""The calibration rule: one method's scores of the rated pairs, summary, fit and figure."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv

log = logging.getLogger("themesim")


def pair_scores(
    kind: str, spec: dict, text_a, text_b, *, cache=None, study_embeddings=(), threads=None
) -> np.ndarray:
    """The method's score of every rated pair, made by its kind (themesim.kinds) as the
    method makes its matrices."""
    from themesim.kinds import get as get_kind

    k = get_kind(kind)
    if not k.calibrates:
        raise ValueError(f"no calibration for method kind {kind!r}")
    return k.pair_scores(
        spec, text_a, text_b, cache=cache, study_embeddings=study_embeddings, threads=threads
    )


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
    )
    y = pairs["label"].to_numpy()
    summary = calibrate(scores, y, n_boot=bootstrap["n"], seed=bootstrap["seed"])
    fit = isotonic_fit(scores, y)
    write_csv(pd.DataFrame([{"method": method} | summary]), out_csv)
    write_csv(fit, out_fit)
    write_csv(pairs.assign(score=scores), out_scores)
    calibration_plot(scores, y, fit, summary, title=f"{method}: calibration", out_png=out_png)
    log.info("%s: AUC %.3f on %d rated pairs", method, summary["auc"], len(pairs))
