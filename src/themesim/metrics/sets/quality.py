"""Quality of one theme set on its own (seed 001; names: METRICS.md).

- semantic coherence (SC) of each theme's keywords,
- semantic distinctiveness (SD) between the themes of the set,
- semdiv = alpha * semantic diversity + beta * distribution diversity of transcript segments,
- NPMI of keyword pairs over transcript segments.

Every function takes similarity matrices or L2-normalised embeddings; none loads a model.
Undefined values are NaN, never a made-up 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from themesim.embed.texts import theme_keywords, top_tfidf_terms  # noqa: F401 (moved there)
from themesim.metrics.settings import DEFAULT_METRICS

_QUALITY = DEFAULT_METRICS["quality"]  # the schema's metrics.quality

SET_QUALITY_KEYS = [
    "n_themes",
    "sc_mean",
    "sc_median",
    "sd_mean",
    "semdiv",
    "semdiv_semantic",
    "semdiv_distribution",
    "npmi_mean",
    "n_segments_assigned",
]
THEME_QUALITY_COLUMNS = ["theme", "n_keywords", "sc", "npmi", "n_segments"]


def _square(S, what: str) -> np.ndarray:
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"{what} must be a square matrix, got shape {S.shape}")
    if not np.isfinite(S).all():
        raise ValueError(f"{what} has non-finite values")
    return S


def _cosine(emb_a, emb_b) -> np.ndarray:
    """Cosine of L2-normalised rows, clipped to [-1, 1] against rounding."""
    S = np.asarray(emb_a, dtype=np.float64) @ np.asarray(emb_b, dtype=np.float64).T
    return np.clip(S, -1.0, 1.0)


def _nan_stat(fn, values) -> float:
    """fn over the finite values; NaN (without a RuntimeWarning) when there are none."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(fn(v)) if v.size else math.nan


# --- semantic coherence ------------------------------------------------------------------


def keyword_importance(S_kw, *, edge_threshold: float = 0.3, damping: float = 0.85) -> np.ndarray:
    """PageRank importance of each keyword on the graph of pairs with similarity > threshold.

    Edges are weighted by the similarity. A graph without edges gives uniform importance
    (every node is dangling, so PageRank would come out uniform anyway; said explicitly here).
    """
    S = _square(S_kw, "keyword similarity matrix")
    if edge_threshold < 0:
        # PageRank needs non-negative weights; a negative threshold would admit negative edges.
        raise ValueError(f"edge_threshold must be >= 0, got {edge_threshold}")
    n = S.shape[0]
    G = nx.Graph()
    G.add_nodes_from(range(n))
    i, j = np.triu_indices(n, k=1)
    keep = S[i, j] > edge_threshold
    G.add_weighted_edges_from(
        zip(i[keep].tolist(), j[keep].tolist(), S[i, j][keep].tolist(), strict=True)
    )
    if G.number_of_edges() == 0:
        return np.full(n, 1.0 / n) if n else np.zeros(0)
    pr = nx.pagerank(G, alpha=damping, weight="weight")
    return np.array([pr[k] for k in range(n)])


def semantic_coherence_from_sim(
    S_kw,
    *,
    gamma_direct: float = 0.7,
    gamma_indirect: float = 0.3,
    edge_threshold: float = 0.3,
    damping: float = 0.85,
    indirect_unit_diagonal: bool = True,
) -> float:
    """SC of one theme from its keyword x keyword cosine matrix (seed 001, example 1).

    S_indirect = S @ S / n with its diagonal set to 1 (the seed's printed matrix; METRICS.md);
    indirect_unit_diagonal=False keeps (S @ S / n)_ii instead (the toy example then gives 0.873
    instead of 0.892). S_h = gamma_direct * S + gamma_indirect * S_indirect,
    lambda = keyword_importance(S), SC = sum(S_h * outer(lambda, lambda)) / sum(outer(...)).

    Fewer than two keywords: NaN (coherence of a single word is undefined, not 1).
    """
    S = _square(S_kw, "keyword similarity matrix")
    n = S.shape[0]
    if n < 2:
        return math.nan
    S_ind = S @ S / n
    if indirect_unit_diagonal:
        np.fill_diagonal(S_ind, 1.0)
    S_h = gamma_direct * S + gamma_indirect * S_ind
    lam = keyword_importance(S, edge_threshold=edge_threshold, damping=damping)
    W = np.outer(lam, lam)
    return float((S_h * W).sum() / W.sum())


