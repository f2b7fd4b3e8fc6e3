"""Size, time and peak memory of one large heatmap (issue 14: 10 x 2,000 themes drew a
76,524-px-wide PNG in 2.1 GB). A benchmark, not a test: it prints and asserts nothing.

Draws a seeded n_a x n_b matrix with its Hungarian pairs through report.plots.heatmap (PNG and
SVG), measuring Python allocations with tracemalloc and the process's peak resident size.

    PYTHONPATH=src .venv/bin/python bench/heatmap_size.py [--rows 10] [--cols 2000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from PIL import Image

from themesim.metrics.sets.coverage import hungarian_pairs
from themesim.report.plots.heatmap import Cutoff, ThemeAxis, heatmap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--cols", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    S = np.random.default_rng(a.seed).uniform(-0.1, 0.9, (a.rows, a.cols))
    rows, cols = hungarian_pairs(S)
    with tempfile.TemporaryDirectory() as d:
        png, svg = Path(d) / "h.png", Path(d) / "h.svg"
        t = time.perf_counter()
        tracemalloc.start()
        heatmap(
            S,
            ThemeAxis(
                [f"Theme {i} about caring for a parent" for i in range(a.rows)],
                ids=[f"H{i:04d}" for i in range(a.rows)],
            ),
            ThemeAxis(
                [f"Theme {j} about caring for a parent" for j in range(a.cols)],
                ids=[f"L{j:04d}" for j in range(a.cols)],
            ),
            cutoff=Cutoff(0.5, "ge"),
            title="bench: a vs b",
            out_png=png,
            out_svg=svg,
            pairs=list(zip(rows.tolist(), cols.tolist(), strict=True)),
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        wall = time.perf_counter() - t
        with Image.open(png) as im:
            w, h = im.size
        print(f"matrix {a.rows} x {a.cols}")
        kb_png, kb_svg = png.stat().st_size / 1e3, svg.stat().st_size / 1e3
        print(f"PNG {w} x {h} px, {kb_png:.0f} kB; SVG {kb_svg:.0f} kB")
        print(f"time {wall:.1f} s (PNG + SVG)")
        print(f"tracemalloc peak {peak / 1e6:.1f} MB")
        print(f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")


if __name__ == "__main__":
    main()
