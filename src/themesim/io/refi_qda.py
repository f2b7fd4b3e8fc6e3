"""REFI-QDA projects (.qdpx, the CAQDAS exchange standard 1.5): codes become themes, plain-text
selections coded with them become coded segments, text sources become transcripts.

A .qdpx is a zip holding `project.qde` (XML, namespace `urn:QDA-XML:project:1.0`) and the
sources under `sources/`. The XML is parsed with defusedxml (no entities, no external
references) and a zip entry is read only when its normalised path stays inside `sources/`.

`level` picks the themes: `top` — codes without a parent, each taking its descendants'
codings; `leaf` — codes without children; `all` — every code with its own codings.
"""

from __future__ import annotations

import bisect
import functools
import logging
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from themesim.errors import InputError, did_you_mean
from themesim.io.coded import CODED_COLUMNS
from themesim.io.files import atomic_path
from themesim.io.inputs import check_input_file
from themesim.io.qdpx_export import (
    DISAGREEMENT_PARENT,
    DISAGREEMENT_PARENT_NAME,
    DISAGREEMENT_USER,
    DISAGREEMENT_USER_NAME,
)
from themesim.io.theme_formats import ThemeRecord
from themesim.io.themes import assemble, check_set_name, check_text_template

log = logging.getLogger("themesim")

NS = "urn:QDA-XML:project:1.0"
LEVELS = ("top", "leaf", "all")
THEME_COLUMNS = ["theme_id", "name", "description", "parent"]
_Q = {"q": NS}
_MAX_ENTRY = 200 << 20  # a source larger than 200 MB is not an interview transcript


@dataclass
class QdpxProject:
    themes: pd.DataFrame  # THEME_COLUMNS, in code-book order
    coded: pd.DataFrame  # CODED_COLUMNS; `row` numbers the selections in file order
    texts: dict[str, str]  # transcript stem -> plain text
    users: dict[str, str] = field(default_factory=dict)  # Users/User guid -> name
    paths: dict[str, str] = field(default_factory=dict)  # code guid -> "Parent/Child" path
    parents: dict[str, str | None] = field(default_factory=dict)  # code guid -> parent guid


def _bad(where: str, problem: str) -> InputError:
    return InputError(
        where,
        problem,
        "Export the project again from your QDA software as a REFI-QDA project (.qdpx).",
    )


def _read_entry(zf: zipfile.ZipFile, name: str, where: str) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise _bad(where, f"has no entry {name!r}") from None
    if info.file_size > _MAX_ENTRY:
        raise _bad(where, f"entry {name!r} is {info.file_size} bytes, too large")
    return zf.read(info)


def _source_entry(path: str, where: str) -> str:
    """The zip entry of an `internal://` plain-text path; nothing outside `sources/`."""
    if not path.startswith("internal://"):
        raise InputError(
            where,
            f"plain text {path!r} lies outside the project",
            "Export the project with its sources embedded (internal://), "
            "or give the transcripts in `transcripts:`.",
        )
    rel = path[len("internal://") :].replace("\\", "/")
    entry = posixpath.normpath(posixpath.join("sources", rel))
    if rel.startswith("/") or not entry.startswith("sources/") or ".." in entry.split("/"):
        raise _bad(where, f"source path {path!r} leaves the project's sources folder")
    return entry


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _bad(where, f"has a source that is not UTF-8 text ({e.reason})") from e


def _codes(root, where: str) -> list[tuple[str, str, str, str | None, bool]]:
    """(guid, name, description, parent guid, has children) in code-book order."""
    out: list[tuple[str, str, str, str | None, bool]] = []

    def walk(el, parent):
        for code in el.findall("q:Code", _Q):
            guid = code.get("guid")
            name = (code.get("name") or "").strip()
            if not guid or not name:
                raise _bad(where, "has a Code without a guid or a name")
            desc = code.find("q:Description", _Q)
            children = code.findall("q:Code", _Q)
            out.append(
                (
                    guid,
                    name,
                    " ".join((desc.text or "").split()) if desc is not None else "",
                    parent,
                    bool(children),
                )
            )
            walk(code, guid)

    codes = root.find("q:CodeBook/q:Codes", _Q)
    if codes is None:
        raise _bad(where, "has no CodeBook/Codes")
    walk(codes, None)
    if not out:
        raise _bad(where, "has no codes")
    return out


