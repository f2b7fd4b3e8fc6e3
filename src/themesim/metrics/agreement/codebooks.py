"""Agreement across codebooks: Krippendorff's cuα with a distance between values, for two
coders who code the same transcripts each with their own codebook (a human and an LLM).

The values are the union of the codebooks' codes (a code both codebooks name is one value).
Where both coders coded a stretch, each pair of codes they gave it is a coincidence, exactly
as in cuα (unitizing.Coincidences.cu_expected: observed o and expected e coincidences of
lengths). A code of one codebook against a code of the other is no longer all-or-nothing:
their distance is δ(c, k) = 1 − s(c, k), with s a similarity in [0, 1] (s(c, c) = 1), and

    α_s = 1 − Σ_ck o_ck δ_ck / Σ_ck e_ck δ_ck.

With s the identity (no code resembles another) δ is the nominal distance and α_s is cuα of the
union of codes: the figure `themesim agree` reports as cu_alpha. When the codebooks are the
same, that is cuα. Expected coincidences pool both coders' codes, as every α does, so the
chance pairs include two codes of one codebook: s must be one similarity over every pair of
codes, within each codebook as well as across (docs/metrics.md, "Agreement across codebooks").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from themesim.metrics.agreement.intercoder import jackknife_interval
from themesim.metrics.agreement.unitizing import Coincidences, sum_parts


def similarity_matrix(codes: Sequence[str], pairs: Iterable[tuple[str, str, float]]) -> np.ndarray:
    """s over `codes` (in order) from (code_a, code_b, similarity) triples: symmetric, 1 on the
    diagonal, 0 for a pair not given. Raises ValueError for a similarity outside [0, 1], a code
    not in `codes`, or a pair given twice with different values."""
    index = {c: i for i, c in enumerate(codes)}
    s = np.eye(len(codes))
    seen: dict[tuple[int, int], float] = {}
    for a, b, v in pairs:
        v = float(v)
        if not 0 <= v <= 1:
            raise ValueError(f"similarity of {a!r} and {b!r} is {v:g}, not in [0, 1]")
        for name in (a, b):
            if name not in index:
                raise ValueError(f"code {name!r} is not a code of the codings")
        i, j = index[a], index[b]
        if i == j:
            if v != 1:
                raise ValueError(f"similarity of {a!r} with itself is {v:g}, not 1")
            continue
        key = (min(i, j), max(i, j))
        if key in seen and seen[key] != v:
            raise ValueError(f"similarity of {a!r} and {b!r} is given twice: {seen[key]:g}, {v:g}")
        seen[key] = v
        s[i, j] = s[j, i] = v
    return s


def distance_alpha(o: np.ndarray, e: np.ndarray, delta: np.ndarray) -> float:
    """1 − Σ o δ / Σ e δ; NaN without coincidences or expected disagreement."""
    if not (o.sum() > 0 and np.isfinite(e).all()):
        return math.nan
    d_e = float((e * delta).sum())
    if not d_e > 0:
        return math.nan
    return 1 - float((o * delta).sum()) / d_e


def codebook_alpha(parts: Sequence[Coincidences], s: np.ndarray) -> float:
    """α_s of documents from their coincidences of codes (unitizing.family_parts' second
    piece, or Coincidences of one document): NaN when a coder's codes overlap (as cuα)."""
    if not parts:
        return math.nan
    c = sum_parts(list(parts))
    if not c.ok or c.m < 2 or c.V < 3:
        return math.nan
    o, e = c.cu_expected()
    return distance_alpha(o, e, 1 - np.asarray(s, dtype=float))


def codebook_alpha_interval(
    parts: dict, s: np.ndarray, level: float = 0.95
) -> tuple[float, float, float]:
    """(α_s, low, high): the estimate pooled over documents ({document: Coincidences}) and
    its jackknife interval over documents, as the other unitizing figures have."""
    docs = sorted(parts)
    est = codebook_alpha([parts[d] for d in docs], s)
    loo = [codebook_alpha([parts[d] for d in docs if d != g], s) for g in docs]
    lo, hi = jackknife_interval(est, loo, level)
    return est, lo, min(hi, 1.0)


def segment_parts(top_a, top_b, transcripts, n_a: int, n_b: int) -> dict:
    """{transcript: Coincidences} of two sets' top-1 labels of transcript segments (index into
    each set's themes, −1 unlabelled), every segment a unit of length 1 in its transcript's
    order: the values are A's themes 0..n_a − 1, then B's n_a..n_a + n_b − 1."""
    top_a, top_b = np.asarray(top_a), np.asarray(top_b)
    transcripts = np.asarray(transcripts)
    out = {}
    for t in dict.fromkeys(transcripts.tolist()):
        rows = np.flatnonzero(transcripts == t)
        coders = []
        for top, base in ((top_a[rows], 0), (top_b[rows], n_a)):
            per = [np.zeros((0, 2), dtype=np.int64) for _ in range(n_a + n_b)]
            pos = np.flatnonzero(top >= 0)
            for v in np.unique(top[pos]):
                at = pos[top[pos] == v]
                per[base + int(v)] = np.column_stack([at, at + 1]).astype(np.int64)
            coders.append(per)
        out[str(t)] = Coincidences([(len(rows), coders)], n_a + n_b)
    return out


def union_similarity(s_ab, s_aa=None, s_bb=None) -> np.ndarray | None:
    """s over A's themes then B's from the A×B matrix and each set's within-set matrix (all on
    one [0, 1] scale, e.g. calibrated P(match)); 1 on the diagonal. None without a within-set
    matrix: the chance pairs of one set's codes need their similarity (module docstring)."""
    if s_aa is None or s_bb is None:
        return None
    s_ab, s_aa, s_bb = (np.clip(np.asarray(x, dtype=float), 0.0, 1.0) for x in (s_ab, s_aa, s_bb))
    s = np.block([[s_aa, s_ab], [s_ab.T, s_bb]])
    s = (s + s.T) / 2  # a within-set matrix from an asymmetric scorer: its mean both ways
    np.fill_diagonal(s, 1.0)
    return s
