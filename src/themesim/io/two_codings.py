"""Two coders' codings of the same transcripts, for `themesim agree`: two coded-segments files
(one per coder; io/coded.py's columns) or one REFI-QDA project whose codings carry two
coders' `creatingUser`. The result is every coded passage as a character span, checked: both
coders use the same codes, every span lies inside its transcript, and no coder codes the same
code twice over the same characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.errors import InputError

SPAN_COLUMNS = ["coder", "document", "code", "start", "end", "file", "row"]


@dataclass
class TwoCodings:
    coders: tuple[str, str]  # the two coders' names, A first
    codes: list[str]  # code names, in first-seen order
    spans: pd.DataFrame  # SPAN_COLUMNS; coder is 0 (A) or 1 (B)
    texts: dict[str, str]  # transcript -> plain text


def _code_key(name) -> str:
    return " ".join(str(name).casefold().split())


def read_two_codings(
    paths, transcripts=(), *, coders=None, level: str = "all", allow_unmatched: bool = False
) -> TwoCodings:
    """The spans of two codings: `paths` is one .qdpx or two coded-segments files.

    transcripts: transcript files (required for coded-segments files; a .qdpx brings its
    sources, and transcripts given beside it replace them). coders: the two creatingUser
    names or guids to compare in a .qdpx with more than two. allow_unmatched: score a code
    only one coder used (as never applied by the other) instead of stopping.
    """
    paths = [Path(p) for p in paths]
    texts = _transcript_texts(transcripts) if transcripts else {}
    if len(paths) == 1 and paths[0].suffix.lower() == ".qdpx":
        out = _from_qdpx(paths[0], texts, coders, level)
    elif len(paths) == 2 and all(p.suffix.lower() != ".qdpx" for p in paths):
        if not texts:
            raise InputError(
                "themesim agree",
                "coded-segments files need the transcripts they code",
                "Give them with --transcripts (files or glob patterns).",
            )
        out = _from_files(paths, texts)
    else:
        raise InputError(
            "themesim agree " + " ".join(map(str, paths)),
            "takes one .qdpx project or two coded-segments files (CSV, TSV, XLSX)",
            "Give one coder's file each, or one REFI-QDA project with both coders' codings.",
        )
    _check_codes(out, allow_unmatched)
    _check_overlaps(out.spans)
    return out


def _transcript_texts(patterns) -> dict[str, str]:
    import glob

    from themesim.io.spans import transcript_texts
    from themesim.io.transcripts import read_transcripts

    files = []
    for p in patterns:
        hits = sorted(glob.glob(str(p))) if any(c in str(p) for c in "*?[") else [str(p)]
        if not hits:
            raise InputError(str(p), "matches no transcript file", "Check the path or pattern.")
        files += hits
    segments = read_transcripts(files)
    return transcript_texts(segments, files)


def _from_files(paths: list[Path], texts: dict[str, str]) -> TwoCodings:
    from themesim.io.coded import coded_span, read_coded_file

    raw = [_code_names(p) for p in paths]
    names: dict[str, str] = {}
    for r in raw:
        for name in r:
            names.setdefault(_code_key(name), str(name).strip())
    themes = pd.DataFrame({"theme_id": list(names.values()), "name": list(names.values())})
    rows = []
    for k, p in enumerate(paths):
        coded = read_coded_file(p, themes)
        for doc, code, text, start, end, _coder, n in coded.itertuples(index=False, name=None):
            doc, a, b = coded_span(doc, text, start, end, texts, f"{p}, row {n}")
            rows.append((k, doc, code, a, b, str(p), n))
    spans = pd.DataFrame(rows, columns=SPAN_COLUMNS)
    coders = (paths[0].stem, paths[1].stem)
    return TwoCodings(coders, list(names.values()), spans, texts)


def _code_names(path: Path) -> list[str]:
    """The code column's values of a coded-segments file, as read_coded_file reads them."""
    from themesim.io.coded import _ALIASES, _records

    records = [r for r in _records(path, str(path)) if any(str(v).strip() for v in r)]
    if not records:
        raise InputError(str(path), "contains no coded segments", "Export the codings again.")
    header = [_ALIASES.get(str(h).strip().casefold()) for h in records[0]]
    if "theme" not in header:
        raise InputError(
            str(path),
            "no code column",
            "Columns: document, code (or theme), text, optional start and end.",
        )
    i = header.index("theme")
    return [str(r[i]).strip() for r in records[1:] if i < len(r) and str(r[i]).strip()]


