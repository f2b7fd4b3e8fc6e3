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

Here: read_codings. The codings and their intervals: io/codings.py; the readers:
io/codings_files.py and io/codings_qdpx.py; the transcripts they code:
io/codings_transcripts.py; the checks: io/codings_checks.py.
"""

from __future__ import annotations

from pathlib import Path

from themesim.errors import InputError
from themesim.io.codings import Codings
from themesim.io.codings_checks import (
    check_codes,
    check_empty_coders,
    note_copies,
    note_overlaps,
)
from themesim.io.codings_files import from_files
from themesim.io.codings_qdpx import from_qdpx
from themesim.io.codings_transcripts import texts_and_files


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
        out = from_qdpx(paths[0], transcripts, wanted, level or "all")
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
        out = from_files(paths, *texts_and_files(transcripts), wanted)
    if len(out.coders) < 2:
        raise InputError(
            "themesim agree " + " ".join(map(str, paths)),
            f"has the codings of one coder ({out.coders[0] if out.coders else 'none'})",
            "Give two or more coders: one file each, a `coder` column, or a .qdpx with users.",
        )
    check_empty_coders(out)
    check_codes(out, allow_unmatched)
    note_overlaps(out)
    note_copies(out)
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