def _project_root(zf: zipfile.ZipFile, where: str):
    """project.qde's root element, a REFI-QDA Project."""
    raw = _read_entry(zf, "project.qde", where)
    try:
        root = fromstring(raw, forbid_dtd=True)
    except (ParseError, DefusedXmlException) as e:
        raise _bad(where, f"project.qde is not valid REFI-QDA XML ({type(e).__name__}: {e})") from e
    if root.tag != f"{{{NS}}}Project":
        raise _bad(where, f"project.qde's root is {root.tag!r}, not a {NS} Project")
    return root


def _source_text(zf: zipfile.ZipFile, src, name: str, where: str, at: str) -> str:
    """A TextSource's text as stored: its PlainTextContent, else its plainTextPath entry."""
    content = src.find("q:PlainTextContent", _Q)
    if content is not None and content.text is not None:
        return content.text
    if src.get("plainTextPath"):
        return _decode(_read_entry(zf, _source_entry(src.get("plainTextPath"), at), where), at)
    raise _bad(at, f"source {name!r} has neither PlainTextContent nor plainTextPath")


def _sources(zf: zipfile.ZipFile, root, where: str) -> tuple[dict, dict, list]:
    """(texts with LF newlines, texts as stored, (source, PlainTextSelection, where) of every
    selection) of the project's TextSources, by name."""
    texts: dict[str, str] = {}
    stored: dict[str, str] = {}  # the text as stored: REFI-QDA counts positions in it
    selections = []
    for n, src in enumerate(root.findall("q:Sources/q:TextSource", _Q), start=1):
        at = f"{where}: project.qde, TextSource {n}"
        name = Path((src.get("name") or "").replace("\\", "/")).stem
        if not name:
            raise _bad(at, "has no name")
        if name in texts:
            raise _bad(at, f"has the same name {name!r} as another source")
        text = _source_text(zf, src, name, where, at)
        stored[name] = text
        texts[name] = text.replace("\r\n", "\n").replace("\r", "\n")
        for sel in src.findall("q:PlainTextSelection", _Q):
            selections.append((name, sel, at))
    return texts, stored, selections


def _chosen_codes(codes, level: str) -> list:
    if level == "top":
        return [c for c in codes if c[3] is None]
    if level == "leaf":
        return [c for c in codes if not c[4]]
    return list(codes)


def _positions(sel, doc: str, stored: str, at: str) -> tuple[int, int]:
    """A selection's start and end in the stored text, checked against it."""
    try:
        start, end = int(sel.get("startPosition")), int(sel.get("endPosition"))
    except (TypeError, ValueError):
        raise _bad(at, "has a PlainTextSelection without whole-number positions") from None
    if not 0 <= start < end <= len(stored):
        raise InputError(
            at,
            f"selection {start}-{end} lies outside source {doc!r} ({len(stored)} characters)",
            "Export the project again; the selection does not fit its text.",
        )
    return start, end


def _coded(selections, texts, stored, theme_of: dict[str, str | None]) -> pd.DataFrame:
    """The coded segments (CODED_COLUMNS) of the selections; theme_of: code guid -> the
    theme its codings count for, None where they count for none."""
    shifts = {doc: _crlf_shift(raw) for doc, raw in stored.items()}
    rows = []
    for k, (doc, sel, at) in enumerate(selections, start=1):
        start, end = _positions(sel, doc, stored[doc], at)
        # positions count the stored text, CRLF as two characters; the text kept has LF
        start, end = start - _before(shifts[doc], start), end - _before(shifts[doc], end)
        for coding in sel.findall("q:Coding", _Q):
            ref = coding.find("q:CodeRef", _Q)
            guid = ref.get("targetGUID") if ref is not None else None
            if guid not in theme_of:
                raise _bad(at, f"has a Coding of unknown code {guid!r}")
            if theme_of[guid] is not None:
                user = coding.get("creatingUser") or sel.get("creatingUser") or ""
                rows.append((doc, theme_of[guid], texts[doc][start:end], start, end, user, k))
    coded = pd.DataFrame(rows, columns=CODED_COLUMNS)
    coded["start"] = pd.array(coded["start"], dtype="Int64")
    coded["end"] = pd.array(coded["end"], dtype="Int64")
    return coded