def semantic_coherence(keyword_emb, **options) -> float:
    """SC from a theme's L2-normalised keyword embeddings (k x d); options as for _from_sim."""
    E = np.asarray(keyword_emb, dtype=np.float64)
    if E.ndim != 2:
        raise ValueError(f"keyword embeddings must be 2-D (keywords x dims), got shape {E.shape}")
    return semantic_coherence_from_sim(_cosine(E, E), **options)


def semantic_distinctiveness(theme_sim) -> tuple[np.ndarray, float]:
    """SD matrix (1 - cos) / 2 between the themes of one set, and its mean over pairs.

    The diagonal is (1 - 1) / 2 = 0 by the formula; seed 001 prints 0.5 there, which is
    inconsistent with its own formula (it never enters the mean, which uses i < j only).
    Fewer than two themes: sd_mean is NaN.
    """
    S = _square(theme_sim, "theme similarity matrix")
    SD = (1.0 - S) / 2.0
    np.fill_diagonal(SD, 0.0)
    n = S.shape[0]
    if n < 2:
        return SD, math.nan
    return SD, float(SD[np.triu_indices(n, k=1)].mean())


def distribution_diversity(assignments, n_topics: int) -> float:
    """Normalised entropy H / log(n_topics) of the topic proportions (seed 001, example 3).

    Topics with no documents still count in n_topics (they lower the score). NaN when there
    are no documents or fewer than two topics (log 1 = 0: no spread to measure).
    """
    a = np.asarray(assignments)
    if a.ndim != 1:
        raise ValueError(f"assignments must be 1-D, got shape {a.shape}")
    if a.size and (not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= n_topics):
        raise ValueError(f"assignments must be integers in [0, {n_topics})")
    if a.size == 0 or n_topics < 2:
        return math.nan
    p = np.bincount(a, minlength=n_topics) / a.size
    p = p[p > 0]  # 0 * log 0 = 0
    return float(-(p * np.log(p)).sum() / math.log(n_topics))


def semdiv(
    theme_sim, assignments, *, alpha: float = _QUALITY["alpha"], beta: float = _QUALITY["beta"]
) -> float:
    """alpha * sd_mean + beta * distribution_diversity (seed 001, example 3)."""
    S = _square(theme_sim, "theme similarity matrix")
    _, sd_mean = semantic_distinctiveness(S)
    return alpha * sd_mean + beta * distribution_diversity(assignments, S.shape[0])


def assign_to_nearest(segment_emb, theme_emb) -> np.ndarray:
    """Index of the most similar theme for each segment (the first one on ties)."""
    seg = np.asarray(segment_emb, dtype=np.float64)
    th = np.asarray(theme_emb, dtype=np.float64)
    if seg.ndim != 2 or th.ndim != 2 or th.shape[0] == 0:
        raise ValueError(
            f"need 2-D embeddings and at least one theme, got {seg.shape} and {th.shape}"
        )
    if seg.shape[0] == 0:
        return np.zeros(0, dtype=np.intp)
    return np.argmax(_cosine(seg, th), axis=1)


# --- NPMI --------------------------------------------------------------------------------


def npmi_from_counts(n_ij: int, n_i: int, n_j: int, n_docs: int) -> float:
    """NPMI(i, j) = log(P(i,j) / (P(i) P(j))) / -log P(i,j) from document counts.

    Edge cases: a word that never occurs (n_i or n_j = 0) -> NaN (undefined);
    never together (n_ij = 0) -> -1 (the usual limit convention); P(i,j) = 1 -> 1.
    """
    if n_docs <= 0 or min(n_ij, n_i, n_j) < 0 or max(n_i, n_j) > n_docs:
        raise ValueError(f"inconsistent counts: n_ij={n_ij}, n_i={n_i}, n_j={n_j}, N={n_docs}")
    if n_ij > min(n_i, n_j):
        raise ValueError(f"n_ij={n_ij} exceeds min(n_i, n_j)={min(n_i, n_j)}")
    if n_i == 0 or n_j == 0:
        return math.nan
    if n_ij == 0:
        return -1.0
    if n_ij == n_docs:
        return 1.0
    p_ij = n_ij / n_docs
    pmi = math.log(p_ij / ((n_i / n_docs) * (n_j / n_docs)))
    return pmi / -math.log(p_ij)


