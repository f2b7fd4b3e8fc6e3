"""`themesim agree --export-qdpx` (issue 34, part 5): the codings written back as a REFI-QDA
project, read back by the project's own reader to the same codings and the same figures, its
structure checked by hand against the REFI-QDA Project 1.0 schema (Project.xsd, 18 March 2019:
element order, required attributes, GUID form, references)."""

import json
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from helpers import AGREE_TEXT as TEXT
from helpers import make_qdpx, one_line_error
from helpers import themesim_cli as themesim
from helpers import write_coding as write
from lxml import etree

from themesim.errors import InputError
from themesim.io.qdpx_export import (
    DISAGREEMENT_PARENT,
    DISAGREEMENT_USER,
    build_project,
    disagreement_runs,
    write_qdpx,
)
from themesim.io.two_codings import read_codings
from themesim.metrics.agreement.agree import agreement_tables

NS = "urn:QDA-XML:project:1.0"
Q = {"q": NS}
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# Project.xsd's sequences (the parts an export of text codings uses): child elements in order
ORDER = {
    "Project": ["Users", "CodeBook", "Variables", "Cases", "Sources", "Notes", "Links", "Sets",
                "Graphs", "Description", "NoteRef"],
    "Users": ["User"],
    "CodeBook": ["Codes"],
    "Codes": ["Code"],
    "Code": ["Description", "NoteRef", "Code"],
    "Sources": ["TextSource"],
    "TextSource": ["Description", "PlainTextContent", "PlainTextSelection", "Coding", "NoteRef",
                   "VariableValue"],
    "PlainTextSelection": ["Description", "Coding", "NoteRef"],
    "Coding": ["CodeRef", "NoteRef"],
    "Sets": ["Set"],
    "Set": ["Description", "MemberCode", "MemberSource", "MemberNote"],
}  # fmt: skip
REQUIRED = {
    "Project": ["name"],
    "User": ["guid"],
    "Code": ["guid", "name", "isCodable"],
    "TextSource": ["guid"],
    "PlainTextSelection": ["guid", "startPosition", "endPosition"],
    "Coding": ["guid"],
    "CodeRef": ["targetGUID"],
    "Set": ["guid", "name"],
    "MemberCode": ["targetGUID"],
}
GUID_ATTRS = {"guid", "targetGUID", "creatingUser", "creatingUserGUID"}

# a passage with characters beyond ASCII: REFI-QDA counts characters, so must the export
T3 = "Ça coûte — 💶 chaque mois. Les factures arrivent."


def check_structure(path) -> etree._Element:
    """The export's project.qde by hand against Project.xsd; every reference resolves."""
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        root = etree.fromstring(z.read("project.qde"))
        texts = {n: z.read(n).decode("utf-8") for n in names if n.startswith("sources/")}
    assert root.tag == f"{{{NS}}}Project"
    guids = []
    for el in root.iter():
        assert el.tag.startswith(f"{{{NS}}}"), el.tag  # one namespace, nothing else
        tag = etree.QName(el).localname
        kids = [etree.QName(k).localname for k in el]
        if tag in ORDER:
            allowed = ORDER[tag]
            assert all(k in allowed for k in kids), (tag, kids)
            assert [allowed.index(k) for k in kids] == sorted(allowed.index(k) for k in kids), (
                tag,
                kids,
            )
        else:
            assert not kids, (tag, kids)
        for a in REQUIRED.get(tag, []):
            assert el.get(a), (tag, a)
        for a, v in el.attrib.items():
            if a in GUID_ATTRS:
                assert GUID.match(v), (tag, a, v)
        if el.get("guid"):
            guids.append(el.get("guid"))
        if tag == "Code":
            assert el.get("isCodable") in ("true", "false")
    assert len(guids) == len(set(guids)), "a guid is used twice"
    users = {u.get("guid") for u in root.iterfind("q:Users/q:User", Q)}
    codes = {c.get("guid") for c in root.iterfind(".//q:Code", Q)}
    assert {r.get("targetGUID") for r in root.iterfind(".//q:CodeRef", Q)} <= codes
    assert {r.get("targetGUID") for r in root.iterfind(".//q:MemberCode", Q)} <= codes
    assert {e.get("creatingUser") for e in root.iter() if e.get("creatingUser")} <= users
    assert not list(root.iterfind(".//q:Coding/q:CodeRef", Q)) or all(
        c.find("q:CodeRef", Q) is not None for c in root.iterfind(".//q:Coding", Q)
    )
    for src in root.iterfind("q:Sources/q:TextSource", Q):
        # either PlainTextContent or plainTextPath, not both; the path inside the project
        assert src.find("q:PlainTextContent", Q) is None
        entry = "sources/" + src.get("plainTextPath").removeprefix("internal://")
        assert entry in texts
        for sel in src.iterfind("q:PlainTextSelection", Q):
            a, b = int(sel.get("startPosition")), int(sel.get("endPosition"))
            assert 0 <= a < b <= len(texts[entry])
    return root


