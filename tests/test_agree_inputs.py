"""`themesim agree` with two or more coders, the unitizing α end to end, and inputs that cannot
mislead (issue 34): each case gives the right figure or a one-line error."""

import json
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from helpers import AGREE_TEXT as TEXT
from helpers import make_qdpx, one_line_error
from helpers import themesim_cli as themesim
from helpers import write_coding as write
from statsmodels.stats.inter_rater import fleiss_kappa

from themesim.errors import InputError
from themesim.io.codings import Codings
from themesim.io.two_codings import read_codings
from themesim.metrics.agreement.agree import agreement_tables
from themesim.metrics.agreement.intercoder import overall_table

# Anna and Ben code X on t1 (0-10 and 5-15) and t2 (0-5 both)
TWO_CODERS = """<?xml version="1.0" encoding="utf-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="two" origin="test">
  <Users><User guid="u-a" name="Anna"/><User guid="u-b" name="Ben"/></Users>
  <CodeBook><Codes><Code guid="c-x" name="X" isCodable="true"/></Codes></CodeBook>
  <Sources>
    <TextSource guid="s1" name="t1.txt">
      <PlainTextContent>{text}</PlainTextContent>
      <PlainTextSelection guid="p1" startPosition="0" endPosition="10" creatingUser="u-a">
        <Coding guid="k1" creatingUser="u-a"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p3" startPosition="5" endPosition="15" creatingUser="u-b">
        <Coding guid="k3" creatingUser="u-b"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
    </TextSource>
    <TextSource guid="s2" name="t2.txt">
      <PlainTextContent>0123456789</PlainTextContent>
      <PlainTextSelection guid="p5" startPosition="0" endPosition="5" creatingUser="u-a">
        <Coding guid="k5" creatingUser="u-a"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p6" startPosition="0" endPosition="5" creatingUser="u-b">
        <Coding guid="k6" creatingUser="u-b"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
    </TextSource>
  </Sources>
</Project>"""


@pytest.fixture
def tx(tmp_path):
    (tmp_path / "tx").mkdir()
    (tmp_path / "tx" / "t1.txt").write_text(TEXT)
    (tmp_path / "tx" / "t2.txt").write_text("0123456789")
    return str(tmp_path / "tx" / "*.txt")


# ---------------------------------------------------------------- unitizing α end to end


def test_krippendorff_2004_example_through_agree(tmp_path):
    # Krippendorff (2004, p. 254): code c on a continuum of 300 characters (see
    # tests/test_unitizing.py); through CSV files the per-code u_alpha_2004 is 0.7286.
    text = "".join(chr(97 + i % 26) for i in range(300))
    (tmp_path / "k.txt").write_text(text)
    spans = {"i": [(75, 145), (220, 250)], "j": [(70, 150), (205, 225), (250, 270)]}
    files = [
        write(tmp_path, f"{k}.csv", [("k", "c", text[a:b], a, b) for a, b in v])
        for k, v in spans.items()
    ]
    c = read_codings(files, [tmp_path / "k.txt"])
    t = agreement_tables(c)["codes by transcript"].set_index(["scope", "code", "transcript"])
    assert round(t.loc[("all", "c", "(all)"), "u_alpha_2004"], 4) == 0.7286
    assert t.loc[("all", "c", "k"), "u_alpha_2004"] == t.loc[("all", "c", "(all)"), "u_alpha_2004"]


# ---------------------------------------------------------------- three or more coders


def _coder_column_file(tmp_path):
    rows = [
        ("anna", "t1", "X", "abcdefghij", 0, 10),
        ("anna", "t1", "Y", "mnop", 12, 16),
        ("anna", "t2", "X", "01234", 0, 5),
        ("ben", "t1", "X", "fghijklmno", 5, 15),
        ("ben", "t1", "Y", "mnop", 12, 16),
        ("ben", "t2", "X", "01234", 0, 5),
        ("cy", "t1", "X", "abcdefghij", 0, 10),
        ("cy", "t1", "Y", "mnop", "", ""),
        ("cy", "t2", "X", "0123", 0, 4),
    ]
    cols = ("coder", "document", "code", "text", "start", "end")
    return write(tmp_path, "all.csv", rows, cols)


