"""Manifests of per-pair files: one `manifest.csv` beside a job's pair files lists every file
the job wrote, with its sha256.

All pairs of 200 sets are 19,900 files per method; declaring each to Snakemake makes the
dry run grow with pairs squared. A rule declares its manifest (and the reference pairs'
files) instead; the workflow reads the manifest at parse time to redo a job whose listed
file went missing (`missing`), and readers check a listed file's sha256 (`verify`).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
from pathlib import Path

from themesim.errors import InputError
from themesim.io.files import atomic_path, sha256_file

MANIFEST = "manifest.csv"
COLUMNS = ("file", "sha256")  # file: the name inside the manifest's folder


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
    with atomic_path(out) as tmp, open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)


def read_manifest(path) -> dict[str, str]:
    """File name -> sha256 of a manifest."""
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if tuple(header or ()) != COLUMNS:
            raise InputError(
                str(path),
                f"is not a manifest (header {header}, expected {list(COLUMNS)})",
                "Delete it and run snakemake again: the job that writes it reruns",
            )
        return {name: sha for name, sha in rows}


def listed_files(path) -> list[Path]:
    """The files a manifest lists, as paths beside it."""
    folder = Path(path).parent
    return [folder / name for name in read_manifest(path)]


def missing(path) -> list[str]:
    """Names a manifest lists that are not on disk ([] without a manifest): the workflow
    declares them as outputs, so Snakemake reruns the job that writes them."""
    if not os.path.exists(path):
        return []
    folder = Path(path).parent
    return [name for name in read_manifest(path) if not (folder / name).exists()]


@functools.lru_cache(maxsize=16)
def _cached(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    return read_manifest(path)


def verify(path, data: bytes | None = None) -> None:
    """Check a pair file against the manifest beside it: present and unchanged since its job
    wrote it. A file with no manifest beside it (written outside the workflow) passes.
    `data`: the file's bytes when the caller has read them already."""
    m = manifest_of(path)
    try:
        st = m.stat()
    except FileNotFoundError:
        return
    want = _cached(str(m), st.st_mtime_ns, st.st_size).get(Path(path).name)
    if want is None:
        return
    if data is None:
        if not os.path.exists(path):
            raise InputError(
                str(path),
                f"is missing (listed in {m})",
                f"Run `snakemake {path}` (or the whole workflow) to redo the job that writes it",
            )
    digest = sha256_file(path) if data is None else hashlib.sha256(data).hexdigest()
    if digest != want:
        raise InputError(
            str(path),
            f"has changed since its job wrote it (its sha256 differs from {m})",
            f"Delete {m} and run snakemake again to recompute the folder's pair files",
        )