def _keyword_pattern(keyword: str) -> re.Pattern:
    # Lookarounds instead of \b so keywords that start or end with a non-word character
    # ("c++") still match as whole words; any run of whitespace inside a phrase matches.
    body = r"\s+".join(re.escape(w) for w in keyword.split())
    return re.compile(rf"(?<!\w){body}(?!\w)")


class KeywordDocuments:
    """Documents searched for keywords as npmi_keywords does, lowercased once and joined with
    a NUL between two documents (no keyword's pattern matches it: its lookarounds see it as
    a document's start or end, and it is no whitespace), so a keyword's occurrences are one
    regex scan of the whole text, not one search per document. Each keyword's occurrences are
    kept: a study's themes and sets share the work (16,000 transcript segments x 5 keywords x
    every theme of every set took most of the set-quality job)."""

    SEP = "\x00"

    def __init__(self, documents: Sequence[str]):
        self.docs = [d.lower() for d in documents]
        self.text = self.SEP.join(self.docs)
        self.starts = np.cumsum([0] + [len(d) + 1 for d in self.docs[:-1]])
        self.joinable = not any(self.SEP in d for d in self.docs)
        self._seen: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.docs)

    def occurs(self, keyword: str) -> np.ndarray:
        """Boolean per document: does the (lowercased) keyword occur there as a whole word?"""
        if keyword not in self._seen:
            pattern = _keyword_pattern(keyword)
            if self.joinable and self.SEP not in keyword:
                hit = np.zeros(len(self.docs), dtype=bool)
                at = [m.start() for m in pattern.finditer(self.text)]
                hit[np.searchsorted(self.starts, at, side="right") - 1] = True
            else:  # a NUL in the text: one search per document
                hit = np.array([bool(pattern.search(d)) for d in self.docs], dtype=bool)
            self._seen[keyword] = hit
        return self._seen[keyword]


def npmi_keywords(keywords: Sequence[str], documents: Sequence[str] | KeywordDocuments) -> float:
    """Mean NPMI over the keyword pairs of one theme, documents = transcript segments (or
    their KeywordDocuments, made once for every theme).

    A keyword occurs in a document when its lowercased form appears there as a whole word or
    phrase. Keywords are lowercased and de-duplicated first (a keyword paired with itself is
    trivially 1). Pairs with a keyword that occurs in no document are left out; NaN when no
    pair is left (or there are no documents).
    """
    kws = list(dict.fromkeys(k.strip().lower() for k in keywords if k.strip()))
    if not isinstance(documents, KeywordDocuments):
        documents = KeywordDocuments(documents)
    if len(kws) < 2 or not len(documents):
        return math.nan
    occurs = np.array([documents.occurs(k) for k in kws])
    counts = occurs.sum(axis=1)
    values = []
    for i in range(len(kws)):
        for j in range(i + 1, len(kws)):
            if counts[i] and counts[j]:
                n_ij = int((occurs[i] & occurs[j]).sum())
                values.append(
                    npmi_from_counts(n_ij, int(counts[i]), int(counts[j]), len(documents))
                )
    return float(np.mean(values)) if values else math.nan


# --- one set -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QualitySettings:
    """The seed-001 formulas' weights: semdiv = alpha · SD + beta · distribution diversity;
    gamma_direct, gamma_indirect, edge_threshold and damping: SC's
    (:func:`semantic_coherence_from_sim`)."""

    alpha: float = _QUALITY["alpha"]
    beta: float = _QUALITY["beta"]
    gamma_direct: float = 0.7
    gamma_indirect: float = 0.3
    edge_threshold: float = 0.3
    damping: float = 0.85

    def coherence_options(self) -> dict:
        """The options of :func:`semantic_coherence`."""
        return dict(
            gamma_direct=self.gamma_direct,
            gamma_indirect=self.gamma_indirect,
            edge_threshold=self.edge_threshold,
            damping=self.damping,
        )


DEFAULT_QUALITY = QualitySettings()


