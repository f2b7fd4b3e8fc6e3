"""What the sizes a `themesim` command is given imply, checked before it starts: the memory
(against what is available, themesim.memory) and the CPU time (against --max-minutes). A
size past either ends the command in one line with the estimate and the flag to change.

The estimates are models of measured costs, each with its measurement below; they aim at the
right order where sizes grow large, not at a forecast.
"""

from __future__ import annotations

import os
import sys

from themesim.errors import InputError
from themesim.memory import ENV, amount, available_bytes, matrix_bytes

MAX_MINUTES = 10.0  # --max-minutes: the CPU time a command may be estimated to take
TELL_SECONDS = 30.0  # an estimate above this is said on stderr before the work starts

# `themesim power`, one simulated study of K analysts with n themes each and R runs of m. The
# verdict (metrics.verdicts.difference) reads every analyst against every run and every two
# analysts: cells = K R + K (K - 1) / 2 tables, entries = n m K R + n^2 K (K - 1) / 2 values,
# and a themes x statistics influence matrix of N (K + R) values, N = n K + m R. Measured with
# the validation suite's power() in one process per design (bench/power_cost.py: CPU time by
# time.process_time, peak RSS by ru_maxrss) at 10 designs, K 3-100, n 10-1,000, R 3-1,000, on
# 2 shared cores: 2 ms a study, 0.125 us an entry, 0.28 ms a cell, 0.12 us an influence value;
# 32 bytes an entry and 28 an influence value beside 150 MiB for the interpreter and imports.
POWER_BASE_BYTES = 150 << 20
POWER_ENTRY_BYTES = 32
POWER_INFLUENCE_BYTES = 28
POWER_DRAW_S = 2e-3
POWER_ENTRY_S = 0.125e-6
POWER_CELL_S = 0.28e-3
POWER_INFLUENCE_S = 0.12e-6


def duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:,.1f} hours"
    if seconds >= 120:
        return f"{seconds / 60:,.0f} minutes"
    return f"{seconds:,.0f} s"


def power_cost(
    analysts: int, themes: int, runs: int, draws: int, gen_themes: int | None = None
) -> tuple[int, float, str]:
    """(peak bytes, CPU seconds, how) of `themesim power` at a design."""
    k, n, r = int(analysts), int(themes), int(runs)
    m = int(gen_themes or n)
    cells = k * r + k * (k - 1) // 2
    entries = n * m * k * r + n * n * k * (k - 1) // 2
    influence = (n * k + m * r) * (k + r)
    need = POWER_BASE_BYTES + POWER_ENTRY_BYTES * entries + POWER_INFLUENCE_BYTES * influence
    per_draw = (
        POWER_DRAW_S + POWER_ENTRY_S * entries + POWER_CELL_S * cells
        + POWER_INFLUENCE_S * influence
    )  # fmt: skip
    return need, per_draw * int(draws), f"{cells:,} tables of {entries:,} values a study"


def check_cost(
    where: str,
    what: str,
    need: int,
    seconds: float,
    max_minutes: float,
    how: str,
    smaller: str = "Give smaller sizes",
):
    """InputError when `need` bytes exceed the memory available, or `seconds` of CPU exceed
    max_minutes; otherwise a long estimate is said on stderr. THEMESIM_MEMORY_CHECK=off
    skips the memory part, as it does for the workflow's matrices. smaller: what to do
    instead, in the message."""
    if not max_minutes > 0:  # NaN too
        raise InputError(
            "--max-minutes", f"{max_minutes:g} is not a positive number", "Give e.g. 10"
        )
    have = None if os.environ.get(ENV, "").lower() == "off" else available_bytes()
    if have is not None and need > have:
        raise InputError(
            where,
            f"{what} needs about {amount(need)} of memory ({how}) and {amount(have)} is available",
            f"{smaller}, or run where more memory is free ({ENV}=off skips this check)",
        )
    if seconds > 60 * max_minutes:
        raise InputError(
            where,
            f"{what} takes about {duration(seconds)} of CPU time ({how}), more than "
            f"--max-minutes {max_minutes:g}",
            f"{smaller}, or raise --max-minutes to run it",
        )
    if seconds > TELL_SECONDS:
        print(f"themesim: {what}: about {duration(seconds)} of CPU time ({how})", file=sys.stderr)


