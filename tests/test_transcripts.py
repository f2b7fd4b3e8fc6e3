"""Transcript readers: every format, the segment table, and every input error."""

import json
import math
import re

import docx
import pandas as pd
import pytest

from themesim.errors import InputError
from themesim.io.transcripts import (
    read_segments_parquet,
    read_transcript,
    read_transcripts,
    segment_columns,
    write_segments_parquet,
)


def write(tmp_path, name, content, encoding="utf-8"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding=encoding, newline="")
    return path


def at(path, location=""):
    """Regex for an error message that starts with the file (and location)."""
    return re.escape(f"{path}, {location}" if location else f"{path}:")


def rows(df, *cols):
    return [tuple(r) for r in df[list(cols)].itertuples(index=False)]


def times(df):
    return [
        (None if math.isnan(s) else s, None if math.isnan(e) else e)
        for s, e in rows(df, "start", "end")
    ]


# ---------------------------------------------------------------- .txt


def test_txt_turns(tmp_path):
    text = (
        "Interview 4, recorded at 10:30\n"
        "Interviewer: How was the clinic?\n"
        "P1: Busy, honestly.\n"
        "(laughs) It took hours.\n"
        "\n"
        "Participant 3: I agree: too long.\n"
        "Dr. O’Neil: Noted.\n"
        "Émilie: Merci.\n"
        "Dr. O’Neil: Thanks.\n"
        "Émilie: De rien.\n"
    )
    df = read_transcript(write(tmp_path, "int04.txt", text))
    assert list(df.columns) == segment_columns()
    assert segment_columns() == ["transcript", "segment", "speaker", "text", "start", "end"]
    assert rows(df, "transcript", "segment", "speaker", "text") == [
        ("int04", 0, "", "Interview 4, recorded at 10:30"),
        ("int04", 1, "Interviewer", "How was the clinic?"),
        ("int04", 2, "P1", "Busy, honestly. (laughs) It took hours."),
        ("int04", 3, "Participant 3", "I agree: too long."),
        ("int04", 4, "Dr. O’Neil", "Noted."),
        ("int04", 5, "Émilie", "Merci."),
        ("int04", 6, "Dr. O’Neil", "Thanks."),
        ("int04", 7, "Émilie", "De rien."),
    ]
    assert df["start"].isna().all() and df["end"].isna().all()
    assert df["segment"].dtype == "int64" and df["start"].dtype == "float64"


def test_speakers_are_short_name_like_and_repeated(tmp_path):
    # Regression (issue 15): any text before ': ' used to become a "speaker" and reach the report.
    text = (
        "Interviewer: Tell me about your family.\n"
        "My neighbour is HIV positive: he told me\n"
        "Sam: My sister lives with us.\n"
        "Our landlord: never fixes anything\n"
        "the nurse said: rest more\n"
        "Interviewer: And work?\n"
        "Sam: Part time now.\n"
    )
    df = read_transcript(write(tmp_path, "t.txt", text))
    assert rows(df, "speaker", "text") == [
        (
            "Interviewer",
            "Tell me about your family. My neighbour is HIV positive: he told me",
        ),
        (
            "Sam",
            "My sister lives with us. Our landlord: never fixes anything the nurse said: rest more",
        ),
        ("Interviewer", "And work?"),
        ("Sam", "Part time now."),
    ]
    assert set(df["speaker"]) == {"Interviewer", "Sam"}


def test_speaker_shape_limits(tmp_path):
    # Five words or a lower-case start are text; a role label counts even when it speaks once.
    text = "Ann Bea Cy Di Ed: one\nAnn Bea Cy Di Ed: two\nbob: three\nbob: four\nP7: five\n"
    df = read_transcript(write(tmp_path, "t.txt", text))
    assert rows(df, "speaker", "text") == [
        ("", "Ann Bea Cy Di Ed: one Ann Bea Cy Di Ed: two bob: three bob: four"),
        ("P7", "five"),
    ]


