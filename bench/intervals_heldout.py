"""Set-level intervals on designs the validation suite does not hold (docs/validity.md).

The suite's designs shaped the interval rules; these check the rules elsewhere:
- skewed: planted pairs at 0.6 + 0.4 Beta(1, 3) against 0.58 Beta(5, 2) (non-matches piled
  up just under theta, matches spread towards 1);
- betas: planted pairs at 0.6 + 0.4 Beta(2, 2) against 0.9 Beta(2, 6);
- blocks: pairs of A themes that both match the same pair of B themes (each block with
  probability pi), everything else U(0, 0.5): themes that repeat each other at theta. The
  rules of stop 31 were written against these (they undercovered, 0.75-0.90, before).
3 x 3 blocks (triples) and chains moved into the suite's grid at stop 33
(validate/designs.py CLUSTER_DESIGNS); the 2 x 2 blocks draw from the same function.

    python bench/intervals_heldout.py [--draws 300] [--truth 2000]

Prints per design the lowest coverage over the 44 intervals and the intervals under 0.93.
"""

from __future__ import annotations

import argparse

from themesim.validate import designs
from themesim.validate.designs import Design, planted_pairs
from themesim.validate.intervals import measure


def _skewed(d, rng):
    return planted_pairs(
        d, rng, lambda r, k: 0.6 + 0.4 * r.beta(1, 3, size=k), lambda r, s: 0.58 * r.beta(5, 2, s)
    )


def _betas(d, rng):
    return planted_pairs(
        d, rng, lambda r, k: 0.6 + 0.4 * r.beta(2, 2, size=k), lambda r, s: 0.9 * r.beta(2, 6, s)
    )


HELD_OUT = [
    Design("skewed", 6, 6, 0.3),
    Design("skewed", 10, 25, 0.5),
    Design("skewed", 16, 16, 0.8),
    Design("betas", 6, 10, 0.3),
    Design("betas", 15, 15, 0.7),
    Design("noisy", 6, 20, 0.1),
    Design("blocks", 8, 8, 0.5),
    Design("blocks", 12, 16, 0.3),
    Design("blocks", 16, 16, 0.8),
    Design("blocks", 6, 10, 0.5),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--truth", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    designs.DRAW.update(skewed=_skewed, betas=_betas)
    for d in HELD_OUT:
        r = measure(d, args.seed, args.truth, args.draws)
        low = r[r["coverage"] < 0.93]
        print(f"{d.name}: lowest coverage {r['coverage'].min():.3f}")
        for m in low.itertuples():
            print(f"    {m.metric}: {m.coverage:.3f} (width {m.mean_width:.3f})")


if __name__ == "__main__":
    main()
