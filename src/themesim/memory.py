"""Whether a similarity matrix fits in memory, asked before it is built.

A set of n themes has an n x n within-set matrix (methods that write one), and a comparison an
n_a x n_b one; the similarity job holds one at a time. Measured on two sets of 2,500 random
TF-IDF themes (bench/README.md, "Very large sets"): the similarity job peaks at 0.48–0.50 GB,
about 48 bytes a cell of its largest matrix above the interpreter's 0.2 GB (the float64
result, the sparse products of one block, the long-form file written one row group at a
time); 0.5 GiB is kept for the rest. A matrix that cannot fit stops the job that would build
it (or the ingest job of a set whose within-set matrix cannot fit) with what it needs,
instead of numpy's allocation error minutes later.
"""

from __future__ import annotations

import os
from pathlib import Path

from themesim.errors import InputError

BYTES_PER_CELL = 48
BASE_BYTES = 512 << 20
ENV = "THEMESIM_MEMORY_CHECK"  # "off" skips the check


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_bytes() -> int | None:
    """Memory this process may still take: the smaller of the kernel's MemAvailable and the
    headroom of its cgroup's limit (v2 or v1); None where neither is known (not Linux)."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit, usage in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        cap, used = _read_int(limit), _read_int(usage)
        if cap is not None and used is not None and cap < 1 << 60:  # "max": no limit
            found.append(max(cap - used, 0))
    return min(found) if found else None


def matrix_bytes(n_rows: int, n_cols: int) -> int:
    """What a job holding an n_rows x n_cols similarity matrix needs, about."""
    return BASE_BYTES + BYTES_PER_CELL * int(n_rows) * int(n_cols)


def amount(n: float) -> str:
    """A size in bytes as people read it: "1.6 KiB", "2.3 GiB", "1,024.0 TiB", "12 bytes"."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):,.1f} {unit}"
    return f"{int(n)} bytes"


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def check_matrix(n_rows: int, n_cols: int, where: str, what: str) -> None:
    """InputError when an n_rows x n_cols matrix will not fit in the memory available now.

    what: the matrix, e.g. "its within-set matrix" or "the comparison human vs llm"."""
    if os.environ.get(ENV, "").lower() == "off":
        return
    have = available_bytes()
    need = matrix_bytes(n_rows, n_cols)
    if have is None or need <= have:
        return
    raise InputError(
        where,
        f"{what} of {n_rows:,} x {n_cols:,} themes needs about {_gib(need)} of memory "
        f"({BYTES_PER_CELL} bytes a cell), and {_gib(have)} is available",
        "Compare smaller sets (split this one, or take a .qdpx code book at `level: top`), "
        f"or run where more memory is free; {ENV}=off skips this check",
    )
