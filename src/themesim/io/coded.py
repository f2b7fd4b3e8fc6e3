"""Coded segments: a CAQDAS export (MAXQDA, NVivo, ATLAS.ti, QualCoder) of which passage of
which transcript carries which theme, mapped onto the transcript segments it overlaps.

Columns (any case): `document` (transcript stem), `theme` (theme id or name), `text` (the coded
passage), optional `start`/`end` (character offsets in the transcript's plain text, end
exclusive), optional `coder`. CSV, TSV or XLSX.
"""

from __future__ import annotations

import csv
import logging
import math
from pathlib import Path

import pandas as pd

from themesim.errors import InputError, did_you_mean, name_key
from themesim.io.inputs import check_input_file, csv_rows, read_text_file
from themesim.io.spans import (
    check_selects,
    find_in,
    norm,
    normalise,
    overlapping,
)
from themesim.io.spans import short as _short
from themesim.io.xlsx import read_only_workbook

log = logging.getLogger("themesim")

CODED_SUFFIXES = (".csv", ".tsv", ".xlsx")
CODED_COLUMNS = ["document", "theme_id", "text", "start", "end", "coder", "row"]
LABEL_COLUMNS = ["transcript", "segment", "theme_id", "source"]
_REQUIRED = ("document", "theme", "text")
_OPTIONAL = ("start", "end", "coder")
# Names the common exports use for the same columns.
ALIASES = {
    "document": "document",
    "document name": "document",
    "transcript": "document",
    "source": "document",
    "file": "document",
    "theme": "theme",
    "code": "theme",
    "theme_id": "theme",
    "text": "text",
    "segment": "text",
    "coded segment": "text",
    "quote": "text",
    "start": "start",
    "begin": "start",
    "end": "end",
    "coder": "coder",
    "user": "coder",
}


def read_records(path: Path, where: str) -> list[list]:
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        try:
            wb = read_only_workbook(check_input_file(path))
        except Exception as e:  # openpyxl raises many types for a damaged file
            raise InputError(
                where,
                f"is not a readable .xlsx workbook ({type(e).__name__})",
                "Open it in Excel and save it again as .xlsx, or export it as CSV UTF-8.",
            ) from e
        try:
            ws = wb.worksheets[0]
            return [["" if v is None else v for v in row] for row in ws.iter_rows(values_only=True)]
        finally:
            wb.close()
    text = read_text_file(path)
    delimiter = "\t" if suffix == ".tsv" else ","
    try:
        return list(csv_rows(text, delimiter))  # a coded passage may pass 131,072 characters
    except csv.Error as e:
        raise InputError(
            where,
            f"is not valid {'TSV' if delimiter == chr(9) else 'CSV'} ({e})",
            "A cell with a quote or separator must be wrapped in double quotes.",
        ) from e


