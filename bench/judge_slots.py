"""The local llama-server: the same demo pairs judged with 1 slot (1 in flight), 2 slots (2 in
flight) and 1 slot again, each into a fresh cache; are the scores bit-identical? A benchmark,
not a test (minutes: the packaged model on the CPU).

    PYTHONPATH=src .venv/bin/python bench/judge_slots.py [N]  # N x N pairs, default 4
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from themesim.io.themes import read_theme_file
from themesim.llm.judge import judge_matrix
from themesim.llm.judge_settings import JudgeSettings

THEMES = Path(__file__).resolve().parents[1] / "data" / "demo" / "themes"


def main(n: int) -> None:
    a = read_theme_file(THEMES / "human.csv")["text"].tolist()[:n]
    b = read_theme_file(THEMES / "llm_paraphrase.yaml")["text"].tolist()[:n]
    out: dict[int, list[np.ndarray]] = {}
    for c in (1, 2, 1):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            settings = JudgeSettings(concurrency=c, threads=2)
            S, stats = judge_matrix(a, b, settings, Path(tmp) / "j.sqlite", progress=False)
            print(f"concurrency {c}: {time.monotonic() - t0:.1f} s, {stats}", flush=True)
            out.setdefault(c, []).append(S)
    print("1 slot twice bit-identical:", np.array_equal(out[1][0], out[1][1]))
    diff = np.abs(out[2][0] - out[1][0])
    print(
        f"2 slots vs 1: identical {np.array_equal(out[2][0], out[1][0])}, "
        f"max |diff| {diff.max():.3g}, {int((diff > 0).sum())} of {diff.size} differ"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
