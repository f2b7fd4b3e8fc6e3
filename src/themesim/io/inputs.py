"""Reading an input file: it exists, is UTF-8, splits into numbered lines, parses as JSON;
and a parquet table themesim wrote, with a clear error for anything else."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from themesim.errors import InputError

if TYPE_CHECKING:  # pandas is imported by to_pandas only: embed.columns reads without it
    import pandas as pd

RESAVE_UTF8 = (
    "Re-save the file as UTF-8 (exports from Excel and other Windows tools are often "
    "latin-1/Windows-1252; in Excel use Save As > 'CSV UTF-8')."
)


def check_input_file(path) -> Path:
    """The path as a Path, or an InputError if it is missing or a directory."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(path), "file not found", "Check the path and the file name.")
    if p.is_dir():
        raise InputError(str(path), "is a directory, not a file", "Point to a file inside it.")
    return p


_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office 97-2003 files (.xls, .doc)


def office_file(raw: bytes) -> str | None:
    """What an office file is, from its first bytes (an .xlsx or .docx is a zip holding
    xl/ or word/), e.g. "an Excel workbook (.xlsx)"; None for anything else."""
    if raw[:8] == _OLE2:
        return "an Excel 97-2003 workbook (.xls) or Word 97-2003 document (.doc)"
    if raw[:4] != b"PK\x03\x04":
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, ValueError):
        return "a zip archive"
    if any(n.startswith("xl/") for n in names):
        return "an Excel workbook (.xlsx)"
    if any(n.startswith("word/") for n in names):
        return "a Word document (.docx)"
    return "a zip archive"


def not_text(path, raw: bytes) -> InputError | None:
    """The error for a file named as text that is an office file or zip (an .xlsx saved as
    .csv), or None."""
    kind = office_file(raw)
    if kind is None:
        return None
    return InputError(
        str(path),
        f"is {kind}, not a text file, whatever its name ({Path(path).suffix or 'no extension'})",
        "Save it as text: in Excel Save As > 'CSV UTF-8 (Comma delimited)', in Word Save As > "
        "'Plain Text' (UTF-8)",
    )


def read_text_file(path) -> str:
    """The file's text as UTF-8 (a leading BOM is dropped); an office file or zip named as
    text is said to be one."""
    p = check_input_file(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(
            str(path), f"cannot be read ({e.strerror})", "Check the file's permissions."
        ) from e
    office = not_text(path, raw)
    if office is not None:
        raise office
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(str(path), "file is UTF-16 encoded, not UTF-8", RESAVE_UTF8)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(
            str(path),
            f"file is not UTF-8: byte 0x{raw[e.start]:02X} at byte offset {e.start} "
            f"(line {line}) is not valid UTF-8",
            RESAVE_UTF8,
        ) from e


def split_lines(text: str) -> list[str]:
    # Not str.splitlines: it also splits on form feeds etc., which would shift line numbers.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def csv_rows(text: str, delimiter: str):
    """csv.reader over a whole file's text. Python's csv refuses a cell longer than its field
    size limit (131,072 characters by default) with "field larger than field limit", which
    read as a malformed file; no cell can be longer than the text, so the limit is raised to
    the text's length (it is process-wide and only ever raised here)."""
    if len(text) >= csv.field_size_limit():
        csv.field_size_limit(len(text) + 1)
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)


def parse_json(text: str, where: str, empty):
    """The JSON value of `text` (`empty` when it is blank); a syntax error names line and column."""
    try:
        return json.loads(text) if text.strip() else empty
    except json.JSONDecodeError as e:
        raise InputError(
            f"{where}, line {e.lineno}, column {e.colno}",
            f"invalid JSON ({e.msg})",
            "Fix the syntax there; a missing comma or quote, or a trailing comma, is typical.",
        ) from e


# How a damaged result is made again: a result's rule reruns when its file is missing.
REWRITE = (
    "Delete the file and run the workflow again (e.g. `snakemake --cores 4`): the rule that "
    "wrote it runs again from its inputs."
)


def read_checked_table(path, columns: list[str], what: str) -> pa.Table:
    """The given columns of a parquet file themesim wrote, with pyarrow alone; a clear error
    for anything else."""
    p = check_input_file(path)
    try:
        # ParquetFile, not read_table: read_table goes through pyarrow.dataset, which
        # imports pandas.
        with pq.ParquetFile(str(p)) as f:
            table = f.read(columns=[c for c in columns if c in f.schema_arrow.names])
    except (pa.ArrowException, OSError) as e:
        raise InputError(str(path), f"is not a readable parquet file ({e})", REWRITE) from e
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            str(path),
            f"is not a {what} table (missing columns {', '.join(missing)})",
            f"Point to a {what}s parquet file written by themesim, or: {REWRITE[0].lower()}"
            + REWRITE[1:],
        )
    return table.select(columns)


def read_checked_parquet(path, columns: list[str], what: str) -> pd.DataFrame:
    """The given columns of a parquet file themesim wrote; a clear error for anything else."""
    return read_checked_table(path, columns, what).to_pandas()
