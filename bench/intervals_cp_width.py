"""Width of the primary count intervals against exact Clopper-Pearson on planted designs.

On the planted designs of the suite's full grid (themes independent, one-to-one pairs, no
chance link at theta) each count's exact interval is Clopper-Pearson on its natural units:
k matched A themes of n_a (hit rate), k matched B themes of n_b (precision), k pairs of
min(n_a, n_b) (the pair count), the Hungarian matching's k pairs at theta of min(n_a, n_b)
(its count, and F1 = 2k / (n_a + n_b) its image). The
target (issue 33): the primary 95 % intervals no wider than that plus 10 %.

    python bench/intervals_cp_width.py [--draws 200] [--seed 0]

Prints per design the ratio of mean widths (primary / Clopper-Pearson) per count, and the
largest ratio over the planted designs.
"""

from __future__ import annotations

import argparse

import numpy as np

from themesim.metrics.interval_stats import clopper_pearson
from themesim.metrics.intervals.intervals import CI_METRICS, interval_table
from themesim.validate.core import rng_for
from themesim.validate.designs import THETA, grid
from themesim.validate.intervals import estimates

# metric: (units of the count, scale of the interval per unit of the share)
COUNTS = {
    "hit_rate": ("a", lambda d: 1.0),
    "precision": ("b", lambda d: 1.0),
    "hungarian_n_matched": ("h", lambda d: min(d.n_a, d.n_b)),
    "hungarian_f1": ("h", lambda d: 2 * min(d.n_a, d.n_b) / (d.n_a + d.n_b)),
    "n_match_pairs": ("m", lambda d: min(d.n_a, d.n_b)),
}


def ratios(design, seed: int, draws: int) -> dict[str, float]:
    rng = rng_for(seed, "intervals_cp_width", design.name)
    m_ = min(design.n_a, design.n_b)
    n = {"a": design.n_a, "b": design.n_b, "m": m_, "h": m_}
    at = CI_METRICS.index("hungarian_n_matched")
    ours = {m: [] for m in COUNTS}
    exact = {m: [] for m in COUNTS}
    for _ in range(draws):
        S, _, _ = design.draw(rng)
        tab = interval_table(S, [THETA]).iloc[0]
        M = S >= THETA
        k = {"a": M.any(axis=1).sum(), "b": M.any(axis=0).sum(), "m": M.sum()}
        k["h"] = round(estimates(S, THETA)[at])  # the Hungarian matching's pairs at theta
        for m, (side, scale) in COUNTS.items():
            lo, hi = clopper_pearson(k[side], n[side])
            exact[m].append(float(hi - lo) * scale(design))
            ours[m].append(float(tab[f"{m}_ci_high"] - tab[f"{m}_ci_low"]))
    return {m: np.mean(ours[m]) / np.mean(exact[m]) for m in COUNTS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    worst = 0.0
    for d in grid("full"):
        if d.kind != "planted":
            continue
        r = ratios(d, args.seed, args.draws)
        worst = max(worst, max(r.values()))
        print(d.name, " ".join(f"{m} {v:.3f}" for m, v in r.items()))
    print(f"largest ratio over the planted designs: {worst:.3f}")


if __name__ == "__main__":
    main()
