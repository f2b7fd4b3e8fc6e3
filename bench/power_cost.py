"""The cost of `themesim power` per simulated study, measured against the model that checks a
design before it runs (themesim.cli_sizes.power_cost).

Each design runs in its own process (peak RSS is per process): CPU time (time.process_time,
every thread) per study and peak RSS (ru_maxrss), beside the model's figures and their ratio.

    PYTHONPATH=src .venv/bin/python bench/power_cost.py            # the designs below
    PYTHONPATH=src .venv/bin/python bench/power_cost.py 60 10 3 2  # K n R draws [conv]

`conv` uses the convention margin (no analysts' spread). Run from the repository root.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

# (analysts, themes, runs, draws, margin from the analysts' spread)
DESIGNS = [
    (3, 10, 3, 200, False),
    (10, 10, 3, 50, False),
    (30, 10, 3, 5, False),
    (60, 10, 3, 2, False),
    (100, 10, 3, 1, False),
    (3, 200, 3, 10, False),
    (3, 1000, 3, 2, False),
    (3, 10, 300, 5, False),
    (3, 10, 1000, 1, False),
    (10, 30, 10, 10, True),
]


def one(k: int, n: int, r: int, draws: int, from_analysts: bool) -> dict:
    from themesim.validate.verdicts import Design, power

    d = Design(themes=n, runs=r, analysts=k, domains=min(4, n))
    t = time.process_time()
    power(d, "matched", draws, 0, margin="analysts" if from_analysts else 0.1)
    cpu = (time.process_time() - t) / draws
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"cpu_per_draw": cpu, "peak": peak}


def main() -> None:
    from themesim.cli_sizes import power_cost

    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        k, n, r, draws, flag = json.loads(sys.argv[2])
        print(json.dumps(one(k, n, r, draws, flag)))
        return
    designs = DESIGNS
    if len(sys.argv) > 1:
        k, n, r, draws = map(int, sys.argv[1:5])
        designs = [(k, n, r, draws, "conv" not in sys.argv)]
    print("K      n      R  margin     cpu/study  model  ratio    peak MiB  model  ratio")
    for k, n, r, draws, flag in designs:
        got = json.loads(
            subprocess.run(
                [sys.executable, __file__, "--one", json.dumps([k, n, r, draws, flag])],
                capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        need, seconds, _ = power_cost(k, n, r, 1)
        print(
            f"{k:<6} {n:<6} {r:<5} {'analysts' if flag else 'conv':<9}"
            f"{got['cpu_per_draw']:9.3f} s {seconds:6.3f} {seconds / got['cpu_per_draw']:5.2f}"
            f"  {got['peak'] / 2**20:9.0f} {need / 2**20:6.0f} {need / got['peak']:5.2f}"
        )


if __name__ == "__main__":
    main()
