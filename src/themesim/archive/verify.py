"""`themesim verify`: recheck every checksum of an archive (a zip, or the folder it unpacked to).

Reads only the archive and its SHA256SUMS, so it needs none of the code that wrote it.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from themesim.errors import InputError
from themesim.io.files import sha256_file, sha256_stream

SUMS = "SHA256SUMS"

SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")
# Ours lists a few thousand files (~100 bytes a line); a bigger list is not a themesim archive.
MAX_SUMS_BYTES = 8 << 20


def unsafe_name(name: str) -> bool:
    """An absolute or '..' name: unpacked, it would land outside the archive's folder."""
    p = name.replace("\\", "/")
    drive = len(p) > 1 and p[1] == ":" and p[0].isalpha()
    return p.startswith("/") or drive or ".." in p.split("/") or "\0" in p


def _read_sums(f, size: int, where: str) -> bytes:
    """The SHA256SUMS bytes, refusing a list larger than MAX_SUMS_BYTES (checked before reading,
    and again while reading, as a zip's stated size can lie)."""
    data = f.read(MAX_SUMS_BYTES + 1) if size <= MAX_SUMS_BYTES else None
    if data is None or len(data) > MAX_SUMS_BYTES:
        raise InputError(
            where,
            f"is larger than {MAX_SUMS_BYTES >> 20} MiB, far more than a themesim archive lists",
            "This is not a themesim checksum list; get the archive again from its source",
        )
    return data


@dataclass
class Verification:
    """What `verify` found: names that match, differ, are missing, or are not listed."""

    matched: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)  # absolute or '..' names: never OK

    @property
    def ok(self) -> bool:
        return not (self.differ or self.missing or self.unlisted or self.duplicated or self.unsafe)

    @property
    def problems(self) -> list[tuple[str, str]]:
        out = [("DIFFERS", n) for n in self.differ]
        out += [("MISSING", n) for n in self.missing]
        out += [("UNLISTED", n) for n in self.unlisted]
        out += [("DUPLICATE", n) for n in self.duplicated]
        out += [("UNSAFE", n) for n in self.unsafe]
        return sorted(out, key=lambda x: (x[1], x[0]))


def parse_sums(text: str, where: str) -> dict[str, str]:
    sums: dict[str, str] = {}
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = SUM_LINE.fullmatch(line)
        if not m:
            raise InputError(
                f"{where} line {i}",
                f"is not '<sha256>  <file>': {line[:80]!r}",
                "The checksum list is damaged; get the archive again",
            )
        sums[m.group(2)] = m.group(1).lower()
    return sums


def _zip_members(path) -> tuple[dict[str, str], bytes | None, list[str]]:
    """sha256 of every file in a zip (None when unreadable), the SUMS text, duplicated names."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise InputError(str(path), f"is not a readable zip archive ({e})", "Check the file") from e
    hashes: dict[str, str | None] = {}
    sums = None
    dups = []
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if info.filename in hashes:
                dups.append(info.filename)
            try:
                with zf.open(info) as f:
                    if info.filename == SUMS:
                        sums = _read_sums(f, info.file_size, f"{path}: {SUMS}")
                        hashes[SUMS] = hashlib.sha256(sums).hexdigest()
                    else:
                        hashes[info.filename] = sha256_stream(f)
            except (zipfile.BadZipFile, zlib.error, OSError):  # bad CRC: the bytes were changed
                hashes[info.filename] = None
    return hashes, sums, dups


def _folder_members(path) -> tuple[dict[str, str], bytes | None]:
    root = Path(path)
    hashes = {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    sums = root / SUMS
    if not sums.is_file():
        return hashes, None
    with open(sums, "rb") as f:
        return hashes, _read_sums(f, sums.stat().st_size, str(sums))


def verify(path) -> Verification:
    """Recheck every checksum in an archive's SHA256SUMS (a zip, or the folder it unpacked to)."""
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), "not found", "Give the path of a themesim archive (.zip)")
    if path.is_file():
        hashes, sums_text, dups = _zip_members(path)
    else:
        (hashes, sums_text), dups = _folder_members(path), []
    if sums_text is None:
        problem = f"its {SUMS} is unreadable" if SUMS in hashes else f"has no {SUMS}"
        raise InputError(
            str(path), problem, "Is this a themesim archive? It lists its checksums there"
        )
    hashes.pop(SUMS)
    sums = parse_sums(sums_text.decode("utf-8", "replace"), f"{path}: {SUMS}")
    v = Verification(duplicated=sorted(set(dups)))
    v.unsafe = sorted(n for n in set(sums) | set(hashes) if unsafe_name(n))
    for name in sorted(set(sums) - set(v.unsafe)):
        if name not in hashes:
            v.missing.append(name)
        elif hashes[name] == sums[name]:
            v.matched.append(name)
        else:
            v.differ.append(name)
    v.unlisted = sorted(set(hashes) - set(sums) - set(v.unsafe))
    return v


def format_verification(path, v: Verification, *, verbose: bool = False) -> str:
    lines = [f"{path}: {len(v.matched) + len(v.differ) + len(v.missing)} files listed in {SUMS}"]
    if verbose:
        lines += [f"  OK        {n}" for n in v.matched]
    lines += [f"  {kind:<9} {n}" for kind, n in v.problems]
    if v.ok:
        lines.append(f"OK: all {len(v.matched)} files match")
    else:
        counts = [
            f"{len(x)} {label}"
            for x, label in (
                (v.differ, "differ"),
                (v.missing, "missing"),
                (v.unlisted, "not listed"),
                (v.duplicated, "duplicated"),
                (v.unsafe, "unsafe names (absolute or '..': refused, never unpack this archive)"),
            )
            if x
        ]
        lines.append(f"FAILED: {', '.join(counts)}; {len(v.matched)} match")
    return "\n".join(lines) + "\n"


def read_zip(path) -> dict[str, bytes]:
    """Every file of a zip, name -> bytes."""
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