def spans_of(c):
    s = c.spans.assign(coder=[c.coders[k] for k in c.spans["coder"]])
    return sorted(s[["coder", "document", "code", "start", "end"]].itertuples(index=False))


def same_tables(a: dict, b: dict):
    assert list(a) == list(b)
    for name in a:
        pd.testing.assert_frame_equal(
            a[name].reset_index(drop=True), b[name].reset_index(drop=True), check_exact=True
        )


def round_trip(c, tmp_path, **kw):
    out = tmp_path / "export.qdpx"
    write_qdpx(c, out)
    check_structure(out)
    back = read_codings([out], **kw)
    assert back.coders == c.coders
    assert back.texts == c.texts
    assert back.codes == c.codes
    assert spans_of(back) == spans_of(c)
    same_tables(agreement_tables(back, overlap=0.9), agreement_tables(c, overlap=0.9))
    return out, back


@pytest.fixture
def tx3(tmp_path):
    (tmp_path / "tx").mkdir()
    (tmp_path / "tx" / "t1.txt").write_text(TEXT)
    (tmp_path / "tx" / "t2.txt").write_text("0123456789")
    (tmp_path / "tx" / "visit.2.txt").write_text(T3)  # a name with a dot keeps it
    return str(tmp_path / "tx" / "*.txt")


def _three(tmp_path):
    rows = [
        ("anna", "t1", "Work/Hours", "abcdefghij", 0, 10),
        ("anna", "t1", "Work/Hours", "ijkl", 8, 12),  # overlaps her own: their union
        ("anna", "t1", "Y", "mnop", 12, 16),
        ("anna", "t2", "Work/Hours", "01234", 0, 5),
        ("anna", "visit.2", "Money", "💶 chaque mois", 11, 24),
        ("ben", "t1", "Work/Hours", "fghijklmno", 5, 15),
        ("ben", "t1", "Y", "mnop", 12, 16),
        ("ben", "t2", "Work/Hours", "01234", 0, 5),
        ("ben", "visit.2", "Money", "Ça coûte — 💶", 0, 12),
        ("cy", "t1", "Work/Hours", "abcdefghij", 0, 10),
        ("cy", "t1", "Y", "mnop", "", ""),
        ("cy", "t2", "Work/Hours", "0123", 0, 4),
        ("cy", "visit.2", "Money", "💶 chaque mois.", "", ""),
    ]
    cols = ("coder", "document", "code", "text", "start", "end")
    return write(tmp_path, "all.csv", rows, cols)


def test_three_coders_round_trip_to_the_same_codings_and_figures(tmp_path, tx3):
    c = read_codings([_three(tmp_path)], [tx3])
    out, back = round_trip(c, tmp_path)
    assert any("disagreement selection(s) themesim wrote" in n for n in back.notes)
    # the sources are the transcripts, named by them
    root = check_structure(out)
    names = [s.get("name") for s in root.iterfind("q:Sources/q:TextSource", Q)]
    assert names == ["t1.txt", "t2.txt", "visit.2.txt"]
    users = [u.get("name") for u in root.iterfind("q:Users/q:User", Q)]
    assert users == ["anna", "ben", "cy", "themesim (disagreements)"]
    # a code path is a code tree
    work = root.find("q:CodeBook/q:Codes/q:Code[@name='Work']", Q)
    assert [k.get("name") for k in work.iterfind("q:Code", Q)] == ["Hours"]
    # by --level top the tree gives the top code its children's codings
    top = read_codings([out], level="top")
    assert "Work" in top.codes and "Work/Hours" not in top.codes


