"""precomputed: scores made elsewhere, read from {a}__vs__{b}.csv matrices."""

from __future__ import annotations

from pathlib import Path

from themesim.errors import InputError
from themesim.kinds.base import Kind

PAIR_SEP = "__vs__"


def matrix_csv(spec: dict, a: str, b: str) -> str:
    """The matrix file of the pair (a, b) of a precomputed method."""
    return str(Path(spec["dir"]) / f"{a}{PAIR_SEP}{b}.csv")


class Precomputed(Kind):
    name = "precomputed"
    defaults = {"dir": None, "thresholds": [0.5]}
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
        from themesim.similarity import SCORE_RANGE, align_matrix, read_matrix_csv

        for a, b in pairs:
            src = matrices[(a, b)]
            raw, rows, cols = read_matrix_csv(
                src, score_range=SCORE_RANGE, clamp=bool(spec.get("clamp"))
            )
            names_a, names_b = tables[a]["name"].tolist(), tables[b]["name"].tolist()
            S = align_matrix(raw, rows, cols, names_a, names_b, str(src))
            yield (a, b), S, {"source": str(src)}


KIND = Precomputed()
