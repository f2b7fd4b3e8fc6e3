"""The calibration rule: one method's scores of the rated pairs, summary, fit and figure."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from themesim.io.files import write_csv

log = logging.getLogger("themesim")
CALIBRATED_KINDS = ("sentence_transformer", "tfidf", "abtt")


def _rowwise_cosine(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    Y = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    return np.einsum("ij,ij->i", X, Y)


def pair_scores(
    kind: str, spec: dict, text_a, text_b, *, cache=None, study_embeddings=(), threads=None
) -> np.ndarray:
    """The method's score of every rated pair, made as the method makes its matrices.

    sentence_transformer: the method's model through the embedding cache. abtt: the base
    model's vectors, corrected with the mean and top directions of the study's pooled theme
    vectors (the correction the method's matrices use). tfidf: one vectorizer fitted on
    every text of the rated pairs.
    """
    a, b = list(text_a), list(text_b)
    if kind == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer().fit(a + b)
        X, Y = vec.transform(a), vec.transform(b)
        return np.asarray(X.multiply(Y).sum(axis=1)).ravel()  # rows are L2-normalised
    if kind not in ("sentence_transformer", "abtt"):
        raise ValueError(f"no calibration for method kind {kind!r}")
    from themesim.embed.encode import encode_with, read_embeddings

    emb, _ = encode_with(spec, a + b, threads, cache=cache, what="calibration pairs")
    emb = np.asarray(emb, dtype=np.float64)
    if kind == "abtt":
        from themesim.embed.isotropy import default_d, remove_top_directions

        pooled = np.vstack([read_embeddings(p)[1] for p in study_embeddings]).astype(np.float64)
        d = spec.get("d") or default_d(pooled.shape[1])
        _, U = remove_top_directions(pooled, d)
        emb = emb - pooled.mean(axis=0)
        emb = emb - (emb @ U.T) @ U
    return _rowwise_cosine(emb[: len(a)], emb[len(a) :])


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