def parse_offset(value, key: str, at: str) -> int | None:
    """A character offset: empty for none; a whole number ≥ 0, else a one-line error naming
    the file and row (inf, 1e400 and NaN written in a cell included: they are not offsets)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None  # an empty spreadsheet cell read as NaN
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        f = math.nan
    if not math.isfinite(f) or f != math.floor(f) or f < 0:
        raise InputError(
            at,
            f"{key} is {str(value).strip()!r}, not a character offset",
            f"Give {key} as a whole number of characters from 0, or leave start and end empty.",
        )
    return int(f)


def coded_rows(path) -> int | None:
    """Rows of a coded-segments file below its header (None for a .qdpx project)."""
    p = Path(path)
    if p.suffix.lower() not in CODED_SUFFIXES:
        return None
    records = [r for r in read_records(p, str(path)) if any(str(v).strip() for v in r)]
    return max(len(records) - 1, 0)


def read_coded_file(path, themes: pd.DataFrame) -> pd.DataFrame:
    """The coded segments of `path` as CODED_COLUMNS; `theme` resolved to the set's theme_id.

    `themes` is the set's theme table (theme_id, name). `row` is the file's row number
    (header = 1).
    """
    where = str(path)
    p = check_input_file(path)
    if p.suffix.lower() not in CODED_SUFFIXES:
        raise InputError(
            where,
            f"unsupported coded-segments file type {p.suffix or '(no extension)'!r}",
            f"Use one of: {', '.join(CODED_SUFFIXES)}.",
        )
    records = [r for r in read_records(p, where) if any(str(v).strip() for v in r)]
    if not records:
        raise InputError(where, "contains no coded segments", "Export the coded segments again.")
    header = [str(h).strip().casefold() for h in records[0]]
    col: dict[str, int] = {}
    for i, h in enumerate(header):
        canon = ALIASES.get(h)
        if canon is not None and canon not in col:
            col[canon] = i
    missing = [c for c in _REQUIRED if c not in col]
    if missing:
        raise InputError(
            where,
            f"no {', '.join(missing)} column",
            "Columns: document (transcript name), theme (id or name), text (the coded passage), "
            "optional start, end (character offsets) and coder.",
        )
    by_id = {str(t).casefold(): str(t) for t in themes["theme_id"]}
    by_name = {name_key(n): str(t) for t, n in zip(themes["theme_id"], themes["name"], strict=True)}
    rows = []
    for n, rec in enumerate(records[1:], start=2):
        at = f"{where}, row {n}"

        def cell(key, rec=rec):
            i = col.get(key)
            return rec[i] if i is not None and i < len(rec) else ""

        theme = str(cell("theme")).strip()
        tid = by_id.get(theme.casefold()) or by_name.get(name_key(theme))
        if tid is None:
            raise unknown_theme(at, theme, themes)
        text = str(cell("text"))
        if not text.strip():
            raise blank_text(at, text, cell("start"), cell("end"))
        start, end = parse_offset(cell("start"), "start", at), parse_offset(cell("end"), "end", at)
        if (start is None) != (end is None):
            raise InputError(at, "has only one of start and end", "Give both offsets or neither.")
        if start is not None and end <= start:
            raise InputError(at, f"end ({end}) is not after start ({start})", "Fix the offsets.")
        rows.append(
            (str(cell("document")).strip(), tid, text, start, end, str(cell("coder")).strip(), n)
        )
    df = pd.DataFrame(rows, columns=CODED_COLUMNS)
    df["start"] = pd.array(df["start"], dtype="Int64")
    df["end"] = pd.array(df["end"], dtype="Int64")
    return df


_SPACES = {" ": "a space", "\n": "a line break", "\r": "a carriage return", "\t": "a tab",
           "\xa0": "a no-break space"}  # fmt: skip


def blank_text(at: str, text: str, start="", end="") -> InputError:
    """The error for a passage whose text is empty or whitespace only: what it holds (a
    one-character selection of a space is not "no text"), and where its offsets put it."""
    if not text:
        return InputError(at, "has no coded text", "Give the coded passage in the text column.")
    held = [_SPACES.get(ch, f"the whitespace character {ch!r}") for ch in text[:5]]
    more = f" and {len(text) - 5} more" if len(text) > 5 else ""
    where = f" at offsets {start}-{end}" if str(start).strip() and str(end).strip() else ""
    return InputError(
        at,
        f"selects only whitespace{where}: {len(text)} character{'s' if len(text) > 1 else ''}, "
        f"{', '.join(held)}{more}, and no word to code",
        "Select the words the code applies to (re-export the coding), or remove the row.",
    )


def coded_labels(
    coded: pd.DataFrame,
    texts: dict[str, str],
    offsets: pd.DataFrame,
    where: str,
    source: str = "coded",
) -> pd.DataFrame:
    """LABEL_COLUMNS: one row per (segment, theme) a coded span overlaps, sorted, no duplicates.

    `texts` is each transcript's plain text and `offsets` its segments' spans
    (`spans.transcript_texts`, `spans.segment_offsets`). A span with offsets must show its
    text there (compared after normalising); a span without is located by its text, at its
    first occurrence: when the text occurs more than once, a warning names the row and every
    occurrence (the coder may have meant another; give start and end to say which).
    """
    rows = []
    normalised: dict[str, tuple[str, list[int]]] = {}
    spans: dict = {}
    for doc, tid, text, start, end, _coder, n in coded[CODED_COLUMNS].itertuples(index=False):
        doc, start, end = coded_span(doc, text, start, end, texts, f"{where}, row {n}", normalised)
        for s in overlapping(offsets, doc, start, end, spans):
            rows.append((doc, s, tid, source))
    out = pd.DataFrame(rows, columns=LABEL_COLUMNS).drop_duplicates()
    out = out.sort_values(["transcript", "segment", "theme_id"], kind="stable")
    return out.astype({"segment": "int64"}).reset_index(drop=True)


def coded_span(
    doc: str, text: str, start, end, texts: dict[str, str], at: str, normalised=None
) -> tuple[str, int, int]:
    """(transcript, start, end) of one coded passage: `doc` resolved to a transcript (a file
    name with extension names its stem), a passage with offsets checked to show its text
    there (compared after normalising), a passage without located by its text at its first
    occurrence, with a warning naming every occurrence when there are several. normalised:
    a cache of normalised transcripts for the caller's loop."""
    if doc not in texts:
        stem = Path(doc).stem
        if stem in texts:
            doc = stem
        else:
            raise InputError(
                at,
                f"document {doc!r} is not a transcript of the study",
                f"Use a transcript's file name without extension "
                f"({', '.join(sorted(texts)[:6])}{', ...' if len(texts) > 6 else ''}), "
                "or add the transcript to `transcripts:`.",
            )
    full = texts[doc]
    if pd.isna(start):
        normalised = {} if normalised is None else normalised
        if doc not in normalised:
            normalised[doc] = normalise(full)
        hits = _occurrences(norm(text), *normalised[doc])
        if not hits:
            raise InputError(
                at,
                f"text {_short(text)!r} is not found in transcript {doc!r}",
                "Copy the passage exactly from the transcript, or give start and end.",
            )
        if len(hits) > 1:
            spots = ", ".join(f"{a}-{b}" for a, b in hits[:5])
            log.warning(
                "%s: text %r occurs %d times in transcript %r (characters %s%s); labelled "
                "at the first only. Give start and end to label another occurrence.",
                at,
                _short(text),
                len(hits),
                doc,
                spots,
                ", ..." if len(hits) > 5 else "",
            )
        return doc, hits[0][0], hits[0][1]
    start, end = int(start), int(end)
    check_selects(
        full, doc, start, end, at, text,
        "text {text!r} is not at offsets {start}-{end} of {doc!r} (they select {found!r})",
        "Re-export the offsets with the transcript as imported, "
        "or leave start and end empty to locate the text.",
    )  # fmt: skip
    return doc, start, end


def _occurrences(n: str, hay: str, index: list[int]) -> list[tuple[int, int]]:
    """Every (start, end) of the normalised needle `n` in a normalised text, left to right."""
    hits: list[tuple[int, int]] = []
    while True:
        hit = find_in(n, hay, index, hits[-1][0] + 1 if hits else 0)
        if hit is None:
            return hits
        hits.append(hit)


def unknown_theme(at: str, theme: str, themes: pd.DataFrame, shown: int = 8) -> InputError:
    """A coded segment's theme (a code name) that is not in the set: the names the set uses
    (not its ids, which the study made up: T01…), the closest first as a "did you mean"."""
    names = [str(n) for n in themes["name"]]
    hint = did_you_mean(theme, names)
    listed = ", ".join(repr(n) for n in names[:shown])
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return InputError(
        at,
        f"theme {theme!r} is not in the theme set{hint}",
        f"Use a theme name the set has ({listed}{more}), or its id, "
        "or add the theme to the theme file.",
    )
