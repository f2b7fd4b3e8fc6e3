"""Codings of `themesim agree` from one REFI-QDA project, each coder a user whose codings carry
their `creatingUser`; a code is its guid, shown by its full path."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.errors import InputError
from themesim.io.codings import SPAN_COLUMNS, Codings, domain
from themesim.io.codings_transcripts import (
    check_read_memory,
    first_difference,
    transcript_files_texts,
)
from themesim.io.inputs import check_input_file
from themesim.io.qdpx_export import DISAGREEMENT_PARENT_NAME, DISAGREEMENT_USER_NAME
from themesim.io.refi_qda import read_qdpx, themesim_codes, themesim_marks, themesim_users
from themesim.io.spans import short as _short


def _transcript_notes(transcripts, texts: dict[str, str], where: str) -> list[str]:
    """Notes on the transcripts given beside the project: those it has no source of, and
    those that differ from its own copy (the copy its positions count, so the one scored)."""
    notes = []
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
            line, mine, theirs = first_difference(text, own)
            notes.append(
                f"transcript {doc!r} differs from the project's own copy at line {line} "
                f"(given: {_short(mine, 60)!r}; project: {_short(theirs, 60)!r}); the "
                "project's positions count its own copy, so that copy is scored"
            )
    return notes


def _pick_coders(users: list[str], label: dict[str, str], wanted, where: str) -> list[str]:
    """The users `wanted` names (each by guid or name), in that order."""
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
    return pick


def _coders(proj, coded: pd.DataFrame, wanted, where: str) -> tuple[list[str], list[str]]:
    """(user guids, coder names) of the coders: those with codings, or those `wanted` names."""
    blank = coded[coded["coder"] == ""]
    if len(blank):
        raise InputError(
            f"{where}: PlainTextSelection {int(blank['row'].iloc[0])}",
            "has a Coding without a creatingUser",
            "Export the project with its users, or give each coder's codings as a file.",
        )
    users = list(dict.fromkeys(coded["coder"]))
    if themesim_users(proj) & set(proj.users):  # a project themesim wrote keeps its coders' order
        order = {u: i for i, u in enumerate(proj.users)}
        users.sort(key=lambda u: order.get(u, len(order)))
    label = {u: proj.users.get(u, u) for u in users}
    if wanted:
        users = _pick_coders(users, label, wanted, where)
    names = [label[u] for u in users]
    # two users of one name stay two coders, told apart by their guids
    names = [f"{n} ({u})" if names.count(n) > 1 else n for n, u in zip(names, users, strict=True)]
    return users, names


def _code_labels(proj) -> tuple[dict[str, str], dict[str, str]]:
    """(guid -> full path, guid -> label) of the project's codes, themesim's marks left
    out; a label is the path, made unique where two paths coincide."""
    marks = themesim_codes(proj)
    ids, names_ = proj.themes["theme_id"], proj.themes["name"]
    paths = {g: proj.paths.get(g, n) for g, n in zip(ids, names_, strict=True) if g not in marks}
    count = pd.Series(list(paths.values())).value_counts()
    shown = {g: (p if count[p] == 1 else f"{p} [{g}]") for g, p in paths.items()}
    return paths, shown


def from_qdpx(path: Path, transcripts, wanted, level: str) -> Codings:
    check_read_memory(check_input_file(path))
    proj = read_qdpx(path, level)
    where = str(path)
    texts = proj.texts
    notes = _transcript_notes(transcripts, texts, where) if transcripts else []
    # `agree --export-qdpx` marks where coders differ: its user's codings and the codes under
    # its parent code are no coder's coding and no code of the project (as a study reads it)
    coded = proj.coded
    mine = themesim_marks(proj, where)
    if mine.any():
        coded = coded[~mine]
        notes.append(
            f"{int(mine.sum())} disagreement selection(s) themesim wrote (user "
            f"{DISAGREEMENT_USER_NAME!r}, codes under {DISAGREEMENT_PARENT_NAME!r}) are left out"
        )
    users, names = _coders(proj, coded, wanted, where)
    paths, shown = _code_labels(proj)
    rows = []
    for k, u in enumerate(users):
        mine = coded[coded["coder"] == u]
        for doc, tid, _t, start, end, _c, n in mine.itertuples(index=False, name=None):
            rows.append((k, doc, shown[tid], int(start), int(end), where, int(n)))
    spans = pd.DataFrame(rows, columns=SPAN_COLUMNS)
    used = set(spans["code"])
    codes = [shown[g] for g in paths if shown[g] in used]
    domains = {shown[g]: domain(paths[g]) for g in paths}
    return Codings(tuple(names), codes, spans, texts, domains, notes)