def read_qdpx(path, level: str = "all") -> QdpxProject:
    """Themes, coded segments and source texts of a REFI-QDA project."""
    where = str(path)
    if level not in LEVELS:
        raise InputError(where, f"level {level!r} is not one of {', '.join(LEVELS)}", "Fix it.")
    p = check_input_file(path)
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError) as e:
        raise _bad(where, f"is not a readable .qdpx (not a zip archive: {e})") from e
    with zf:
        root = _project_root(zf, where)
        codes = _codes(root, f"{where}: project.qde")
        users = {
            u.get("guid"): (u.get("name") or u.get("guid"))
            for u in root.findall("q:Users/q:User", _Q)
            if u.get("guid")
        }
        texts, stored, selections = _sources(zf, root, where)

    by_guid = {c[0]: c for c in codes}
    top, paths = {}, {}
    for guid, name, _d, parent, _k in codes:
        top[guid] = top[parent] if parent is not None else guid
        paths[guid] = f"{paths[parent]}/{name}" if parent is not None else name
    chosen = _chosen_codes(codes, level)
    chosen_ids = {c[0] for c in chosen}
    themes = pd.DataFrame(
        [(g, name, d, by_guid[par][1] if par else "") for g, name, d, par, _k in chosen],
        columns=THEME_COLUMNS,
    )
    tid = {g: top[g] if level == "top" else g for g in by_guid}
    coded = _coded(
        selections, texts, stored, {g: t if t in chosen_ids else None for g, t in tid.items()}
    )
    parents = {c[0]: c[3] for c in codes}
    return QdpxProject(
        themes=themes, coded=coded, texts=texts, users=users, paths=paths, parents=parents
    )


def _crlf_shift(raw: str) -> list[int]:
    """Positions of the CR of every CRLF of a stored text (each is dropped from the text)."""
    return [m.start() for m in re.finditer("\r\n", raw)]


def _before(crs: list[int], pos: int) -> int:
    return bisect.bisect_left(crs, pos)


# Where the sources' text goes when the config lists no transcripts (rule qdpx_transcripts).
SOURCES_DIR = "results/transcripts/sources"


def project_texts(paths) -> dict[str, str]:
    """Source name -> plain text over the projects, by name. Two projects of the same interviews
    (two coders) may share a source; the same name with another text is an error."""
    texts: dict[str, str] = {}
    origin: dict[str, str] = {}
    for path in paths:
        for name, text in read_qdpx(path).texts.items():
            if any(c in name for c in "{}*?"):
                raise _bad(f"{path}: source {name!r}", "has a name unusable as a file name")
            if name in texts and texts[name] != text:
                raise InputError(
                    f"{path}: source {name!r}",
                    f"differs from the source of the same name in {origin[name]}",
                    "List the transcripts under transcripts:, or rename one of the sources",
                )
            texts.setdefault(name, text)
            origin.setdefault(name, str(path))
    return dict(sorted(texts.items()))


def source_transcripts(paths) -> list[str]:
    """The transcript files the projects' sources become (written by rule qdpx_transcripts)."""
    return [f"{SOURCES_DIR}/{name}.txt" for name in project_texts(paths)]


def write_texts(project: QdpxProject, folder) -> list[Path]:
    """The project's sources as `{name}.txt` transcripts in `folder`."""
    return write_source_texts(project.texts, folder)