def test_txt_bom_and_crlf(tmp_path):
    path = write(tmp_path, "a.txt", "\ufeffA: one\r\ntwo\r\nBo: three\r\nBo: four\r\n")
    df = read_transcript(path)
    assert rows(df, "speaker", "text") == [("A", "one two"), ("Bo", "three"), ("Bo", "four")]


def test_txt_latin1(tmp_path):
    path = write(tmp_path, "a.txt", b"P1: caf\xe9\n")
    with pytest.raises(InputError, match=at(path) + " file is not UTF-8.*offset 7.*UTF-8"):
        read_transcript(path)


# ---------------------------------------------------------------- .vtt


def test_vtt(tmp_path):
    text = (
        "WEBVTT - interview 2\n"
        "\n"
        "NOTE recorded on zoom\n"
        "and transcribed\n"
        "\n"
        "STYLE\n"
        "::cue { color: red }\n"
        "\n"
        "intro-1\n"
        "00:00:01.000 --> 00:00:04.500 align:start\n"
        "<v.loud Dr. Smith>Hello <b>there</b>,\n"
        "how are you &amp; yours?</v>\n"
        "\n"
        "01:02.250 --> 01:03.000\n"
        "P2: Fine, thanks\n"
        "\n"
        "2\n"
        "01:00:00.000 --> 01:00:01.000\n"
        "<c.yellow>no speaker here</c>\n"
    )
    df = read_transcript(write(tmp_path, "int02.vtt", text))
    assert rows(df, "segment", "speaker", "text") == [
        (0, "Dr. Smith", "Hello there, how are you & yours?"),
        (1, "P2", "Fine, thanks"),
        (2, "", "no speaker here"),
    ]
    assert times(df) == [(1.0, 4.5), (62.25, 63.0), (3600.0, 3601.0)]


def test_vtt_requires_header(tmp_path):
    path = write(tmp_path, "a.vtt", "00:00:01.000 --> 00:00:02.000\nhi\n")
    with pytest.raises(InputError, match=at(path, "line 1") + ": missing the 'WEBVTT' header"):
        read_transcript(path)


def test_vtt_cue_glued_to_header(tmp_path):
    path = write(tmp_path, "a.vtt", "WEBVTT\n00:00:01.000 --> 00:00:02.000\nhi\n")
    with pytest.raises(InputError, match=at(path, "line 2") + ": a cue follows the WEBVTT header"):
        read_transcript(path)


@pytest.mark.parametrize(
    "timing", ["00:00:01,000 --> 00:00:02.000", "00:00:01.00 --> 00:00:02.000", "1 --> 2"]
)
def test_vtt_malformed_timestamp(tmp_path, timing):
    path = write(
        tmp_path, "a.vtt", f"WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nok\n\n{timing}\nhi\n"
    )
    with pytest.raises(InputError, match=at(path, "line 6") + ": malformed timestamp"):
        read_transcript(path)


def test_vtt_block_without_timing(tmp_path):
    path = write(tmp_path, "a.vtt", "WEBVTT\n\n1\nhello\nthere\n")
    with pytest.raises(InputError, match=at(path, "line 4") + ": expected a cue timing line"):
        read_transcript(path)


def test_vtt_end_before_start(tmp_path):
    path = write(tmp_path, "a.vtt", "WEBVTT\n\n00:00:05.000 --> 00:00:02.000\nhi\n")
    with pytest.raises(InputError, match=at(path, "line 3") + ": cue ends .* before it starts"):
        read_transcript(path)


# ---------------------------------------------------------------- .srt


def test_srt(tmp_path):
    text = (
        "1\r\n00:00:01,000 --> 00:00:02,500\r\nAnna: Hi <i>you</i>\r\nover there\r\n\r\n"
        "2\r\n00:01:02,250 --> 00:01:03,000\r\n{\\an8}Bye\r\n\r\n"
        "3\r\n00:01:04,000 --> 00:01:05,000\r\nAnna: See you\r\n"
    )
    df = read_transcript(write(tmp_path, "s1.srt", text))
    assert rows(df, "transcript", "segment", "speaker", "text") == [
        ("s1", 0, "Anna", "Hi you over there"),
        ("s1", 1, "", "Bye"),
        ("s1", 2, "Anna", "See you"),
    ]
    assert times(df) == [(1.0, 2.5), (62.25, 63.0), (64.0, 65.0)]


