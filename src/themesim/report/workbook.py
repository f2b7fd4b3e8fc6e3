"""results/report/tables.xlsx: metric tables as one workbook, one sheet each (openpyxl,
streamed), with an index sheet; also `themesim agree --out x.xlsx`'s tables in memory."""

from __future__ import annotations

import csv
import math
import re
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path

import pandas as pd

from themesim.io.files import atomic_path
from themesim.io.xlsx import write_only_workbook
from themesim.report.names import workbook_header

# A sheet above this many cells is listed, not copied: openpyxl writes ~0.3 M cells a second,
# and a study of 100 sets has half a million sweep rows per method (the CSV stays complete).
MAX_SHEET_CELLS = 2_000_000
EXCEL_MAX_ROWS = 1_048_576


CALIBRATION_DETAIL = ("isotonic", "crossfit", "scores")


def beside_tables(
    tables: dict, grounding_pairs: dict | None = None, calibration_fits: dict | None = None
) -> dict:
    """The tables written beside the workbook's metric tables by the same jobs: each
    method's per-theme quality (`sets_themes.csv`, beside `sets.csv`), for a grounded
    method its grounding tables (`grounding.csv` beside `grounding_pairs.csv`), and for a
    method whose isotonic fit the report reads, the calibration job's detail beside it
    (isotonic.csv, crossfit.csv, scores.csv). Sheet title -> path, for
    :func:`tables_workbook`'s `extra`."""
    out = {}
    for title, path in tables.items():
        p = Path(path)
        if title.endswith(" sets") and p.name == "sets.csv":
            out[f"{title.removesuffix(' sets')} sets themes"] = str(p.with_name("sets_themes.csv"))
    for m, path in (grounding_pairs or {}).items():
        p = Path(path)
        out[f"{m} grounding"] = str(p.with_name("grounding.csv"))
        out[f"{m} grounding pairs"] = str(p)
    for m, path in (calibration_fits or {}).items():
        for name in CALIBRATION_DETAIL:
            out[f"{m} calibration {name}"] = str(Path(path).with_name(f"{name}.csv"))
    return out


def tables_workbook(
    *,
    tables: dict,
    out,
    max_cells: int = MAX_SHEET_CELLS,
    extra: dict | None = None,
    named: dict | None = None,
) -> None:
    """results/report/tables.xlsx: every metric table, one sheet each (openpyxl, streamed).

    tables: sheet title -> CSV path, in sheet order. Excel allows 31 characters per sheet
    name and no []:*?/\\ ; longer titles are cut and numbered to stay unique. The first
    sheet, "sheets", lists each sheet's full title, source file, rows and whether the sheet
    holds it: a table of more than `max_cells` cells (or more rows than Excel opens) is left
    to its CSV, named there. Each sheet's headers are the report's names with the column id
    beside them (report.names.workbook_header). extra: more tables (title -> path) after
    them, each copied when its file exists and named in the index either way
    (`beside_tables`). named: files that
    are not tables a sheet can hold (parquet matrices, folders of them), title -> path,
    listed in the index only.
    """
    tables, missing = _with_extra(tables, extra)
    index, frames = _sheet_index(tables, max_cells)
    # Write-only: rows stream to disk, memory stays flat whatever the table's size.
    book = write_only_workbook()
    sheet = book.create_sheet("sheets")
    columns = ["sheet", "table", "file", "rows", "in_workbook"]
    sheet.append(columns)
    for entry in index:
        sheet.append([entry[c] for c in columns])
    for title, path in missing.items():
        sheet.append(["", title, str(path), None, "no: not written by this run"])
    for title, path in (named or {}).items():
        what = "a folder of parquet files" if str(path).endswith("/") else "a parquet file"
        sheet.append(["", title, str(path), None, f"no: {what}; read with pandas.read_parquet"])
    for name, path in frames.items():
        sheet = book.create_sheet(name)
        df = pd.read_csv(path)
        # the report's names, the column id beside each: "Hungarian F1 (hungarian_f1)"
        sheet.append([workbook_header(c) for c in df.columns])
        for row in df.itertuples(index=False, name=None):
            sheet.append([_cell(v) for v in row])
    # Fixed document dates: reruns differ only in the zip's own timestamps.
    fixed = datetime(2000, 1, 1)
    book.properties.created = book.properties.modified = fixed
    with atomic_path(Path(out)) as tmp:
        book.save(tmp)
        _fix_zip_times(Path(tmp))


def _with_extra(tables: dict, extra: dict | None) -> tuple[dict, dict]:
    """The tables and the extra ones whose files exist, and the extra ones missing."""
    missing = {}
    if extra:
        tables = dict(tables)
        for title, path in extra.items():
            if title in tables:
                continue
            if Path(path).is_file():
                tables[title] = path
            else:
                missing[title] = path
    return tables, missing


def _sheet_index(tables: dict, max_cells: int) -> tuple[list[dict], dict]:
    """The index's entry of each table (its sheet name: cut to Excel's 31 characters and
    numbered to stay unique; its rows; whether the sheet holds it), and sheet -> CSV of
    the tables the workbook holds."""
    names, index = [], []
    for title, path in tables.items():
        base = re.sub(r"[\[\]:*?/\\]", "_", title)[:31]
        name, k = base, 1
        while name.lower() in {n.lower() for n in names} or name.lower() == "sheets":
            k += 1
            name = f"{base[: 31 - len(str(k)) - 1]}~{k}"
        names.append(name)
        index.append({"sheet": name, "table": title, "file": str(path)})
    frames = {}
    for entry, path in zip(index, tables.values(), strict=True):
        with open(path, encoding="utf-8", newline="") as f:
            records = csv.reader(f)  # quoted fields may hold newlines: count records
            header = next(records, [])
            rows = sum(1 for _ in records)
        fits = rows * len(header) <= max_cells and rows < EXCEL_MAX_ROWS
        entry["rows"] = rows
        entry["in_workbook"] = "yes" if fits else f"no: {rows} rows; open the CSV"
        if fits:
            frames[entry["sheet"]] = path
        else:
            entry["sheet"] = ""
    return index, frames


def _cell(v):
    """Empty for missing values, text for infinities: Excel has neither as a number."""
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def frames_workbook(frames: dict, out) -> None:
    """:func:`tables_workbook` of tables in memory (sheet title -> DataFrame), one sheet each."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for i, (title, df) in enumerate(frames.items()):
            paths[title] = Path(tmp) / f"{i}.csv"
            df.to_csv(paths[title], index=False)
        tables_workbook(tables=paths, out=out)


def _fix_zip_times(path: Path) -> None:
    """Rewrite a zip with every entry dated 1980-01-01 and the workbook's modified date
    fixed (openpyxl stamps it on save), so reruns are byte-identical."""
    with zipfile.ZipFile(path) as z:
        entries = [(info.filename, z.read(info)) for info in z.infolist()]
    stamp = rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)"
    entries = [
        (n, re.sub(stamp, rb"\g<1>2000-01-01T00:00:00Z\g<2>", d) if n == "docProps/core.xml" else d)
        for n, d in entries
    ]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(
                zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)),
                data,
                compress_type=zipfile.ZIP_DEFLATED,
            )
