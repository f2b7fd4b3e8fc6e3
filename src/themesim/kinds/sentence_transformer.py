"""sentence_transformer: cosine of sentence-transformers embeddings (Raza et al. 2025)."""

from __future__ import annotations

import functools
import os

import numpy as np

from themesim.embed.encode import encode_with
from themesim.embed.models import MPNET, check_model
from themesim.embed.vectors import read_embeddings, read_vector_table
from themesim.errors import InputError
from themesim.kinds.base import Kind, read_checked_embeddings
from themesim.metrics.sets.runs import run_similarity_embedding
from themesim.similarity import cosine

EMBED_KEYS = ("model", "path", "batch_size", "device", "dtype")


class SentenceTransformer(Kind):
    name = "sentence_transformer"
    builtins = {
        "minilm": {"active": True, "description": "all-MiniLM-L6-v2 cosine similarity"},
        "mpnet": {
            "active": True,
            "description": "all-mpnet-base-v2 cosine similarity",
            "model": MPNET,
            "thresholds": [0.62],
            "batch_size": 32,
        },
        "st5xxl": {
            "active": False,
            "description": "sentence-T5-xxl cosine similarity (needs a GPU and a local copy)",
            "model": "sentence-transformers/sentence-t5-xxl",
            "thresholds": [0.81],
            "batch_size": 8,
            "device": "cuda",
            "dtype": "float16",
        },
    }
    threshold_range = (-1.0, 1.0)
    keys = frozenset(EMBED_KEYS) | {"assign_threshold"}
    similarity_rule = "similarity_embedding"
    own_embeddings = True
    reads_embeddings = True
    nulls = "embedded"
    runs = True
    ceiling = True
    theme_vectors = True
    calibrates = True

    def check(self, name, spec):
        """A model that cannot load fails now, not in the embedding job."""
        try:
            check_model(spec.get("model"), spec.get("path"))
        except InputError as e:
            raise InputError(f"config methods.{name}: {e.where}", e.problem, e.fix) from e

    def similarity(self, spec, pairs, tables, *, embeddings=None, **_):
        emb, model = read_checked_embeddings(embeddings, tables)
        emb = self.correct(spec, emb)
        for a, b in pairs:
            yield (a, b), cosine(emb[a], emb[b]), {"model": model}

    def correct(self, spec, emb: dict) -> dict:
        """The vectors the method scores with (abtt overrides: isotropy correction)."""
        return emb

    def pair_scores(
        self, spec, texts_a, texts_b, *, cache=None, study_embeddings=(), threads=None, **_
    ):
        """The method's model through the embedding cache; rowwise cosine of each pair."""
        a, b = list(texts_a), list(texts_b)
        emb, _ = encode_with(spec, a + b, threads, cache=cache, what="calibration pairs")
        emb = self.correct_pairs(spec, np.asarray(emb, dtype=np.float64), study_embeddings)
        X = emb[: len(a)] / np.linalg.norm(emb[: len(a)], axis=1, keepdims=True)
        Y = emb[len(a) :] / np.linalg.norm(emb[len(a) :], axis=1, keepdims=True)
        return np.einsum("ij,ij->i", X, Y)

    def correct_pairs(self, spec, emb: np.ndarray, study_embeddings) -> np.ndarray:
        """Rated pairs' vectors as the method scores them (abtt overrides)."""
        return emb

    def similarity_for(self, spec, a, b):
        emb, _ = encode_with(spec, a["text"].tolist() + b["text"].tolist(), threads=None)
        return cosine(emb[: len(a)], emb[len(a) :])

    def vectors(self, spec, tables, embeddings):
        emb, _ = read_checked_embeddings({s: embeddings[s] for s in tables}, tables)
        return self.correct(spec, {s: v.astype(np.float64) for s, v in emb.items()})

    def run_matrix(self, runs, tables, embeddings):
        return run_similarity_embedding([read_embeddings(embeddings[r])[1] for r in runs])

    def paraphrase_scores(self, method, spec, para, embeddings, threads, cache):
        """The theme's stored vector against its paraphrases, embedded through the cache."""
        ids, T, _ = read_embeddings(embeddings)
        P, _ = encode_with(spec, para["paraphrase"].tolist(), threads, cache=cache, what=method)
        row = {tid: i for i, tid in enumerate(ids)}
        return [
            float(cosine(T[row[tid]][None, :], P[j][None, :])[0, 0])
            for j, tid in enumerate(para["theme_id"])
        ]

    def null_pool(self, a, b, null_file, pool, seed, scale, emb_a, spec=None):
        if not pool or not null_file:
            return None
        stat = os.stat(null_file)
        emb, within = _null_vectors(str(null_file), stat.st_mtime_ns, stat.st_size)
        S = cosine(emb_a, emb)
        # One salad set (n_b texts) at a time: under z a salad text is standardised against
        # the other n_b − 1 texts of its own set, as a real B theme is against B's others.
        n_b = len(b)
        sets = [slice(k * n_b, (k + 1) * n_b) for k in range(len(emb) // n_b)]
        return np.hstack([scale(S[:, s], within[s, s]) for s in sets])

    def segment_scores(
        self, spec, themes, segments, theme_embeddings=None, segment_embeddings=None
    ):
        """Cosine of the theme and segment vectors the method already wrote."""
        vectors = self.segment_vectors(spec, themes, segments, theme_embeddings, segment_embeddings)
        return None if vectors is None else cosine(*vectors)

    def segment_vectors(
        self, spec, themes, segments, theme_embeddings=None, segment_embeddings=None
    ):
        """The theme and segment vectors the method already wrote."""
        if not theme_embeddings or not segment_embeddings:
            return None
        ids, emb_t, _ = read_embeddings(theme_embeddings)
        cols, emb_s, _ = read_vector_table(segment_embeddings)
        order = {t: i for i, t in enumerate(ids)}
        pos = {
            (t, int(s)): i
            for i, (t, s) in enumerate(zip(cols["transcript"], cols["segment"], strict=True))
        }
        keys = zip(segments["transcript"], segments["segment"], strict=True)
        rows = [pos[(t, int(s))] for t, s in keys]
        return emb_t[[order[t] for t in themes["theme_id"]]], emb_s[rows]


@functools.lru_cache(maxsize=64)
def _null_vectors(path: str, mtime_ns: int, size: int) -> tuple:
    """B's word-salad vectors and their cosines (read-only), read once per B and file
    version by a metrics job rather than once per comparison."""
    _, emb, _ = read_vector_table(path)
    within = cosine(emb, emb)
    emb.flags.writeable = within.flags.writeable = False
    return emb, within


KIND = SentenceTransformer()
