"""Type-I error of the grounding test on the real-talk nulls (validate/grounding.py,
TALK_DESIGNS) and on the sticky-Markov nulls, per statistic: the share of draws with p ≤ 0.05
and its Monte Carlo standard error, from grounding() as the suite calls it (every p, also those
the pipeline withholds; no intervals). The suite (`themesim validate --grid full --only
grounding`) measures the same with the intervals; this prints the test's level alone, faster.

    PYTHONPATH=src .venv/bin/python bench/grounding_talk_nulls.py --draws 1000 --sizes 6 20
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from themesim.metrics.grounding import grounding as g
from themesim.metrics.grounding import grounding_shift as shift
from themesim.metrics.grounding import grounding_stats as gs
from themesim.metrics.grounding.labelings import Labelings
from themesim.validate import grounding as vg
from themesim.validate.core import rng_for


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--sizes", type=int, nargs="+", default=[6, 20])
    p.add_argument("--designs", nargs="+", default=[*vg.TALK_DESIGNS, "serial_stay0.9"])
    p.add_argument("--n-perm", type=int, default=99)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--null", choices=("shift", "blocks", "both"), default="shift",
        help="shift: the pipeline's p; blocks: the block-code null; both: the larger p",
    )  # fmt: skip
    args = p.parse_args()
    print("design  transcripts  draws  " + "  ".join(shift.TEST_METRICS))
    for design in args.designs:
        S = vg.similarity(rng_for(args.seed, vg.AREA, design, "S"))
        for G in args.sizes:
            rng = rng_for(args.seed, vg.AREA, design, G)
            t0, ps = time.time(), []
            for k in range(args.draws):
                d = vg.simulate(rng, design, G)
                raw, _ = g.grounding(
                    g.SetLabels(d["A"], d["top_a"], [f"a{i}" for i in range(vg.K_A)]),
                    g.SetLabels(d["B"], d["top_b"], [f"b{j}" for j in range(vg.K_B)]),
                    S,
                    g.GroundingSettings(
                        min_iou=0.2, threshold=0.5, n_perm=args.n_perm, seed=k,
                        withhold_biased=False,
                    ),
                    transcripts=d["t"], strata=d["strata"],
                )  # fmt: skip
                p_shift = [raw.get(f"{m}_p", math.nan) for m in shift.TEST_METRICS]
                if args.null != "shift":
                    tp = gs.text_pairs(S, 0.5)
                    lab = Labelings(d["A"], d["B"], d["top_a"], d["top_b"], S, tp, 0.2)
                    blk = shift.block_code_test(lab, d["strata"], args.n_perm, k)
                    p_blk = [blk[f"{m}_p"] for m in shift.TEST_METRICS]
                    p_shift = p_blk if args.null == "blocks" else np.fmax(p_shift, p_blk)
                ps.append(p_shift)
            P = np.array(ps, dtype=float)
            cells = []
            for j in range(P.shape[1]):
                v = P[:, j][np.isfinite(P[:, j])]
                if v.size:
                    r = float((v <= 0.05).mean())
                    cells.append(f"{r:.3f}±{math.sqrt(r * (1 - r) / v.size):.3f}")
                else:
                    cells.append("—")
            print(f"{design}  {G}  {len(P)}  " + "  ".join(cells) + f"  ({time.time() - t0:.0f} s)",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
