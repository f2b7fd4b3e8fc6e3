"""The transcripts of `themesim agree`: their files, their texts, read only where the memory
reading takes stays under a limit, and the coded passages located in them (io/two_codings.py).
"""

from __future__ import annotations

import glob
import zipfile
from pathlib import Path

from themesim.errors import InputError
from themesim.io.inputs import check_input_file, read_text_file
from themesim.io.spans import (
    check_selects,
    normalise,
    transcript_texts,
)
from themesim.io.spans import short as _short
from themesim.io.spans import squash as _squash
from themesim.io.transcripts import read_transcripts
from themesim.memory import amount

# The most memory agree lets one transcript take, checked before it is taken: reading the
# file, and locating passages without offsets in its text.
MAX_TRANSCRIPT_BYTES = 2 << 30
# Locating a passage without offsets normalises its whole transcript: about this many bytes
# a character (Python lists of str and int).
LOCATE_BYTES_PER_CHAR = 80
# Reading a transcript: bytes of memory a byte of the file (of a .docx or .qdpx, a byte its
# parts unpack to) at the peak. Measured on 10 MB files: .vtt 11.2, .srt 11.7 and .json 8.2
# (the segments are built first, then written out as text), .txt 2.0, a .qdpx 6.1 (its
# sources, their CRLF positions and the selections' XML); a .docx unpacks to about 9 times.
READ_BYTES_PER_BYTE = {".txt": 3, ".vtt": 12, ".srt": 12, ".json": 9, ".docx": 10, ".qdpx": 7}


def transcript_files(patterns) -> list[str]:
    """The files of transcript paths and glob patterns, each once (a pattern that matches a
    file listed already adds nothing)."""
    files: dict[Path, str] = {}
    for p in patterns:
        hits = sorted(glob.glob(str(p))) if any(c in str(p) for c in "*?[") else [str(p)]
        if not hits:
            raise InputError(str(p), "matches no transcript file", "Check the path or pattern.")
        for h in hits:
            files.setdefault(Path(h).resolve(), h)
    return list(files.values())


def transcript_files_texts(patterns) -> dict[str, str]:
    """Plain text per transcript stem: a `.txt` file's own text (newlines as LF), read without
    splitting it into turns; other formats rendered as io/spans.py does."""
    return texts_and_files(patterns)[0]


def texts_and_files(patterns) -> tuple[dict[str, str], dict[str, str]]:
    """transcript_files_texts, and the file of each transcript. Each file's memory is checked
    before it is read (check_read_memory)."""
    files = transcript_files(patterns)
    texts: dict[str, str] = {}
    origin: dict[str, str] = {}
    for f in files:
        stem = Path(f).stem
        if stem in origin:
            raise InputError(
                f,
                f"has the same name {stem!r} as {origin[stem]}",
                "Transcripts are named by their file name without extension: rename one.",
            )
        origin[stem] = f
    for stem, f in origin.items():
        check_read_memory(check_input_file(f))
        if Path(f).suffix.lower() == ".txt":
            texts[stem] = read_text_file(f).replace("\r\n", "\n").replace("\r", "\n")
        else:  # one at a time: a file's segments are let go once its text is written out
            texts.update(transcript_texts(read_transcripts([f]), [f]))
    return texts, origin


