"""Codings written back as a REFI-QDA project (.qdpx, Project 1.0 schema), for
`themesim agree --export-qdpx`: a researcher opens it in QualCoder, ATLAS.ti, MAXQDA or NVivo.

The project holds
- every transcript as a TextSource, its text in `sources/<guid>.txt` (UTF-8, newlines as LF;
  positions count its characters, as themesim scored them);
- every coder as a User, and each coder's selections as PlainTextSelections whose Coding's
  `creatingUser` is that coder: the codings as given, overlapping selections included;
- the codes in a CodeBook, a code `Parent/Child` as a child code of `Parent`;
- where the coders are not unanimous, codings of the codes under a parent code
  `Disagreements (themesim)`, one child per code and group of coders (`Work: Anna only`),
  each selection described by who coded it and who did not. Their creatingUser is the user
  `themesim (disagreements)`, and a code Set `Disagreements` lists these codes.

Reading the project back (`themesim agree OUT.qdpx`) gives the same codings and figures:
the disagreement user's codings (by its fixed guid DISAGREEMENT_USER, or its name where a QDA
program saved the project again under another guid) and every coding of a code under
`Disagreements (themesim)` are left out, and those codes are no code of the project.
GUIDs are derived from names (uuid5), so one input always gives the same bytes.
"""

from __future__ import annotations

import re
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np

from themesim import __version__
from themesim.errors import InputError, name_key
from themesim.io.codings import intervals
from themesim.io.files import atomic_path

NS = "urn:QDA-XML:project:1.0"
_NAMESPACE = uuid.UUID("7d0f5a56-3c44-5e39-9f55-2a6b3c1f0e34")  # themesim's uuid5 namespace
DISAGREEMENT_PARENT_NAME = "Disagreements (themesim)"
DISAGREEMENT_USER_NAME = "themesim (disagreements)"
DISAGREEMENT_USER = str(uuid.uuid5(_NAMESPACE, "user:themesim-disagreements"))
DISAGREEMENT_PARENT = str(uuid.uuid5(_NAMESPACE, "code:themesim-disagreements"))
_DATE = (1980, 1, 1, 0, 0, 0)  # zip entries' time: the same input gives the same bytes
# characters XML 1.0 cannot hold (names and descriptions only; the texts are files)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _guid(*parts) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\0".join(map(str, parts))))


def _clean(s: str) -> str:
    return _NOT_XML.sub(" ", str(s))


def _el(parent, tag: str, **attrs) -> ET.Element:
    return ET.SubElement(parent, f"{{{NS}}}{tag}", {k: _clean(v) for k, v in attrs.items()})


def _path_parts(label: str) -> list[str]:
    """A code label's path: `Parent/Child` -> [Parent, Child] where every part is a name a
    reader keeps as written (not empty, no outer spaces); else the label as one name."""
    parts = label.split("/")
    if len(parts) > 1 and all(p and p == p.strip() for p in parts):
        return parts
    return [label]


def check_reserved_names(coders, codes, where: str) -> None:
    """InputError when a coder or a code has a name this export gives its own disagreement
    marks: reading the project back leaves out every coding of the user
    DISAGREEMENT_USER_NAME and every code under DISAGREEMENT_PARENT_NAME (refi_qda), so the
    export would lose them. Names are compared as name_key compares them."""
    for coder in coders:
        if name_key(coder) == name_key(DISAGREEMENT_USER_NAME):
            raise InputError(
                where,
                f"coder {coder!r} has the name of the user this export writes its disagreement "
                "marks as, and the codings of that user are left out when the project is read "
                "back",
                "Rename the coder (--coders, the coder column or the file's name) and export again",
            )
    for label in codes:
        if name_key(_path_parts(label)[0]) == name_key(DISAGREEMENT_PARENT_NAME):
            raise InputError(
                where,
                f"code {label!r} lies under {DISAGREEMENT_PARENT_NAME!r}, the code this export "
                "writes its disagreement marks under, and the codes under it are left out "
                "when the project is read back",
                f"Rename the code (its first part, {_path_parts(label)[0]!r}) and export again",
            )


