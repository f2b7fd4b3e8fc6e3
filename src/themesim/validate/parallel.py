"""Independent designs of an area on several processes (THEMESIM_VALIDATE_WORKERS, default 1).

Each design draws from its own generator (core.rng_for), so the results are the same, in
the same order, whatever the number of workers; the full grid is minutes on many cores.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor


def workers() -> int:
    try:
        return max(1, int(os.environ.get("THEMESIM_VALIDATE_WORKERS", "1")))
    except ValueError:
        return 1


def starmap(fn, tasks: list[tuple]) -> list:
    """[fn(*t) for t in tasks], on worker processes when more than one is asked for."""
    n = min(workers(), len(tasks))
    if n <= 1:
        return [fn(*t) for t in tasks]

    with ProcessPoolExecutor(n) as pool:
        return list(pool.map(fn, *zip(*tasks, strict=True)))
