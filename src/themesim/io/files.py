"""Atomic file writes: a result file is either complete or absent, never half-written."""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from themesim.errors import InputError


def _temp_name(out: Path, pid: int | str) -> Path:
    # Keep the real suffix last: matplotlib and others pick the format from it.
    return out.with_name(f".{out.stem}.{pid}.tmp{out.suffix}")


CHECKSUM_SUFFIX = ".sha256"  # a table's own manifest: `.name.sha256` beside it


def checksum_of(path) -> Path:
    """A results table's own manifest (themesim.io.manifest): `.name.sha256` beside it."""
    p = Path(path)
    return p.with_name(f".{p.name}{CHECKSUM_SUFFIX}")


# The most digits a process id has on Linux (pid_max is at most 2**22 = 4194304).
PID_DIGITS = 7


def written_names(name: str, checksum: bool = False) -> list[str]:
    """Every file name writing `name` puts in its folder: the name, its temporary file (with
    the longest process id) and, for a table with its sha256 (atomic_path's checksum), that
    one-row manifest and its temporary file. themesim.study.names checks them against the file
    system's longest name when the workflow is parsed."""
    out = Path(name)
    names = [out, _temp_name(out, "9" * PID_DIGITS)]
    if checksum:
        side = checksum_of(out)
        names += [side, _temp_name(side, "9" * PID_DIGITS)]
    return [n.name for n in names]


# Folder -> hidden temp files found there when this process first wrote into it. Listed once
# per folder: a folder of thousands of pair files made a glob per write cost minutes.
_LEFT_BY_KILLED: dict[str, set[str]] = {}


def _stale_temps(out: Path) -> list[str]:
    """Temp files of `out` left by killed writers (present when the folder was first seen)."""
    folder = os.path.abspath(out.parent)
    found = _LEFT_BY_KILLED.get(folder)
    if found is None:
        with os.scandir(folder) as entries:
            found = {e.name for e in entries if e.name.startswith(".") and ".tmp" in e.name}
        _LEFT_BY_KILLED[folder] = found
    stale = fnmatch.filter(found, _temp_name(out, "*").name)
    found.difference_update(stale)
    return stale


@contextlib.contextmanager
def atomic_path(out, checksum: bool = False) -> Iterator[str]:
    """A temporary path beside `out`, renamed onto `out` when the block succeeds.

    On an exception the temporary file is removed and `out` is left as it was. A process
    killed mid-write leaves only a hidden `.name.PID.tmp.ext` file, which the next write of
    the same output removes (the folder is listed once per process, on its first write).
    checksum: also record the file's sha256 beside it (`.name.sha256`, a one-row manifest:
    `record`), which its readers check (themesim.io.manifest.verify).
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in _stale_temps(out):
        with contextlib.suppress(OSError):
            (out.parent / stale).unlink()
    tmp = _temp_name(out, os.getpid())
    try:
        yield str(tmp)
        digest = sha256_file(tmp) if checksum else None
        os.replace(tmp, out)
        if checksum:
            record(out, digest)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


# Kernel file systems: never a place for results (a write there fails, or worse, does something).
_VIRTUAL_ROOTS = ("/proc", "/sys")


def output_folder(path, where: str) -> Path:
    """`path` as a folder that exists and can be written, created if needed; InputError naming
    `where` (e.g. "--out results/x") and the path otherwise: a file, a path under a file, a
    folder under /proc or /sys, or one that cannot be created or written. Checked before the
    work that fills it, not at its first write."""
    p = Path(path)
    fix = "Give a folder that can be created and written (e.g. results/validation)"
    if p.exists() and not p.is_dir():
        raise InputError(where, f"{p} is a file, not a folder", fix)
    above = next((a for a in p.absolute().parents if a.exists()), None)
    if above is not None and not above.is_dir():
        raise InputError(where, f"{p} lies under {above}, which is a file", fix)
    real = str(p.resolve())
    for root in _VIRTUAL_ROOTS:
        if real == root or real.startswith(root + "/"):
            raise InputError(where, f"{p} is under {root}, a kernel file system", fix)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise InputError(where, f"{p} cannot be written ({e.strerror or e})", fix) from None
    return p


def sha256_stream(f) -> str:
    """sha256 of a binary stream, read in 1 MiB chunks (large files never sit in memory)."""
    h = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()


def sha256_file(path) -> str:
    with open(path, "rb") as f:
        return sha256_stream(f)


MANIFEST_COLUMNS = ("file", "sha256")  # file: the name inside the manifest's folder


def write_manifest_rows(rows, out) -> None:
    """A manifest (themesim.io.manifest): (file, sha256) rows under MANIFEST_COLUMNS."""
    with atomic_path(out) as tmp, open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(MANIFEST_COLUMNS)
        w.writerows(rows)


def record(path, digest: str | None = None) -> None:
    """Record a table's sha256 (computed unless given) in its own manifest (`checksum_of`)."""
    p = Path(path)
    write_manifest_rows([(p.name, digest or sha256_file(p))], checksum_of(p))


def write_csv(df, out, checksum: bool = True) -> None:
    """A metric table as CSV, atomically, its sha256 recorded beside it (atomic_path); a
    fixed float format keeps identical inputs' tables byte-identical."""
    with atomic_path(out, checksum=checksum) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")


def write_parquet(df, out, checksum: bool = True) -> None:
    """A table as parquet, atomically, its sha256 recorded beside it (atomic_path).
    checksum=False for per-pair files, which a folder's manifest lists instead."""
    with atomic_path(out, checksum=checksum) as tmp:
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
