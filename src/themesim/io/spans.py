"""Character spans in transcripts: each transcript's plain text, its segments' offsets in that
text, a normalised search, and the segments a span overlaps.

A transcript's plain text is the file's own text for `.txt` (what CAQDAS tools count offsets
in); for other formats it is the segments written out as `Speaker: text` lines.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import pandas as pd

from themesim.errors import InputError
from themesim.io.inputs import read_text_file

# Typographic quotes and dashes that exports and LLMs swap freely.
_CHAR_MAP = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
    }
)
SPAN_COLUMNS = ["transcript", "segment", "char_start", "char_end"]


def normalise(text: str) -> tuple[str, list[int]]:
    """Text with whitespace runs collapsed, lower case and plain quotes, and for each of its
    characters the index of the original character it came from."""
    out: list[str] = []
    index: list[int] = []
    space = True  # drops leading whitespace
    for i, ch in enumerate(text):
        if ch.isspace() or ch == "\u00a0":
            if not space:
                out.append(" ")
                index.append(i)
            space = True
            continue
        space = False
        for c in ch.translate(_CHAR_MAP).lower():
            out.append(c)
            index.append(i)
    if out and out[-1] == " ":
        out.pop()
        index.pop()
    return "".join(out), index


def norm(text: str) -> str:
    return normalise(text)[0]


def find_normalised(needle: str, text: str, start: int = 0) -> tuple[int, int] | None:
    """(start, end) in `text` of the first match of `needle` at or after `start`, comparing
    after `normalise`; None when absent or when `needle` normalises to nothing."""
    hay, index = normalise(text)
    return find_in(norm(needle), hay, index, start)


def find_in(n: str, hay: str, index: list[int], start: int) -> tuple[int, int] | None:
    if not n:
        return None
    pos = bisect.bisect_left(index, start)
    k = hay.find(n, pos)
    if k < 0:
        return None
    return index[k], index[k + len(n) - 1] + 1


def rendered_text(segments: pd.DataFrame) -> str:
    """One transcript's segments as `Speaker: text` lines."""
    lines = [
        f"{s}: {t}" if s else t for s, t in zip(segments["speaker"], segments["text"], strict=True)
    ]
    return "\n".join(lines)


def transcript_texts(segments: pd.DataFrame, paths=()) -> dict[str, str]:
    """Plain text per transcript: the file's text for a `.txt` among `paths`, else rendered."""
    files = {Path(p).stem: Path(p) for p in paths}
    texts = {}
    for name, seg in segments.groupby("transcript", sort=True):
        p = files.get(name)
        if p is not None and p.suffix.lower() == ".txt":
            texts[name] = read_text_file(p).replace("\r\n", "\n").replace("\r", "\n")
        else:
            texts[name] = rendered_text(seg)
    return texts


def segment_offsets(segments: pd.DataFrame, texts: dict[str, str]) -> pd.DataFrame:
    """transcript, segment, char_start, char_end: each segment's span in its plain text.

    A segment starts where its speaker label starts (or its words when it has none) and runs
    to the start of the next segment, so every character belongs to one segment. A segment
    not found in the file's text (after normalising) falls back to the rendered text.
    """
    rows = []
    for name, seg in segments.groupby("transcript", sort=True):
        seg = seg.sort_values("segment")
        text = texts[name]
        starts = _starts(seg, text)
        if starts is None:
            text = texts[name] = rendered_text(seg)
            starts = _starts(seg, text)
        ends = starts[1:] + [len(text)]
        for s, a, b in zip(seg["segment"], starts, ends, strict=True):
            rows.append((name, int(s), a, b))
    return pd.DataFrame(rows, columns=SPAN_COLUMNS).astype(
        {"segment": "int64", "char_start": "int64", "char_end": "int64"}
    )