def test_the_disagreements_as_a_code_set(tmp_path, tx3):
    c = read_codings([_three(tmp_path)], [tx3])
    out = tmp_path / "x.qdpx"
    counts = write_qdpx(c, out)
    root = check_structure(out)
    parent = root.find(f".//q:Code[@guid='{DISAGREEMENT_PARENT}']", Q)
    assert parent.get("isCodable") == "false"
    got = {}
    for src in root.iterfind("q:Sources/q:TextSource", Q):
        for sel in src.iterfind("q:PlainTextSelection", Q):
            coding = sel.find("q:Coding", Q)
            if coding.get("creatingUser") != DISAGREEMENT_USER:
                continue
            code = parent.find(
                f"q:Code[@guid='{coding.find('q:CodeRef', Q).get('targetGUID')}']", Q
            )
            got.setdefault(code.get("name"), []).append(
                (src.get("name"), int(sel.get("startPosition")), int(sel.get("endPosition")))
            )
    # by hand: t1 anna 0-12, ben 5-15, cy 0-10; t2 anna 0-5, ben 0-5, cy 0-4; visit.2: anna
    # 11-24, ben 0-12, cy 11-25 ("💶 chaque mois." located; 💶 is one character); Y: all
    # three 12-16
    assert got == {
        "Work/Hours: anna + cy only": [("t1.txt", 0, 5)],
        "Work/Hours: anna + ben only": [("t1.txt", 10, 12), ("t2.txt", 4, 5)],
        "Work/Hours: ben only": [("t1.txt", 12, 15)],
        "Money: ben only": [("visit.2.txt", 0, 11)],
        "Money: anna + cy only": [("visit.2.txt", 12, 24)],
        "Money: cy only": [("visit.2.txt", 24, 25)],
    }
    assert counts["disagreements"] == 7 and counts["disagreement_codes"] == 6
    members = {m.get("targetGUID") for m in root.iterfind("q:Sets/q:Set/q:MemberCode", Q)}
    assert members == {k.get("guid") for k in parent.iterfind("q:Code", Q)}
    # each passage says who coded it and who did not
    desc = root.find(".//q:PlainTextSelection/q:Description", Q).text
    assert desc == "'Work/Hours' coded by anna, cy, not by ben"


def test_two_coders_from_a_qdpx_with_crlf_sources_round_trip(tmp_path):
    from helpers import QDPX_TWO_CODERS as TWO_CODERS

    text = "ab\r\ncd\r\nefghijklmnopqrst"  # positions count the CRs as stored
    p = make_qdpx(tmp_path, TWO_CODERS.format(text=text), entries={}, name="in.qdpx")
    c = read_codings([p])
    assert c.texts["t1"] == "ab\ncd\nefghijklmnopqrst"
    out, back = round_trip(c, tmp_path)
    assert back.coders == ("Anna", "Ben")
    # the export stores the text as scored (LF), so its positions count LF
    with zipfile.ZipFile(out) as z:
        assert "\r" not in "".join(z.read(n).decode() for n in z.namelist())


def test_two_coder_files_round_trip_through_the_cli(tmp_path, tx3):
    a = write(tmp_path, "anna.csv", [("t1", "X", TEXT[0:10], 0, 10), ("t2", "X", "01234", 0, 5)])
    b = write(tmp_path, "ben.csv", [("t1", "X", TEXT[5:15], 5, 15), ("t2", "X", "0123", "", "")])
    out = tmp_path / "coding.qdpx"
    plain = themesim("agree", a, b, "--transcripts", tx3, "--format", "json")
    proc = themesim("agree", a, b, "--transcripts", tx3, "--format", "json", "--export-qdpx", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == plain.stdout  # the export adds a file, not a figure
    assert f"REFI-QDA project written to {out} (2 coders as users" in proc.stderr
    back = themesim("agree", out, "--format", "json")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout) == json.loads(plain.stdout)
    first = out.read_bytes()
    themesim("agree", a, b, "--transcripts", tx3, "--export-qdpx", out)
    assert out.read_bytes() == first  # the same input gives the same bytes


