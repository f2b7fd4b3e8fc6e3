"""Codings of `themesim agree` from coded-segments files: one per coder, or one with a `coder`
column (io/coded.py's columns), each passage found in its transcript by offsets or by its text.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.errors import InputError, name_key
from themesim.io.coded import ALIASES, blank_text, parse_offset, read_records
from themesim.io.codings import SPAN_COLUMNS, Codings, domain
from themesim.io.codings_transcripts import Locator
from themesim.io.inputs import check_input_file


def _cell(rec, col: dict[str, int], key: str):
    """A row's value of the column `key`; "" where the row or the file has none."""
    i = col.get(key)
    v = rec[i] if i is not None and i < len(rec) else ""
    return "" if v is None else v


def _read_file(p: Path) -> tuple[list, dict[str, int]]:
    """A coded-segments file's non-blank records (header first) and its columns' places."""
    where = str(p)
    check_input_file(p)
    records = [r for r in read_records(p, where) if any(str(v).strip() for v in r)]
    if not records:
        raise InputError(where, "contains no coded segments", "Export the codings again.")
    col: dict[str, int] = {}
    for i, h in enumerate(records[0]):
        canon = ALIASES.get(str(h).strip().casefold())
        if canon is not None and canon not in col:
            col[canon] = i
    missing = [c for c in ("document", "theme", "text") if c not in col]
    if missing:
        raise InputError(
            where,
            f"no {', '.join(missing)} column",
            "Columns: document, code (or theme), text, optional start, end and coder.",
        )
    return records, col


def _check_coder_column(records, col: dict[str, int], where: str) -> None:
    """A coder column names every row's coder, or none (a file of one coder)."""
    k = col["coder"]
    named = [bool(str(r[k] if k < len(r) and r[k] is not None else "").strip())
             for r in records[1:]]  # fmt: skip
    if any(named) and not all(named):
        raise InputError(
            f"{where}, row {named.index(False) + 2}",
            "has no coder, though other rows of the coder column name theirs",
            "Give the coder on every row; a file of one coder needs no coder column.",
        )


def _segment(rec, col: dict[str, int], at: str, loc: Locator) -> tuple[str, str, str, int, int]:
    """(coder, document, code, start, end) of one row, its passage found in its transcript."""
    code = " ".join(str(_cell(rec, col, "theme")).split())
    if not code:
        raise InputError(at, "has no code", "Give the code in the code column.")
    text = str(_cell(rec, col, "text"))
    if not text.strip():
        raise blank_text(at, text, _cell(rec, col, "start"), _cell(rec, col, "end"))
    start, end = (
        parse_offset(_cell(rec, col, "start"), "start", at),
        parse_offset(_cell(rec, col, "end"), "end", at),
    )
    if (start is None) != (end is None):
        raise InputError(at, "has only one of start and end", "Give both or neither.")
    if start is not None and end <= start:
        raise InputError(at, f"end ({end}) is not after start ({start})", "Fix them.")
    doc = loc.document(str(_cell(rec, col, "document")).strip(), at)
    a, b = loc.span(doc, text, start, end, at)
    return str(_cell(rec, col, "coder")).strip(), doc, code, a, b


def _read_rows(paths: list[Path], loc: Locator) -> tuple[list, dict, dict, bool]:
    """(rows, code key -> label, coder -> the file that holds them, whether a coder column
    names coders) of the files; a row is (coder label, document, code key, start, end, file,
    row, named by a coder column)."""
    rows = []
    labels: dict[str, str] = {}
    has_coder = False
    order: dict[str, str] = {}  # coder -> the file that holds them, in order
    for p in paths:
        where = str(p)
        records, col = _read_file(p)
        if "coder" not in col:  # one coder per file, even a file with a header only
            order.setdefault(p.stem, where)
        else:
            _check_coder_column(records, col, where)
        for n, rec in enumerate(records[1:], start=2):
            coder, doc, code, a, b = _segment(rec, col, f"{where}, row {n}", loc)
            has_coder |= bool(coder)
            order.setdefault(coder or p.stem, where)
            key = name_key(code)
            labels.setdefault(key, code)
            rows.append((coder or p.stem, doc, key, a, b, where, n, bool(coder)))
    return rows, labels, order, has_coder


def _coders(paths: list[Path], rows: list, order: dict[str, str], has_coder: bool, wanted):
    """(coders, rows, coder -> file): a `coder` column's values, else one per file (its name
    without extension); `wanted` (--coders) picks them, or names the files' coders."""
    found = list(order)
    per_file = {str(p): p.stem for p in paths}
    if not has_coder and len(set(per_file.values())) < len(paths):
        stems = [p.stem for p in paths]
        dup = next(s for s in stems if stems.count(s) > 1)
        if not wanted:
            raise InputError(
                ", ".join(str(p) for p in paths if p.stem == dup),
                f"are two files of the same name {dup!r}: the coders would share a name",
                "Name the coders with --coders A,B (one name per file, in order).",
            )
    if not wanted:
        return found, rows, order
    if not has_coder and len(wanted) == len(paths):
        rename = {str(p): w for p, w in zip(paths, wanted, strict=True)}
        rows = [(rename[r[5]], *r[1:]) for r in rows]
        return list(wanted), rows, {rename[v]: v for v in order.values()}
    lower = {f.casefold(): f for f in found}
    absent = [w for w in wanted if w.casefold() not in lower]
    if absent:
        raise InputError(
            f"--coders {','.join(wanted)}",
            f"names {absent[0]!r}, who has no codings here",
            f"Coders found: {', '.join(found)}. With one file per coder and no coder "
            "column, give one name per file.",
        )
    return [lower[w.casefold()] for w in wanted], rows, order


def from_files(paths: list[Path], texts: dict[str, str], files: dict[str, str], wanted) -> Codings:
    loc = Locator(texts, files)
    rows, labels, order, has_coder = _read_rows(paths, loc)
    found, rows, order = _coders(paths, rows, order, has_coder, wanted)
    index = {name: k for k, name in enumerate(found)}
    spans = pd.DataFrame(
        [(index[r[0]], r[1], labels[r[2]], r[3], r[4], r[5], r[6]) for r in rows if r[0] in index],
        columns=SPAN_COLUMNS,
    )
    codes = list(dict.fromkeys(spans["code"]))
    notes = []
    if loc.repeats:
        notes.append(
            f"{len(loc.repeats)} passage(s) without offsets occur more than once in their "
            f"transcript and were taken at the first occurrence (first: {loc.repeats[0]}); "
            "give start and end to say which"
        )
    sources = {found.index(k): v for k, v in order.items() if k in found}
    return Codings(tuple(found), codes, spans, texts, {c: domain(c) for c in codes}, notes, sources)
