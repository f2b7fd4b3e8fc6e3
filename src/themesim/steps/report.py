"""The report rules: headline tables and the summary report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.io.files import sha256_file


def headline_tables(
    *,
    methods,
    comparisons,
    out_csv,
    out_tex,
    out_png=None,
    out_svg=None,
    ran_on=None,
    reference=None,
    max_panels=None,
    verdicts=None,
    reference_group=(),
    equivalence=None,
) -> None:
    """The at-a-glance table for a paper: CSV (full precision) and LaTeX (booktabs); with
    out_png the dot-and-whisker figure of Hungarian F1 and its interval that opens the report
    (above ``max_panels`` comparisons: the reference's and a box of all).
    ran_on: method -> (its comparisons, the study's) for methods restricted by `comparisons:`,
    noted under the LaTeX table. verdicts: results/report/verdicts.csv (the verdicts rule):
    the headline carries each set's generator's primary verdict."""
    from themesim.io.files import record
    from themesim.report.headline import headline_frame, write_headline
    from themesim.report.restriction import ran_on_notes

    by_method = dict(zip(methods, comparisons, strict=True))
    table, notes = None, list(ran_on_notes(ran_on))
    if verdicts is not None:
        from themesim.metrics.settings import equivalence_settings
        from themesim.metrics.verdicts.equivalence import verdict_note
        from themesim.report.verdicts import read_verdicts

        table = read_verdicts(verdicts)
        if len(reference_group or ()) > 1:
            notes.append(verdict_note(reference_group, **equivalence_settings(equivalence)))
    df = headline_frame(by_method, table)
    write_headline(df, out_csv=out_csv, out_tex=out_tex, notes=notes)
    for out in (out_csv, out_tex):  # checked by the report and the archive that read them
        record(out)
    if out_png is not None:
        from themesim.report.threshold_plots import headline_intervals

        headline_intervals(
            df, out_png=out_png, out_svg=out_svg, reference=reference, max_panels=max_panels
        )


def summary_report(
    *,
    study: dict,
    methods: dict,
    pairs,
    comparisons,
    thresholds,
    themes_tables,
    sweeps,
    heatmaps,
    side_by_side_png,
    embeddings,
    segments,
    sets: dict,
    theme_tables,
    transcripts,
    config: dict,
    code_version,
    out_html,
    out_md,
    method_files: dict | None = None,
    precomputed=(),
    headline: dict | None = None,
    intervals_png=None,
    confidential: bool = False,
    method_pairs: dict | None = None,
    coded: dict | None = None,
    judges: dict | None = None,
    out_pages=None,
) -> None:
    """Both summary reports, and each comparison's page (out_pages, HTML and Markdown).

    thresholds: each method's thresholds.csv (its thresholds and scale as the metrics job
    resolved them), in ``methods`` order like ``comparisons``.
    method_files: method -> optional extras (``distributions_png``, ``confidence_png``,
    ``theme_map_png``, ``run_consistency_png``, ``sets_csv``, ``runs_csv``); precomputed: the score
    matrices read by precomputed methods (listed with their sha256 among the inputs);
    headline: paths of headline.csv / headline.tex, mentioned beside the glance table.
    confidential: `archive.confidential`; speakers are then counted, never named, as the
    archive keeps the report.
    method_pairs: method -> the pair names it ran (its `comparisons:`), when not every one of
    `pairs`; `heatmaps` then holds each method's own pairs' heatmaps, in method order.
    theme_tables: the ingested theme tables (results/themes/<set>.parquet), in `sets` order:
    a set's theme count comes from its table, so every input format the ingest step reads
    (.qdpx included) is counted the same way, without parsing the file a second time.
    coded: set -> its coded-segments file (`theme_sets[i].segments`), listed with its rows.
    judges: method -> its similarity manifest, for the methods an LLM judge scores: the
    judge's model, its file's sha256 and the llama.cpp build are read from their files'
    metadata into the provenance.
    """
    import pyarrow.parquet as pq

    from themesim.io.coded import coded_rows
    from themesim.provenance import provenance
    from themesim.report.summary import write_report

    names = list(methods)
    per_method = {}
    method_pairs = {m: list((method_pairs or {}).get(m, pairs)) for m in names}
    starts = [0]
    for m in names:
        starts.append(starts[-1] + len(method_pairs[m]))
    method_files = method_files or {}
    for i, m in enumerate(names):
        mine = method_pairs[m]
        per_method[m] = (
            dict(methods[m])
            | {
                "comparisons_csv": comparisons[i],
                "thresholds_csv": thresholds[i],
                "themes_csv": themes_tables[i],
                "sweep_csv": sweeps[i],
                "heatmaps": dict(zip(mine, heatmaps[starts[i] : starts[i + 1]], strict=True)),
                "ran_on": [len(mine), len(pairs)],
            }
            | dict(method_files.get(m) or {})
        )
    seg = pd.read_parquet(segments)
    inputs = [
        {
            "path": str(p),
            "kind": "themes",
            "sha256": sha256_file(p),
            "n_items": pq.ParquetFile(t).metadata.num_rows,
        }
        for p, t in zip(sets.values(), theme_tables, strict=True)
    ]
    inputs += [
        {
            "path": str(p),
            "kind": f"coded segments of {s}",
            "sha256": sha256_file(p),
            "n_items": coded_rows(p),
        }
        for s, p in (coded or {}).items()
    ]
    counts = seg.groupby("transcript", sort=True)
    inputs += [
        {
            "path": str(p),
            "kind": "transcript",
            "sha256": sha256_file(p),
            "n_items": int((seg["transcript"] == Path(p).stem).sum()),
        }
        for p in transcripts
    ]
    inputs += [
        {"path": str(p), "kind": "precomputed scores", "sha256": sha256_file(p), "n_items": None}
        for p in precomputed
    ]
    write_report(
        out_html=out_html,
        out_md=out_md,
        out_pages=out_pages,
        study=dict(study)
        | {"side_by_side_png": side_by_side_png, "intervals_png": intervals_png}
        | {"confidential": confidential}
        # each set's ingested table: what text its themes were scored from
        | {"theme_tables": dict(zip(sets, theme_tables, strict=True))}
        | dict(headline or {}),
        methods=per_method,
        inputs=inputs,
        transcripts={
            "n_transcripts": int(seg["transcript"].nunique()),
            "n_segments": len(seg),
            "per_transcript": [
                {
                    "transcript": t,
                    "n_segments": len(g),
                    "speakers": _speakers(g["speaker"], confidential),
                }
                for t, g in counts
            ],
        },
        provenance=provenance(embeddings=embeddings, code_version=code_version, judges=judges),
        config=config,
    )


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
    (`beside_tables`). named: files that are not tables a sheet can hold (parquet matrices,
    folders of them), title -> path, listed in the index only.
    """
    import csv
    import math
    import re

    from openpyxl import Workbook

    from themesim.io.files import atomic_path
    from themesim.report.names import workbook_header

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

    def cell(v):
        # Empty for missing values, text for infinities: Excel has neither as a number.
        if isinstance(v, float) and not math.isfinite(v):
            return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return v

    # Write-only: rows stream to disk, memory stays flat whatever the table's size.
    book = Workbook(write_only=True)
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
            sheet.append([cell(v) for v in row])
    # Fixed document dates: reruns differ only in the zip's own timestamps.
    from datetime import datetime

    fixed = datetime(2000, 1, 1)
    book.properties.created = book.properties.modified = fixed
    with atomic_path(Path(out)) as tmp:
        book.save(tmp)
        _fix_zip_times(Path(tmp))


def frames_workbook(frames: dict, out) -> None:
    """:func:`tables_workbook` of tables in memory (sheet title -> DataFrame), one sheet each."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for i, (title, df) in enumerate(frames.items()):
            paths[title] = Path(tmp) / f"{i}.csv"
            df.to_csv(paths[title], index=False)
        tables_workbook(tables=paths, out=out)


def _fix_zip_times(path: Path) -> None:
    """Rewrite a zip with every entry dated 1980-01-01 and the workbook's modified date
    fixed (openpyxl stamps it on save), so reruns are byte-identical."""
    import re
    import zipfile

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


def _speakers(speakers: pd.Series, confidential: bool) -> list[str]:
    names = sorted(s for s in speakers.unique() if s)
    if confidential:  # names come from the transcripts: none may reach a confidential archive
        return [f"{len(names)} (names withheld: archive.confidential)"] if names else []
    return names
