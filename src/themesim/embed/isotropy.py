"""All-but-the-top (Mu & Viswanath 2018): make sentence embeddings more isotropic.

Many embedding models put every text in a narrow cone, so unrelated themes still score a high
cosine. Removing the shared mean and the few dominant principal directions spreads the cone out.
Reported as its own method variant, never mixed with the raw one.
"""

from __future__ import annotations

import numpy as np


def default_d(dim: int) -> int:
    """D ≈ dim / 100 as in the paper (384 → 4, 768 → 8), at least 1."""
    return max(1, int(round(dim / 100)))


def remove_top_directions(X: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre X (rows) and remove its top d principal directions; no re-normalisation.

    Returns (processed float64 matrix, removed directions as d × dim rows). The result has
    column mean ~0: centring zeroes it and removing a linear projection keeps it zero.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {X.shape}")
    n, dim = X.shape
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    if d >= dim:
        raise ValueError(f"d = {d} would remove every one of the {dim} dimensions")
    if n < d + 1:
        raise ValueError(f"all-but-the-top with d = {d} needs at least {d + 1} rows, got {n}")
    if not np.isfinite(X).all():
        raise ValueError("embeddings contain NaN or infinite values")
    Xc = X - X.mean(axis=0, keepdims=True)
    # Rows of Vt are the principal directions; their sign is irrelevant to the projection.
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    U = Vt[:d]
    return Xc - (Xc @ U.T) @ U, U


def abtt(embeddings: list[np.ndarray], d: int | None = None) -> list[np.ndarray]:
    """All-but-the-top on the pooled rows of all matrices, returned in the same split.

    Pooling (e.g. set A + set B of one method) gives both sets one shared geometry, so S is
    recomputed on comparable vectors. Rows are re-normalised to unit length; output dtype
    follows the inputs (float32 in, float32 out).
    """
    mats = [np.asarray(m) for m in embeddings]
    if not mats:
        raise ValueError("no embedding matrices given")
    if any(m.ndim != 2 for m in mats) or len({m.shape[1] for m in mats}) != 1:
        raise ValueError(f"matrices must be 2-D with one dimension: {[m.shape for m in mats]}")
    dim = mats[0].shape[1]
    d = default_d(dim) if d is None else int(d)
    pooled, _ = remove_top_directions(np.vstack(mats), d)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    if (norms <= 1e-12).any():
        # A row that lies entirely in the mean + top directions has no direction left;
        # a zero vector would give silent cosines of 0, so refuse instead.
        bad = int(np.flatnonzero(norms.ravel() <= 1e-12)[0])
        raise ValueError(
            f"pooled row {bad} is zero after removing the mean and top {d} directions "
            "(duplicate or degenerate embeddings); use a smaller d or skip the variant"
        )
    out_dtype = np.result_type(*mats, np.float32)
    pooled = (pooled / norms).astype(out_dtype)
    bounds = np.cumsum([m.shape[0] for m in mats])[:-1]
    return np.split(pooled, bounds)
