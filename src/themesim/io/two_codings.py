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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.io.spans import check_inside
from themesim.io.spans import short as _short
from themesim.io.spans import squash as _squash
from themesim.metrics.unitizing import Intervals, merge

SPAN_COLUMNS = ["coder", "document", "code", "start", "end", "file", "row"]
# The most memory agree lets one transcript take, checked before it is taken: reading the
# file, and locating passages without offsets in its text.
MAX_TRANSCRIPT_BYTES = 2 << 30
# Locating a passage without offsets normalises its whole transcript: about this many bytes
# a character (Python lists of str and int).
LOCATE_BYTES_PER_CHAR = 80
# Reading a transcript: bytes of memory a byte of the file (of a .docx or .qdpx, a byte its
# parts unpack to) at the peak. Measured on 10 MB files: .vtt 11.2, .srt 11.7 and .json 8.2
# (the segments are built first, then written out as text), .txt 2.0, a .qdpx 6.1 (its
# sources, their CRLF positions and the selections' XML); a .docx unpacks to about 9 times.
READ_BYTES_PER_BYTE = {".txt": 3, ".vtt": 12, ".srt": 12, ".json": 9, ".docx": 10, ".qdpx": 7}


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


# ---------------------------------------------------------------- transcripts


def transcript_files(patterns) -> list[str]:
    """The files of transcript paths and glob patterns, each once (a pattern that matches a
    file listed already adds nothing)."""
    import glob

    files: dict[Path, str] = {}
    for p in patterns:
        hits = sorted(glob.glob(str(p))) if any(c in str(p) for c in "*?[") else [str(p)]
        if not hits:
            raise InputError(str(p), "matches no transcript file", "Check the path or pattern.")
        for h in hits:
            files.setdefault(Path(h).resolve(), h)
    return list(files.values())


def transcript_files_texts(patterns) -> dict[str, str]:
    """Plain text per transcript stem: a `.txt` file's own text (newlines as LF), read without
    splitting it into turns; other formats rendered as io/spans.py does."""
    return _texts_and_files(patterns)[0]


def _texts_and_files(patterns) -> tuple[dict[str, str], dict[str, str]]:
    """transcript_files_texts, and the file of each transcript. Each file's memory is checked
    before it is read (check_read_memory)."""
    from themesim.io.inputs import check_input_file, read_text_file
    from themesim.io.spans import transcript_texts
    from themesim.io.transcripts import read_transcripts

    files = transcript_files(patterns)
    texts: dict[str, str] = {}
    origin: dict[str, str] = {}
    for f in files:
        stem = Path(f).stem
        if stem in origin:
            raise InputError(
                f,
                f"has the same name {stem!r} as {origin[stem]}",
                "Transcripts are named by their file name without extension: rename one.",
            )
        origin[stem] = f
    for stem, f in origin.items():
        check_read_memory(check_input_file(f))
        if Path(f).suffix.lower() == ".txt":
            texts[stem] = read_text_file(f).replace("\r\n", "\n").replace("\r", "\n")
        else:  # one at a time: a file's segments are let go once its text is written out
            texts.update(transcript_texts(read_transcripts([f]), [f]))
    return texts, origin


def _amount(n: float) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{int(n)} bytes"


