"""precomputed: scores made elsewhere, read from {a}__vs__{b}.csv matrices."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from themesim.errors import InputError
from themesim.kinds.base import Kind
from themesim.similarity import SCORE_RANGE, align_matrix, read_matrix_csv

PAIR_SEP = "__vs__"


def matrix_csv(spec: dict, a: str, b: str) -> str:
    """The matrix file of the pair (a, b) of a precomputed method."""
    return str(Path(spec["dir"]) / f"{a}{PAIR_SEP}{b}.csv")


class Precomputed(Kind):
    name = "precomputed"
    builtins = {
        "precomputed": {
            "active": False,
            "description": "scores made elsewhere, read from CSV matrices",
        }
    }
    threshold_range = None  # any scale
    keys = frozenset({"dir"})
    similarity_rule = "similarity_precomputed"
    within_set_matrices = False  # within-set files are read when they exist
    reads_matrices = True
    calibrates = True
    calibrates_on_request = True  # its matrices need not hold the rated pairs
    unscored_pairs_fix = (
        "Rate pairs whose text_a and text_b are the texts of themes in its matrices "
        "(as text_template renders them), or give the method numeric thresholds"
    )
    similarity_keys = ("clamp",)  # out-of-range scores: an error, or clipped with clamp: true

    def check(self, name, spec):
        if not (spec.get("dir") and Path(spec["dir"]).is_dir()):
            raise InputError(
                f"config methods.{name}.dir",
                f"folder {spec.get('dir')!r} not found",
                "Point dir: at a folder of {a}__vs__{b}.csv matrices",
            )

    def check_pairs(self, name, spec, pairs):
        for a, b in pairs:
            if not Path(matrix_csv(spec, a, b)).is_file():
                raise InputError(
                    f"config methods.{name}",
                    f"no matrix for {a} vs {b}: {matrix_csv(spec, a, b)} not found",
                    "Add that CSV (rows = A theme names, header = B theme names)",
                )

    def matrix_files(self, spec, pairs):
        return [matrix_csv(spec, a, b) for a, b in pairs]

    def study_pairs(self, spec, pairs, within):
        return [p for p in pairs + within if Path(matrix_csv(spec, *p)).is_file()]

    def similarity(self, spec, pairs, tables, *, matrices=None, **_):
        for a, b in pairs:
            src = matrices[(a, b)]
            raw, rows, cols = read_matrix_csv(
                src, score_range=SCORE_RANGE, clamp=bool(spec.get("clamp"))
            )
            names_a, names_b = tables[a]["name"].tolist(), tables[b]["name"].tolist()
            S = align_matrix(raw, rows, cols, names_a, names_b, str(src))
            yield (a, b), S, {"source": str(src)}

    def pair_scores(self, spec, texts_a, texts_b, *, tables=None, matrices=None, **_):
        """Each rated pair's score looked up in the method's matrices, NaN where none holds
        it: text_a is the text of a row theme and text_b of a column theme of one matrix, or
        the other way round. Texts match as the study renders its themes (text_template),
        with runs of white space as one space; the first matrix in study order that holds a
        pair gives its score."""

        def norm(text) -> str:
            return " ".join(str(text).split())

        rows = {s: {} for s in tables}  # set -> text -> first theme with that text
        for s, t in tables.items():
            for i, text in enumerate(t["text"]):
                rows[s].setdefault(norm(text), i)
        pairs = [(norm(a), norm(b)) for a, b in zip(texts_a, texts_b, strict=True)]
        out = np.full(len(pairs), np.nan)
        for a, b in matrices:
            ra, rb = rows[a], rows[b]
            hits = {}
            for k, (x, y) in enumerate(pairs):
                if np.isnan(out[k]):
                    if x in ra and y in rb:
                        hits[k] = (ra[x], rb[y])
                    elif y in ra and x in rb:
                        hits[k] = (ra[y], rb[x])
            if not hits:
                continue
            ((_, S, _),) = self.similarity(spec, [(a, b)], tables, matrices=matrices)
            for k, (i, j) in hits.items():
                out[k] = S[i, j]
        return out


KIND = Precomputed()
