"""REFI-QDA projects built from the 1.5 spec's elements in a temporary folder."""

import pytest
from helpers import B_INTERNAL, TEXT_A, TEXT_B, make_qdpx, project_xml

from themesim.errors import InputError
from themesim.io.refi_qda import read_qdpx, write_texts


def test_codes_selections_and_sources(tmp_path):
    p = make_qdpx(tmp_path, project_xml(B_INTERNAL))
    proj = read_qdpx(p, level="all")
    assert proj.themes.values.tolist() == [
        ["c-work", "Work", "Paid work and caring", ""],
        ["c-hours", "Cutting hours", "", "Work"],
        ["c-health", "Own health", "", ""],
    ]
    assert proj.texts == {"amira": TEXT_A, "dennis": TEXT_B}
    rows = proj.coded[["document", "theme_id", "text", "start", "end", "row"]].values.tolist()
    assert rows == [
        ["amira", "c-hours", "I cut my hours", 40, 54, 1],
        ["amira", "c-work", "Badly.", 33, 39, 2],
        ["amira", "c-health", "Badly.", 33, 39, 2],
        ["dennis", "c-health", "I never sleep through", 8, 29, 3],
    ]
    assert proj.coded["coder"].tolist()[0] == "u1"
    (tmp_path / "tx").mkdir()
    written = write_texts(proj, tmp_path / "tx")
    assert [w.name for w in written] == ["amira.txt", "dennis.txt"]
    assert written[1].read_text(encoding="utf-8") == TEXT_B


def test_levels_roll_codings_up_to_top_codes(tmp_path):
    p = make_qdpx(tmp_path, project_xml(B_INTERNAL))
    top = read_qdpx(p, level="top")
    assert top.themes["theme_id"].tolist() == ["c-work", "c-health"]
    assert top.coded["theme_id"].tolist() == ["c-work", "c-work", "c-health", "c-health"]
    leaf = read_qdpx(p, level="leaf")
    assert leaf.themes["theme_id"].tolist() == ["c-hours", "c-health"]
    assert leaf.coded["theme_id"].tolist() == ["c-hours", "c-health", "c-health"]


@pytest.mark.parametrize(
    "b_source, entries, message",
    [
        (B_INTERNAL.replace("s2.txt", "../../etc/passwd"), None, "leaves the project's sources"),
        (
            B_INTERNAL.replace("internal://s2.txt", "/home/x/s2.txt"),
            None,
            "lies outside the project",
        ),
        (
            B_INTERNAL.replace('endPosition="29"', 'endPosition="99"'),
            None,
            "selection 8-99 lies outside",
        ),
        (B_INTERNAL.replace("c-health", "c-nope"), None, "Coding of unknown code 'c-nope'"),
        (B_INTERNAL, {"other.txt": "x"}, "has no entry 'sources/s2.txt'"),
    ],
)
def test_bad_projects(tmp_path, b_source, entries, message):
    p = make_qdpx(tmp_path, project_xml(b_source), entries)
    with pytest.raises(InputError, match=message):
        read_qdpx(p)


def test_entities_are_refused(tmp_path):
    xml = project_xml(B_INTERNAL).replace(
        '<?xml version="1.0" encoding="utf-8"?>',
        '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x "boom">]>',
    )
    with pytest.raises(InputError, match="not valid REFI-QDA XML"):
        read_qdpx(make_qdpx(tmp_path, xml))


def test_not_a_zip(tmp_path):
    p = tmp_path / "x.qdpx"
    p.write_text("hello")
    with pytest.raises(InputError, match=r"x.qdpx: is not a readable .qdpx"):
        read_qdpx(p)


def test_wrong_namespace(tmp_path):
    xml = project_xml(B_INTERNAL).replace("urn:QDA-XML:project:1.0", "urn:other")
    with pytest.raises(InputError, match="not a urn:QDA-XML:project:1.0 Project"):
        read_qdpx(make_qdpx(tmp_path, xml))


def test_theme_table_from_codes(tmp_path):
    from themesim.io.refi_qda import theme_table

    proj = read_qdpx(make_qdpx(tmp_path, project_xml(B_INTERNAL)), level="all")
    df = theme_table(proj, "caqdas", "{name}: {description}", "proj.qdpx")
    assert df["theme_id"].tolist() == ["c-work", "c-hours", "c-health"]
    assert df["text"].tolist() == ["Work: Paid work and caring", "Cutting hours", "Own health"]
    assert (df["set"] == "caqdas").all()


def test_sources_of_two_projects_become_one_transcript_each(tmp_path):
    from themesim.io.refi_qda import project_texts, source_transcripts

    a = make_qdpx(tmp_path, project_xml(B_INTERNAL), name="coder1.qdpx")
    b = make_qdpx(tmp_path, project_xml(""), name="coder2.qdpx")  # amira only, same text
    assert project_texts([a, b]) == {"amira": TEXT_A, "dennis": TEXT_B}
    assert source_transcripts([b, a]) == [
        "results/transcripts/sources/amira.txt",
        "results/transcripts/sources/dennis.txt",
    ]
    changed = {"sources/s2.txt": "Dennis: I always sleep through.\n"}
    other = make_qdpx(tmp_path, project_xml(B_INTERNAL), changed, "c3.qdpx")
    with pytest.raises(InputError) as e:
        project_texts([a, other])
    assert "c3.qdpx: source 'dennis'" in str(e.value) and "coder1.qdpx" in str(e.value)


def test_positions_count_crlf_as_stored(tmp_path):
    # issue 34: a source with Windows line endings; REFI-QDA counts positions in the text as
    # stored (CR and LF two characters). The selection must still read the sentence.
    stored = "Q: And money?\r\nR: The care bills are a worry every single month.\r\nIn the end."
    sentence = "The care bills are a worry every single month."
    start = stored.index(sentence)
    end = start + len(sentence)
    src = B_INTERNAL.replace(
        'startPosition="8" endPosition="29"', f'startPosition="{start}" endPosition="{end}"'
    )
    p = make_qdpx(tmp_path, project_xml(src), {"sources/s2.txt": stored})
    proj = read_qdpx(p)
    row = proj.coded[proj.coded["document"] == "dennis"].iloc[0]
    assert row["text"] == sentence
    assert proj.texts["dennis"][row["start"] : row["end"]] == sentence
    assert "\r" not in proj.texts["dennis"]


def test_code_paths(tmp_path):
    proj = read_qdpx(make_qdpx(tmp_path, project_xml(B_INTERNAL)))
    assert proj.paths == {"c-work": "Work", "c-hours": "Work/Cutting hours",
                          "c-health": "Own health"}  # fmt: skip
