"""Atomic file writes: a result file is either complete or absent, never half-written."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def _temp_name(out: Path, pid: int | str) -> Path:
    # Keep the real suffix last: matplotlib and others pick the format from it.
    return out.with_name(f".{out.stem}.{pid}.tmp{out.suffix}")


@contextlib.contextmanager
def atomic_path(out) -> Iterator[str]:
    """A temporary path beside `out`, renamed onto `out` when the block succeeds.

    On an exception the temporary file is removed and `out` is left as it was. A process
    killed mid-write leaves only a hidden `.name.PID.tmp.ext` file, which the next write of
    the same output removes.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(_temp_name(out, "*").name):
        with contextlib.suppress(OSError):
            stale.unlink()
    tmp = _temp_name(out, os.getpid())
    try:
        yield str(tmp)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
