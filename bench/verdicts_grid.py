"""The verdicts area's full grid and the power table across study sizes, on many processes.

Each task is one (design, difference, route) of validate/verdicts.py, drawn from the same
seeded generator as `themesim validate --grid full --only verdicts`, so the figures are the
suite's own. `run` writes one JSON line per task; `summarise` turns the lines into the
suite's detail and summary tables and prints the worst rows and the power table.

    python bench/verdicts_grid.py run OUT.jsonl [--workers N] [--first-design I] [--seed S]
    python bench/verdicts_grid.py summarise OUT.jsonl [--out DIR]

Needs numpy and scipy; pandas only for `summarise` (a machine without it can still run).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import types
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))
if importlib.util.find_spec("pandas") is None:  # run() needs it; simulate() does not
    sys.modules["pandas"] = types.ModuleType("pandas")

from themesim.validate import verdict_designs as designs  # noqa: E402
from themesim.validate import verdicts as V  # noqa: E402
from themesim.validate.core import rng_for  # noqa: E402

SEED = 0
# The power table: sizes a study may have, a generator 0.3 (and 0.2) below the analysts at
# human-human agreement 0.7, on the leading route's own scale and on the matched scale.
POWER_SIZES = [
    V.Design(themes=n, runs=r, analysts=k, p_h=0.7, diff=diff)
    for n in (6, 10, 15, 20, 30)
    for r in (1, 3, 5)
    for k in (2, 3, 4)
    for diff in (-0.3, -0.2)
]


def tasks(first: int = 0, seed: int = SEED):
    out = []
    draws = designs.GRIDS["full"]["draws"]
    for base in designs.GRIDS["full"]["designs"][first:]:
        for diff in designs.DIFFERENCES:
            d = replace(base, diff=diff)
            if not V.feasible(d):
                continue
            reads = [(r, r) for r in V.ROUTES]
            reads += [("strength", "matched")] if abs(diff - V.POWER_DIFF) < 1e-9 else []
            for route, scale in reads:
                out.append(("grid", d, route, scale, draws, seed))
    for d in POWER_SIZES:
        for route, scale in (("strength", "strength"), ("strength", "matched"),
                             ("matched", "matched")):  # fmt: skip
            out.append(("power", d, route, scale, 400, seed))
    return out


def one(task):
    kind, d, route, scale, draws, seed = task
    label = route if scale == route else f"{route}@{scale}"
    key = (seed, V.AREA, label, d.name()) if kind == "grid" else (seed, "power", label, d.name())
    sim = V.simulate(d, route, draws, rng_for(*key), scale=scale)
    return {"kind": kind, "route": label, "design": d.name()} | vars(d) | sim


def run(path: Path, workers: int, first: int = 0, seed: int = SEED) -> None:
    todo = tasks(first, seed)
    with Pool(workers) as pool, open(path, "w", encoding="utf-8") as f:
        for i, res in enumerate(pool.imap(one, todo, chunksize=4)):
            f.write(json.dumps(res) + "\n")
            if i % 200 == 0:
                print(f"{i + 1} of {len(todo)}", flush=True)


def summarise(path: Path, out: Path | None) -> None:
    import pandas as pd

    from themesim.validate.core import summary_frame

    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    grid = [x for x in lines if x["kind"] == "grid"]
    rows = []
    for x in grid:
        d = V.Design(**{k: x[k] for k in V.Design.__dataclass_fields__})
        rows += V.design_rows(d, x["route"], x)
    summary = summary_frame(rows)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(grid).to_csv(out / "verdicts.csv", index=False, float_format="%.6g")
        summary.to_csv(out / "summary_verdicts.csv", index=False, float_format="%.6g")
    judged = summary[summary["passes"].notna()]
    bad = judged[~judged["passes"].astype(bool)]
    print(f"grid: {len(judged) - len(bad)} of {len(judged)} checked properties hold")
    for r in bad.itertuples():
        print(f"  MISSED {r.design} {r.quantity} {r.property} {r.value:.3f} (mc_se {r.mc_se:.3f})")
    for (q, prop), g in summary.groupby(["quantity", "property"]):
        route = g["design"].str.split(":").str[0]
        for name, h in g.groupby(route):
            v = h["value"].astype(float)
            print(f"  {q:32s} {prop:20s} {name:18s} n={len(h):4d} "
                  f"min {v.min():.3f} median {v.median():.3f} max {v.max():.3f}")  # fmt: skip
    power = pd.DataFrame([x for x in lines if x["kind"] == "power"])
    if len(power):
        table = power.pivot_table(
            index=["diff", "themes", "runs"], columns=["route", "analysts"], values="p_worse"
        )
        print("\nP(worse), human-human 0.7:")
        print(table.round(2).to_string())
        if out:
            power.to_csv(out / "verdicts_power.csv", index=False, float_format="%.6g")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("run", "summarise"))
    p.add_argument("path", type=Path)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", type=Path)
    p.add_argument("--first-design", type=int, default=0,
                   help="run the grid from this design on (its draws are the same)")  # fmt: skip
    p.add_argument("--seed", type=int, default=SEED, help="the suite's seed (its draws)")
    a = p.parse_args()
    if a.what == "run":
        run(a.path, a.workers, a.first_design, a.seed)
    else:
        summarise(a.path, a.out)


if __name__ == "__main__":
    main()
