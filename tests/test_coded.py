"""Coded segments: reading exports and mapping spans onto transcript segments."""

import logging

import pandas as pd
import pytest

from themesim.errors import InputError
from themesim.io.coded import coded_labels, read_coded_file
from themesim.io.spans import normalise, overlapping, segment_offsets, transcript_texts
from themesim.io.themes import read_theme_file
from themesim.io.transcripts import read_transcripts

TRANSCRIPT = (
    "Interviewer: How is work?\n"
    "Amira: Badly. I cut my hours.\n"
    "\n"
    "Interviewer: And sleep?\n"
    "Amira: I never sleep   through.\n"
)
THEMES = pd.DataFrame({"theme_id": ["H01", "H02"], "name": ["Work", "Own health"]})


@pytest.fixture
def study(tmp_path):
    p = tmp_path / "amira.txt"
    p.write_text(TRANSCRIPT, encoding="utf-8")
    seg = read_transcripts([p])
    texts = transcript_texts(seg, [p])
    return seg, texts, segment_offsets(seg, texts)


def test_segment_offsets_are_the_speaker_turns(study):
    _seg, texts, offsets = study
    # "Interviewer: How is work?\n" = 26 chars; "Amira: Badly. I cut my hours.\n\n" = 31;
    # "Interviewer: And sleep?\n" = 24; "Amira: I never sleep   through.\n" = 32, to the end (113).
    assert offsets["char_start"].tolist() == [0, 26, 57, 81]
    assert offsets["char_end"].tolist() == [26, 57, 81, 113]
    assert len(texts["amira"]) == 113
    assert texts["amira"][26:31] == "Amira"


def test_normalise_maps_back_to_original_characters():
    text, index = normalise("A  \u201cQuote\u201d\n here")
    assert text == 'a "quote" here'
    assert index == [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]


def _write(tmp_path, text, name="coded.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_coded_spans_map_to_every_overlapped_segment(tmp_path, study):
    _seg, texts, offsets = study
    p = _write(
        tmp_path,
        "Document,Code,Segment,Begin,End,Coder\n"
        "amira,Work,I cut my hours,40,54,ann\n"  # inside segment 1
        "amira.txt,H02,i never SLEEP through,,,ann\n"  # located by text: segment 3
        'amira,h02,"hours.\n\nInterviewer: And sleep",49,79,bob\n',  # spans segments 1 and 2
    )
    coded = read_coded_file(p, THEMES)
    assert coded["theme_id"].tolist() == ["H01", "H02", "H02"]
    assert coded["row"].tolist() == [2, 3, 4]
    labels = coded_labels(coded, texts, offsets, str(p))
    assert list(labels.itertuples(index=False, name=None)) == [
        ("amira", 1, "H01", "coded"),
        ("amira", 1, "H02", "coded"),
        ("amira", 2, "H02", "coded"),
        ("amira", 3, "H02", "coded"),
    ]


def test_coded_xlsx(tmp_path, study):
    import openpyxl

    _seg, texts, offsets = study
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["document", "theme", "text"])
    ws.append(["amira", "Work", "Badly."])
    p = tmp_path / "coded.xlsx"
    wb.save(p)
    labels = coded_labels(read_coded_file(p, THEMES), texts, offsets, str(p))
    assert labels[["segment", "theme_id"]].values.tolist() == [[1, "H01"]]


@pytest.mark.parametrize(
    "row, message",
    [
        ("amira,Money,Badly.,,", "row 2: theme 'Money' is not in the theme set"),
        ("bob,Work,Badly.,,", "row 2: document 'bob' is not a transcript of the study"),
        ("amira,Work,Badly.,100,200", "row 2: offsets 100-200 lie outside transcript 'amira'"),
        ("amira,Work,Badly.,0,10", "row 2: text 'Badly.' is not at offsets 0-10"),
        ("amira,Work,Nicely.,,", "row 2: text 'Nicely.' is not found in transcript 'amira'"),
        ("amira,Work,Badly.,5,", "row 2: has only one of start and end"),
        ("amira,Work,Badly.,x,9", "row 2: start is 'x', not a character offset"),
        # issue 34: inf, 1e400 and NaN were an OverflowError traceback (int(float("inf")))
        ("amira,Work,Badly.,inf,39", "row 2: start is 'inf', not a character offset"),
        ("amira,Work,Badly.,33,1e400", "row 2: end is '1e400', not a character offset"),
        ("amira,Work,Badly.,NaN,39", "row 2: start is 'NaN', not a character offset"),
        ("amira,Work,Badly.,-inf,39", "row 2: start is '-inf', not a character offset"),
        # offsets must select the text, not a passage that contains it or lies within it
        ("amira,Work,Badly.,26,57", "row 2: text 'Badly.' is not at offsets 26-57"),
        ("amira,Work,Badly. I cut my hours.,33,34", "row 2: text 'Badly. I cut my hours.' is not"),
    ],
)
def test_bad_coded_rows_name_file_and_row(tmp_path, study, row, message):
    _seg, texts, offsets = study
    p = _write(tmp_path, "document,theme,text,start,end\n" + row + "\n")
    with pytest.raises(InputError) as e:
        coded_labels(read_coded_file(p, THEMES), texts, offsets, str(p))
    assert str(e.value).startswith(f"{p}, {message}")
    assert "\n" not in str(e.value)


