"""The codings of two or more coders as character spans (Codings), the helpers their readers
share, and the intervals agreement is computed on (Intervals, merge: the unions of character
spans that metrics/agreement/ builds on). Its own module so the readers (io/codings_files.py,
io/codings_qdpx.py), the checks (io/codings_checks.py), read_codings (io/two_codings.py),
metrics/agreement/agree.py and io/qdpx_export.py each import it, and none of them each other
in a circle."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

Intervals = np.ndarray  # shape (n, 2), int64, sorted, disjoint, each start < end


def merge(starts, ends) -> Intervals:
    """The union of intervals [start, end) as sorted disjoint intervals. Overlapping ones join;
    touching ones stay apart (two adjacent selections are two units)."""
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    keep = e > s
    s, e = s[keep], e[keep]
    if not len(s):
        return np.zeros((0, 2), dtype=np.int64)
    order = np.lexsort((e, s))
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] >= reach[:-1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(s)] - 1
    return np.column_stack([s[first], reach[last]])


SPAN_COLUMNS = ["coder", "document", "code", "start", "end", "file", "row"]


@dataclass
class Codings:
    coders: tuple[str, ...]  # coders' names, in order
    codes: list[str]  # code labels (a .qdpx code's full path), in first-seen order
    spans: pd.DataFrame  # SPAN_COLUMNS; coder is the coder's index
    texts: dict[str, str]  # transcript -> plain text
    domains: dict[str, str] = field(default_factory=dict)  # code -> its top-level code
    notes: list[str] = field(default_factory=list)  # said once on stderr
    sources: dict[int, str] = field(default_factory=dict)  # coder -> the file holding them


TwoCodings = Codings  # the name of the two-coder days


def domain(label: str) -> str:
    """A code's top-level code: what its path (`Parent/Child`, MAXQDA's `Parent\\Child`) starts
    with; a code without a path is its own."""
    head = re.split(r"[/\\]", label, maxsplit=1)[0].strip()
    return head or label


# ---------------------------------------------------------------- intervals


def intervals(c: Codings) -> dict[str, list[list[Intervals]]]:
    """Per transcript some coder coded: per coder, per code (c.codes order) the union of the
    coder's selections, as sorted disjoint intervals."""
    col = {code: j for j, code in enumerate(c.codes)}
    out = {}
    for doc, g in c.spans.groupby("document", sort=True):
        per = [[np.zeros((0, 2), dtype=np.int64) for _ in c.codes] for _ in c.coders]
        for (k, code), h in g.groupby(["coder", "code"], sort=False):
            if code in col:
                per[int(k)][col[code]] = merge(h["start"].to_numpy(), h["end"].to_numpy())
        out[doc] = per
    return out


def coded_scope(per_coder: list[list[Intervals]]) -> Intervals:
    """The characters some coder coded with some code."""
    parts = [iv for coder in per_coder for iv in coder if len(iv)]
    if not parts:
        return np.zeros((0, 2), dtype=np.int64)
    allv = np.concatenate(parts)
    return _union(allv)


def _union(iv: np.ndarray) -> Intervals:
    """Union joining touching intervals too (for lengths, where units do not matter)."""
    m = merge(iv[:, 0], iv[:, 1])
    if len(m) < 2:
        return m
    new = np.r_[True, m[1:, 0] > m[:-1, 1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(m)] - 1
    return np.column_stack([m[first, 0], m[last, 1]])
