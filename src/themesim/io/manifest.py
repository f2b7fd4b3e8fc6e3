"""Manifests of per-pair files: one `manifest.csv` beside a job's pair files lists every file
the job wrote, with its sha256; and each results table's own one-row manifest.

All pairs of 200 sets are 19,900 files per method; declaring each to Snakemake makes the
dry run grow with pairs squared. A rule declares the folder and its manifest instead, and
readers check a listed file's sha256 (`verify`): a file gone from the folder is named, with
what to do (delete the manifest: the job that writes the folder reruns).

A results table (a metric CSV, a parquet table: themesim.io.files.write_csv/write_parquet,
or any `atomic_path(out, checksum=True)`) gets a manifest of its own when written, a hidden
`.name.sha256` beside it (themesim.io.files.record: the writing side lives there). `verify`
checks either; every workflow job checks the tables it reads before its step runs
(`verify_inputs`, called by themesim.steps.runner), and the archive checks what it packs: a
table edited by hand (a `hungarian_f1` changed from 0 to 0.999) never reaches the headline,
the report or the archive.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
from pathlib import Path

from themesim.errors import InputError
from themesim.io.files import (
    CHECKSUM_SUFFIX,
    MANIFEST_COLUMNS,
    checksum_of,
    sha256_file,
    write_manifest_rows,
)
from themesim.paths import MANIFEST  # the file's one name


def manifest_of(path) -> Path:
    """The manifest that lists a pair file: `manifest.csv` in the same folder."""
    return Path(path).parent / MANIFEST


def write_manifest(paths, out) -> None:
    """List `paths` (all in the folder of `out`) with their sha256, in the given order."""
    folder = Path(out).parent.resolve()
    rows = []
    for p in paths:
        p = Path(p)
        if p.resolve().parent != folder:
            raise ValueError(f"{p} is not in the folder of {out}")
        rows.append((p.name, sha256_file(p)))
    write_manifest_rows(rows, out)


def read_manifest(path) -> dict[str, str]:
    """File name -> sha256 of a manifest."""
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if tuple(header or ()) != MANIFEST_COLUMNS:
            raise InputError(
                str(path),
                f"is not a manifest (header {header}, expected {list(MANIFEST_COLUMNS)})",
                "Delete it and run snakemake again: the job that writes it reruns",
            )
        return {name: sha for name, sha in rows}


def listed_files(path) -> list[Path]:
    """The files a manifest lists, as paths beside it."""
    folder = Path(path).parent
    return [folder / name for name in read_manifest(path)]


@functools.lru_cache(maxsize=16)
def _cached(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    return read_manifest(path)


def _listed(m: Path, name: str, cached: bool = True) -> str | None:
    try:
        st = m.stat()
    except FileNotFoundError:
        return None
    if not cached:  # a table's own manifest: one row, read each time (never a stale copy)
        return read_manifest(m).get(name)
    return _cached(str(m), st.st_mtime_ns, st.st_size).get(name)


def verify(path, data: bytes | None = None) -> None:
    """Check a pair file or a results table against its manifest (the folder's
    `manifest.csv`, else the table's own `.name.sha256`): present and unchanged since its
    job wrote it. A file no manifest lists (written outside the workflow) passes.
    `data`: the file's bytes when the caller has read them already."""
    name = Path(path).name
    m = manifest_of(path)
    want = _listed(m, name)
    if want is None:
        m = checksum_of(path)
        want = _listed(m, name, cached=False)
    if want is None:
        return
    own = m.name != MANIFEST
    if data is None:
        if not os.path.exists(path):
            raise InputError(
                str(path),
                f"is missing (listed in {m})",
                f"Delete {m} and run snakemake again: the job that writes the folder reruns",
            )
    digest = sha256_file(path) if data is None else hashlib.sha256(data).hexdigest()
    if digest != want:
        if own:
            raise InputError(
                str(path),
                f"has changed since its job wrote it (its sha256 differs from the one "
                f"recorded in {m}): no job computed these numbers",
                f"Delete {path} and run snakemake again: the rule that writes it reruns "
                f"from its inputs (or rerun that rule: snakemake --forcerun <rule>)",
            )
        raise InputError(
            str(path),
            f"has changed since its job wrote it (its sha256 differs from {m})",
            f"Delete {m} and run snakemake again to recompute the folder's pair files",
        )


def verify_inputs(paths) -> None:
    """Check every table among a job's inputs that has its own manifest (a folder input:
    the tables in it), before the job reads any. Pair files are checked by their readers
    against the folder's manifest."""
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for folder, _, names in os.walk(p):
                for n in sorted(names):
                    if n.endswith(CHECKSUM_SUFFIX) and n.startswith("."):
                        table = Path(folder) / n[1 : -len(CHECKSUM_SUFFIX)]
                        verify(table)
        elif checksum_of(p).is_file():
            verify(p)