def test_srt_malformed_timestamp(tmp_path):
    path = write(
        tmp_path, "a.srt", "1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:61,000 --> x\nB\n"
    )
    with pytest.raises(
        InputError, match=at(path, "line 6") + ": malformed timestamp '00:00:61,000'"
    ):
        read_transcript(path)


def test_srt_missing_timing(tmp_path):
    path = write(tmp_path, "a.srt", "1\nno timing here\n")
    with pytest.raises(InputError, match=at(path, "line 2") + ": expected a cue timing line"):
        read_transcript(path)


# ---------------------------------------------------------------- .docx


def test_docx(tmp_path):
    document = docx.Document()
    for text in ["Interviewer: How was it?", "", "P1: Good.", "Really good.", "   "]:
        document.add_paragraph(text)
    path = tmp_path / "int05.docx"
    document.save(str(path))
    df = read_transcript(path)
    assert rows(df, "transcript", "segment", "speaker", "text") == [
        ("int05", 0, "Interviewer", "How was it?"),
        ("int05", 1, "P1", "Good. Really good."),
    ]


def test_docx_only_table(tmp_path):
    document = docx.Document()
    document.add_table(rows=1, cols=2).cell(0, 0).text = "P1"
    path = tmp_path / "t.docx"
    document.save(str(path))
    with pytest.raises(InputError, match=at(path) + " transcript has no segments.*table"):
        read_transcript(path)


def test_a_docx_that_unpacks_too_large_is_refused_unread(tmp_path, monkeypatch):
    """Regression (issue 24.8): a 1.7 MB .docx holding a 600 MB word/document.xml took
    5.1 GB. The declared sizes are checked first; python-docx never opens such a file."""
    import zipfile

    from themesim.io import transcripts

    document = docx.Document()
    document.add_paragraph("P1: Fine.")
    small = tmp_path / "small.docx"
    document.save(str(small))
    path = tmp_path / "bomb.docx"
    with zipfile.ZipFile(small) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":  # valid XML, 3 MB of blanks
                data = data.replace(b"<w:body>", b"<w:body>" + b" " * (3 << 20), 1)
            dst.writestr(info.filename, data)
    assert path.stat().st_size < 100_000
    assert read_transcript(path)["text"].tolist() == ["Fine."]  # within the default limit
    monkeypatch.setattr(transcripts, "MAX_DOCX_UNPACKED", 2 << 20)
    monkeypatch.setattr(docx, "Document", lambda *a: pytest.fail("the document was opened"))
    with pytest.raises(
        InputError,
        match=at(path) + r" unpacks to 3\.\d MB \(word/document.xml: 3\.0 MB\), more than the 2 MB",
    ):
        read_transcript(path)


def test_corrupt_docx(tmp_path):
    path = write(tmp_path, "bad.docx", b"PK\x03\x04 this is not really a zip")
    with pytest.raises(InputError, match=at(path) + " is not a readable Word .docx file"):
        read_transcript(path)


# ---------------------------------------------------------------- .json


def test_json_list_and_segments_key(tmp_path):
    data = [
        {"speaker": "A", "text": " hi ", "start": 1, "end": 2.5},
        {"text": "no times", "speaker": None},
        {"text": "   "},
        {"text": "start only", "start": 3},
    ]
    df = read_transcript(write(tmp_path, "j.json", json.dumps(data)))
    assert rows(df, "segment", "speaker", "text") == [
        (0, "A", "hi"),
        (1, "", "no times"),
        (2, "", "start only"),
    ]
    assert times(df) == [(1.0, 2.5), (None, None), (3.0, None)]
    wrapped = read_transcript(write(tmp_path, "k.json", json.dumps({"segments": data})))
    assert wrapped["text"].tolist() == df["text"].tolist()