def _resaved(src, dst, edit):
    """The export with its project.qde edited, as a QDA program saving it again might."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as w:
        for n in z.namelist():
            data = z.read(n)
            w.writestr(n, edit(data.decode()) if n == "project.qde" else data)
    return dst


NEW_GUID = "0f0e0d0c-0b0a-4908-8706-050403020100"


@pytest.mark.parametrize("how", ["as written", "new user guid", "coded by a coder"])
def test_agree_on_its_own_export_lists_the_human_codes_only(tmp_path, tx3, how):
    """The codes under 'Disagreements (themesim)' are no code of the project: agree on an
    export lists the coders' codes only, also when a QDA program saved it again with another
    guid for themesim's user, or a coder's name on the disagreement codings."""
    c = read_codings([_three(tmp_path)], [tx3])
    out = tmp_path / "export.qdpx"
    write_qdpx(c, out)
    anna = re.search(r'<User guid="([^"]+)" name="anna"', zipfile.ZipFile(out).read(
        "project.qde").decode()).group(1)  # fmt: skip
    edit = {
        "as written": None,
        "new user guid": lambda x: x.replace(DISAGREEMENT_USER, NEW_GUID),
        "coded by a coder": lambda x: x.replace(
            f'creatingUser="{DISAGREEMENT_USER}"', f'creatingUser="{anna}"'
        ),
    }[how]  # fmt: skip
    if edit is not None:
        out = _resaved(out, tmp_path / "resaved.qdpx", edit)
    proc = themesim("agree", out, "--format", "json", "--overlap", "0.9")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["coders"] == ["anna", "ben", "cy"]
    human = ["Work/Hours", "Y", "Money"]
    for table in ("codes by transcript", "pairs", "segments"):
        assert list(dict.fromkeys(r["code"] for r in data[table])) == human, table
    assert {r["n_codes"] for r in data["overall"]} == {3}
    assert "Disagreements" not in proc.stdout
    assert proc.stderr.count("7 disagreement selection(s) themesim wrote") == 1
    back = read_codings([out])
    assert back.codes == human and not any("Disagreements" in d for d in back.domains)
    assert spans_of(back) == spans_of(c)
    # the study side reads the project's code book the same way
    from themesim.io.refi_qda import study_project

    themes = study_project(out)
    assert sorted(themes.users.values()) == ["anna", "ben", "cy"]
    assert not any("Disagreements" in themes.paths[g] for g in themes.themes["theme_id"])


@pytest.mark.parametrize(
    "coders, code, message",
    [
        ("themesim (disagreements),ben", "X", "coder 'themesim (disagreements)' has the name"),
        ("anna,ben", "Disagreements (themesim)/Work", "code 'Disagreements (themesim)/Work' lies"),
        ("anna,ben", "disagreements  (THEMESIM)", "code 'disagreements (THEMESIM)' lies"),
    ],
)
def test_an_export_refuses_the_names_it_reserves(tmp_path, tx3, coders, code, message):
    """A coder or a code named as the export's disagreement marks would be written and then
    left out when the project is read back: refused in one line before any figure, and no
    project is written (the study's export, write_qdpx, refuses them too)."""
    a = write(tmp_path, "anna.csv", [("t1", code, TEXT[0:10], 0, 10)])
    b = write(tmp_path, "ben.csv", [("t1", code, TEXT[5:15], 5, 15)])
    out = tmp_path / "coding.qdpx"
    proc = themesim("agree", a, b, "--transcripts", tx3, "--coders", coders, "--export-qdpx", out)
    line = one_line_error(proc, message)
    assert line.startswith(f"themesim: error: --export-qdpx {out}: ") and "Rename the" in line
    assert not out.exists() and proc.stdout == ""
    c = read_codings([a, b], [tx3], coders=coders.split(","))
    with pytest.raises(InputError, match="and export again"):
        write_qdpx(c, out)
    assert not out.exists()


def test_a_user_named_as_the_marks_coding_a_code_is_refused_not_dropped(tmp_path):
    """A project whose coder is named 'themesim (disagreements)' (not themesim's export: the
    user codes an ordinary code): reading it refuses in one line instead of leaving the
    coder's codings out, in agree and as a study's theme set."""
    from helpers import QDPX_TWO_CODERS

    from themesim.io.refi_qda import study_project

    xml = QDPX_TWO_CODERS.format(text=TEXT).replace('name="Ben"', 'name="themesim (disagreements)"')
    p = make_qdpx(tmp_path, xml, entries={})
    proc = themesim("agree", p, "--format", "json")
    line = one_line_error(proc, "user 'themesim (disagreements)' codes 'X'")
    assert "PlainTextSelection 3" in line and "Rename the user" in line
    with pytest.raises(InputError, match="a code outside 'Disagreements \\(themesim\\)'"):
        study_project(p, user="Anna")


@pytest.mark.parametrize(
    "out, message",
    [
        ("no/such/dir/x.qdpx", "does not exist"),
        (".", "is a folder"),
        ("coding.zip", "does not end in .qdpx"),
        ("in.qdpx", "which this command reads or writes"),
    ],
)
def test_export_path_errors_are_one_line(tmp_path, tx3, out, message):
    a = write(tmp_path, "anna.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    b = write(tmp_path, "ben.csv", [("t1", "X", TEXT[5:15], 5, 15)])
    proc = themesim("agree", a, b, "--transcripts", tx3, "--export-qdpx", out, cwd=tmp_path)
    if out == "in.qdpx":  # the coders' own project is never overwritten
        from helpers import QDPX_TWO_CODERS as TWO_CODERS

        p = make_qdpx(tmp_path, TWO_CODERS.format(text=TEXT), entries={}, name=out)
        before = p.read_bytes()
        proc = themesim("agree", out, "--export-qdpx", f"./{out}", cwd=tmp_path)
        out = f"./{out}"
        assert p.read_bytes() == before
    assert f"--export-qdpx {out}" in one_line_error(proc, message)


def test_disagreement_runs():
    iv = lambda *p: np.array(p, dtype=np.int64).reshape(-1, 2)  # noqa: E731
    # touching selections of one coder are one stretch of disagreement
    assert disagreement_runs([iv(0, 5, 5, 10), iv()], 2) == [(0, 10, (0,))]
    assert disagreement_runs([iv(0, 10), iv(0, 10)], 2) == []
    assert disagreement_runs([iv(), iv()], 2) == []
    assert disagreement_runs([iv(0, 10), iv(3, 6), iv(5, 12)], 3) == [
        (0, 3, (0,)),
        (3, 5, (0, 1)),
        (6, 10, (0, 2)),
        (10, 12, (2,)),
    ]


def test_build_project_needs_no_file(tmp_path, tx3):
    c = read_codings([_three(tmp_path)], [tx3])
    xml, files, counts = build_project(c, "p")
    assert xml.startswith(b"<?xml") and len(files) == 3 and counts["coders"] == 3


# ---------------------------------------------------------------- the study target


def test_snakemake_qdpx_writes_the_studys_coding(tmp_path):
    """`snakemake qdpx` on a .qdpx study (TF-IDF, an LLM set): per method one project with
    the transcripts, the human coding and the coder's application of every set as users."""
    import yaml
    from helpers import job_counts, qdpx_study, snakemake

    from themesim.io.refi_qda import read_qdpx

    text_a = qdpx_study(tmp_path)
    cfg_path = tmp_path / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["methods"]["tfidf"]["assign_threshold"] = 0.01  # the coder labels the LLM set too
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    (tmp_path / "data" / "llm.yaml").write_text(  # words the transcripts use (TF-IDF)
        "themes:\n"
        "  - {id: L1, name: Cut hours, description: Work hours cut badly}\n"
        "  - {id: L2, name: Never sleep, description: I never sleep through}\n"
    )
    counts = job_counts(snakemake(tmp_path, "-n", "--cores", "2", "qdpx").stdout)
    assert counts["qdpx_project"] == 1 and counts["qdpx"] == 1, counts
    assert "qdpx_project" not in job_counts(snakemake(tmp_path, "-n", "--cores", "2").stdout)
    snakemake(tmp_path, "--cores", "2", "qdpx")
    out = tmp_path / "results" / "qdpx" / "tfidf.qdpx"
    root = check_structure(out)
    proj = read_qdpx(out)
    assert proj.texts["amira"] == text_a
    users = list(proj.users.values())
    # the project's one named user, its selections without a user (named after the set),
    # the coder on each set, and the disagreement user
    assert users[:2] == ["u1", "human"] or users[:2] == ["human", "u1"], users
    assert {"human (coder, tfidf)", "llm (coder, tfidf)"} <= set(users), users
    assert users[-1] == "themesim (disagreements)"
    # the human coding as it is in the study's project: Badly. (33-39) and I cut my hours
    coded = proj.coded.assign(user=[proj.users[u] for u in proj.coded["coder"]])
    paths = proj.paths
    human = coded[coded["user"].isin(["u1", "human"])]
    got = sorted(
        (paths[t], d, int(a), int(b))
        for d, t, a, b in human[["document", "theme_id", "start", "end"]].values
    )
    assert got == [  # the set's themes under a code named after the set
        ("human/Cutting hours", "amira", 40, 54),
        ("human/Own health", "amira", 33, 39),
        ("human/Own health", "dennis", 8, 29),
        ("human/Work", "amira", 33, 39),
    ]
    # the coder codes whole segments, with the set's themes
    llm = coded[coded["user"] == "llm (coder, tfidf)"]
    assert len(llm) and all(paths[t].startswith("llm/") for t in llm["theme_id"])
    # disagreements only among the users of one set's themes: none for the LLM set's
    parent = root.find(f".//q:Code[@guid='{DISAGREEMENT_PARENT}']", Q)
    names = [k.get("name") for k in parent.iterfind("q:Code", Q)]
    assert names and all(n.startswith("human/") for n in names), names
