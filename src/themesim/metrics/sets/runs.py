"""Consistency between repeated runs (seeds 002-004; names: METRICS.md).

A run is one theme set (e.g. one LLM run) and counts as one document. Runs come in groups
(config run_groups; the generated runs are one group): M is the N x N run-by-run similarity
matrix of one group under one method; its diagonal (self-similarity) never enters a score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.similarity import snap_unit
from themesim.tfidf import cosine_similarity, vectorizer

RUNS_TABLE_COLUMNS = [
    "method",
    "group",
    "run",
    "ncs",
    "mean_sim_to_others",
    "max_sim_to_other",
    "min_sim_to_other",
]
RUNS_LONG_COLUMNS = ["group", "run_a", "run_b", "similarity"]


def _square(M) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"run similarity matrix must be square, got shape {M.shape}")
    if not np.isfinite(M).all():
        raise ValueError("run similarity matrix has non-finite values")
    return M


def _off_diagonal(M: np.ndarray) -> np.ndarray:
    """N x (N - 1): row i holds M[i, j] for every j != i."""
    n = M.shape[0]
    return M[~np.eye(n, dtype=bool)].reshape(n, n - 1)


def clamp(S) -> np.ndarray:
    """max(0, min(1, S)) (seed 004): negative cosines count as 'no similarity'."""
    return np.clip(np.asarray(S, dtype=np.float64), 0.0, 1.0)


def run_similarity_tfidf(run_texts: Sequence[str], **vectorizer_options) -> np.ndarray:
    """N x N cosine of TF-IDF vectors fitted on all the runs together (seed 002).

    run_texts[i] is run i as one document (the caller joins its themes' texts with newlines).
    The diagonal is set to 1: a run is identical to itself even when its text has no terms
    (sklearn would give 0 there); it never enters run_consistency or ncs.
    """
    run_texts = list(run_texts)
    if not run_texts:
        raise ValueError("need at least one run")
    try:
        X = vectorizer(**vectorizer_options).fit_transform(run_texts)
    except ValueError as e:  # every run was stop words or punctuation
        raise InputError(
            "runs", f"cannot build a TF-IDF vocabulary ({e})", "Give the themes longer texts"
        ) from e
    M = snap_unit(cosine_similarity(X))
    np.fill_diagonal(M, 1.0)
    return M


def run_vectors(run_embeddings: Sequence[np.ndarray]) -> np.ndarray:
    """One unit vector per run: the L2-normalised mean of its theme embeddings."""
    vecs = []
    for i, E in enumerate(run_embeddings):
        E = np.asarray(E, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] == 0:
            raise ValueError(f"run {i}: need a non-empty themes x dims matrix, got {E.shape}")
        v = E.mean(axis=0)
        norm = np.linalg.norm(v)
        if not norm > 0:
            raise ValueError(f"run {i}: the mean of its theme embeddings is the zero vector")
        vecs.append(v / norm)
    if not vecs:
        raise ValueError("need at least one run")
    if len({v.shape for v in vecs}) > 1:
        raise ValueError("runs have embeddings of different dimensions")
    return np.vstack(vecs)


def run_similarity_embedding(
    run_embeddings: Sequence[np.ndarray], *, clamped: bool = False
) -> np.ndarray:
    """N x N cosine between runs, each run = the normalised mean of its theme embeddings.

    Why the mean of theme embeddings rather than embedding the joined run text: the themes are
    already embedded for every method, so this costs no model call, and it avoids the
    sentence model's input truncation on a long joined text. clamped=True applies clamp()
    (seed 004).
    """
    V = run_vectors(run_embeddings)
    M = snap_unit(V @ V.T)
    np.fill_diagonal(M, 1.0)  # exactly 1, not 1 - 1e-16
    return clamp(M) if clamped else M


def run_consistency(M) -> float:
    """Mean off-diagonal similarity, 1/(N(N-1)) * sum_{i != j} M[i, j] (seed 002).

    NaN for fewer than two runs (no pair to compare).
    """
    M = _square(M)
    n = M.shape[0]
    if n < 2:
        return math.nan
    return float(_off_diagonal(M).mean())


def ncs(M) -> np.ndarray:
    """Normalised cosine similarity of each run against the others (seed 003).

    ncs_i = (mean_{j != i} M[i, j] + 1) / 2, in [0, 1] for cosines in [-1, 1].
    NaN for every run when there are fewer than two runs.
    """
    M = _square(M)
    n = M.shape[0]
    if n < 2:
        return np.full(n, np.nan)
    return (_off_diagonal(M).mean(axis=1) + 1.0) / 2.0


def _check_names(names: Sequence[str], M: np.ndarray) -> list[str]:
    names = list(names)
    if len(names) != M.shape[0]:
        raise ValueError(f"{len(names)} run names for a {M.shape[0]} x {M.shape[0]} matrix")
    if len(set(names)) != len(names):
        raise ValueError("run names must be unique")
    return names


def runs_table(names: Sequence[str], M, *, method: str, group: str = "") -> pd.DataFrame:
    """One row per run of a group: its ncs and its mean / max / min similarity to the other
    runs of the group."""
    M = _square(M)
    names = _check_names(names, M)
    n = M.shape[0]
    if n < 2:
        mean = mx = mn = np.full(n, np.nan)
    else:
        off = _off_diagonal(M)
        mean, mx, mn = off.mean(axis=1), off.max(axis=1), off.min(axis=1)
    return pd.DataFrame(
        {
            "method": method,
            "group": group,
            "run": names,
            "ncs": ncs(M),
            "mean_sim_to_others": mean,
            "max_sim_to_other": mx,
            "min_sim_to_other": mn,
        },
        columns=RUNS_TABLE_COLUMNS,
    )


def runs_matrix_long(names: Sequence[str], M, *, group: str = "") -> pd.DataFrame:
    """All N x N cells of a group in row-major order (diagonal included, so the matrix can be
    rebuilt)."""
    M = _square(M)
    names = _check_names(names, M)
    n = M.shape[0]
    return pd.DataFrame(
        {
            "group": group,
            "run_a": [a for a in names for _ in range(n)],
            "run_b": names * n,
            "similarity": M.ravel(),
        },
        columns=RUNS_LONG_COLUMNS,
    )