def set_quality(
    keywords: Sequence[Sequence[str]],
    keyword_embeddings: Sequence[np.ndarray],
    theme_embeddings,
    segment_embeddings,
    segment_texts: Sequence[str] | KeywordDocuments,
    *,
    theme_names: Sequence[str] | None = None,
    settings: QualitySettings = DEFAULT_QUALITY,
) -> tuple[dict, pd.DataFrame]:
    """All seed-001 quality metrics of one theme set.

    keywords[t] / keyword_embeddings[t]: the keywords of theme t and their L2-normalised
    embeddings (k_t x d, same order); theme_embeddings: n x d; segment_embeddings: m x d, the
    transcript segments whose texts are segment_texts (same order). Each segment is assigned to
    its nearest theme for the distribution diversity; the segments are the NPMI documents.

    Returns (set_dict with SET_QUALITY_KEYS, per-theme DataFrame with THEME_QUALITY_COLUMNS).
    sc_mean / sc_median / npmi_mean are over the themes where the value is defined.
    """
    theme_emb = np.asarray(theme_embeddings, dtype=np.float64)
    n = theme_emb.shape[0] if theme_emb.ndim == 2 else -1
    if n < 1:
        raise ValueError(f"theme_embeddings must be 2-D with >= 1 row, got {theme_emb.shape}")
    names = list(theme_names) if theme_names is not None else [f"T{t + 1}" for t in range(n)]
    if not (len(keywords) == len(keyword_embeddings) == len(names) == n):
        raise ValueError(
            f"{n} theme embeddings but {len(keywords)} keyword lists, "
            f"{len(keyword_embeddings)} keyword embedding matrices and {len(names)} names"
        )
    seg_emb = np.asarray(segment_embeddings, dtype=np.float64).reshape(-1, theme_emb.shape[1])
    if seg_emb.shape[0] != len(segment_texts):
        raise ValueError(
            f"{seg_emb.shape[0]} segment embeddings but {len(segment_texts)} segment texts"
        )
    if not isinstance(segment_texts, KeywordDocuments):
        segment_texts = KeywordDocuments(segment_texts)  # once for every theme's NPMI
    per_theme = _theme_rows(
        keywords, keyword_embeddings, names, theme_emb.shape[1], segment_texts, settings
    )

    theme_sim = _cosine(theme_emb, theme_emb)
    _, sd_mean = semantic_distinctiveness(theme_sim)
    assigned = assign_to_nearest(seg_emb, theme_emb)
    per_theme["n_segments"] = np.bincount(assigned, minlength=n)
    dist_div = distribution_diversity(assigned, n)

    set_dict = {
        "n_themes": n,
        "sc_mean": _nan_stat(np.mean, per_theme["sc"]),
        "sc_median": _nan_stat(np.median, per_theme["sc"]),
        "sd_mean": sd_mean,
        "semdiv": settings.alpha * sd_mean + settings.beta * dist_div,
        "semdiv_semantic": sd_mean,
        "semdiv_distribution": dist_div,
        "npmi_mean": _nan_stat(np.mean, per_theme["npmi"]),
        "n_segments_assigned": int(assigned.size),
    }
    return set_dict, per_theme[THEME_QUALITY_COLUMNS]


def _theme_rows(
    keywords, keyword_embeddings, names, dim: int, documents: KeywordDocuments, settings
) -> pd.DataFrame:
    """Each theme's name, keyword count, SC and NPMI (dim: the embeddings' width)."""
    sc_options = settings.coherence_options()
    rows = []
    for t, name in enumerate(names):
        kw_emb = np.asarray(keyword_embeddings[t], dtype=np.float64)
        if kw_emb.size == 0:  # a theme without keywords: SC undefined
            kw_emb = kw_emb.reshape(0, dim)
        if kw_emb.ndim != 2 or len(keywords[t]) != kw_emb.shape[0]:
            raise ValueError(
                f"theme {name!r}: {len(keywords[t])} keywords but keyword embeddings "
                f"of shape {kw_emb.shape}"
            )
        rows.append(
            {
                "theme": name,
                "n_keywords": len(keywords[t]),
                "sc": semantic_coherence(kw_emb, **sc_options),
                "npmi": npmi_keywords(keywords[t], documents),
            }
        )
    return pd.DataFrame(rows)
