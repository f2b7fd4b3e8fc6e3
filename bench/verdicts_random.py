"""Forty verdict designs drawn at random in issue 32's range (8-15 themes, 1-5 runs, 2-4
analysts with two the likeliest, human-human 0.12-0.92, ICC 0 or 0.16 undeclared, 0.16 or
0.64 with 6-8 declared groups), fixed by seed 42 after stop 42's two limit rules and run
once: the errors of each word at the margin and at 0, 1,000 draws per design, route and
difference (seed 3). A benchmark: it prints the worst rows.

    python bench/verdicts_random.py [--seed 42] [--grouped]

--grouped draws only declared groups at 3-4 analysts (seed 43: written after stop 43's
nested-noise rule for the reference part, which acts only there).
"""

import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from themesim.validate import verdicts as V  # noqa: E402


def draw_designs(seed: int, grouped: bool) -> list:
    rng = np.random.default_rng(seed)
    kinds = [(0.16, True), (0.64, True)] if grouped else [
        (0.0, False), (0.16, False), (0.16, True), (0.64, True)]  # fmt: skip
    designs = []
    for _ in range(40):
        icc, groups = kinds[rng.integers(len(kinds))]
        designs.append(
            V.Design(
                themes=int(rng.integers(8, 16)),
                runs=int(rng.integers(1, 6)),
                analysts=int(rng.choice([3, 4] if grouped else [2, 2, 3, 4])),
                p_h=float(np.round(rng.uniform(0.12, 0.92), 2)),
                icc=icc,
                groups=groups,
                domains=int(rng.integers(6, 9)) if groups else 4,
                sd_theme=float(np.round(rng.uniform(0.4, 1.2), 1)),
            )
        )
    return designs


def one(task):
    d, route = task
    out = {}
    for diff in (-0.1, 0.0, 0.1):
        dd = replace(d, diff=diff)
        if not V.feasible(dd):
            continue
        r = V.power(dd, route, draws=1000, seed=3)
        if diff == -0.1:
            out["eq-"], out["ni-"] = r["p_equivalent"], r["p_above_minus_margin"]
        if diff == 0.0:
            out["worse0"], out["better0"] = r["p_worse"], r["p_better"]
        if diff == 0.1:
            out["eq+"] = r["p_equivalent"]
    return d.name(), route, out


def main() -> None:
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--grouped", action="store_true")
    a = p.parse_args()
    designs = draw_designs(a.seed, a.grouped)
    tasks = [(d, r) for d in designs for r in ("strength", "matched")]
    with Pool(2) as p:
        res = p.map(one, tasks)
    worst = sorted(((v, k, route, name) for name, route, out in res for k, v in out.items()),
                   reverse=True)  # fmt: skip
    over = sum(v > 0.05 for v, *_ in worst)
    beyond = sum(v > 0.05 + 2 * np.sqrt(0.05 * 0.95 / 1000) for v, *_ in worst)
    print(f"rows {len(worst)}, above 0.05: {over}, above it by two Monte Carlo SE: {beyond}")
    for w in worst[:8]:
        print(w)


if __name__ == "__main__":
    main()
