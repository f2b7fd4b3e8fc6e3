"""The report_parts rule: the report's tables and the figures that read only metric tables,
in one job (one interpreter start, one import of pandas, matplotlib and openpyxl): headline
(from verdicts.csv), the workbook of every metric table, methods side by side, and each method's
figures of report/figures.py (the summary report itself: steps/report.py)."""

from __future__ import annotations

import csv
import math
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from importlib import import_module
from pathlib import Path

import pandas as pd

from themesim.io.files import atomic_path, record
from themesim.io.themes import read_themes_parquet
from themesim.io.xlsx import write_only_workbook
from themesim.kinds import get as get_kind
from themesim.metrics.settings import equivalence_settings
from themesim.metrics.thresholds import Thresholds, read_thresholds
from themesim.metrics.verdicts.equivalence import verdict_note
from themesim.report.figures import BY_STEM
from themesim.report.headline import headline_frame, write_headline
from themesim.report.names import workbook_header
from themesim.report.plots.side_by_side import methods_side_by_side
from themesim.report.restriction import ran_on_notes
from themesim.report.threshold_plots import headline_intervals
from themesim.report.verdicts import read_verdicts
from themesim.steps.job import Job
from themesim.steps.runner import run_tasks


def report_parts(job: Job) -> None:
    """Every part of the job (inputs.jobs.report_parts), `threads` at a time: the headline
    and verdicts, then the workbook (they are its first sheets), methods side by side and
    each method's figures, each drawn by the function its report/figures.py entry names."""
    i, p = job.input, job.params
    tasks = [
        [(headline_tables, {"job": job}), (tables_workbook, _workbook(job))],
        (
            side_by_side,
            dict(
                methods=list(p["methods"]),
                sweeps=list(i["sweeps"].values()),
                thresholds=list(i["thresholds"].values()),
                out_png=p["side_by_side"]["png"],
                out_svg=p["side_by_side"]["svg"],
                reference=p["reference"],
                max_panels=p["max_panels"],
            ),
        ),
    ]
    for m, given in p["methods"].items():
        tables = MethodTables(
            method=m,
            themes_csv=i["themes_tables"][m],
            sweep_csv=i["sweeps"][m],
            thresholds_csv=i["thresholds"][m],
            gamma=float(given["gamma"]),
            reference=p["reference"],
            max_panels=p["max_panels"],
            kind=given["kind"],
            d=given["d"],
            set_files=i["themes"],
            embeddings=i["embeddings"].get(m, {}),
        )
        for stem, out in given["figures"].items():
            kwargs = dict(stem=stem, tables=tables, out_png=out["png"], out_svg=out["svg"])
            tasks.append((method_figure, kwargs))
    run_tasks(tasks, workers=job.threads)


def _workbook(job: Job) -> dict:
    """tables_workbook's arguments: the metric tables, and beside them the tables their
    jobs also write (sets_themes.csv and the grounding and calibration tables)."""
    i, book = job.input, job.params["workbook"]
    tables = dict(book["tables"])
    return dict(
        tables=tables,
        out=job.output["workbook"],
        extra=beside_tables(tables, i["grounding_pairs"], i["calibration_fits"]),
        named=dict(book["named"]),
    )


def headline_tables(job: Job) -> None:
    """The at-a-glance table for a paper: CSV (full precision) and LaTeX (booktabs), and the
    dot-and-whisker figure of Hungarian F1 and its interval that opens the report (above
    ``max_panels`` comparisons: the reference's and a box of all); ran_on: method -> (its
    comparisons, the study's) for methods restricted by `comparisons:`, noted under the
    LaTeX table. verdicts.csv (the verdicts rule): the headline carries each set's
    generator's primary verdict."""
    i, p, v = job.input, job.params, job.params["verdicts"]
    by_method, group = dict(i["comparisons"]), list(v["reference_group"] or ())
    notes = list(ran_on_notes({m: list(r) for m, r in p["ran_on"].items()}))
    if len(group) > 1:
        notes.append(verdict_note(group, **equivalence_settings(dict(v["equivalence"]))))
    df, out = headline_frame(by_method, read_verdicts(i["verdicts"])), p["headline"]
    write_headline(df, out_csv=out["csv"], out_tex=out["tex"], notes=notes)
    for table in (out["csv"], out["tex"]):  # checked by the report and the archive
        record(table)
    headline_intervals(
        df,
        out_png=out["png"],
        out_svg=out["svg"],
        reference=p["reference"],
        max_panels=p["max_panels"],
    )


def side_by_side(
    *,
    methods,
    sweeps,
    thresholds,
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> None:
    """thresholds: each method's thresholds.csv, in ``methods`` order."""
    methods_side_by_side(
        {m: pd.read_csv(p) for m, p in zip(methods, sweeps, strict=True)},
        thresholds={m: read_thresholds(p) for m, p in zip(methods, thresholds, strict=True)},
        metric="hungarian_f1",
        out_png=out_png,
        out_svg=out_svg,
        reference=reference,
        max_panels=max_panels,
    )


def _theme_table(path) -> pd.DataFrame:
    """themes.csv as text (a set or theme called "NA" stays a name); plots parse numbers."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@dataclass(frozen=True)
class MethodTables:
    """What the report_parts figures of one method read, each table read when first asked.

    themes_csv and sweep_csv: the method's themes.csv and sweep.csv; thresholds_csv (values
    and op) and gamma: its match rule; reference and max_panels bound the figures with a row
    per comparison (`plots.max_pair_panels`). For the theme map: the method's kind and its
    `d`, and set -> file of the set's themes (set_files) and of its embeddings (a kind that
    reads them)."""

    method: str
    themes_csv: str
    sweep_csv: str
    thresholds_csv: str
    gamma: float
    reference: str | None
    max_panels: int | None
    kind: str | None = None
    d: int | None = None
    set_files: dict = field(default_factory=dict)
    embeddings: dict = field(default_factory=dict)

    @cached_property
    def themes_table(self) -> pd.DataFrame:
        return _theme_table(self.themes_csv)

    @cached_property
    def sweep_table(self) -> pd.DataFrame:
        return pd.read_csv(self.sweep_csv)

    @cached_property
    def thresholds(self) -> Thresholds:
        """The method's thresholds and op as its metrics job resolved them."""
        return read_thresholds(self.thresholds_csv)

    @property
    def op(self) -> str:
        return self.thresholds.op

    @cached_property
    def set_themes(self) -> dict:
        return {s: read_themes_parquet(p) for s, p in self.set_files.items()}

    @cached_property
    def theme_vectors(self) -> dict:
        return get_kind(self.kind).vectors({"d": self.d}, self.set_themes, self.embeddings)

    def draw(self, save, table: pd.DataFrame, what: str, *, out_png, out_svg=None, **kwargs):
        """save(table, ...) titled "{method}: {what}", bounded like every figure of the method
        that has a row per comparison (reference, max_panels)."""
        return save(
            table,
            **kwargs,
            title=f"{self.method}: {what}",
            out_png=out_png,
            out_svg=out_svg,
            reference=self.reference,
            max_panels=self.max_panels,
        )


def method_figure(*, stem: str, tables: MethodTables, out_png, out_svg=None) -> None:
    """One figure of report_parts: the function its report/figures.py entry names draws it."""
    module, name = BY_STEM[stem].draws.split(":")
    getattr(import_module(module), name)(tables, out_png=out_png, out_svg=out_svg)


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
