"""The floor under P0 warm (issue 35): what Snakemake and a chain of job processes cost
before any job does work. A benchmark, not a test: it prints wall seconds and asserts nothing.

    PYTHONPATH=src .venv/bin/python bench/p0_floor.py [--depth 7] [--rounds 3]

A throwaway workflow of --depth rules in a chain (P0 warm's critical path is seven jobs:
ingest, embed, similarity, metrics, a drawing job, the summary report, and `all`'s own
bookkeeping), run with the same Snakemake and `--cores 2`, in three variants:

  shell    each job is `touch {output}`: Snakemake's start, DAG and job bookkeeping alone
  script   each job is a `script:` that imports nothing: + an interpreter and the preamble
  imports  each job is a `script:` that imports numpy, pandas and pyarrow.parquet, as every
           themesim job does before its work

and `snakemake -n` of the chain (start-up and parse alone). Set the depth to compare with
another study's critical path.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BODY = {
    "shell": 'shell:\n        "touch {output}"',
    "script": 'script:\n        "job.py"',
    "imports": 'script:\n        "job.py"',
}
JOB = {
    "script": "open(snakemake.output[0], 'w').close()\n",
    "imports": (
        "import numpy, pandas, pyarrow.parquet  # noqa: F401\n"
        "open(snakemake.output[0], 'w').close()\n"
    ),
}


def chain(folder: Path, variant: str, depth: int) -> None:
    rules = [f'rule all:\n    input:\n        "s{depth}.txt"\n']
    for i in range(1, depth + 1):
        need = f'\n    input:\n        "s{i - 1}.txt"' if i > 1 else ""
        rules.append(f'rule s{i}:{need}\n    output:\n        "s{i}.txt"\n    {BODY[variant]}\n')
    (folder / "Snakefile").write_text("\n".join(rules))
    if variant in JOB:
        (folder / "job.py").write_text(JOB[variant])


def run(folder: Path, *args: str) -> float:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(folder / "Snakefile"), "-d", str(folder)]
    t = time.perf_counter()
    subprocess.run(cmd + list(args), check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"P0 floor: a chain of {a.depth} jobs, --cores 2, {a.rounds} rounds each (wall s)")
    with tempfile.TemporaryDirectory() as tmp:
        for variant in BODY:
            folder = Path(tmp) / variant
            folder.mkdir()
            chain(folder, variant, a.depth)
            walls = []
            for _ in range(a.rounds):
                for f in folder.glob("s*.txt"):
                    f.unlink()
                shutil.rmtree(folder / ".snakemake", ignore_errors=True)
                walls.append(run(folder, "--cores", "2", "--quiet"))
            if variant == "shell":
                dry = statistics.median(run(folder, "-n", "--quiet") for _ in range(a.rounds))
                print(f"  {'snakemake -n (start, parse, DAG)':<40} {dry:5.2f}")
            print(f"  {variant:<40} {statistics.median(walls):5.2f}  (runs: "
                  + ", ".join(f"{w:.2f}" for w in walls) + ")")  # fmt: skip


if __name__ == "__main__":
    main()
