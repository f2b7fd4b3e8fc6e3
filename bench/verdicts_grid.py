"""The verdicts area's full grid on both generative models, on many processes.

Each task is one design and route of validate/verdicts.py (the probit model; one task per
difference) or validate/verdict_ideas.py (the ideas model; its shift solved for every
difference in the task), drawn from the same seeded generators as
`themesim validate --grid full --only verdicts`. `run` writes one JSON line per (design,
difference, route); `summarise` prints the targets (docs/validity.md, "Verdicts") and the
worst rows.

    python bench/verdicts_grid.py run OUT.jsonl [--workers N] [--seed S] [--draws D]
        [--only probit|ideas|sizes]
    python bench/verdicts_grid.py summarise OUT.jsonl [OUT2.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from themesim.validate import verdict_designs as designs  # noqa: E402
from themesim.validate import verdicts as V  # noqa: E402
from themesim.validate.core import rng_for  # noqa: E402
from themesim.validate.verdict_ideas import Fixed, study  # noqa: E402


def tasks(seed: int, draws: int | None, only: str | None):
    out = []
    probit = designs.GRIDS["full"]["designs"]
    if only == "sizes":
        probit = designs.SIZES
    if only in (None, "probit", "sizes"):
        n = draws or designs.GRIDS["full"]["draws"]
        for base in probit:
            for diff in designs.DIFFERENCES:
                d = replace(base, diff=diff)
                if V.feasible(d):
                    out += [("probit", d, route, n, seed) for route in V.ROUTES]
    if only in (None, "ideas", "sizes"):
        grid = designs.IDEA_GRIDS["full"]
        ideas = grid["designs"] if only != "sizes" else grid["designs"][:8]
        n = draws or grid["draws"]
        out += [("ideas", d, route, n, seed) for d in ideas for route in V.ROUTES]
    return out


def one(task) -> list[dict]:
    model, d, route, draws, seed = task
    if model == "probit":
        sim = V.simulate(d, route, draws, rng_for(seed, V.AREA, route, d.name()))
        return [{"model": model, "route": route, "design": d.name(), "seed": seed}
                | vars(d) | sim]  # fmt: skip
    fixed = Fixed(d, seed, route, designs.IDEA_GRIDS["full"]["truth_draws"])
    rows = []
    for diff in designs.DIFFERENCES:
        dd = replace(d, diff=diff)
        shift = fixed.solve(diff)
        head = {"model": model, "route": route, "design": dd.name(), "seed": seed} | vars(dd)
        if shift is None:
            rows.append(head | {"unreachable": True})
            continue
        sim = V.simulate(
            dd, route, draws, rng_for(seed, V.AREA, "ideas", route, dd.name()),
            draw_study=lambda g, dd=dd, s=shift: study(dd, fixed.data, fixed.held, s, route, g),
            truth=diff,
        )  # fmt: skip
        rows.append(head | {"shift": shift} | sim)
    return rows


def run(args) -> None:
    todo = tasks(args.seed, args.draws, args.only)
    with open(args.out, "a") as f, Pool(args.workers) as pool:
        for rows in pool.imap_unordered(one, todo):
            for r in rows:
                f.write(json.dumps(r, default=float) + "\n")
            f.flush()


def summarise(args) -> None:
    import pandas as pd

    rows = [json.loads(line) for path in args.files for line in open(path)]
    df = pd.DataFrame(rows)
    unreachable = df["unreachable"].fillna(False) if "unreachable" in df else False
    done = df[~unreachable.astype(bool)] if "unreachable" in df else df
    m = V.MARGIN
    err = []
    for r in done.itertuples():
        if abs(r.diff + m) < 1e-9:
            err += [
                (r, "equivalent at -margin", r.p_equivalent),
                (r, "non-inferior or better at -margin", r.p_above_minus_margin),
            ]
        if abs(r.diff - m) < 1e-9:
            err.append((r, "equivalent at +margin", r.p_equivalent))
        if abs(r.diff) < 1e-9:
            err += [(r, "worse at 0", r.p_worse), (r, "better at 0", r.p_better)]
    e = pd.DataFrame(
        [
            {
                "model": r.model,
                "route": r.route,
                "design": r.design,
                "seed": r.seed,
                "word": w,
                "error": v,
                "draws": r.draws,
            }
            for r, w, v in err
        ]
    )
    print(f"{len(done)} design-difference-routes, {len(e)} word errors")
    for (model, route), g in e.groupby(["model", "route"]):
        print(
            f"  {model:7s} {route:9s} errors: max {g.error.max():.3f}, share above 0.05 "
            f"{(g.error > 0.05).mean():.2f}, above 0.05 + 2 MC se "
            f"{(g.error > 0.05 + 2 * (0.0475 / g.draws) ** 0.5).mean():.2f}"
        )
    cov = done.groupby(["model", "route"])["coverage"].describe()[
        ["min", "25%", "50%", "75%", "max"]
    ]
    print("90 % interval coverage (target 0.88-0.94):")
    print(cov.round(3).to_string())
    print("worst word errors:")
    print(e.sort_values("error", ascending=False).head(15).to_string(index=False))
    power = done[done["diff"].sub(V.POWER_DIFF).abs() < 1e-9]
    print("power (P(worse) at -0.3):")
    print(power[["model", "route", "design", "seed", "p_worse"]].to_string(index=False))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--draws", type=int, default=None)
    r.add_argument("--only", choices=("probit", "ideas", "sizes"), default=None)
    s = sub.add_parser("summarise")
    s.add_argument("files", nargs="+")
    args = p.parse_args()
    run(args) if args.cmd == "run" else summarise(args)


if __name__ == "__main__":
    main()
