"""Read interview transcripts (.txt, .vtt, .srt, .docx, .json) into speaker segments."""

from __future__ import annotations

import html
import math
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

import docx
import pandas as pd

from themesim.errors import InputError
from themesim.io.inputs import (
    check_input_file,
    parse_json,
    read_text_file,
    split_lines,
)
from themesim.io.segments import (  # noqa: F401 (moved there)
    SEGMENT_COLUMNS,
    read_segments_parquet,
    segment_columns,
    write_segments_parquet,
)

TRANSCRIPT_SUFFIXES = (".txt", ".vtt", ".srt", ".docx", ".json")
_JSON_KEYS = ("speaker", "text", "start", "end")
NAN = float("nan")

# "Interviewer: ...", "P1: ...", "Participant 3: ...". The first character may be any
# letter (not only A-Z) so names such as "Émilie:" are speakers too.
_SPEAKER_LINE = re.compile(r"([^\W\d_][\w .'’-]{0,40}?):\s+(.+)")
# Role labels count as speakers even when they speak once; any other name must lead at least
# MIN_TURNS lines, so a sentence with a colon ("My neighbour ...: he told me") stays text.
_ROLE_LABEL = re.compile(
    r"(?:interviewer|interviewee|participant|respondent|moderator|facilitator|speaker"
    r"|researcher|[PRIQA])(?:[ .-]?\d{1,3})?",
    re.IGNORECASE,
)
MAX_SPEAKER_WORDS = 4
MAX_SPEAKER_CHARS = 40
MIN_TURNS = 2
_TIMING = re.compile(r"(\S+)[ \t]+-->[ \t]+(\S+)(?:[ \t].*)?")
_VTT_TIME = re.compile(r"(?:(\d+):)?([0-5]\d):([0-5]\d)\.(\d{3})")
_SRT_TIME = re.compile(r"(?:(\d+):)?([0-5]\d):([0-5]\d)[,.](\d{3})")
_VOICE = re.compile(r"<v(?:\.[^\s>]*)?[ \t]+([^>]+)>")
_TAG = re.compile(r"<[^>]*>|\{\\[^}]*\}")

_Segment = tuple[str, str, float, float]  # speaker, text, start, end


def _candidate(text: str) -> tuple[str, str] | None:
    """(label, rest) when `text` looks like 'Label: words' with a short, name-like label."""
    m = _SPEAKER_LINE.fullmatch(text)
    if not m:
        return None
    label = " ".join(m.group(1).split())
    if len(label) > MAX_SPEAKER_CHARS or len(label.split()) > MAX_SPEAKER_WORDS:
        return None
    if not (label[0].isupper() or _ROLE_LABEL.fullmatch(label)):
        return None
    return label, m.group(2).strip()


def _speakers(texts: Iterable[str]) -> set[str]:
    """Labels that are speakers in this transcript: role labels, or names leading >= 2 lines."""
    counts: dict[str, int] = {}
    for text in texts:
        if c := _candidate(text):
            counts[c[0]] = counts.get(c[0], 0) + 1
    return {s for s, n in counts.items() if n >= MIN_TURNS or _ROLE_LABEL.fullmatch(s)}


def _split_speaker(text: str, speakers: set[str]) -> tuple[str, str]:
    c = _candidate(text)
    if c and c[0] in speakers:
        return c
    return "", text


def _text_segments(lines: Iterable[str]) -> list[_Segment]:
    lines = [line.strip() for line in lines]
    speakers = _speakers(lines)
    turns: list[tuple[str, list[str]]] = []
    for text in lines:
        if not text:
            continue
        speaker, words = _split_speaker(text, speakers)
        if speaker:
            turns.append((speaker, [words]))
        elif turns:
            turns[-1][1].append(text)
        else:
            turns.append(("", [text]))
    return [(speaker, " ".join(parts), NAN, NAN) for speaker, parts in turns]


def _blocks(lines: list[str]) -> list[list[tuple[int, str]]]:
    """Runs of non-blank lines, each line with its 1-based number."""
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for n, line in enumerate(lines, start=1):
        if line.strip():
            current.append((n, line.strip()))
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _seconds(token: str, pattern: re.Pattern, where: str, example: str) -> float:
    m = pattern.fullmatch(token)
    if not m:
        raise InputError(
            where,
            f"malformed timestamp {token!r}",
            f"Write times as HH:MM:SS{example[8]}mmm (hours optional), e.g. {example}.",
        )
    hours, minutes, seconds, millis = m.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


