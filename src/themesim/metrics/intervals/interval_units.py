"""The units a set-level interval deletes one at a time: the match graph's clusters, themes
that match the same themes of the other side (twins), and declared groups (theme files'
`group`), joined where they overlap."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components


class MatchStructure:
    """The match graph at one threshold: its components and whether any holds two themes
    of one side (then matches cluster and counts need their design effect)."""

    def __init__(self, M: np.ndarray):
        n_a, n_b = M.shape
        adj = np.zeros((n_a + n_b, n_a + n_b), dtype=bool)
        adj[:n_a, n_a:] = M
        self.n_comp, labels = connected_components(csr_matrix(adj), directed=False)
        size_a = np.bincount(labels[:n_a], minlength=self.n_comp)
        size_b = np.bincount(labels[n_a:], minlength=self.n_comp)
        self.clustered = bool((size_a > 1).any() or (size_b > 1).any())


def deletion_groups(units, n: int) -> list[np.ndarray]:
    """The deletion units of one side: each theme alone, or the themes sharing a label."""
    if units is None:
        return [np.array([i]) for i in range(n)]
    return [np.flatnonzero(units == u) for u in np.unique(units)]


def twin_labels(M: np.ndarray) -> np.ndarray:
    """A unit label per row: rows that match the same nonempty set of columns share one (no
    count can tell them apart); every other row is its own."""
    labels = np.arange(M.shape[0])
    seen: dict[bytes, int] = {}
    for i, row in enumerate(M):
        if row.any():
            labels[i] = seen.setdefault(np.packbits(row).tobytes(), i)
    return labels


def merged_units(twins, declared) -> np.ndarray | None:
    """One unit label per theme: themes sharing a twin label or a declared group are one
    unit (transitively); None when neither is given."""
    if twins is None and declared is None:
        return None

    labels = [np.asarray(x) for x in (twins, declared) if x is not None]
    n = labels[0].size
    rows, cols = [], []
    for lab in labels:
        _, first = np.unique(lab, return_inverse=True)
        # link every theme to the first theme of its label
        head = np.full(first.max() + 1, -1)
        for i, g in enumerate(first):
            if head[g] < 0:
                head[g] = i
            rows.append(i)
            cols.append(head[g])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def group_codes(groups, n: int) -> np.ndarray | None:
    """Integer codes of declared groups; a theme without a group is its own (None when no
    theme has one)."""
    if groups is None:
        return None
    g = list(groups)
    if len(g) != n:
        raise ValueError(f"{len(g)} groups given for {n} themes")

    def missing(x):
        return x is None or (not isinstance(x, str) and bool(pd.isna(x))) or not str(x).strip()

    if all(missing(x) for x in g):
        return None
    names = {str(x).strip() for x in g if not missing(x)}
    code = {name: i for i, name in enumerate(sorted(names))}
    own = len(code)
    out = np.empty(n, dtype=np.int64)
    for i, x in enumerate(g):
        if missing(x):
            out[i], own = own, own + 1
        else:
            out[i] = code[str(x).strip()]
    return out
