"""The contract every method kind meets: its settings, what it produces, how it scores.

A kind answers two sorts of question. Capability flags (class attributes) tell the
workflow which files a method of the kind has; the methods compute them. Each kind lives
in its own module of themesim.kinds and is registered in themesim.kinds.KINDS.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from themesim.defaults import kind_defaults
from themesim.embed.vectors import read_embeddings
from themesim.errors import InputError

# Settings every method accepts, whatever its kind.
COMMON_KEYS = frozenset(
    {"kind", "active", "description", "thresholds", "op", "scale", "clamp", "raw_thresholds"}
    | {"comparisons"}
)


class Kind:
    """One way of making a similarity matrix; subclasses override what differs."""

    name: str = ""
    # Settings a method of this kind starts from (a built-in method adds its own): the
    # schema's, its kind's entries in `x-kinds` under methods: (set for each subclass).
    defaults: dict = {}
    # Built-in methods of this kind: name -> settings beyond `defaults`.
    builtins: dict = {}
    # Range of thresholds on the cosine scale; None: any number (scores made elsewhere).
    threshold_range: tuple[float, float] | None = None
    score_name: str = "cosine"  # what its scores are, for the threshold error
    keys: frozenset = frozenset()  # settings of this kind beyond COMMON_KEYS
    # The settings its similarity step reads (rule params: a change reruns that step only).
    similarity_keys: tuple = ()
    # The name of the workflow rule that writes its similarity files (one rule definition;
    # cluster profiles set resources by rule name) and what its job claims.
    similarity_rule: str = ""
    similarity_job: dict = {"threads": 1, "priority": 0, "resources": {}}
    own_embeddings: bool = False  # embeds its themes, keywords and transcript segments
    reads_embeddings: bool = False  # its similarity reads embedding files (own or a base's)
    within_set_matrices: bool = True  # writes S of every set against itself
    nulls: str | None = None  # "embedded": embed_null pools; "in_job": built by metrics
    runs: bool = False  # run consistency (seeds 002-004) over two or more runs
    theme_vectors: bool = False  # one vector per theme, for the 2-D theme map
    reads_matrices: bool = False  # reads score matrices made elsewhere (hashed, archived)
    judge_cache: bool = False  # keeps judgements in results/cache/judge.sqlite
    calibrates: bool = False  # scores rated text pairs itself (pair_scores: calibration)
    # Calibrated only for a method that uses `calibrated` (the rated pairs may not be among
    # its themes: precomputed); else for every method of the kind once rated pairs are set.
    calibrates_on_request: bool = False
    # What to do when too few rated pairs have a score (pair_scores gave NaN for the rest).
    unscored_pairs_fix: str = "Rate more pairs of both labels"
    ceiling: bool = False  # scores a theme against its paraphrases (paraphrase_scores)
    # Its pair scores need the study's embedding files (abtt: the correction is fitted there).
    pairs_read_study_embeddings: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "defaults" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: a kind's defaults are the schema's x-kinds")
        cls.defaults = kind_defaults(cls.name)

    @property
    def accepts(self) -> frozenset:
        return COMMON_KEYS | self.keys

    def similarity_spec(self, spec: dict) -> dict:
        """What the similarity step needs of a method's settings; never its thresholds."""
        keys = self.similarity_keys
        return {"kind": self.name} | {k: spec[k] for k in keys if spec.get(k) is not None}

    def starts_llm_server(self, spec: dict) -> bool:
        """Whether its similarity and calibration jobs may start a local LLM server (the
        workflow lets one such job run at a time: resource llm_server)."""
        return False

    def check(self, name: str, spec: dict) -> None:
        """Parse-time checks of one method's settings beyond the schema."""

    def check_study(self, name: str, spec: dict, methods: dict) -> None:
        """Checks that need the other active methods (e.g. an abtt's base)."""

    def check_pairs(self, name: str, spec: dict, pairs: list) -> None:
        """Checks of the comparisons a method must score (e.g. a matrix per pair)."""

    def study_pairs(self, spec: dict, pairs: list, within: list) -> list:
        """The pairs a method writes similarity files for."""
        return pairs + within if self.within_set_matrices else list(pairs)

    def matrix_files(self, spec: dict, pairs) -> list[str]:
        """Score matrices made elsewhere that the method reads for those pairs."""
        return []

    def embeddings_of(self, name: str, spec: dict) -> str:
        """The method whose embedding files this one reads."""
        return name

    def similarity(
        self,
        spec: dict,
        pairs,
        tables: dict,
        *,
        embeddings=None,
        matrices=None,
        cache=None,
        threads=None,
    ) -> Iterator[tuple[tuple[str, str], np.ndarray, dict]]:
        """((a, b), S, metadata) for every pair; S is n_a x n_b."""
        raise NotImplementedError(self.name)

    def similarity_for(self, spec: dict, a, b) -> np.ndarray:
        """S of two theme tables with no files involved (themesim compare)."""
        raise InputError(f"method kind {self.name!r}", "needs files", "Run it in a study")

    def vectors(self, spec: dict, tables: dict, embeddings: dict) -> dict:
        """Set name -> one vector per theme, in the method's own space."""
        raise NotImplementedError(f"{self.name} has no theme vectors")

    def run_matrix(self, runs: list, tables: dict, embeddings: dict) -> np.ndarray:
        """Similarity between whole runs (seeds 002-004)."""
        raise NotImplementedError(f"{self.name} has no run consistency")

    def pair_scores(
        self,
        spec: dict,
        texts_a,
        texts_b,
        *,
        cache=None,
        study_embeddings=(),
        threads=None,
        tables=None,
        matrices=None,
    ) -> np.ndarray:
        """The score of every rated pair (texts_a[i], texts_b[i]), made as the method makes
        its matrices (calibration); NaN for a pair the method cannot score (left out).

        tables: set -> theme table, matrices: (a, b) -> matrix file (a kind that
        reads_matrices)."""
        raise NotImplementedError(f"{self.name} cannot score rated pairs")

    def paraphrase_scores(self, method, spec, para, embeddings, threads, cache) -> list[float]:
        """Raw similarity of each row's theme (para: theme_id, text) to its paraphrase."""
        raise NotImplementedError(f"{self.name} has no paraphrase ceiling")

    def null_pool(self, a, b, null_file, pool: int, seed: int, scale, emb_a, spec=None):
        """Each A theme's similarity to every text of B's word-salad pool (n_a x P), or None.

        scale(S, W): scores of A against pool texts, given S and the pool texts' own
        similarities W; called once per whole salad set (n_b = len(b) texts in pool order),
        so the z scale standardises each pool text against the other texts of its set.
        """
        return None

    def segment_scores(
        self, spec: dict, themes, segments, theme_embeddings=None, segment_embeddings=None
    ) -> np.ndarray | None:
        """Themes x transcript segments similarity for grounding's `assigned` labels (rows in
        the order of themes, columns in the order of segments), or None: the kind assigns
        nothing."""
        return None

    def segment_vectors(
        self, spec: dict, themes, segments, theme_embeddings=None, segment_embeddings=None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(theme vectors, segment vectors) in one space, rows in the order of themes and of
        segments, for the grounding coder's prototypes (themesim.coder.assign); None: the
        kind has no such space (its coder can only be the LLM)."""
        return None


def read_checked_embeddings(embeddings: dict, tables: dict) -> tuple[dict, str | None]:
    """Set -> float vectors of its embedding file, checked against the theme table."""
    out, model = {}, None
    for s, path in embeddings.items():
        ids, out[s], meta = read_embeddings(path)
        model = meta.get("model")
        if ids != tables[s]["theme_id"].tolist():
            raise InputError(
                str(path),
                "theme ids differ from the theme table",
                "Delete results/embeddings and rerun",
            )
    return out, model