def test_three_coders_from_a_coder_column(tmp_path, tx):
    p = _coder_column_file(tmp_path)
    proc = themesim("agree", p, "--transcripts", tx, "--format", "json", "--overlap", "0.9")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["coders"] == ["anna", "ben", "cy"]
    rows = {(r["scope"], r["code"], r["transcript"]): r for r in out["codes by transcript"]}
    # X over t1 (20 characters) and t2 (10): k coders per character, Fleiss from statsmodels
    k = np.r_[[2] * 5, [3] * 5, [1] * 5, [0] * 5, [3] * 4, [2], [0] * 5]
    table = np.column_stack([3 - k, k])
    x = rows[("all", "X", "(all)")]
    assert x["fleiss_kappa"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
    assert x["brennan_prediger"] == pytest.approx(fleiss_kappa(table, "randolph"), abs=1e-12)
    assert {(r["coder_a"], r["coder_b"]) for r in out["pairs"]} == {
        ("anna", "ben"), ("anna", "cy"), ("ben", "cy")
    }  # fmt: skip
    seg = {(r["coder_a"], r["coder_b"], r["code"]): r for r in out["segments"]}
    # anna's 0-10 vs ben's 5-15: half covered; t2 0-5 both: agree. So 2 of 4 at 90 %.
    assert seg[("anna", "ben", "X")]["segment_agreement"] == 50.0
    csv = themesim("agree", p, "--transcripts", tx, "--format", "csv", "--overlap", "0.9")
    levels = [line.split(",")[0] for line in csv.stdout.splitlines()[1:]]
    assert (levels.count("pair"), levels.count("segments"), levels.count("overall")) == (6, 6, 2)
    # the text form: each section a heading, then a line per pair of coders and code
    text = themesim("agree", p, "--transcripts", tx, "--overlap", "0.9").stdout.splitlines()
    pairs = text.index("Pairs of coders, per code over all text (Cohen's kappa, unitizing alpha):")
    assert text[pairs + 1] == "  anna / ben  X: kappa 0.33, agree 66.7 %, u-alpha (2004) 0.38"
    segs = text.index("Segments (a selection agrees when the other coder's covers enough of it):")
    assert text[segs - 2 : segs] == [
        "  ben / cy  Y: kappa 1.00, agree 100.0 %, u-alpha (2004) 1.00",
        "",
    ]
    assert text[segs + 1] == "  anna / ben  X: 2 of 4 segments agree (50.0 %) at 90 % overlap"
    assert len(text) == segs + 7
    # two coders of the three, named
    proc = themesim("agree", p, "--transcripts", tx, "--coders", "anna,ben", "--format", "json")
    assert json.loads(proc.stdout)["coders"] == ["anna", "ben"]


@pytest.mark.parametrize("m", [2, 3, 5])
def test_two_three_and_five_coder_files(tmp_path, tx, m):
    import krippendorff

    rng = np.random.default_rng(m)
    files, k, R = [], np.zeros(20, dtype=int), np.zeros((m, 20), dtype=int)
    for i in range(m):
        a = int(rng.integers(0, 8))
        b = a + int(rng.integers(3, 12))
        k[a:b] += 1
        R[i, a:b] = 1
        files.append(write(tmp_path, f"c{i}.csv", [("t1", "X", TEXT[a:b], a, b)]))
    c = read_codings(files, [tx])
    assert c.coders == tuple(f"c{i}" for i in range(m))
    t = agreement_tables(c)
    row = t["codes by transcript"].set_index(["scope", "code", "transcript"])
    want = fleiss_kappa(np.column_stack([m - k, k]))
    if m > 2:
        assert row.loc[("all", "X", "t1"), "fleiss_kappa"] == pytest.approx(want, abs=1e-12)
        assert len(t["pairs"]) == m * (m - 1) // 2
    assert np.isfinite(row.loc[("all", "X", "t1"), "u_alpha_2004"])
    assert row.loc[("all", "X", "t1"), "alpha_binary_char"] == pytest.approx(
        krippendorff.alpha(reliability_data=R, level_of_measurement="nominal"), abs=1e-12
    )


@pytest.mark.parametrize("m", [2, 3, 5])
def test_touching_selections_of_one_code_by_one_coder(tmp_path, tx, m):
    """Coder c0 selects X at 0-4 and 4-8 (two touching selections), the others 0-10: agree
    scores it (before: an IndexError in the histogram) as the characters say."""
    import krippendorff

    rows = {0: [("t1", "X", TEXT[0:4], 0, 4), ("t1", "X", TEXT[4:8], 4, 8)]}
    files = [write(tmp_path, f"c{i}.csv", rows.get(i, [("t1", "X", TEXT[0:10], 0, 10)]))
             for i in range(m)]  # fmt: skip
    proc = themesim("agree", *files, "--transcripts", tx, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    got = {(r["scope"], r["code"], r["transcript"]): r for r in json.loads(proc.stdout)[
        "codes by transcript"]}  # fmt: skip
    R = np.zeros((m, len(TEXT)), dtype=int)
    R[0, 0:8] = 1
    R[1:, 0:10] = 1
    want = krippendorff.alpha(reliability_data=R, level_of_measurement="nominal")
    assert got[("all", "X", "t1")]["alpha_binary_char"] == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------- inputs that cannot mislead


def test_overlapping_selections_are_their_union_said_once(tmp_path, tx):
    a = write(tmp_path, "anna.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    b = write(
        tmp_path,
        "ben.csv",
        [("t1", "X", TEXT[0:6], 0, 6), ("t1", "X", TEXT[4:10], 4, 10),
         ("t1", "X", TEXT[5:8], 5, 8)],
    )  # fmt: skip
    proc = themesim("agree", a, b, "--transcripts", tx, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("taken as their union") == 1
    assert "2 selection(s)" in proc.stderr and "ben.csv, row 3" in proc.stderr
    rows = {(r["scope"], r["code"], r["transcript"]): r for r in json.loads(proc.stdout)[
        "codes by transcript"]}  # fmt: skip
    assert rows[("all", "X", "t1")]["kappa"] == 1.0  # the union 0-10 is anna's 0-10


def test_quotes_match_with_whitespace_ignored(tmp_path):
    text = "It was an assignment\nabout  time. Then more."
    (tmp_path / "e.txt").write_text(text)
    end = text.index(".")  # the quote lost a space (an export's line break): still found
    a = write(tmp_path, "a.csv", [("e", "m", "It was anassignment about time.", "", "")])
    b = write(tmp_path, "b.csv", [("e", "m", "an assignment about time", 7, end)])
    c = read_codings([a, b], [tmp_path / "e.txt"])
    assert c.spans[["start", "end"]].values.tolist() == [[0, end + 1], [7, end]]


def test_codes_by_full_path_never_a_bare_name(tmp_path):
    xml = f"""<?xml version="1.0" encoding="utf-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="p" origin="test">
  <Users><User guid="u-a" name="Anna"/><User guid="u-b" name="Ben"/></Users>
  <CodeBook><Codes>
    <Code guid="c-w" name="Work" isCodable="true"><Code guid="c-wo" name="Other"/></Code>
    <Code guid="c-h" name="Health" isCodable="true"><Code guid="c-ho" name="Other"/></Code>
  </Codes></CodeBook>
  <Sources><TextSource guid="s1" name="t1.txt"><PlainTextContent>{TEXT}</PlainTextContent>
    <PlainTextSelection guid="p1" startPosition="0" endPosition="10" creatingUser="u-a">
      <Coding guid="k1" creatingUser="u-a"><CodeRef targetGUID="c-wo"/></Coding>
    </PlainTextSelection>
    <PlainTextSelection guid="p2" startPosition="0" endPosition="10" creatingUser="u-b">
      <Coding guid="k2" creatingUser="u-b"><CodeRef targetGUID="c-wo"/></Coding>
    </PlainTextSelection>
    <PlainTextSelection guid="p3" startPosition="5" endPosition="15" creatingUser="u-a">
      <Coding guid="k3" creatingUser="u-a"><CodeRef targetGUID="c-ho"/></Coding>
    </PlainTextSelection>
    <PlainTextSelection guid="p4" startPosition="5" endPosition="15" creatingUser="u-b">
      <Coding guid="k4" creatingUser="u-b"><CodeRef targetGUID="c-ho"/></Coding>
    </PlainTextSelection>
  </TextSource></Sources>
</Project>"""
    p = make_qdpx(tmp_path, xml, entries={})
    c = read_codings([p])
    assert c.codes == ["Work/Other", "Health/Other"]
    t = agreement_tables(c)["codes by transcript"].set_index(["scope", "code", "transcript"])
    assert t.loc[("all", "Work/Other", "t1"), "units"] == 20  # not 40: two codes, one text
    assert t.loc[("all", "Health/Other", "t1"), "kappa"] == 1.0
    # at --level top the two parents are the codes, their children's codings rolled up
    assert read_codings([p], level="top").codes == ["Work", "Health"]


@pytest.mark.parametrize(
    "row, message",
    [
        # a 44-character passage with offsets over one character
        (("t1", "X", "abcdefghijklmnopqrstabcdefghijklmnopqrstabcd", 24, 25),
         "t1.csv, row 2: offsets 24-25 lie outside"),
        (("t1", "X", "abcdefghij", 3, 4), "b.csv, row 2: offsets 3-4 select 'd' in 't1', not"),
        (("t1", "X", "d", 0, 20), "b.csv, row 2: offsets 0-20 select 'abcdefghijklmnopqrst'"),
        (("t1", "X", "abc", "inf", "5"), "b.csv, row 2: start is 'inf', not a character offset"),
        (("t1", "X", "abc", 0, "1e400"), "b.csv, row 2: end is '1e400', not a character offset"),
        (("t1", "X", "abc", "NaN", 3), "b.csv, row 2: start is 'NaN', not a character offset"),
    ],
)  # fmt: skip
def test_offsets_must_select_the_text(tmp_path, tx, row, message):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    name = "t1.csv" if "t1.csv" in message else "b.csv"
    b = write(tmp_path, name, [row])
    proc = themesim("agree", a, b, "--transcripts", tx)
    assert message.split(": ", 1)[1] in one_line_error(proc)
    assert name in proc.stderr


@pytest.mark.parametrize(
    "text, start, end, message",
    [
        (" ", 4, 5, "selects only whitespace at offsets 4-5: 1 character, a space, and no word"),
        ("\n\t", None, None, "selects only whitespace: 2 characters, a line break, a tab, and"),
        ("", None, None, "has no coded text"),
    ],
)
def test_a_whitespace_selection_says_what_it_holds(tmp_path, tx, text, start, end, message):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:4], 0, 4), ("t1", "X", text, start, end)])
    b = write(tmp_path, "b.csv", [("t1", "X", TEXT[0:4], 0, 4)])
    proc = themesim("agree", a, b, "--transcripts", tx)
    assert "a.csv, row 3: " in one_line_error(proc, message)