def check_read_memory(path: Path) -> None:
    """Refuse, in one line and before reading it, a transcript (or .qdpx project) whose
    reading would take more than MAX_TRANSCRIPT_BYTES: its size (a zip's declared unpacked
    size) times READ_BYTES_PER_BYTE of its format."""
    import zipfile

    suffix = path.suffix.lower()
    factor = READ_BYTES_PER_BYTE.get(suffix)
    if factor is None:
        return  # an unsupported type: the reader names it
    size = path.stat().st_size
    what = f"{_amount(size)}"
    if suffix in (".docx", ".qdpx"):
        try:
            with zipfile.ZipFile(path) as z:
                size = sum(i.file_size for i in z.infolist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return  # not a zip: its reader names the problem
        what = f"{what}, unpacking to {_amount(size)}"
    need = factor * size
    if need > MAX_TRANSCRIPT_BYTES:
        kind = "project" if suffix == ".qdpx" else f"{suffix} transcript"
        plain = suffix not in (".txt", ".qdpx")
        raise InputError(
            str(path),
            f"is a {kind} of {what}: reading it needs about {_amount(need)} of memory "
            f"({factor} bytes a byte), more than the {_amount(MAX_TRANSCRIPT_BYTES)} agree "
            "lets one transcript take",
            "Split it into smaller transcripts"
            + (", or export it as plain text (.txt, about 3 bytes a byte)." if plain else "."),
        )


def _first_difference(a: str, b: str) -> tuple[int, str, str]:
    """(line number, line of a, line of b) of the first line where two texts differ."""
    la, lb = a.split("\n"), b.split("\n")
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "(end of text)"
        y = lb[i] if i < len(lb) else "(end of text)"
        if x != y:
            return i + 1, x, y
    return 0, "", ""


# ---------------------------------------------------------------- coded-segments files


def _squashed(text: str) -> tuple[str, list[int]]:
    """io/spans.normalise with every space dropped: a quote that lost or gained a space (an
    export's line break) still matches. With each character's index in `text`."""
    from themesim.io.spans import normalise

    hay, index = normalise(text)
    keep = [i for i, ch in enumerate(hay) if ch != " "]
    return "".join(hay[i] for i in keep), [index[i] for i in keep]


class _Locator:
    """Finds coded passages in the transcripts (one normalised copy per transcript)."""

    def __init__(self, texts: dict[str, str], files: dict[str, str] | None = None):
        self.texts = texts
        self.files = files or {}
        self.cache: dict[str, tuple[str, list[int]]] = {}
        self.repeats: list[str] = []

    def document(self, doc: str, at: str) -> str:
        if doc in self.texts:
            return doc
        if Path(doc).stem in self.texts:
            return Path(doc).stem
        names = sorted(self.texts)
        raise InputError(
            at,
            f"document {doc!r} is not among the transcripts",
            f"Use a transcript's file name without extension ({', '.join(names[:6])}"
            f"{', ...' if len(names) > 6 else ''}), or give its transcript with --transcripts.",
        )

    def span(self, doc: str, text: str, start, end, at: str) -> tuple[int, int]:
        full = self.texts[doc]
        if start is None:
            return self._find(doc, text, at)
        check_inside(full, doc, start, end, at)
        if _squash(full[start:end]) != _squash(text):
            raise InputError(
                at,
                f"offsets {start}-{end} select {_short(full[start:end])!r} in {doc!r}, "
                f"not the text {_short(text)!r}",
                "Re-export the offsets with the transcript as coded, or leave start and end "
                "empty to locate the text.",
            )
        return start, end

    def _find(self, doc: str, text: str, at: str) -> tuple[int, int]:
        full = self.texts[doc]
        if doc not in self.cache:
            need = LOCATE_BYTES_PER_CHAR * len(full)
            if need > MAX_TRANSCRIPT_BYTES:  # whatever the format the text was read from
                file = f", {self.files[doc]}" if doc in self.files else ""
                raise InputError(
                    at,
                    f"has no offsets, and locating it in transcript {doc!r} "
                    f"({len(full):,} characters{file}) needs about {_amount(need)} of memory, "
                    f"more than the {_amount(MAX_TRANSCRIPT_BYTES)} agree lets one "
                    "transcript take",
                    "Give start and end offsets for the passages of this transcript.",
                )
            self.cache[doc] = _squashed(full)
        hay, index = self.cache[doc]
        needle = _squash(text)
        k = hay.find(needle) if needle else -1
        if k < 0:
            raise InputError(
                at,
                f"text {_short(text)!r} is not found in transcript {doc!r}",
                "Copy the passage exactly from the transcript, or give start and end.",
            )
        if hay.find(needle, k + 1) >= 0:
            self.repeats.append(at)
        return index[k], index[k + len(needle) - 1] + 1


def _from_files(paths: list[Path], texts: dict[str, str], files: dict[str, str], wanted) -> Codings:
    from themesim.io.coded import _ALIASES, _offset, _records
    from themesim.io.inputs import check_input_file

    loc = _Locator(texts, files)
    rows = []  # (coder label, document, code key, start, end, file, row)
    labels: dict[str, str] = {}  # code key -> label
    has_coder = False
    order: dict[str, str] = {}  # coder -> the file that holds them, in order
    for p in paths:
        where = str(p)
        check_input_file(p)
        records = [r for r in _records(p, where) if any(str(v).strip() for v in r)]
        if not records:
            raise InputError(where, "contains no coded segments", "Export the codings again.")
        col: dict[str, int] = {}
        for i, h in enumerate(records[0]):
            canon = _ALIASES.get(str(h).strip().casefold())
            if canon is not None and canon not in col:
                col[canon] = i
        missing = [c for c in ("document", "theme", "text") if c not in col]
        if missing:
            raise InputError(
                where,
                f"no {', '.join(missing)} column",
                "Columns: document, code (or theme), text, optional start, end and coder.",
            )
        if "coder" not in col:  # one coder per file, even a file with a header only
            order.setdefault(p.stem, where)
        else:  # a coder column names every row's coder, or none (a file of one coder)
            k = col["coder"]
            named = [bool(str(r[k] if k < len(r) and r[k] is not None else "").strip())
                     for r in records[1:]]  # fmt: skip
            if any(named) and not all(named):
                raise InputError(
                    f"{where}, row {named.index(False) + 2}",
                    "has no coder, though other rows of the coder column name theirs",
                    "Give the coder on every row; a file of one coder needs no coder column.",
                )
        for n, rec in enumerate(records[1:], start=2):
            at = f"{where}, row {n}"

            def cell(key, rec=rec, col=col):
                i = col.get(key)
                v = rec[i] if i is not None and i < len(rec) else ""
                return "" if v is None else v

            code = " ".join(str(cell("theme")).split())
            if not code:
                raise InputError(at, "has no code", "Give the code in the code column.")
            text = str(cell("text"))
            if not text.strip():
                raise InputError(at, "has no coded text", "Give the passage in the text column.")
            start, end = _offset(cell("start"), "start", at), _offset(cell("end"), "end", at)
            if (start is None) != (end is None):
                raise InputError(at, "has only one of start and end", "Give both or neither.")
            if start is not None and end <= start:
                raise InputError(at, f"end ({end}) is not after start ({start})", "Fix them.")
            doc = loc.document(str(cell("document")).strip(), at)
            a, b = loc.span(doc, text, start, end, at)
            coder = str(cell("coder")).strip()
            has_coder |= bool(coder)
            order.setdefault(coder or p.stem, where)
            key = _code_key(code)
            labels.setdefault(key, code)
            rows.append((coder or p.stem, doc, key, a, b, where, n, bool(coder)))
    # the coders: a `coder` column's values, else one per file (its name without extension)
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
    rename = {}
    if wanted:
        if not has_coder and len(wanted) == len(paths):
            rename = {str(p): w for p, w in zip(paths, wanted, strict=True)}
            rows = [(rename[r[5]], *r[1:]) for r in rows]
            found = list(wanted)
            order = {rename[v]: v for v in order.values()}
        else:
            lower = {f.casefold(): f for f in found}
            absent = [w for w in wanted if w.casefold() not in lower]
            if absent:
                raise InputError(
                    f"--coders {','.join(wanted)}",
                    f"names {absent[0]!r}, who has no codings here",
                    f"Coders found: {', '.join(found)}. With one file per coder and no coder "
                    "column, give one name per file.",
                )
            found = [lower[w.casefold()] for w in wanted]
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
    return Codings(
        tuple(found), codes, spans, texts, {c: _domain(c) for c in codes}, notes, sources
    )


# ---------------------------------------------------------------- a REFI-QDA project


def _from_qdpx(path: Path, transcripts, wanted, level: str) -> Codings:
    from themesim.io.inputs import check_input_file
    from themesim.io.qdpx_export import DISAGREEMENT_PARENT_NAME, DISAGREEMENT_USER_NAME
    from themesim.io.refi_qda import read_qdpx, themesim_codes, themesim_users

    check_read_memory(check_input_file(path))
    proj = read_qdpx(path, level)
    where = str(path)
    texts = proj.texts
    notes = []
    if transcripts:
        given = transcript_files_texts(transcripts)
        extra = sorted(set(given) - set(texts))
        if extra:
            notes.append(
                f"transcript(s) {', '.join(map(repr, extra))} are not sources of {where} and "
                "are not scored"
            )
        for doc, text in sorted(given.items()):
            own = texts.get(doc)
            if own is not None and own != text:
                line, mine, theirs = _first_difference(text, own)
                notes.append(
                    f"transcript {doc!r} differs from the project's own copy at line {line} "
                    f"(given: {_short(mine, 60)!r}; project: {_short(theirs, 60)!r}); the "
                    "project's positions count its own copy, so that copy is scored"
                )
    # `agree --export-qdpx` marks where coders differ: its user's codings and the codes under
    # its parent code are no coder's coding and no code of the project (as a study reads it)
    marks, marker = themesim_codes(proj), themesim_users(proj)
    coded = proj.coded
    mine = coded["coder"].isin(marker) | coded["theme_id"].isin(marks)
    if mine.any():
        coded = coded[~mine]
        notes.append(
            f"{int(mine.sum())} disagreement selection(s) themesim wrote (user "
            f"{DISAGREEMENT_USER_NAME!r}, codes under {DISAGREEMENT_PARENT_NAME!r}) are left out"
        )
    blank = coded[coded["coder"] == ""]
    if len(blank):
        raise InputError(
            f"{where}: PlainTextSelection {int(blank['row'].iloc[0])}",
            "has a Coding without a creatingUser",
            "Export the project with its users, or give each coder's codings as a file.",
        )
    users = list(dict.fromkeys(coded["coder"]))
    if marker & set(proj.users):  # a project themesim wrote keeps its coders' order
        order = {u: i for i, u in enumerate(proj.users)}
        users.sort(key=lambda u: order.get(u, len(order)))
    label = {u: proj.users.get(u, u) for u in users}
    if wanted:
        pick = []
        for w in wanted:
            hit = [u for u in users if w in (u, label[u])]
            if not hit:
                raise InputError(
                    where,
                    f"no codings by coder {w!r}",
                    f"Coders in the project: {', '.join(label[u] for u in users)}.",
                )
            if hit[0] in pick:
                raise InputError(
                    f"--coders {','.join(wanted)}",
                    f"names coder {label[hit[0]]!r} twice (by name and guid)",
                    "Name each coder once.",
                )
            pick.append(hit[0])
        users = pick
    names = [label[u] for u in users]
    # two users of one name stay two coders, told apart by their guids
    names = [f"{n} ({u})" if names.count(n) > 1 else n for n, u in zip(names, users, strict=True)]
    # a code is its guid; its label the full path, made unique where two paths coincide
    ids, names_ = proj.themes["theme_id"], proj.themes["name"]
    paths = {g: proj.paths.get(g, n) for g, n in zip(ids, names_, strict=True) if g not in marks}
    count = pd.Series(list(paths.values())).value_counts()
    shown = {g: (p if count[p] == 1 else f"{p} [{g}]") for g, p in paths.items()}
    rows = []
    for k, u in enumerate(users):
        mine = coded[coded["coder"] == u]
        for doc, tid, _t, start, end, _c, n in mine.itertuples(index=False, name=None):
            rows.append((k, doc, shown[tid], int(start), int(end), where, int(n)))
    spans = pd.DataFrame(rows, columns=SPAN_COLUMNS)
    used = set(spans["code"])
    codes = [shown[g] for g in paths if shown[g] in used]
    domains = {shown[g]: _domain(paths[g]) for g in paths}
    return Codings(tuple(names), codes, spans, texts, domains, notes)


# ---------------------------------------------------------------- checks


def _at(row) -> str:
    """Where a span came from: a file's row, or a project's PlainTextSelection."""
    if str(row["file"]).lower().endswith(".qdpx"):
        return f"{row['file']}: PlainTextSelection {row['row']}"
    return f"{row['file']}, row {row['row']}"


def _check_empty_coders(c: Codings) -> None:
    for k, name in enumerate(c.coders):
        if not (c.spans["coder"] == k).any():
            files = c.sources.get(k) or "themesim agree"
            raise InputError(
                files,
                f"coder {name!r} has no coded segments",
                "Export that coder's codings again, or leave the coder out.",
            )


def _check_codes(c: Codings, allow_unmatched: bool) -> None:
    used = [set(c.spans.loc[c.spans["coder"] == k, "code"]) for k in range(len(c.coders))]
    everyone = set.union(*used)
    if not allow_unmatched:
        for code in c.codes:
            if code not in everyone:
                continue
            users = [k for k in range(len(c.coders)) if code in used[k]]
            if len(users) == len(c.coders):
                continue
            first = c.spans[c.spans["code"] == code].iloc[0]
            by = " and ".join(c.coders[k] for k in users)
            not_by = ", ".join(c.coders[k] for k in range(len(c.coders)) if k not in users)
            raise InputError(
                _at(first),
                f"code {code!r} is used by {by} only"
                + (f", not by {not_by}" if len(c.coders) > 2 else ""),  # fmt: skip
                "Rename it to the code the other coders use, or pass --allow-unmatched-codes "
                "to score it as never applied by them.",
            )
    c.codes = [code for code in c.codes if code in everyone]


def _note_copies(c: Codings) -> None:
    """Two coders with the very same selections are most likely one coding given twice."""
    keys = ["document", "code", "start", "end"]
    seen: dict[frozenset, int] = {}
    for k in range(len(c.coders)):
        mine = c.spans.loc[c.spans["coder"] == k, keys]
        sig = frozenset(mine.itertuples(index=False, name=None))
        if sig in seen and len(sig) > 1:
            c.notes.append(
                f"coders {c.coders[seen[sig]]!r} and {c.coders[k]!r} made the very same "
                f"{len(sig)} selections: if one is a copy of the other, their agreement of 1 "
                "says nothing"
            )
        seen.setdefault(sig, k)


def _note_overlaps(c: Codings) -> None:
    """A coder's overlapping selections of one code are their union; say so once."""
    s = c.spans.sort_values(["coder", "document", "code", "start", "end"], kind="stable")
    same = (
        (s["coder"].to_numpy()[1:] == s["coder"].to_numpy()[:-1])
        & (s["document"].to_numpy()[1:] == s["document"].to_numpy()[:-1])
        & (s["code"].to_numpy()[1:] == s["code"].to_numpy()[:-1])
    )
    if not same.any():
        return
    key = s["coder"].astype(str) + "\0" + s["document"] + "\0" + s["code"]
    reach = s["end"].groupby(key.to_numpy(), sort=False).cummax().to_numpy()
    hit = np.flatnonzero(same & (s["start"].to_numpy()[1:] < reach[:-1])) + 1
    if not len(hit):
        return
    r = s.iloc[hit[0]]
    c.notes.append(
        f"{len(hit)} selection(s) overlap another selection of the same code by the same coder "
        f"and are taken as their union (first: {_at(r)}, "
        f"{r['code']!r} {r['start']}-{r['end']})"
    )


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
