"""A readable view of a similarity matrix too large to draw cell by cell.

An axis with more than ``MAX_CELLS`` themes is ordered by hierarchical clustering of the
themes' similarity profiles (scipy, average linkage) and cut into at most ``MAX_CELLS``
groups of neighbouring themes; a group's cell shows the highest S of its members, so a
cell meets the threshold exactly when some theme of the group does. The figure then has at
most ``MAX_CELLS`` × ``MAX_CELLS`` cells, whatever the matrix size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import leaves_list, linkage

MAX_CELLS = 60  # cells per axis drawn one by one; above it, groups
CLUSTER_MAX = 4000  # linkage keeps n²/2 distances; beyond it, order by best partner


@dataclass(frozen=True)
class Grouping:
    """Theme indices of each group, in drawing order (one group per theme when small)."""

    groups: list[np.ndarray]

    @property
    def grouped(self) -> bool:
        return any(len(g) > 1 for g in self.groups)

    def index_of(self) -> dict[int, int]:
        return {int(t): k for k, g in enumerate(self.groups) for t in g}


def _order(profiles: np.ndarray) -> np.ndarray:
    """Leaf order of average-linkage clustering; best-partner order for very long axes."""
    n = len(profiles)
    if n > CLUSTER_MAX:
        best = profiles.argmax(axis=1)
        return np.lexsort((np.arange(n), -profiles.max(axis=1), best))

    return leaves_list(linkage(profiles, method="average", metric="euclidean"))


def group_axis(profiles: np.ndarray, max_cells: int = MAX_CELLS) -> Grouping:
    """Groups of one axis's themes; ``profiles`` has one row per theme (its similarities
    to every theme on the other axis, NaN allowed). Up to ``max_cells`` themes: one each.

    Above it: clustered order cut into ``max_cells`` runs of (almost) equal size, so every
    group is a run of neighbours in the dendrogram's leaf order and no group is huge.
    """
    n = len(profiles)
    if n <= max_cells:
        return Grouping([np.array([i]) for i in range(n)])
    P = np.asarray(profiles, dtype=float)
    P = np.where(np.isfinite(P), P, np.nanmin(P) if np.isfinite(P).any() else 0.0)
    order = _order(P)
    return Grouping([np.asarray(g) for g in np.array_split(order, max_cells)])


def block_max(S: np.ndarray, rows: Grouping, cols: Grouping) -> np.ndarray:
    """The highest finite S of each (row group, column group); NaN where none is finite."""
    filled = np.where(np.isfinite(S), S, -np.inf)
    by_row = np.stack([filled[g].max(axis=0) for g in rows.groups]) if rows.groups else filled
    out = np.stack([by_row[:, g].max(axis=1) for g in cols.groups], axis=1)
    return np.where(np.isneginf(out), np.nan, out)


def group_labels(labels: Sequence[str], grouping: Grouping, scores: np.ndarray) -> list[str]:
    """A group's label: its count and the member with the highest S, e.g. '[34] L0042 Care'."""
    out = []
    for g in grouping.groups:
        if len(g) == 1:
            out.append(labels[int(g[0])])
            continue
        s = np.where(np.isfinite(scores[g]), scores[g], -np.inf)
        out.append(f"[{len(g)}] {labels[int(g[int(np.argmax(s))])]}")
    return out
