"""Issue 33's validation protocol for the set-level intervals, design by design.

Runs validate.intervals on the chain and 3 x 3 block designs (CLUSTER_DESIGNS) and the
domain-correlated ones (DOMAIN_DESIGNS), or on the whole full grid, at one seed, and prints
intervals.design_table: one line per design (required coverage rows, how many fail, the
lowest; contains-the-estimate rows counted apart; shown rows), every failure listed, under
the level certified (0.93). Each design draws from its own generator (seed, area, design),
so its lines are the ones `themesim validate --grid full --only intervals` gives.

    python bench/intervals_protocol.py --seed 0                  # clusters and domains
    python bench/intervals_protocol.py --seed 1 --grid --draws 200 --truth 1000
    python bench/intervals_protocol.py --seed 0 --detail out.csv # also the detail rows
    python bench/intervals_protocol.py --seed 0 --after-fix      # the fix's check designs
    python bench/intervals_protocol.py --seed 0 --others         # the other 124, full size

One process (THEMESIM_VALIDATE_WORKERS, default 1, spreads designs over more).
"""

from __future__ import annotations

import argparse

from themesim.validate import intervals
from themesim.validate.designs import CLUSTER_DESIGNS, DOMAIN_DESIGNS, Design, grid

# Written down before the pair count's bound read declared groups (docs/validity.md, "The
# fix, fitted to that miss, and its check"): the designs that check it, all with groups.
AFTER_FIX = [
    Design("triples", 9, 9, 0.4, {"groups": True}),
    Design("triples", 6, 12, 0.5, {"groups": True}),
    Design("triples", 15, 12, 0.4, {"groups": True}),
    Design("chains", 9, 9, 0.4, {"groups": True}),
    Design("blocks", 8, 10, 0.4, {"groups": True}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", action="store_true", help="the whole full grid")
    ap.add_argument("--draws", type=int, default=intervals.SIZES["full"]["draws"])
    ap.add_argument("--truth", type=int, default=intervals.SIZES["full"]["truth"])
    ap.add_argument("--after-fix", action="store_true", help="the fix's check designs")
    ap.add_argument(
        "--others",
        action="store_true",
        help="the full grid without the chain, block and domain designs",
    )
    ap.add_argument("--detail", help="write the detail rows to this CSV")
    args = ap.parse_args()
    designs = grid("full") if args.grid else CLUSTER_DESIGNS + DOMAIN_DESIGNS
    if args.after_fix:
        designs = AFTER_FIX
    if args.others:
        designs = [d for d in grid("full") if d not in CLUSTER_DESIGNS + DOMAIN_DESIGNS]
    size = {"truth": args.truth, "draws": args.draws}
    detail, summary = intervals.run("full", args.seed, designs=designs, size=size)
    if args.detail:
        detail.to_csv(args.detail, index=False)
    print(f"seed {args.seed}, {args.draws} draws, {args.truth} for the population value")
    print(intervals.design_table(summary))


if __name__ == "__main__":
    main()