def write_source_texts(texts: dict[str, str], folder) -> list[Path]:
    """`{name}.txt` per source in `folder`, UTF-8 with the project's (normalised) newlines."""
    out = []
    for name, text in sorted(texts.items()):
        path = Path(folder) / f"{name}.txt"
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
        out.append(path)
    return out


def theme_table(project: QdpxProject, set_name: str, template: str, where: str) -> pd.DataFrame:
    """The project's codes as a theme table (`themes.theme_columns()`), ids = code guids."""
    check_text_template(template, where)
    check_set_name(set_name, where)
    themes = [
        ThemeRecord(
            row=i, where=f"{where}, code {name!r}", id=g, name=name, description=d, parent=par
        )
        for i, (g, name, d, par) in enumerate(project.themes.itertuples(index=False), 1)
    ]
    return assemble(themes, "code", where, ".csv", set_name, template)


# ---------------------------------------------------------------- a project as a study's set
# A theme set from a .qdpx takes the project's code book as its themes and its codings as the
# set's coded segments. Codings by two or more users are not merged: the set names one user
# (`user:` in theme_sets), else the config is refused (study/sets.py, at parse time).


def themesim_codes(project: QdpxProject) -> set[str]:
    """The guids of the codes themesim's own export wrote (io/qdpx_export.py): the top code
    `Disagreements (themesim)` and every code under it."""
    roots = {
        g
        for g, par in project.parents.items()
        if par is None
        and (g == DISAGREEMENT_PARENT or project.paths.get(g) == DISAGREEMENT_PARENT_NAME)
    }
    out = set()
    for g in project.parents:
        top = g
        while project.parents.get(top) is not None:
            top = project.parents[top]
        if top in roots:
            out.add(g)
    return out


def themesim_users(project: QdpxProject) -> set[str]:
    """The guids of themesim's own user `themesim (disagreements)`: its fixed guid, and any
    user of that name (a QDA program that saved the export again may have given it another)."""
    named = {u for u, n in project.users.items() if str(n).strip() == DISAGREEMENT_USER_NAME}
    return named | {DISAGREEMENT_USER}


def themesim_marks(project: QdpxProject, where: str) -> pd.Series:
    """Which of the project's codings themesim's export wrote to mark disagreements: the
    codings of the codes under `Disagreements (themesim)`. Its user `themesim (disagreements)`
    codes nothing else; a coding of that user's of another code is someone's work under that
    name, and is refused in one line rather than left out."""
    coded = project.coded
    marks = coded["theme_id"].isin(themesim_codes(project))
    stray = coded["coder"].isin(themesim_users(project)) & ~marks
    if stray.any():
        first = coded[stray].iloc[0]
        code = project.paths.get(first["theme_id"], first["theme_id"])
        raise InputError(
            f"{where}: PlainTextSelection {int(first['row'])}",
            f"user {project.users.get(first['coder'], DISAGREEMENT_USER_NAME)!r} codes "
            f"{code!r}, a code outside {DISAGREEMENT_PARENT_NAME!r}: that user is the one "
            "themesim's export writes its disagreement marks as, whose codings are left out",
            "Rename the user in the QDA program, so that its codings are read as a coder's",
        )
    return marks


def without_themesim_marks(project: QdpxProject, where: str) -> QdpxProject:
    """The project without what themesim's export added to mark disagreements: codings of the
    user `themesim (disagreements)` and the codes under `Disagreements (themesim)` are no
    coder's coding and no theme. Said in the log when there are any."""
    codes, mine = themesim_codes(project), themesim_users(project)
    coded = project.coded
    drop = themesim_marks(project, where)
    dropped_themes = project.themes["theme_id"].isin(codes)
    if not drop.any() and not dropped_themes.any():
        return project
    log.info(
        "%s: %d coding(s) and %d code(s) themesim wrote to mark disagreements (user %r, codes "
        "under %r) are left out: they are no coder's coding and no theme",
        where,
        int(drop.sum()),
        int(dropped_themes.sum()),
        project.users.get(DISAGREEMENT_USER, "themesim (disagreements)"),
        DISAGREEMENT_PARENT_NAME,
    )
    return QdpxProject(
        themes=project.themes[~dropped_themes].reset_index(drop=True),
        coded=coded[~drop].reset_index(drop=True),
        texts=project.texts,
        users={u: n for u, n in project.users.items() if u not in mine},
        paths=project.paths,
        parents=project.parents,
    )