def test_offsets_counted_with_crlf_line_endings_are_named(tmp_path):
    """A passage's offsets counted on a CRLF copy of the transcript (a character more per
    line before it): the one line says so, whether the offsets miss the text or run past the
    transcript's end."""
    text = "Interviewer: How is work?\nAnna: I changed my shifts.\nBen: Me too.\n"
    (tmp_path / "t.txt").write_text(text)
    crlf = text.replace("\n", "\r\n")
    a0 = crlf.index("I changed my shifts")
    b0 = crlf.index("Me too.")
    a = write(tmp_path, "a.csv", [("t", "X", "I changed my shifts", a0, a0 + 19)])
    b = write(tmp_path, "b.csv", [("t", "X", "Me too.", b0, b0 + 7)])
    for mine, message in ((a, f"offsets {a0}-{a0 + 19} select"), (b, "lie outside")):
        other = write(tmp_path, "o.csv", [("t", "X", "I changed", None, None)])
        proc = themesim("agree", mine, other, "--transcripts", tmp_path / "t.txt")
        line = one_line_error(proc, message)
        assert "the offsets may have been counted with CRLF line endings" in line, line
        assert "counting each line ending as one character" in line


def test_a_changed_transcript_is_compared_with_the_projects_copy(tmp_path):
    text = "line one\nline two\nline three"
    p = make_qdpx(tmp_path, TWO_CODERS.format(text=text), entries={})
    (tmp_path / "edited").mkdir()
    (tmp_path / "edited" / "t1.txt").write_text("line one\nline 2\nline three")
    (tmp_path / "edited" / "t2.txt").write_text("0123456789")  # the same: nothing said
    proc = themesim("agree", p, "--transcripts", tmp_path / "edited" / "*.txt")
    assert proc.returncode == 0, proc.stderr
    assert "transcript 't1' differs from the project's own copy at line 2" in proc.stderr
    assert "'line 2'" in proc.stderr and "'line two'" in proc.stderr
    assert "'t2'" not in proc.stderr
    (tmp_path / "edited" / "t9.txt").write_text("another interview")
    proc = themesim("agree", p, "--transcripts", tmp_path / "edited" / "*.txt")
    assert "transcript(s) 't9' are not sources of" in proc.stderr