def _starts(seg: pd.DataFrame, text: str) -> list[int] | None:
    hay, index = normalise(text)
    starts = []
    cursor = 0
    for speaker, words in zip(seg["speaker"], seg["text"], strict=True):
        head = f"{speaker}:" if speaker else words
        hit = find_in(norm(head), hay, index, cursor)
        if hit is None:
            return None
        body = find_in(norm(words), hay, index, hit[1] if speaker else hit[0])
        if body is None:
            return None
        starts.append(hit[0])
        cursor = body[1]
    if starts:
        starts[0] = 0
    return starts


def overlapping(
    offsets: pd.DataFrame, transcript: str, start: int, end: int, spans: dict | None = None
) -> list[int]:
    """Segments of `transcript` whose span overlaps [start, end). spans: a cache for the
    caller's loop (transcript -> its rows' char_start, char_end and segment): the table is
    filtered once per transcript, not once per passage (a study's coding holds thousands)."""
    spans = {} if spans is None else spans
    if transcript not in spans:
        o = offsets[offsets["transcript"] == transcript]
        spans[transcript] = tuple(o[c].to_numpy() for c in ("char_start", "char_end", "segment"))
    a, b, segment = spans[transcript]
    return [int(s) for s in segment[(a < end) & (b > start)]]


def squash(text: str) -> str:
    """norm() with every space dropped: a passage that lost or gained a space (an export's
    line break) still matches its offsets."""
    return norm(text).replace(" ", "")


def short(text: str, n: int = 40) -> str:
    """A passage for a one-line message: whitespace collapsed, cut at n characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


CRLF_FIX = (
    "Re-export the offsets counting each line ending as one character (as the transcript is "
    "read), or leave start and end empty to locate the text."
)


def counted_with_crlf(full: str, text: str, start: int, end: int) -> bool:
    """Whether offsets start-end select `text` once every line ending of `full` counts two
    characters (CRLF, as Windows stores them): offsets counted on a CRLF copy of a
    transcript, which is read with one character a line ending."""
    if "\n" not in full[: max(end, 0)]:
        return False
    crlf = full[: 2 * end].replace("\n", "\r\n")
    return end <= len(crlf) and bool(squash(text)) and squash(crlf[start:end]) == squash(text)


def crlf_note(full: str, text, start: int, end: int) -> str:
    """'; counted with CRLF line endings they select it …' where that explains offsets that
    miss `text`, else ''."""
    if text is None or not counted_with_crlf(full, str(text), start, end):
        return ""
    return (
        "; counted with each line ending as two characters (CRLF, Windows) they select it: "
        "the offsets may have been counted with CRLF line endings"
    )


def check_inside(full: str, doc: str, start: int, end: int, at: str, text=None) -> None:
    """Refuse offsets that end past the transcript's text (one line naming `at`; `text`, the
    passage, tells offsets counted with CRLF line endings)."""
    if end > len(full):
        note = crlf_note(full, text, start, end)
        raise InputError(
            at,
            f"offsets {start}-{end} lie outside transcript {doc!r} ({len(full)} characters)" + note,
            CRLF_FIX
            if note
            else "Offsets count characters of the transcript's text from 0; re-export them "
            "for this transcript, or leave start and end empty.",
        )


def check_selects(full: str, doc: str, start: int, end: int, at: str, text, says, fix) -> None:
    """check_inside, then refuse offsets that do not select `text` itself (compared with
    whitespace, case and typographic quotes ignored), not a passage that merely contains it or
    lies within it. The one line names `at`; `says` words the problem from `text`, `doc`,
    `start`, `end` and `found` (what the offsets select; passages shortened), and `fix` is what
    to do, unless the offsets were counted with CRLF line endings (then CRLF_FIX)."""
    check_inside(full, doc, start, end, at, text)
    if squash(full[start:end]) != squash(text):
        note = crlf_note(full, text, start, end)
        found = short(full[start:end])
        problem = says.format(text=short(text), doc=doc, start=start, end=end, found=found)
        raise InputError(at, problem + note, CRLF_FIX if note else fix)