def disagreement_runs(per_coder: list, m: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """(start, end, coders who coded it) of every maximal stretch where some but not all of
    the m coders coded a code; per_coder[k] is coder k's sorted disjoint intervals."""
    ivs = [np.asarray(iv, dtype=np.int64).reshape(-1, 2) for iv in per_coder]
    cuts = np.unique(np.concatenate([iv.reshape(-1) for iv in ivs] + [np.zeros(0, np.int64)]))
    if len(cuts) < 2:
        return []
    a, b = cuts[:-1], cuts[1:]
    cover = np.zeros((m, len(a)), dtype=bool)  # coder k coded the piece a-b
    for k, iv in enumerate(ivs):
        if len(iv):
            i = np.searchsorted(iv[:, 0], a, side="right") - 1
            cover[k] = (i >= 0) & (iv[np.maximum(i, 0), 1] >= b)
    n = cover.sum(axis=0)
    runs: list[tuple[int, int, tuple[int, ...]]] = []
    for p in np.flatnonzero((n > 0) & (n < m)):
        who = tuple(int(k) for k in np.flatnonzero(cover[:, p]))
        if runs and runs[-1][1] == a[p] and runs[-1][2] == who:
            runs[-1] = (runs[-1][0], int(b[p]), who)
        else:
            runs.append((int(a[p]), int(b[p]), who))
    return runs


def _group_name(coders, who: tuple[int, ...]) -> str:
    return " + ".join(coders[k] for k in who) + " only"


@dataclass
class _Disagreements:
    """Where the coders are not unanimous. group: code -> the coders compared on it; codes:
    (code, coders who coded) -> the guid of its marking code; selections: transcript -> its
    (start, end, code, coders who coded) runs."""

    group: dict[str, list[int]]
    codes: dict[tuple[str, tuple[int, ...]], str] = field(default_factory=dict)
    selections: dict[str, list[tuple[int, int, str, tuple[int, ...]]]] = field(default_factory=dict)

    def others(self, coders, label: str, who: tuple[int, ...]) -> list[str]:
        """The coders compared on `label` who did not code the passage."""
        return [coders[k] for k in self.group[label] if k not in who]


def _find_disagreements(c, groups: dict[str, list[int]] | None) -> _Disagreements:
    """Disagreements per transcript and code, from each coder's union of selections."""
    per_doc = intervals(c)
    everyone = list(range(len(c.coders)))
    dis = _Disagreements({label: list((groups or {}).get(label, everyone)) for label in c.codes})
    for doc, per in per_doc.items():
        for j, label in enumerate(c.codes):
            ks = dis.group[label]
            for a, b, who in disagreement_runs([per[k][j] for k in ks], len(ks)):
                who = tuple(ks[i] for i in who)
                key = (label, who)
                if key not in dis.codes:
                    dis.codes[key] = _guid("disagreement", label, *who)
                dis.selections.setdefault(doc, []).append((a, b, label, who))
    return dis


def _write_users(root, coders) -> list[str]:
    """Each coder as a User, then the disagreement user; the coders' guids."""
    users = _el(root, "Users")
    user_guid = [_guid("user", k, n) for k, n in enumerate(coders)]
    for g, n in zip(user_guid, coders, strict=True):
        _el(users, "User", guid=g, name=n)
    _el(users, "User", guid=DISAGREEMENT_USER, name=DISAGREEMENT_USER_NAME)
    return user_guid


def _write_code_book(root, codes) -> tuple[dict[str, str], ET.Element]:
    """The code book: each label's path as nested codes; a part used only as a parent is a
    code too (isCodable true: REFI-QDA has no folder), with no codings of its own. Returns
    each label's guid and the disagreements' parent code."""
    codes_el = _el(_el(root, "CodeBook"), "Codes")
    node: dict[tuple[str, ...], ET.Element] = {}
    code_guid: dict[str, str] = {}
    for label in codes:
        parts = _path_parts(label)
        parent = codes_el
        for i in range(len(parts)):
            key = tuple(parts[: i + 1])
            if key not in node:
                node[key] = _el(parent, "Code", guid=_guid("code", *key), name=parts[i])
                node[key].set("isCodable", "true")
            parent = node[key]
        code_guid[label] = _guid("code", *parts)
    dis_parent = _el(codes_el, "Code", guid=DISAGREEMENT_PARENT, name=DISAGREEMENT_PARENT_NAME)
    dis_parent.set("isCodable", "false")
    ET.SubElement(dis_parent, f"{{{NS}}}Description").text = _clean(
        "Where the coders are not unanimous, written by themesim: one code per code and "
        "group of coders (who coded the passage; the others did not). Not a coding: "
        "themesim agree leaves these out when it reads the project."
    )
    return code_guid, dis_parent


def _write_disagreement_codes(dis_parent, c, dis: _Disagreements) -> None:
    """One child code of the disagreements' parent per code and group of coders."""
    chars: dict[tuple[str, tuple[int, ...]], int] = {}
    for sels in dis.selections.values():
        for a, b, label, who in sels:
            chars[(label, who)] = chars.get((label, who), 0) + b - a
    for (label, who), g in sorted(
        dis.codes.items(), key=lambda kv: (c.codes.index(kv[0][0]), kv[0][1])
    ):
        el = _el(dis_parent, "Code", guid=g, name=f"{label}: {_group_name(c.coders, who)}")
        el.set("isCodable", "true")
        others = dis.others(c.coders, label, who)
        ET.SubElement(el, f"{{{NS}}}Description").text = _clean(
            f"Passages coded {label!r} by {', '.join(c.coders[k] for k in who)} and not by "
            f"{', '.join(others)}: {chars[(label, who)]} character(s)."
        )


def _write_coder_selections(src, doc: str, text: str, rows, guids, n_sel: int) -> int:
    """A transcript's selections, each coded by its coder; guids: (user guids, code guids).
    Returns the count of selections so far (n_sel before them)."""
    user_guid, code_guid = guids
    for r in rows:
        k, a, b = int(r.coder), int(r.start), int(r.end)
        n_sel += 1
        sel = _el(src, "PlainTextSelection", guid=_guid("selection", doc, n_sel),
                  name=_short(text[a:b]), startPosition=a, endPosition=b,
                  creatingUser=user_guid[k])  # fmt: skip
        coding = _el(sel, "Coding", guid=_guid("coding", doc, n_sel), creatingUser=user_guid[k])
        _el(coding, "CodeRef", targetGUID=code_guid[r.code])
    return n_sel


def _write_disagreement_selections(src, doc: str, text: str, c, dis: _Disagreements) -> None:
    """A transcript's disagreements, each a selection of the disagreement user."""
    for n, (a, b, label, who) in enumerate(sorted(dis.selections.get(doc, [])), start=1):
        others = dis.others(c.coders, label, who)
        sel = _el(src, "PlainTextSelection", guid=_guid("disagreement-selection", doc, n),
                  name=_short(text[a:b]), startPosition=a, endPosition=b,
                  creatingUser=DISAGREEMENT_USER)  # fmt: skip
        ET.SubElement(sel, f"{{{NS}}}Description").text = _clean(
            f"{label!r} coded by {', '.join(c.coders[k] for k in who)}, not by {', '.join(others)}"
        )
        coding = _el(sel, "Coding", guid=_guid("disagreement-coding", doc, n),
                     creatingUser=DISAGREEMENT_USER)  # fmt: skip
        _el(coding, "CodeRef", targetGUID=dis.codes[(label, who)])


def _write_sources(root, c, guids, dis: _Disagreements) -> tuple[dict[str, str], int]:
    """Each transcript's text as a file, its coders' selections and the disagreements;
    guids: (user guids, code guids). Returns {zip entry: text} and the selections' count."""
    sources_el = _el(root, "Sources")
    files: dict[str, str] = {}
    n_sel = 0
    spans = c.spans.sort_values(["document", "start", "end", "coder"], kind="stable")
    by_doc = {d: g for d, g in spans.groupby("document", sort=False)}
    for doc in sorted(c.texts):
        text = c.texts[doc]
        sg = _guid("source", doc)
        entry = f"{sg}.txt"
        files[f"sources/{entry}"] = text
        src = _el(sources_el, "TextSource", guid=sg, name=f"{doc}.txt")
        src.set("plainTextPath", f"internal://{entry}")
        g = by_doc.get(doc)
        rows = [] if g is None else g.itertuples(index=False)
        n_sel = _write_coder_selections(src, doc, text, rows, guids, n_sel)
        _write_disagreement_selections(src, doc, text, c, dis)
    return files, n_sel


def _write_set(root, dis: _Disagreements) -> None:
    """The code Set `Disagreements`: the codes that mark them."""
    s = _el(_el(root, "Sets"), "Set", guid=_guid("set", "disagreements"), name="Disagreements")
    ET.SubElement(
        s, f"{{{NS}}}Description"
    ).text = "The codes under 'Disagreements (themesim)': where the coders are not unanimous."
    for g in sorted(dis.codes.values(), key=list(dis.codes.values()).index):
        _el(s, "MemberCode", targetGUID=g)


def build_project(
    c,
    name: str = "themesim agree",
    groups: dict[str, list[int]] | None = None,
    origin: str = "themesim agree",
    where: str | None = None,
) -> tuple[bytes, dict[str, str], dict]:
    """(project.qde, {zip entry: text} of the sources, counts) of a codings.Codings.
    groups: code -> the coders (indices) whose disagreements on it are marked (default: every
    coder, for every code); a code whose group has one coder gets none. origin: what wrote
    it, in the project's description. where: the export, in an error (default: its name).
    A coder or code named as the disagreement marks are is refused (check_reserved_names)."""
    check_reserved_names(c.coders, c.codes, where or name)

    ET.register_namespace("", NS)
    root = ET.Element(
        f"{{{NS}}}Project", {"name": _clean(name), "origin": f"themesim {__version__}"}
    )
    root.set("creatingUserGUID", DISAGREEMENT_USER)
    user_guid = _write_users(root, c.coders)
    code_guid, dis_parent = _write_code_book(root, c.codes)
    dis = _find_disagreements(c, groups)
    _write_disagreement_codes(dis_parent, c, dis)
    files, n_sel = _write_sources(root, c, (user_guid, code_guid), dis)
    _write_set(root, dis)
    m, docs = len(c.coders), len(c.texts)
    ET.SubElement(root, f"{{{NS}}}Description").text = _clean(
        f"Written by {origin}: {m} coders ({', '.join(c.coders)}), {len(c.codes)} codes, "
        f"{docs} transcripts. Each coder is a user; the codes under "
        f"'{DISAGREEMENT_PARENT_NAME}' (user '{DISAGREEMENT_USER_NAME}') mark where they differ."
    )
    ET.indent(root, space="  ")
    xml = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    counts = {
        "coders": m,
        "codes": len(c.codes),
        "transcripts": docs,
        "selections": n_sel,
        "disagreements": sum(len(v) for v in dis.selections.values()),
        "disagreement_codes": len(dis.codes),
    }
    return xml, files, counts


def _short(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def write_qdpx(
    c,
    out,
    name: str | None = None,
    groups: dict[str, list[int]] | None = None,
    origin: str = "themesim agree",
) -> dict:
    """Write the codings `c` (codings.Codings) as a REFI-QDA project at `out`, atomically.
    Returns the counts written (coders, codes, transcripts, selections, disagreements).
    groups, origin: build_project's."""
    out = Path(out)
    xml, files, counts = build_project(c, name or out.stem, groups, origin, where=str(out))
    with atomic_path(out) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("project.qde", _DATE), xml, zipfile.ZIP_DEFLATED)
        for entry, text in files.items():
            z.writestr(zipfile.ZipInfo(entry, _DATE), text.encode("utf-8"), zipfile.ZIP_DEFLATED)
    return counts