def _cues(
    blocks: list[list[tuple[int, str]]], where: str, pattern: re.Pattern, example: str
) -> list[tuple[int, float, float, list[str]]]:
    """(line, start, end, payload lines) per cue; a block may start with a cue identifier."""
    cues = []
    for block in blocks:
        i = 0 if "-->" in block[0][1] else 1
        if i >= len(block) or "-->" not in block[i][1]:
            n = block[min(i, len(block) - 1)][0]
            raise InputError(
                f"{where}, line {n}",
                f"expected a cue timing line like '{example} --> {example}'",
                "Each cue is an optional number or identifier, a timing line, then its text; "
                "cues are separated by blank lines.",
            )
        n, line = block[i]
        m = _TIMING.fullmatch(line)
        at = f"{where}, line {n}"
        if not m:
            raise InputError(at, f"malformed cue timing line {line!r}", f"Write it as {example}.")
        start = _seconds(m.group(1), pattern, at, example)
        end = _seconds(m.group(2), pattern, at, example)
        if end < start:
            raise InputError(
                at, f"cue ends ({m.group(2)}) before it starts ({m.group(1)})", "Fix the times."
            )
        cues.append((n, start, end, [text for _, text in block[i + 1 :]]))
    return cues


def _vtt_segments(text: str, where: str) -> list[_Segment]:
    lines = split_lines(text)
    if not re.fullmatch(r"WEBVTT(?:[ \t].*)?", lines[0]):
        raise InputError(
            f"{where}, line 1",
            "missing the 'WEBVTT' header",
            "A WebVTT file must start with the line 'WEBVTT'; if it is SubRip, rename it to .srt.",
        )
    blocks = _blocks(lines)
    for n, line in blocks[0]:
        if "-->" in line:
            raise InputError(
                f"{where}, line {n}",
                "a cue follows the WEBVTT header without a blank line",
                "Put a blank line after the header.",
            )
    cue_blocks = [b for b in blocks[1:] if not re.match(r"(NOTE|STYLE|REGION)(\s|$)", b[0][1])]
    cues = []
    for _, start, end, payload in _cues(cue_blocks, where, _VTT_TIME, "00:01:02.500"):
        raw = " ".join(payload)
        voice = _VOICE.search(raw)
        words = " ".join(html.unescape(_TAG.sub("", raw)).split())
        cues.append((voice.group(1).strip() if voice else None, words, start, end))
    speakers = _speakers(words for voice, words, _, _ in cues if voice is None)
    segments = []
    for voice, words, start, end in cues:
        # A <v Name> voice tag names its speaker explicitly; else 'Name: ...' as in .txt.
        speaker, words = (voice, words) if voice is not None else _split_speaker(words, speakers)
        segments.append((speaker, words, start, end))
    return segments


def _srt_segments(text: str, where: str) -> list[_Segment]:
    blocks = _blocks(split_lines(text))
    cues = [
        (" ".join(html.unescape(_TAG.sub("", " ".join(payload))).split()), start, end)
        for _, start, end, payload in _cues(blocks, where, _SRT_TIME, "00:01:02,500")
    ]
    speakers = _speakers(words for words, _, _ in cues)
    return [(*_split_speaker(words, speakers), start, end) for words, start, end in cues]


# A .docx unpacks its XML whole into memory (about 9 times its size: a 600 MB
# word/document.xml inside a 1.7 MB file took 5.1 GB). A two-hour interview is ~1 MB of XML.
MAX_DOCX_UNPACKED = 50 << 20


def _check_docx_size(path: Path, where: str) -> None:
    """Refuse a .docx whose parts unpack to more than MAX_DOCX_UNPACKED, before reading any:
    zipfile never reads a part beyond its declared size, so the declared sizes bound it."""
    try:
        with zipfile.ZipFile(path) as z:
            parts = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: python-docx's own error below names the problem
    total = sum(i.file_size for i in parts)
    if total > MAX_DOCX_UNPACKED:
        big = max(parts, key=lambda i: i.file_size)
        raise InputError(
            where,
            f"unpacks to {total / 2**20:.1f} MB ({big.filename}: {big.file_size / 2**20:.1f} MB), "
            f"more than the {MAX_DOCX_UNPACKED >> 20} MB a transcript .docx may hold",
            "Check the file (an interview is far smaller); split it, or export it as .txt.",
        )


def _docx_segments(path: Path, where: str) -> tuple[list[_Segment], str]:
    _check_docx_size(path, where)
    try:
        document = docx.Document(str(path))
    except Exception as e:  # python-docx raises many types for a damaged or non-docx file
        raise InputError(
            where,
            f"is not a readable Word .docx file ({type(e).__name__}: {e})",
            "Open it in Word and save it again as .docx (not .doc), or export it as .txt.",
        ) from e
    lines = [line for p in document.paragraphs for line in p.text.split("\n")]
    hint = ""
    if document.tables:
        hint = " If the transcript is in a table, copy it out as plain paragraphs."
    return _text_segments(lines), hint


