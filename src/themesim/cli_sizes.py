"""What the sizes a `themesim` command is given imply, checked before it starts: the memory
(against what is available, themesim.memory) and the CPU time (against --max-minutes). A
size past either ends the command in one line with the estimate and the flag to change.

The estimates are models of measured costs, each with its measurement below; they aim at the
right order where sizes grow large, not at a forecast.
"""

from __future__ import annotations

import os

from themesim.errors import InputError
from themesim.memory import ENV, available_bytes

MAX_MINUTES = 10.0  # --max-minutes: the CPU time a command may be estimated to take
TELL_SECONDS = 30.0  # an estimate above this is said on stderr before the work starts

# `themesim power`, one simulated study of K analysts, n themes each and R runs. Measured
# with the validation suite's power() in one process per design (bench/power_cost.py: CPU
# time by time.process_time, peak RSS by ru_maxrss) at 33 designs, K 3-300, n 10-30,000,
# R 3-3,000, on 2 shared cores (load 5-8). The model gives 0.98-1.10x each peak, and
# 0.4-1.6x each CPU time of a study above 0.5 s (below, down to 0.2x: a few tenths of a
# second the load varies most):
# - each study's cells, n K (K + R) (every analyst's themes against the other analysts and
#   the runs): 2 us and 80 bytes a cell; besides 40 us a pair of analysts (K^2), 200 us an
#   analyst and run (K R), 4 ms a study; 150 MiB for the interpreter and its imports;
# - from 3 analysts on, the margin from the analysts' spread (metrics.analyst_margin): a
#   dense projection over the K (K - 1) ordered pairs of analysts, 17 bytes and 0.16 us a
#   cell of that square (K = 100: 1.7 GiB and 10-12 s a study; K = 120: 3.3 GiB, 21 s).
POWER_BASE_BYTES = 150 << 20
POWER_CELL_BYTES = 80
POWER_CELL_S = 2e-6
POWER_PAIR_S = 40e-6
POWER_RUN_S = 200e-6
POWER_DRAW_S = 4e-3
MARGIN_CELL_BYTES = 17
MARGIN_CELL_S = 0.16e-6


def amount(n: float) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):,.1f} {unit}"
    return f"{n / 1024:.0f} KiB"


def duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:,.1f} hours"
    if seconds >= 120:
        return f"{seconds / 60:,.0f} minutes"
    return f"{seconds:,.0f} s"


def power_cost(
    analysts: int, themes: int, runs: int, draws: int, margin_from_analysts: bool
) -> tuple[int, float, str]:
    """(peak bytes, CPU seconds, how) of `themesim power` at a design."""
    k, n, r = int(analysts), int(themes), int(runs)
    cells = n * k * (k + r)
    need = POWER_BASE_BYTES + POWER_CELL_BYTES * cells
    per_draw = POWER_DRAW_S + POWER_CELL_S * cells + POWER_PAIR_S * k * k + POWER_RUN_S * k * r
    how = f"{cells:,} cells a study"
    if margin_from_analysts and k >= 3:
        square = (k * (k - 1)) ** 2
        need += MARGIN_CELL_BYTES * square
        per_draw += MARGIN_CELL_S * square
        p = k * (k - 1)
        how += f", and the analysts' margin, a projection of {p:,} x {p:,} cells"
    return need, per_draw * int(draws), how


def check_cost(where: str, what: str, need: int, seconds: float, max_minutes: float, how: str):
    """InputError when `need` bytes exceed the memory available, or `seconds` of CPU exceed
    max_minutes; otherwise a long estimate is said on stderr. THEMESIM_MEMORY_CHECK=off
    skips the memory part, as it does for the workflow's matrices."""
    import sys

    have = None if os.environ.get(ENV, "").lower() == "off" else available_bytes()
    if have is not None and need > have:
        raise InputError(
            where,
            f"{what} needs about {amount(need)} of memory ({how}) and {amount(have)} is available",
            f"Give smaller sizes, or run where more memory is free ({ENV}=off skips this check)",
        )
    if seconds > 60 * max_minutes:
        raise InputError(
            where,
            f"{what} takes about {duration(seconds)} of CPU time ({how}), more than "
            f"--max-minutes {max_minutes:g}",
            "Give smaller sizes, or raise --max-minutes to run it",
        )
    if seconds > TELL_SECONDS:
        print(f"themesim: {what}: about {duration(seconds)} of CPU time ({how})", file=sys.stderr)