def check_read_memory(path: Path) -> None:
    """Refuse, in one line and before reading it, a transcript (or .qdpx project) whose
    reading would take more than MAX_TRANSCRIPT_BYTES: its size (a zip's declared unpacked
    size) times READ_BYTES_PER_BYTE of its format."""
    suffix = path.suffix.lower()
    factor = READ_BYTES_PER_BYTE.get(suffix)
    if factor is None:
        return  # an unsupported type: the reader names it
    size = path.stat().st_size
    what = f"{amount(size)}"
    if suffix in (".docx", ".qdpx"):
        try:
            with zipfile.ZipFile(path) as z:
                size = sum(i.file_size for i in z.infolist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return  # not a zip: its reader names the problem
        what = f"{what}, unpacking to {amount(size)}"
    need = factor * size
    if need > MAX_TRANSCRIPT_BYTES:
        kind = "project" if suffix == ".qdpx" else f"{suffix} transcript"
        plain = suffix not in (".txt", ".qdpx")
        raise InputError(
            str(path),
            f"is a {kind} of {what}: reading it needs about {amount(need)} of memory "
            f"({factor} bytes a byte), more than the {amount(MAX_TRANSCRIPT_BYTES)} agree "
            "lets one transcript take",
            "Split it into smaller transcripts"
            + (", or export it as plain text (.txt, about 3 bytes a byte)." if plain else "."),
        )


def first_difference(a: str, b: str) -> tuple[int, str, str]:
    """(line number, line of a, line of b) of the first line where two texts differ."""
    la, lb = a.split("\n"), b.split("\n")
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "(end of text)"
        y = lb[i] if i < len(lb) else "(end of text)"
        if x != y:
            return i + 1, x, y
    return 0, "", ""


def _squashed(text: str) -> tuple[str, list[int]]:
    """io/spans.normalise with every space dropped: a quote that lost or gained a space (an
    export's line break) still matches. With each character's index in `text`."""
    hay, index = normalise(text)
    keep = [i for i, ch in enumerate(hay) if ch != " "]
    return "".join(hay[i] for i in keep), [index[i] for i in keep]


class Locator:
    """Finds coded passages in the transcripts (one normalised copy per transcript)."""

    def __init__(self, texts: dict[str, str], files: dict[str, str] | None = None):
        self.texts = texts
        self.files = files or {}
        self.cache: dict[str, tuple[str, list[int]]] = {}
        self.repeats: list[str] = []

    def document(self, doc: str, at: str) -> str:
        if doc in self.texts:
            return doc
        if Path(doc).stem in self.texts:
            return Path(doc).stem
        names = sorted(self.texts)
        raise InputError(
            at,
            f"document {doc!r} is not among the transcripts",
            f"Use a transcript's file name without extension ({', '.join(names[:6])}"
            f"{', ...' if len(names) > 6 else ''}), or give its transcript with --transcripts.",
        )

    def span(self, doc: str, text: str, start, end, at: str) -> tuple[int, int]:
        full = self.texts[doc]
        if start is None:
            return self._find(doc, text, at)
        check_selects(
            full, doc, start, end, at, text,
            "offsets {start}-{end} select {found!r} in {doc!r}, not the text {text!r}",
            "Re-export the offsets with the transcript as coded, or leave start and "
            "end empty to locate the text.",
        )  # fmt: skip
        return start, end

    def _find(self, doc: str, text: str, at: str) -> tuple[int, int]:
        full = self.texts[doc]
        if doc not in self.cache:
            need = LOCATE_BYTES_PER_CHAR * len(full)
            if need > MAX_TRANSCRIPT_BYTES:  # whatever the format the text was read from
                file = f", {self.files[doc]}" if doc in self.files else ""
                raise InputError(
                    at,
                    f"has no offsets, and locating it in transcript {doc!r} "
                    f"({len(full):,} characters{file}) needs about {amount(need)} of memory, "
                    f"more than the {amount(MAX_TRANSCRIPT_BYTES)} agree lets one "
                    "transcript take",
                    "Give start and end offsets for the passages of this transcript.",
                )
            self.cache[doc] = _squashed(full)
        hay, index = self.cache[doc]
        needle = _squash(text)
        k = hay.find(needle) if needle else -1
        if k < 0:
            raise InputError(
                at,
                f"text {_short(text)!r} is not found in transcript {doc!r}",
                "Copy the passage exactly from the transcript, or give start and end.",
            )
        if hay.find(needle, k + 1) >= 0:
            self.repeats.append(at)
        return index[k], index[k + len(needle) - 1] + 1