# `themesim score`: reading a matrix CSV holds its rows as text, about 20 bytes a byte of
# the file (peak 678 MB for a 28 MB, 2,000 x 2,000 file, 160 MiB of it the interpreter);
# then, per cell of the n_a x n_b matrix, 0.7 us of CPU for every coverage and one-to-one
# metric (1.2 s at 800 x 800, 3.7-3.9 s at 2,000 x 2,000 with 1 or 5 thresholds), and with
# --families (gaps, transport, intervals) 32 ns x (n_a n_b)^1.6 a threshold (CPU: 7.1 s at
# 400 x 400, 21 s at 600 x 600, 31 s at 300 x 1,200, 52-64 s at 800 x 800; 33 s at 400 x 400
# with 5 thresholds), besides 1 s to start. Measured with /usr/bin/time (user + system, peak
# RSS) on random matrices, 2 shared cores (load 5-8).
SCORE_BASE_BYTES = 160 << 20
SCORE_READ_BYTES_PER_BYTE = 20
SCORE_START_S = 1.0
SCORE_CELL_S = 0.7e-6
FAMILIES_S = 32e-9
FAMILIES_POWER = 1.6


def score_read_cost(file_bytes: int) -> tuple[int, str]:
    """(peak bytes, how) of reading matrix CSVs of `file_bytes` bytes in all."""
    need = SCORE_BASE_BYTES + SCORE_READ_BYTES_PER_BYTE * int(file_bytes)
    return need, f"{amount(file_bytes)} of CSV, about {SCORE_READ_BYTES_PER_BYTE} bytes a byte"


def score_cost(n_a: int, n_b: int, thresholds: int, families: bool) -> tuple[float, str]:
    """(CPU seconds, how) of scoring an n_a x n_b matrix at `thresholds` thresholds."""
    cells = int(n_a) * int(n_b)
    seconds = SCORE_START_S + SCORE_CELL_S * cells
    how = f"{n_a:,} x {n_b:,} themes"
    if families:
        seconds += FAMILIES_S * cells**FAMILIES_POWER * max(int(thresholds), 1)
        how += f", {thresholds} threshold(s) with --families"
    return seconds, how


# `themesim compare`: the similarity matrix as the workflow's similarity job holds it
# (themesim.memory: 48 bytes a cell over 512 MiB), the model's memory (peak 540-615 MB for
# MiniLM at 100-1,600 themes a file), and the embedding: about 4 ms of CPU a theme text for
# MiniLM (21.6 s for 2 x 1,600 texts, 9 s for 2 x 100: the model's load), 5 times that
# assumed for mpnet (5 times MiniLM's parameters); TF-IDF 2 s in all at 2 x 1,600 themes.
# Measured with /usr/bin/time, 2 shared cores (load 5-8).
EMBED_TEXT_S = {"minilm": 4e-3, "mpnet": 20e-3}
MODEL_BYTES = {"minilm": 600 << 20, "mpnet": 1200 << 20}


def compare_cost(n_a: int, n_b: int, method: str) -> tuple[int, float, str]:
    """(peak bytes, CPU seconds, how) of `themesim compare` of n_a and n_b themes."""
    need = matrix_bytes(n_a, n_b) + MODEL_BYTES.get(method, 0)
    seconds = score_cost(n_a, n_b, 1, False)[0] + EMBED_TEXT_S.get(method, 0) * (n_a + n_b)
    if method in MODEL_BYTES:
        seconds += 8.0  # the model's load
    return need, seconds, f"{n_a:,} x {n_b:,} themes, method {method}"


# `themesim agree` on m coders, c codes and t transcripts: from three coders on, every pair
# of coders is scored per code and transcript, about 1.8 ms of CPU each (m = 10, 20, 40 with
# 5 codes on 4 transcripts: 3.7, 9.6 and 30.7 s; 5 coders with 40 codes: 4.2 s), and its
# rows take about 500 bytes (peak 190-204 MB from 5 to 40 coders); 1.5 s to start. Measured
# with /usr/bin/time on random codings of 2,000-character transcripts, 2 shared cores.
AGREE_BASE_BYTES = 200 << 20
AGREE_START_S = 1.5
AGREE_UNIT_S = 1.8e-3
AGREE_ROW_BYTES = 500


def agree_cost(coders: int, codes: int, transcripts: int) -> tuple[int, float, str]:
    """(peak bytes, CPU seconds, how) of the agreement tables of `themesim agree`."""
    pairs = int(coders) * (int(coders) - 1) // 2
    units = pairs * int(codes) * int(transcripts)
    rows = pairs * int(codes) * (int(transcripts) + 1) * 2  # per transcript and (all), 2 scopes
    need = AGREE_BASE_BYTES + AGREE_ROW_BYTES * rows
    seconds = AGREE_START_S + AGREE_UNIT_S * units
    how = (
        f"{pairs:,} pairs of coders x {codes:,} codes x {transcripts:,} transcripts, "
        f"{units:,} pair tables"
    )
    return need, seconds, how
