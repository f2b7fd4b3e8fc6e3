"""The texts a method embeds beside its themes: word-salad null pools and theme keywords.

Kept apart from the metric modules that use them (metrics.sets.nulls, metrics.sets.quality) so an
edit to a metric's code never reruns the embedding job, whose inputs are the files of its imports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from themesim.tfidf import vectorizer

if TYPE_CHECKING:
    import pandas as pd


def word_salad_sets(texts: list[str], k: int, seed: int) -> list[list[str]]:
    """K null versions of a theme set: all whitespace tokens pooled and shuffled across themes.

    Salad theme i keeps the word count of texts[i]. One generator (numpy default_rng(seed))
    drives all K shuffles, so the K sets differ from one another and the whole list is
    reproducible from the seed.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    tokens = [str(t).split() for t in texts]
    counts = [len(t) for t in tokens]
    pool = np.array([w for t in tokens for w in t], dtype=object)
    cuts = np.cumsum(counts)[:-1]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        shuffled = pool[rng.permutation(len(pool))]
        out.append([" ".join(part) for part in np.split(shuffled, cuts)])
    return out


def word_salad_pool(texts: list[str], size: int, seed: int) -> tuple[list[str], list[int]]:
    """At least `size` salad texts of a theme set, in whole salad sets, and for each text the
    index of the theme whose length it has.

    The first ceil(P / n) salad sets of word_salad_sets, concatenated: texts
    [k·n, (k+1)·n) are salad set k, so the null model can take each set's best match (an
    exact rank p) and standardise a set's texts against one another (scale z) as it does a
    real B set (docs/nulls.md).
    """
    if size < 1:
        raise ValueError(f"pool must be >= 1, got {size}")
    if not texts:
        raise ValueError("a word-salad pool needs at least one theme text")
    n = len(texts)
    sets = word_salad_sets(texts, math.ceil(size / n), seed)
    pool = [t for salad in sets for t in salad]
    return pool, [i % n for i in range(len(pool))]


def top_tfidf_terms(texts: Sequence[str], k: int = 5) -> list[list[str]]:
    """Top-k TF-IDF terms of each text, TF-IDF fitted over all the texts of the set.

    Used as keywords for themes that come without any. English stop words are dropped; ties
    in score are broken alphabetically so the result is deterministic. A text with fewer than
    k scoring terms gets fewer (possibly none); a set made only of stop words gets [] each.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    texts = list(texts)
    if not texts:
        return []
    vec = vectorizer(stop_words="english")
    try:
        X = vec.fit_transform(texts).tocsr()
    except ValueError:  # empty vocabulary: nothing but stop words / punctuation
        return [[] for _ in texts]
    vocab = vec.get_feature_names_out()
    out = []
    for r in range(X.shape[0]):
        cells = slice(X.indptr[r], X.indptr[r + 1])
        # Sort by (-score, term): highest score first, alphabetical among equal scores.
        pairs = sorted(
            zip((-X.data[cells]).tolist(), vocab[X.indices[cells]].tolist(), strict=True)
        )
        out.append([term for _, term in pairs[:k]])
    return out


# --- distinctiveness and diversity -------------------------------------------------------


def theme_keywords(themes: pd.DataFrame, top_k: int) -> list[list[str]]:
    """Keywords from the theme file, or the top TF-IDF terms of the theme's text (the
    embedding job gets the same through embed.keyword_cache.sets_keywords)."""
    given = [list(k) for k in themes["keywords"]]
    if all(given):
        return given
    fallback = top_tfidf_terms(themes["text"].tolist(), k=top_k)
    return [g or f for g, f in zip(given, fallback, strict=True)]
