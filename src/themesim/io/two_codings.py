"""Two or more coders' codings of the same transcripts, for `themesim agree`: coded-segments
files (one per coder, or one with a `coder` column; io/coded.py's columns) or one REFI-QDA
project whose codings carry each coder's `creatingUser`.

The result is every coded passage as a character span, checked so that no figure can mislead:
codes are told apart by id or full path (`Parent/Child`), never by a bare name; offsets must
select the passage given (compared with whitespace, case and typographic quotes ignored);
every coder uses the codes the others use; no coder is given twice. A coder's overlapping
selections of one code count as their union (said once).

Agreement is computed on intervals, never on a characters × codes matrix, so memory grows with
the number of selections, not with the length of the transcripts.

Here: the codings, read_codings and their intervals. The readers: io/codings_files.py and
io/codings_qdpx.py; the transcripts they code: io/codings_transcripts.py; the checks:
io/codings_checks.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.metrics.unitizing import Intervals, merge

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


def _code_key(name) -> str:
    return " ".join(str(name).casefold().split())


def _domain(label: str) -> str:
    """A code's top-level code: what its path (`Parent/Child`, MAXQDA's `Parent\\Child`) starts
    with; a code without a path is its own."""
    import re

    head = re.split(r"[/\\]", label, maxsplit=1)[0].strip()
    return head or label


def read_codings(
    paths,
    transcripts=(),
    *,
    coders=None,
    level: str | None = None,
    allow_unmatched: bool = False,
) -> Codings:
    """The spans of two or more codings: `paths` is one .qdpx or coded-segments files.

    transcripts: transcript files or glob patterns (required for coded-segments files; beside
    a .qdpx they are compared with the project's own copies). coders: the coders to compare
    (a .qdpx's user names or guids, a `coder` column's values, or names for the files in
    order). level: a .qdpx's codes (top, leaf, all). allow_unmatched: score a code some coder
    never used as never applied by that coder instead of stopping.
    """
    # the readers and checks build Codings: imported here, after it is defined
    from themesim.io.codings_checks import (
        _check_codes,
        _check_empty_coders,
        _note_copies,
        _note_overlaps,
    )
    from themesim.io.codings_files import _from_files
    from themesim.io.codings_qdpx import _from_qdpx
    from themesim.io.codings_transcripts import _texts_and_files

    paths = [Path(p) for p in paths]
    wanted = _coder_names(coders)
    seen: dict[Path, Path] = {}
    for p in paths:
        key = p.resolve()
        if key in seen:
            raise InputError(
                str(p),
                "is given twice",
                "Give each coder's file once: a coding compared with itself agrees by "
                "construction.",
            )
        seen[key] = p
    if any(p.suffix.lower() == ".qdpx" for p in paths):
        if len(paths) != 1:
            raise InputError(
                "themesim agree " + " ".join(map(str, paths)),
                "takes one .qdpx project or coded-segments files (CSV, TSV, XLSX), not both",
                "Give one REFI-QDA project with every coder's codings, or one file per coder.",
            )
        out = _from_qdpx(paths[0], transcripts, wanted, level or "all")
    else:
        if level is not None:
            raise InputError(
                f"--level {level}",
                "applies to a .qdpx project's code tree only",
                "Leave it out for coded-segments files: their codes are taken as written.",
            )
        if not transcripts:
            raise InputError(
                "themesim agree",
                "coded-segments files need the transcripts they code",
                "Give them with --transcripts (files or glob patterns).",
            )
        out = _from_files(paths, *_texts_and_files(transcripts), wanted)
    if len(out.coders) < 2:
        raise InputError(
            "themesim agree " + " ".join(map(str, paths)),
            f"has the codings of one coder ({out.coders[0] if out.coders else 'none'})",
            "Give two or more coders: one file each, a `coder` column, or a .qdpx with users.",
        )
    _check_empty_coders(out)
    _check_codes(out, allow_unmatched)
    _note_overlaps(out)
    _note_copies(out)
    return out


read_two_codings = read_codings


def _coder_names(coders) -> list[str] | None:
    if not coders:
        return None
    names = [str(c).strip() for c in coders]
    where = "--coders " + ",".join(names)
    if any(not n for n in names):
        raise InputError(where, "has an empty name", "Separate the names with single commas.")
    seen: set[str] = set()
    for n in names:
        if n.casefold() in seen:
            raise InputError(
                where,
                f"names {n!r} twice",
                "Name each coder once: a coder compared with themself agrees by construction.",
            )
        seen.add(n.casefold())
    if len(names) < 2:
        raise InputError(where, "names one coder", "Name two or more.")
    return names


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


def agreement_tables(
    c: Codings, level: float = 0.95, overlap: float | None = None, similarity=None
) -> dict:
    """The tables of `themesim agree` (themesim.metrics.agree)."""
    from themesim.metrics.agree import agreement_tables as tables

    return tables(c, level, overlap, similarity)