def coding_users(project: QdpxProject) -> list[str]:
    """The creatingUser (guid) of the project's codings, in first-seen order; a coding
    without one counts for no user."""
    return [u for u in dict.fromkeys(project.coded["coder"]) if u]


def user_names(project: QdpxProject, users) -> str:
    """'Anna', 'Ben' for user guids (a name two users share is followed by the guid)."""
    names = [project.users.get(u, u) for u in users]
    return ", ".join(
        repr(n) if names.count(n) == 1 or n == u else f"{n!r} ({u})"
        for n, u in zip(names, users, strict=True)
    )


def user_slug(name: str) -> str:
    """A user's name as it can follow `<set>@` in a set name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name)).strip("_.-") or "user"


def pick_user(project: QdpxProject, user, where: str) -> str:
    """The guid of the user `user` names (a guid, else a name, else a name ignoring case)
    among the users with codings; else a one-line error naming the users there are."""
    users = coding_users(project)
    user = str(user).strip()
    for same in (
        lambda u: u == user,
        lambda u: project.users.get(u) == user,
        lambda u: str(project.users.get(u, u)).casefold() == user.casefold(),
    ):
        hits = [u for u in users if same(u)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise InputError(
                where,
                f"user {user!r} names {len(hits)} users of the project ({', '.join(hits)})",
                "Give user: the guid of one of them",
            )
    hint = did_you_mean(user, [str(project.users.get(u, u)) for u in users])
    has = (
        f"its users with codings are {user_names(project, users)}"
        if users
        else ("it has no codings with a creatingUser")
    )
    raise InputError(
        where,
        f"user {user!r} has no codings in the project{hint}",
        f"Give user: one of the project's users by name or guid: {has}"
        if users
        else f"Remove user: ({has})",
    )


def study_project(path, level: str = "all", user=None) -> QdpxProject:
    """A .qdpx as a study's theme set reads it: themesim's disagreement marks left out, and
    with `user` (a name or guid) only that user's codings."""
    project = without_themesim_marks(read_qdpx(path, level), str(path))
    if user is not None and str(user).strip():
        guid = pick_user(project, user, f"{path}, user")
        project.coded = project.coded[project.coded["coder"] == guid].reset_index(drop=True)
        log.info(
            "%s: the codings of user %r only (%d)",
            path,
            project.users.get(guid, guid),
            len(project.coded),
        )
    return project


@functools.lru_cache(maxsize=8)
def _users_view(path: str, _resolved: str, _mtime_ns: int, _size: int) -> QdpxProject:
    """The project as check_study_users reads it, read once per parse for the entries of one
    file (`proj@anna`, `proj@ben`); a changed file is read again."""
    return without_themesim_marks(read_qdpx(path), path)


def check_study_users(path, user, set_name: str, where: str, user_where: str) -> None:
    """At parse time: a .qdpx set coded by two or more users names one (`user:`), and the
    user it names has codings there; one user or none needs nothing. where, user_where: the
    config entry and its user: key, as the errors name them."""
    st = Path(path).stat()
    project = _users_view(str(path), str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    if user is not None and str(user).strip():
        pick_user(project, user, user_where)
        return
    users = coding_users(project)
    if len(users) < 2:
        return
    first = str(project.users.get(users[0], users[0]))
    base = set_name.split("@", 1)[0]
    raise InputError(
        where,
        f"is coded by {len(users)} users ({user_names(project, users)}), whose codings "
        f"would be merged into one theme set",
        "give user: NAME, or list the file once per user with name: <set>@<user> and "
        f"user: <user> (e.g. name: {base}@{user_slug(first)}, user: {first})",
    )
