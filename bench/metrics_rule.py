"""Time (or profile) the metrics step of one method of a study that has already run, in this
process, into a scratch folder, and print the sha256 of every table it writes next to the
study's own results/metrics tables. A benchmark, not a test.

    PYTHONPATH=src .venv/bin/python bench/metrics_rule.py STUDY_DIR METHOD [--profile N]
        [--out DIR]

The step's job is the metrics rule's (themesim.inputs.jobs.metrics), its outputs in the
scratch folder.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def step_job(root: Path, method: str, out: Path):
    """The metrics rule's job for `method` (themesim.inputs.jobs.metrics), writing to out."""
    from dataclasses import replace

    from snakemake.utils import validate

    from themesim.config import prepare
    from themesim.inputs import Setup, jobs

    config = yaml.safe_load((root / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    job = jobs.metrics(Setup(prepare(config), config), method)
    files = job.params["files"]
    transport = [str(out / "transport" / Path(f).name) for f in files["transport"]]
    (out / "transport").mkdir(parents=True, exist_ok=True)
    output = {
        "comparisons": out / "comparisons.csv",
        "themes": out / "themes.csv",
        "sweep": out / "sweep.csv",
        "transport_manifest": out / "transport" / "manifest.csv",
        "splits": out / "transport" / "splits_joins.csv",
        "decisions": out / "decision_changes.csv",
        "thresholds": out / "thresholds.csv",
    }
    params = job.params | {"files": files | {"transport": transport}}
    return replace(job, params=params, output=output)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("study", type=Path)
    ap.add_argument("method")
    ap.add_argument("--out", type=Path, help="default STUDY/metrics-bench/METHOD")
    ap.add_argument("--profile", type=int, default=0, help="print the top N of a cProfile")
    a = ap.parse_args()
    root = a.study.resolve()
    out = (a.out or root / "metrics-bench" / a.method).resolve()
    from themesim.steps.metrics import metric_tables

    os.chdir(root)  # the config's paths are relative to the run folder
    job = step_job(root, a.method, out)
    prof = cProfile.Profile() if a.profile else None
    t = time.perf_counter()
    if prof:
        prof.enable()
    metric_tables(job)
    if prof:
        prof.disable()
    wall = time.perf_counter() - t
    n = len(job.params["pairs"])
    print(f"{a.method}: {n} comparisons in {wall:.1f} s ({wall / n:.3f} s each)")
    ref = root / "results" / "metrics" / a.method
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    same = [f for f in files if sha(out / f) == sha(ref / f)]
    print(f"{len(same)} of {len(files)} files byte-identical to {ref}")
    for f in files:
        if f.parent.name != "transport" or f.name == "splits_joins.csv":
            print(f"  {str(f):<40} {sha(out / f)}  study {sha(ref / f)}")
    if prof:
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(a.profile)
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(a.profile)


if __name__ == "__main__":
    main()