def test_the_same_coder_twice_is_refused(tmp_path, tx):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    one_line_error(themesim("agree", a, a, "--transcripts", tx), "a.csv: is given twice")
    copy = tmp_path / "copy.csv"
    rows = [("t1", "X", TEXT[0:10], 0, 10), ("t1", "X", TEXT[12:15], 12, 15)]
    write(tmp_path, "a.csv", rows)
    write(tmp_path, "copy.csv", rows)
    proc = themesim("agree", a, copy, "--transcripts", tx)
    assert proc.returncode == 0 and "coders 'a' and 'copy' made the very same 2" in proc.stderr
    p = make_qdpx(tmp_path, TWO_CODERS.format(text=TEXT), entries={})
    one_line_error(themesim("agree", p, "--coders", "Anna,Anna"), "names 'Anna' twice")
    one_line_error(themesim("agree", p, "--coders", "Anna,u-a"), "names coder 'Anna' twice")


def test_percent_interval_stays_in_0_100():
    # four transcripts, three in full agreement and one in none: the jackknife's upper end
    # would pass 100 % without the clamp
    rows = []
    for g, (both, a, b, n) in enumerate([(10, 0, 0, 90), (10, 0, 0, 90), (10, 0, 0, 90),
                                         (0, 50, 50, 0)]):  # fmt: skip
        for scope in ("all", "coded"):
            rows.append((f"t{g}", "X", scope, both + a + b + n, both, a, b, n))
    counts = pd.DataFrame(rows, columns=["group", "code", "scope", "units", "both", "only_a",
                                         "only_b", "neither"])  # fmt: skip
    o = overall_table(counts)
    assert (o["percent_agreement_ci_high"] <= 100).all()
    assert (o["percent_agreement_ci_low"] >= 0).all()


