"""tfidf: cosine of TF-IDF vectors fitted on the union of the two sets (seed 002)."""

from __future__ import annotations

import functools

import numpy as np

from themesim.embed.texts import word_salad_pool
from themesim.errors import InputError
from themesim.kinds.base import Kind
from themesim.metrics.sets.runs import run_similarity_tfidf
from themesim.similarity import tfidf, tfidf_options
from themesim.tfidf import vectorizer


class Tfidf(Kind):
    name = "tfidf"
    builtins = {
        "tfidf": {
            "active": True,
            "description": "TF-IDF cosine similarity, fitted on the union of the two sets "
            "(seed 002)",
        }
    }
    threshold_range = (0.0, 1.0)
    similarity_rule = "similarity_tfidf"
    nulls = "in_job"  # the word-salad pool is vectorised inside the metrics job
    runs = True
    ceiling = True
    theme_vectors = True
    calibrates = True
    keys = frozenset({"analyzer", "ngram_range", "assign_threshold"})
    similarity_keys = ("analyzer", "ngram_range")

    def check(self, name, spec):
        tfidf_options(spec, f"config methods.{name}")

    def similarity(self, spec, pairs, tables, **_):
        options = tfidf_options(spec)
        for a, b in pairs:
            ta, tb = tables[a], tables[b]
            texts_b = None if a == b else tb["text"].tolist()
            yield (a, b), tfidf(ta["text"].tolist(), texts_b, **options), {}

    def similarity_for(self, spec, a, b):
        return tfidf(a["text"].tolist(), b["text"].tolist(), **tfidf_options(spec))

    def pair_scores(self, spec, texts_a, texts_b, **_):
        """One vectoriser, with the method's analyzer, fitted on every text of the pairs."""
        a, b = list(texts_a), list(texts_b)
        vec = vectorizer(**tfidf_options(spec)).fit(a + b)
        X, Y = vec.transform(a), vec.transform(b)
        return np.asarray(X.multiply(Y).sum(axis=1)).ravel()  # rows are L2-normalised

    def vectors(self, spec, tables, embeddings):
        """One vectoriser fitted on every set's texts (seed 002)."""
        names = list(tables)
        texts = [t for s in names for t in tables[s]["text"].tolist()]
        try:
            X = vectorizer().fit_transform(texts).toarray()
        except ValueError as e:  # every text was a stop word or punctuation
            raise InputError(
                "tfidf", f"cannot build a vocabulary ({e})", "Give the themes longer texts"
            ) from e
        bounds = np.cumsum([0] + [len(tables[s]) for s in names])
        return {s: X[bounds[k] : bounds[k + 1]] for k, s in enumerate(names)}

    def run_matrix(self, runs, tables, embeddings):
        return run_similarity_tfidf(["\n".join(tables[r]["text"]) for r in runs])

    def paraphrase_scores(self, method, spec, para, embeddings, threads, cache):
        """Per theme, TF-IDF fitted on the theme and its paraphrases."""
        sims: list[float] = []
        for _, rows in para.groupby("theme_id", sort=False):
            S = tfidf([rows["text"].iloc[0]], rows["paraphrase"].tolist(), **tfidf_options(spec))
            sims += S[0].tolist()
        return sims

    def null_pool(self, a, b, null_file, pool, seed, scale, emb_a, spec=None):
        if not pool:
            return None
        # One fit per n_b pool texts (one salad set): fitted on A plus all P texts at once,
        # B's words would get a far lower IDF than in the real comparison, and so would S.
        a_texts = a["text"].tolist()
        options = tfidf_options(spec or {})
        chunks = _salad_sets(tuple(b["text"]), pool, seed, **options)
        return np.hstack([scale(tfidf(a_texts, x, **options), w) for x, w in chunks])

    def segment_scores(
        self, spec, themes, segments, theme_embeddings=None, segment_embeddings=None
    ):
        """TF-IDF cosine fitted on the set's theme texts and the segments together."""
        if not len(segments):
            return None
        texts = segments["text"].tolist()
        return tfidf(themes["text"].tolist(), texts, **tfidf_options(spec))

    def segment_vectors(
        self, spec, themes, segments, theme_embeddings=None, segment_embeddings=None
    ):
        """The L2-normalised TF-IDF rows of the theme texts and the segments, fitted on both
        together as segment_scores does (their products are its cosines)."""
        if not len(segments):
            return None
        texts = themes["text"].tolist() + segments["text"].tolist()
        X = vectorizer(**tfidf_options(spec)).fit_transform(texts).toarray()
        return X[: len(themes)], X[len(themes) :]


@functools.lru_cache(maxsize=64)
def _salad_sets(b_texts: tuple, pool: int, seed: int, **options) -> tuple:
    """B's word-salad pool cut into salad sets of n_b texts, each with its within-set TF-IDF
    matrix (read-only): the same for every A compared with B, so a metrics job makes them
    once per B instead of once per comparison."""
    texts, _ = word_salad_pool(list(b_texts), pool, seed)
    n_b = len(b_texts)
    out = []
    # Whole salad sets only (the pool holds nothing else): a set's TF-IDF is fitted on A and
    # its own n_b texts, and under z each text is standardised against the other n_b − 1.
    for x in (texts[i : i + n_b] for i in range(0, len(texts) - n_b + 1, n_b)):
        w = tfidf(x, None, **options)
        w.flags.writeable = False
        out.append((x, w))
    return tuple(out)


KIND = Tfidf()