def _time_value(value, key: str, where: str) -> float:
    if value is None:
        return NAN
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            where,
            f"{key} is {value!r}, not a number of seconds",
            f"Give {key} as seconds, e.g. 62.5, or leave it out.",
        )
    value = float(value)
    if not math.isnan(value) and (value < 0 or math.isinf(value)):
        raise InputError(where, f"{key} is {value}", f"Give {key} as seconds from 0.")
    return value


def _json_segments(text: str, where: str) -> list[_Segment]:
    data = parse_json(text, where, [])
    if isinstance(data, dict):
        extra = [k for k in data if k != "segments"]
        if "segments" not in data or extra:
            raise InputError(
                where,
                "top-level object must have only the key 'segments'"
                + (f" (found {', '.join(repr(k) for k in extra)})" if extra else ""),
                'Use a list of segments, or {"segments": [...]}.',
            )
        data = data["segments"]
    if not isinstance(data, list):
        raise InputError(where, "segments are not a list", 'Use {"segments": [...]}.')
    segments = []
    for i, obj in enumerate(data, start=1):
        at = f"{where}, segment {i}"
        if not isinstance(obj, dict):
            raise InputError(
                at, "is not an object", 'Write each segment as {"speaker": ..., "text": ...}.'
            )
        unknown = [k for k in obj if k not in _JSON_KEYS]
        if unknown:
            raise InputError(
                at,
                f"unknown key{'s' if len(unknown) > 1 else ''} "
                + ", ".join(repr(k) for k in unknown),
                f"Accepted keys: {', '.join(_JSON_KEYS)} (text is required). "
                "Rename or remove the others.",
            )
        if not isinstance(obj.get("text"), str):
            problem = "has no text" if "text" not in obj else f"text is {obj['text']!r}, not text"
            raise InputError(at, problem, 'Give the words as "text": "...".')
        speaker = obj.get("speaker")
        if speaker is not None and not isinstance(speaker, str):
            raise InputError(at, f"speaker is {speaker!r}, not text", "Put the speaker in quotes.")
        start = _time_value(obj.get("start"), "start", at)
        end = _time_value(obj.get("end"), "end", at)
        if end < start:
            raise InputError(at, f"ends ({end}) before it starts ({start})", "Fix the times.")
        segments.append(((speaker or "").strip(), obj["text"].strip(), start, end))
    return segments


def read_transcript(path) -> pd.DataFrame:
    """One transcript as a table with `segment_columns()`; blank segments are dropped."""
    where = str(path)
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in TRANSCRIPT_SUFFIXES:
        raise InputError(
            where,
            f"unsupported transcript file type {suffix or '(no extension)'!r}",
            f"Use one of: {', '.join(TRANSCRIPT_SUFFIXES)} (save Word .doc files as .docx).",
        )
    hint = ""
    if suffix == ".docx":
        segments, hint = _docx_segments(check_input_file(p), where)
    else:
        text = read_text_file(p)
        if "\0" in text:  # valid UTF-8, yet no transcript: a binary file saved as text
            line = text.count("\n", 0, text.index("\0")) + 1
            raise InputError(
                f"{where}, line {line}",
                "contains NUL bytes, so it is a binary file, not text",
                "Export the transcript as plain text (UTF-8), .vtt, .srt, .docx or .json",
            )
        if suffix == ".txt":
            segments = _text_segments(split_lines(text))
        elif suffix == ".vtt":
            segments = _vtt_segments(text, where)
        elif suffix == ".srt":
            segments = _srt_segments(text, where)
        else:
            segments = _json_segments(text, where)
    segments = [s for s in segments if s[1].strip()]
    if not segments:
        raise InputError(
            where, "transcript has no segments (no text found)", "Check the file has text." + hint
        )
    n = len(segments)
    return pd.DataFrame(
        {
            "transcript": [p.stem] * n,
            "segment": pd.array(range(n), dtype="int64"),
            "speaker": [s[0] for s in segments],
            "text": [s[1] for s in segments],
            "start": pd.array([s[2] for s in segments], dtype="float64"),
            "end": pd.array([s[3] for s in segments], dtype="float64"),
        },
        columns=SEGMENT_COLUMNS,
    )


def read_transcripts(paths) -> pd.DataFrame:
    """Several transcripts in one table, sorted by (transcript, segment)."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise InputError("transcripts", "no transcript files given", "List at least one file.")
    seen: dict[str, object] = {}
    for p in paths:
        stem = Path(p).stem
        if stem in seen:
            raise InputError(
                str(p),
                f"has the same name {stem!r} as {seen[stem]}",
                "Transcripts are named by their file name without extension: rename one.",
            )
        seen[stem] = p
    df = pd.concat([read_transcript(p) for p in paths], ignore_index=True)
    return df.sort_values(["transcript", "segment"], kind="stable").reset_index(drop=True)