def _from_qdpx(path: Path, texts: dict[str, str], coders, level: str) -> TwoCodings:
    from themesim.io.refi_qda import read_qdpx

    proj = read_qdpx(path, level)
    texts = texts or proj.texts
    where = str(path)
    coded = proj.coded
    missing = coded[coded["coder"] == ""]
    if len(missing):
        raise InputError(
            f"{where}: PlainTextSelection {int(missing['row'].iloc[0])}",
            "has a Coding without a creatingUser",
            "Export the project with its users, or give each coder's codings as a file.",
        )
    users = list(dict.fromkeys(coded["coder"]))
    label = {u: proj.users.get(u, u) for u in users}
    if coders:
        wanted = [str(c) for c in coders]
        if len(wanted) != 2:
            raise InputError(where, f"--coders names {len(wanted)} coders", "Name two.")
        pick = []
        for w in wanted:
            hit = [u for u in users if w in (u, label[u])]
            if not hit:
                raise InputError(
                    where,
                    f"no codings by coder {w!r}",
                    f"Coders in the project: {', '.join(label[u] for u in users)}.",
                )
            pick.append(hit[0])
        users = pick
    elif len(users) != 2:
        names = ", ".join(label[u] for u in users) or "none"
        raise InputError(
            where,
            f"has codings by {len(users)} coder(s) ({names})",
            "Name the two to compare with --coders A,B.",
        )
    names = dict(zip(proj.themes["theme_id"], proj.themes["name"], strict=True))
    rows = []
    for k, u in enumerate(users):
        mine = coded[coded["coder"] == u]
        for doc, tid, _t, start, end, _c, n in mine.itertuples(index=False, name=None):
            at = f"{where}: PlainTextSelection {n}"
            if doc not in texts:
                raise InputError(
                    at,
                    f"source {doc!r} is not among the transcripts",
                    "Give the transcripts the project was coded on, or leave --transcripts out.",
                )
            if int(end) > len(texts[doc]):
                raise InputError(
                    at,
                    f"selection {start}-{end} lies outside transcript {doc!r} "
                    f"({len(texts[doc])} characters)",
                    "Give the transcripts the project was coded on.",
                )
            rows.append((k, doc, names[tid], int(start), int(end), where, int(n)))
    spans = pd.DataFrame(rows, columns=SPAN_COLUMNS)
    codes = [n for n in names.values() if n in set(spans["code"])]
    return TwoCodings((label[users[0]], label[users[1]]), codes, spans, texts)


def _check_codes(c: TwoCodings, allow_unmatched: bool) -> None:
    used = [set(c.spans.loc[c.spans["coder"] == k, "code"]) for k in (0, 1)]
    for k in (0, 1):
        only = [code for code in c.codes if code in used[k] and code not in used[1 - k]]
        if only and not allow_unmatched:
            first = c.spans[(c.spans["coder"] == k) & (c.spans["code"] == only[0])].iloc[0]
            raise InputError(
                f"{first['file']}, row {first['row']}",
                f"code {only[0]!r} is used by {c.coders[k]} only"
                + (f" (and {len(only) - 1} more)" if len(only) > 1 else ""),
                "Rename it to the code the other coder uses, or pass --allow-unmatched-codes "
                "to score it as never applied by the other coder.",
            )
    c.codes = [code for code in c.codes if code in used[0] | used[1]]


def _check_overlaps(spans: pd.DataFrame) -> None:
    """One coder coding one code twice over the same characters is a duplicate selection."""
    for (_k, _doc, code), g in spans.groupby(["coder", "document", "code"], sort=False):
        if len(g) < 2:
            continue
        g = g.sort_values(["start", "end"], kind="stable")
        starts, ends = g["start"].to_numpy(), g["end"].to_numpy()
        reach = np.maximum.accumulate(ends)[:-1]
        hit = np.nonzero(starts[1:] < reach)[0]
        if len(hit):
            i = int(hit[0]) + 1
            prev = g.iloc[int(np.argmax(ends[:i] > starts[i]))]
            r = g.iloc[i]
            raise InputError(
                f"{r['file']}, row {r['row']}",
                f"selection {r['start']}-{r['end']} of code {code!r} overlaps row {prev['row']} "
                f"({prev['start']}-{prev['end']}) of the same coder",
                "Merge the two selections into one, or delete the duplicate.",
            )


def character_codings(c: TwoCodings):
    """(transcript, A, B) per transcript: boolean characters × codes of each coder."""
    col = {code: j for j, code in enumerate(c.codes)}
    for doc in sorted(set(c.spans["document"])):
        n = len(c.texts[doc])
        mats = [np.zeros((n, len(c.codes)), dtype=bool) for _ in (0, 1)]
        for k, _d, code, start, end, _f, _r in c.spans[c.spans["document"] == doc].itertuples(
            index=False, name=None
        ):
            mats[k][start:end, col[code]] = True
        yield doc, mats[0], mats[1]


def agreement_tables(c: TwoCodings, level: float = 0.95) -> dict[str, pd.DataFrame]:
    """`codes by transcript` (per scope, code and transcript, then per code pooled), `overall`
    (per scope, with jackknife intervals over transcripts) at character level. Transcripts
    neither coder coded are left out: CAQDAS tools compare the sources both coded."""
    from themesim.metrics.intercoder import COUNT_COLUMNS, code_table, group_counts, overall_table

    rows = []
    for doc, A, B in character_codings(c):
        rows += group_counts(doc, A, B, c.codes)
    counts = pd.DataFrame(rows, columns=COUNT_COLUMNS)
    return {
        "codes by transcript": code_table(counts).rename(columns={"group": "transcript"}),
        "overall": overall_table(counts, level),
    }
