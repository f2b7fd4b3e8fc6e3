"""abtt: cosine of a sentence_transformer method's embeddings after all-but-the-top."""

from __future__ import annotations

import numpy as np

from themesim.embed.isotropy import abtt, default_d, remove_top_directions
from themesim.embed.vectors import read_embeddings
from themesim.errors import InputError
from themesim.kinds.sentence_transformer import SentenceTransformer


class Abtt(SentenceTransformer):
    name = "abtt"
    builtins = {
        "minilm+abtt": {
            "active": True,
            "description": "all-MiniLM-L6-v2 after all-but-the-top isotropy correction",
        }
    }
    threshold_range = (-1.0, 1.0)
    keys = frozenset({"base", "d"})
    similarity_keys = ("d",)
    similarity_rule = "similarity_abtt"
    own_embeddings = False  # reads its base's
    reads_embeddings = True
    nulls = None  # no null model for a corrected variant
    runs = False
    ceiling = False  # its paraphrases would need its base's correction fitted on the study
    theme_vectors = True
    pairs_read_study_embeddings = True

    def check(self, name, spec):
        pass  # no model of its own to load

    def segment_scores(self, spec, themes, segments, *embedding_files):
        """None: the correction is fitted on theme vectors only, so segments have no place in
        its space (and it embeds no segments of its own)."""
        return None

    def segment_vectors(self, spec, themes, segments, *embedding_files):
        """None, as segment_scores: no segment has a place in the corrected space."""
        return None

    def check_study(self, name, spec, methods):
        base = methods.get(spec.get("base"))
        if base is None or base["kind"] != "sentence_transformer":
            raise InputError(
                f"config methods.{name}.base",
                f"{spec.get('base')!r} is not an active sentence_transformer method",
                "Name an active embedding method, e.g. base: minilm",
            )

    def embeddings_of(self, name, spec):
        return spec["base"]

    def correct(self, spec, emb):
        # One correction for the whole study: every set shares the same space.
        names = list(emb)
        return dict(zip(names, abtt([emb[n] for n in names], d=spec.get("d")), strict=True))

    def correct_pairs(self, spec, emb, study_embeddings):
        """The correction the method's matrices use: the mean and top directions of the
        study's pooled theme vectors, applied to the pairs' vectors."""
        pooled = np.vstack([read_embeddings(p)[1] for p in study_embeddings]).astype(np.float64)
        d = spec.get("d") or default_d(pooled.shape[1])
        _, U = remove_top_directions(pooled, d)
        emb = emb - pooled.mean(axis=0)
        return emb - (emb @ U.T) @ U

    def similarity_for(self, spec, a, b):
        return super(SentenceTransformer, self).similarity_for(spec, a, b)

    def null_pool(self, *args, **kwargs):
        return None


KIND = Abtt()