def test_a_long_transcript_needs_no_characters_by_codes_matrix():
    # 5 million characters, 10 codes: a boolean matrix per coder would take 100 MB (and the
    # counting about 45 bytes a character a code, 2.2 GB); intervals take kilobytes.
    n = 5_000_000
    texts = {"big": "x" * n}
    rows = []
    for k in range(2):
        for j in range(10):
            for s in range(0, n, 500_000):
                rows.append((k, "big", f"c{j}", s + 1000 * j + 7 * k, s + 1000 * j + 5000, "f", 1))
    spans = pd.DataFrame(rows, columns=["coder", "document", "code", "start", "end", "file",
                                        "row"])  # fmt: skip
    c = Codings(("a", "b"), [f"c{j}" for j in range(10)], spans, texts)
    tracemalloc.start()
    t = agreement_tables(c)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 << 20, peak
    assert t["overall"]["percent_agreement"].iloc[0] > 99


@pytest.mark.parametrize("out", ["no/such/dir/x.txt", ".", "/proc/x.xlsx"])
def test_out_that_cannot_be_written(tmp_path, tx, out):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    b = write(tmp_path, "b.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    line = one_line_error(themesim("agree", a, b, "--transcripts", tx, "--out", out,
                                   cwd=tmp_path))  # fmt: skip
    assert f"--out {out}" in line