@pytest.mark.parametrize(
    ("segment", "problem"),
    [
        ({"text": "x", "confidence": 0.9, "words": []}, "unknown keys 'confidence', 'words'"),
        ({"speaker": "A"}, "has no text"),
        ({"text": 5}, "text is 5, not text"),
        ({"text": "x", "speaker": 3}, "speaker is 3, not text"),
        ({"text": "x", "start": "00:01"}, "start is '00:01', not a number of seconds"),
        ({"text": "x", "start": -1}, "start is -1.0"),
        ({"text": "x", "start": 5, "end": 2}, r"ends \(2.0\) before it starts \(5.0\)"),
        ("just text", "is not an object"),
    ],
)
def test_json_segment_errors(tmp_path, segment, problem):
    path = write(tmp_path, "j.json", json.dumps([{"text": "fine"}, segment]))
    with pytest.raises(InputError, match=at(path, "segment 2") + ": " + problem):
        read_transcript(path)


def test_json_top_level_errors(tmp_path):
    path = write(tmp_path, "j.json", json.dumps({"segments": [], "language": "en"}))
    with pytest.raises(InputError, match=at(path) + " top-level object .*found 'language'"):
        read_transcript(path)
    path = write(tmp_path, "k.json", '[{"text": "a"},\n {"text": }]')
    with pytest.raises(InputError, match=at(path, "line 2, column 11") + ": invalid JSON"):
        read_transcript(path)


# ---------------------------------------------------------------- file errors


@pytest.mark.parametrize(
    ("name", "content"),
    [("e.txt", "\n  \n"), ("e.vtt", "WEBVTT\n\nNOTE nothing\n"), ("e.srt", ""), ("e.json", "[]")],
)
def test_empty_transcript(tmp_path, name, content):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError, match=at(path) + " transcript has no segments"):
        read_transcript(path)


def test_unsupported_extension(tmp_path):
    path = write(tmp_path, "a.doc", "x")
    with pytest.raises(InputError, match=at(path) + r" unsupported transcript file type '\.doc'"):
        read_transcript(path)


def test_missing_file_and_directory(tmp_path):
    path = tmp_path / "gone.txt"
    with pytest.raises(InputError, match=at(path) + " file not found"):
        read_transcript(path)
    folder = tmp_path / "dir.docx"
    folder.mkdir()
    with pytest.raises(InputError, match=at(folder) + " is a directory"):
        read_transcript(folder)


# ---------------------------------------------------------------- several files, parquet


def test_read_transcripts_sorted(tmp_path):
    b = write(tmp_path, "b.txt", "A: one\nP2: two\n")
    a = write(tmp_path, "a.srt", "1\n00:00:01,000 --> 00:00:02,000\nR: zed\n")
    df = read_transcripts([b, a])
    assert rows(df, "transcript", "segment", "speaker", "text") == [
        ("a", 0, "R", "zed"),
        ("b", 0, "A", "one"),
        ("b", 1, "P2", "two"),
    ]
    assert list(df.index) == [0, 1, 2]


def test_read_transcripts_errors(tmp_path):
    first = write(tmp_path, "int1.txt", "A: x\n")
    second = write(tmp_path, "int1.json", '[{"text": "y"}]')
    with pytest.raises(InputError, match=at(second) + " has the same name 'int1'"):
        read_transcripts([first, second])
    with pytest.raises(InputError, match="no transcript files given"):
        read_transcripts([])


def test_parquet_round_trip(tmp_path):
    vtt = write(tmp_path, "v.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nA: hi\n")
    txt = write(tmp_path, "t.txt", "B: there\n")
    df = read_transcripts([vtt, txt])
    out1, out2 = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_segments_parquet(df, out1)
    write_segments_parquet(df, out2)
    assert out1.read_bytes() == out2.read_bytes()
    back = read_segments_parquet(out1)
    pd.testing.assert_frame_equal(back, df)


def test_parquet_empty_table(tmp_path):
    empty = pd.DataFrame({c: [] for c in segment_columns()})
    write_segments_parquet(empty, tmp_path / "e.parquet")
    back = read_segments_parquet(tmp_path / "e.parquet")
    assert list(back.columns) == segment_columns() and len(back) == 0
