"""What each method's similarity job reads and writes."""

from __future__ import annotations

from themesim.inputs import Setup, at, methods, pair_names
from themesim.paths import SIMILARITY, SIMILARITY_MANIFEST, SIMILARITY_PAIR


def folder(setup: Setup, method: str) -> str:
    return at(SIMILARITY, method=method)


def manifest(setup: Setup, method: str) -> str:
    return at(SIMILARITY_MANIFEST, method=method)


def files(setup: Setup, method: str, pairs=None) -> list[str]:
    pairs = setup.study.pairs_for(method) if pairs is None else pairs
    return [at(SIMILARITY_PAIR, method=method, pair=p) for p in pair_names(pairs)]


def done(setup: Setup, method: str) -> list[str]:
    """The manifest of a method's similarity job; consumers depend on it and get every
    pair's path as a param. Thousands of per-pair inputs (all pairs of 200 sets) would
    make the DAG build grow with pairs squared."""
    return [manifest(setup, method)]


def spec(setup: Setup, method: str) -> dict:
    """What the similarity step reads of the method; thresholds never re-score."""
    return methods.kind_of(setup, method).similarity_spec(methods.spec(setup, method))


def sets(setup: Setup, method: str) -> list[str]:
    """The sets whose theme tables the similarity job reads: all of them for a kind that
    reads embedding files (an abtt variant fits its correction on the study), else those
    of the method's comparisons."""
    if methods.kind_of(setup, method).reads_embeddings:
        return list(setup.study.sets)
    return setup.study.sets_for(method)


def matrix_files(setup: Setup, method: str, pairs) -> list[str]:
    """Score matrices made elsewhere that the method reads for those pairs."""
    return methods.kind_of(setup, method).matrix_files(methods.spec(setup, method), pairs)


def matrix_map(setup: Setup, method: str, pairs) -> dict:
    """(a, b) -> the score matrix made elsewhere that the method reads for it (none for a
    kind that reads none)."""
    files = matrix_files(setup, method, pairs)
    return dict(zip(pairs, files, strict=True)) if files else {}


def within_sets(setup: Setup, method: str) -> list[str]:
    """Sets whose within-set matrix the method has (the sets of its comparisons)."""
    return (
        setup.study.sets_for(method) if methods.kind_of(setup, method).within_set_matrices else []
    )


def within_files(setup: Setup, method: str) -> list[str]:
    return files(setup, method, [(s, s) for s in within_sets(setup, method)])


def within_map(setup: Setup, method: str) -> dict[str, str]:
    """Set -> the file of its within-set matrix, for every set the method has one."""
    return dict(zip(within_sets(setup, method), within_files(setup, method), strict=True))