def test_a_glob_that_repeats_a_file(tmp_path, tx):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    b = write(tmp_path, "b.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    proc = themesim("agree", a, b, "--transcripts", tx, tmp_path / "tx" / "t1.txt")
    assert proc.returncode == 0, proc.stderr
    assert "same name" not in proc.stderr


def test_level_and_empty_coders_with_files(tmp_path, tx):
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    b = write(tmp_path, "b.csv", [])
    one_line_error(
        themesim("agree", a, b, "--transcripts", tx), "b.csv: coder 'b' has no coded segments"
    )
    b = write(tmp_path, "b.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    one_line_error(themesim("agree", a, b, "--transcripts", tx, "--level", "top"),
                   "--level top: applies to a .qdpx")  # fmt: skip
    with pytest.raises(InputError, match="names one coder"):
        read_codings([a, b], [tx], coders=["x"])


def test_locating_without_offsets_in_a_huge_transcript_refuses_before_allocating(
    tmp_path, tx, monkeypatch
):
    import themesim.io.codings_transcripts as tc

    monkeypatch.setattr(tc, "MAX_TRANSCRIPT_BYTES", 1000)  # as a 200 MB transcript, 2 GiB
    a = write(tmp_path, "a.csv", [("t1", "X", TEXT[0:10], "", "")])
    b = write(tmp_path, "b.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    with pytest.raises(InputError, match=r"a.csv, row 2: has no offsets, and locating it in "
                       r"transcript 't1' \(20 characters, .*t1.txt\) needs about 1.6 KiB of "
                       r"memory, more than the 1000 bytes"):  # fmt: skip
        read_codings([a, b], [tx])


def test_sibling_subcodes_under_level_top_are_their_union(tmp_path):
    from helpers import TEXT_A, project_xml

    # Anna codes 40-54 with Cutting hours and 33-39 with Work; both roll up to Work at top
    xml = project_xml("").replace('creatingUser="u1"', 'creatingUser="u-a"')
    xml = xml.replace('<Coding guid="k2">', '<Coding guid="k2" creatingUser="u-a">')
    xml = xml.replace('<Coding guid="k3">', '<Coding guid="k3" creatingUser="u-a">')
    extra = """<PlainTextSelection guid="p9" startPosition="30" endPosition="54">
        <Coding guid="k9" creatingUser="u-b"><CodeRef targetGUID="c-hours"/></Coding>
        <Coding guid="k8" creatingUser="u-b"><CodeRef targetGUID="c-health"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p8" startPosition="35" endPosition="45">
        <Coding guid="k7" creatingUser="u-b"><CodeRef targetGUID="c-work"/></Coding>
      </PlainTextSelection>
    </TextSource>"""
    xml = xml.replace("</TextSource>", extra, 1)
    p = make_qdpx(tmp_path, xml, entries={})
    c = read_codings([p], level="top")
    t = agreement_tables(c)["codes by transcript"].set_index(["scope", "code", "transcript"])
    # Ben's Work at top: 30-54 ∪ 35-45 = 24 characters; Anna's 33-39 ∪ 40-54 = 20
    assert (t.loc[("all", "Work", "amira"), "coded_a"], t.loc[("all", "Work", "amira"),
            "coded_b"]) == (20, 24)  # fmt: skip
    assert len(TEXT_A) == t.loc[("all", "Work", "amira"), "units"]


def test_per_code_unitizing_intervals_leave_one_transcript_out(tmp_path):
    from themesim.metrics.agreement.intercoder import jackknife_interval
    from themesim.metrics.agreement.unitizing import u_alpha_2004

    rng = np.random.default_rng(4)
    rows = {"a": [], "b": []}
    docs = []
    for t in range(4):
        text = "".join(chr(97 + i % 26) for i in range(60 + 10 * t))
        (tmp_path / f"t{t}.txt").write_text(text)
        per = []
        for coder in rows:
            a = int(rng.integers(0, 20))
            b = a + int(rng.integers(5, 30))
            rows[coder].append((f"t{t}", "X", text[a:b], a, b))
            per.append(np.array([[a, b]]))
        docs.append((len(text), per))
    files = [write(tmp_path, f"{k}.csv", v) for k, v in rows.items()]
    c = read_codings(files, [tmp_path / "t*.txt"])
    r = agreement_tables(c)["codes by transcript"].set_index(["scope", "code", "transcript"])
    r = r.loc[("all", "X", "(all)")]
    est = u_alpha_2004(docs)
    lo, hi = jackknife_interval(est, [u_alpha_2004(docs[:g] + docs[g + 1 :]) for g in range(4)])
    assert r["u_alpha_2004"] == pytest.approx(est)
    assert (r["u_alpha_2004_ci_low"], r["u_alpha_2004_ci_high"]) == pytest.approx((lo, min(hi, 1)))


def test_overall_unitizing_family_with_domains(tmp_path, tx):
    from themesim.metrics.agreement.unitizing import u_alpha_family

    a = write(tmp_path, "a.csv", [("t1", "Work/pay", TEXT[0:5], 0, 5),
                                  ("t1", "Work/hours", TEXT[6:10], 6, 10),
                                  ("t1", "Health\\sleep", TEXT[12:18], 12, 18)])  # fmt: skip
    b = write(tmp_path, "b.csv", [("t1", "Work/pay", TEXT[0:4], 0, 4),
                                  ("t1", "Work/hours", TEXT[4:10], 4, 10),
                                  ("t1", "Health\\sleep", TEXT[11:18], 11, 18)])  # fmt: skip
    c = read_codings([a, b], [tx])
    o = agreement_tables(c)["overall"].set_index("scope").loc["all"]
    iv = lambda *p: np.array(p).reshape(-1, 2)  # noqa: E731
    docs = [(20, [[iv((0, 5)), iv((6, 10)), iv((12, 18))], [iv((0, 4)), iv((4, 10)),
                                                            iv((11, 18))]])]  # fmt: skip
    want = u_alpha_family(docs, 3, domains=[1, 1, 0])
    for k in ("u_alpha", "u_alpha_binary", "cu_alpha", "cu_alpha_domains"):
        assert o[k] == pytest.approx(want[k]), k
    assert np.isfinite(o["cu_alpha_domains"]) and o["cu_alpha_domains"] == 1.0  # domains agree


def test_two_users_of_one_name_stay_apart(tmp_path):
    xml = TWO_CODERS.format(text=TEXT).replace('name="Ben"', 'name="Anna"')
    c = read_codings([make_qdpx(tmp_path, xml, entries={})])
    assert c.coders == ("Anna (u-a)", "Anna (u-b)")


VTT = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Anna>abcdefghijklmnopqrst\n"
JSON = '{"segments": [{"speaker": "Anna", "text": "abcdefghijklmnopqrst"}]}'


@pytest.mark.parametrize("name, content", [("t1.vtt", VTT), ("t1.json", JSON)])
def test_a_transcript_of_another_format_is_size_checked_before_reading(
    tmp_path, monkeypatch, name, content
):
    """Reading a .vtt, .srt or .json builds its segments first (about 12 bytes a byte of the
    file): over the limit it is refused in one line naming the file, its size, the memory and
    what to do, before it is read; under it, locating a passage without offsets in its text
    is checked the same way as a .txt's."""
    import themesim.io.codings_transcripts as tc

    (tmp_path / "tx").mkdir()
    f = tmp_path / "tx" / name
    f.write_text(content)
    size = f.stat().st_size
    a = write(tmp_path, "a.csv", [("t1", "X", "abcdefghij", "", "")])
    b = write(tmp_path, "b.csv", [("t1", "X", "abcdefghij", "", "")])
    assert read_codings([a, b], [f]).texts["t1"] == "Anna: abcdefghijklmnopqrst"
    monkeypatch.setattr(tc, "MAX_TRANSCRIPT_BYTES", 500)
    read = monkeypatch.setattr  # the file is never read: its reader is not reached
    read("themesim.io.transcripts.read_transcripts", lambda *a, **k: pytest.fail("read"))
    with pytest.raises(InputError) as e:
        read_codings([a, b], [f])
    msg = str(e.value)
    assert "\n" not in msg
    factor = tc.READ_BYTES_PER_BYTE[f.suffix]
    assert msg.startswith(
        f"{f}: is a {f.suffix} transcript of {size} bytes: reading it needs about "
        f"{factor * size} bytes of memory ({factor} bytes a byte), more than the 500 bytes "
        "agree lets one transcript take"
    )
    assert msg.endswith(
        "Split it into smaller transcripts, or export it as plain text (.txt, about 3 bytes "
        "a byte)."
    )
    # read, its text (26 characters) is too long to locate passages in at 80 bytes a character
    monkeypatch.undo()
    monkeypatch.setattr(tc, "MAX_TRANSCRIPT_BYTES", 1000)
    locate = (
        rf"a.csv, row 2: has no offsets, and locating it in transcript 't1' \(26 characters, "
        rf".*{name}\) needs about 2.0 KiB"
    )
    with pytest.raises(InputError, match=locate):
        read_codings([a, b], [f])


def test_a_200_mb_transcript_is_checked_by_its_format(tmp_path):
    """At the default limit (2 GiB) a 200 MB .vtt or .srt (12 bytes a byte: 2.3 GiB) is
    refused before reading; a .json (9: 1.8 GiB) and a .txt (3: 0.6 GiB) are read. Nothing
    is read here: the files are sparse."""
    import themesim.io.codings_transcripts as tc

    sizes = {}
    for suffix in (".txt", ".vtt", ".srt", ".json"):
        f = tmp_path / f"big{suffix}"
        with open(f, "wb") as h:
            h.truncate(200 << 20)
        try:
            tc.check_read_memory(f)
            sizes[suffix] = "read"
        except InputError as e:
            assert "\n" not in str(e) and "200.0 MiB" in str(e) and "2.3 GiB" in str(e)
            sizes[suffix] = "refused"
    assert sizes == {".txt": "read", ".vtt": "refused", ".srt": "refused", ".json": "read"}


def test_a_qdpx_is_size_checked_before_reading(tmp_path, monkeypatch):
    import themesim.io.codings_transcripts as tc

    p = make_qdpx(tmp_path, TWO_CODERS.format(text=TEXT), entries={})
    assert read_codings([p]).coders == ("Anna", "Ben")
    monkeypatch.setattr(tc, "MAX_TRANSCRIPT_BYTES", 1000)
    proc_msg = pytest.raises(InputError, read_codings, [p]).value
    assert str(proc_msg).startswith(f"{p}: is a project of ")
    assert "unpacking to" in str(proc_msg) and "(7 bytes a byte)" in str(proc_msg)


def test_a_coder_column_with_a_blank_coder_is_refused(tmp_path, tx):
    rows = [("anna", "t1", "X", TEXT[0:10], 0, 10), ("", "t1", "X", TEXT[5:15], 5, 15),
            ("ben", "t1", "X", TEXT[0:10], 0, 10)]  # fmt: skip
    p = write(tmp_path, "all.csv", rows, ("coder", "document", "code", "text", "start", "end"))
    one_line_error(
        themesim("agree", p, "--transcripts", tx),
        "all.csv, row 3: has no coder, though other rows of the coder column",
    )
    # a coder column left empty on every row: the file is one coder, named after it
    blank = [("", "t1", "X", TEXT[0:10], 0, 10)]
    p = write(tmp_path, "anna.csv", blank, ("coder", "document", "code", "text", "start", "end"))
    b = write(tmp_path, "ben.csv", [("t1", "X", TEXT[0:10], 0, 10)])
    assert read_codings([p, b], [tx]).coders == ("anna", "ben")