def test_offsets_select_the_text_after_whitespace_normalisation(tmp_path, study):
    _seg, texts, offsets = study
    start = texts["amira"].index("I never")
    end = start + len("I never sleep   through.")
    # the export collapsed the three spaces and broke a line; quotes, case and a lost space too
    p = _write(
        tmp_path,
        "document,theme,text,start,end\n"
        f'amira,H02,"i never sleep\nthrough.",{start},{end}\n'
        "amira,Work,Icut my hours,40,54\n",
    )
    got = coded_labels(read_coded_file(p, THEMES), texts, offsets, str(p))
    assert got[["segment", "theme_id"]].values.tolist() == [[1, "H01"], [3, "H02"]]


def test_repeated_text_without_offsets_is_labelled_at_its_first_occurrence_with_a_warning(
    tmp_path, study, caplog
):
    """Regression (issue 24.9): "Amira:" heads segments 1 and 3; without offsets the row was
    labelled at the first silently. The rule (first occurrence) stays; the warning names the
    row, the transcript and every occurrence, and offsets pick another."""
    _seg, texts, offsets = study
    p = _write(
        tmp_path,
        "document,theme,text,start,end\n"
        "amira,Work,Amira:,,\n"  # at 26 and at 81
        "amira,Own health,Amira:,81,87\n"  # with offsets: the second, no warning
        "amira,Own health,I never sleep through,,\n",  # once only: no warning
    )
    with caplog.at_level(logging.WARNING, logger="themesim"):
        labels = coded_labels(read_coded_file(p, THEMES), texts, offsets, str(p))
    assert labels[["segment", "theme_id"]].values.tolist() == [[1, "H01"], [3, "H02"]]
    warned = [r.getMessage() for r in caplog.records]
    assert warned == [
        f"{p}, row 2: text 'Amira:' occurs 2 times in transcript 'amira' (characters 26-32, "
        "81-87); labelled at the first only. Give start and end to label another occurrence."
    ]


def test_missing_column(tmp_path):
    p = _write(tmp_path, "document,text\namira,x\n")
    with pytest.raises(InputError, match="no theme column"):
        read_coded_file(p, THEMES)


def test_theme_file_export_columns_parent_kept_others_warned(tmp_path, caplog):
    p = tmp_path / "t.csv"
    p.write_text(
        "name,description,parent,colour,frequency\n"
        "Work,Jobs,,#ff0000,12\n"
        "Shifts,Shift work,Work,#00ff00,3\n"
    )
    with caplog.at_level(logging.WARNING):
        df = read_theme_file(p)
    assert df["name"].tolist() == ["Work", "Shifts"]
    msgs = " ".join(r.getMessage() for r in caplog.records)
    assert (
        "'colour' is not a theme field" in msgs and "'frequency'" in msgs and "parent" not in msgs
    )


def test_overlapping_by_hand_and_from_its_cache():
    """Segments 0-9, 10-19, 20-29 of t and 0-4 of u: a passage 5-21 of t overlaps t's first
    three, an end is exclusive, and a cache filled by one transcript answers for it alone."""
    offsets = pd.DataFrame(
        {
            "transcript": ["t", "t", "t", "u"],
            "segment": [0, 1, 2, 0],
            "char_start": [0, 10, 20, 0],
            "char_end": [10, 20, 30, 5],
        }
    )
    spans: dict = {}
    assert overlapping(offsets, "t", 5, 21, spans) == [0, 1, 2]
    assert overlapping(offsets, "t", 10, 20, spans) == [1]
    assert list(spans) == ["t"]  # u not filtered yet
    assert overlapping(offsets, "u", 3, 4, spans) == [0] == overlapping(offsets, "u", 3, 4)
    assert overlapping(offsets, "t", 30, 31, spans) == []


def test_check_selects_words_each_readers_problem_and_the_crlf_fix():
    """io/spans.check_selects, shared by coded.py and codings_transcripts.py: a miss in the
    reader's own words with its fix, offsets counted with CRLF with that note and fix."""
    from themesim.io.spans import CRLF_FIX, check_selects

    full = "Ann: hello\nBob: more words here\n"
    says = "offsets {start}-{end} select {found!r} in {doc!r}, not the text {text!r}"
    start = full.index("more words")
    check_selects(full, "t1", start, start + 10, "f.csv, row 2", "MORE  words", says, "Fix.")
    with pytest.raises(InputError) as e:
        check_selects(full, "t1", 0, 3, "f.csv, row 2", "more words", says, "Fix.")
    assert str(e.value) == (
        "f.csv, row 2: offsets 0-3 select 'Ann' in 't1', not the text 'more words'. Fix."
    )
    crlf = full.replace("\n", "\r\n").index("more words")
    with pytest.raises(InputError) as e:
        check_selects(full, "t1", crlf, crlf + 10, "f.csv, row 2", "more words", says, "Fix.")
    assert e.value.problem == (
        "offsets 17-27 select 'ore words' in 't1', not the text 'more words'; counted with each "
        "line ending as two characters (CRLF, Windows) they select it: the offsets may have "
        "been counted with CRLF line endings"
    )
    assert e.value.fix == CRLF_FIX
