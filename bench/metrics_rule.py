"""Time (or profile) the metrics step of one method of a study that has already run, in this
process, into a scratch folder, and print the sha256 of every table it writes next to the
study's own results/metrics tables. A benchmark, not a test.

    PYTHONPATH=src .venv/bin/python bench/metrics_rule.py STUDY_DIR METHOD [--profile N]
        [--out DIR]

The step's arguments are built as the metrics rule builds them (workflow/rules/common.smk):
every pair's similarity file, the within-set files, word-salad pools and A-side embeddings.
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


def step_arguments(root: Path, method: str, out: Path) -> dict:
    from snakemake.utils import validate

    from themesim import kinds
    from themesim.config import prepare
    from themesim.study.names import pair_name

    config = yaml.safe_load((root / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    study = prepare(config)
    spec = study.methods[method]
    kind = kinds.get(spec["kind"])
    m = study.metrics
    r = root / "results"
    sim = r / "similarity" / method
    a_sides = list(dict.fromkeys(a for a, _ in study.pairs))
    null_sets = study.b_sets if kind.nulls == "embedded" and m["null_model"]["pool"] > 0 else []
    within = list(study.sets) if kind.within_set_matrices else []
    embedded = a_sides if kind.own_embeddings else []
    names = [pair_name(a, b) for a, b in study.pairs]
    out.mkdir(parents=True, exist_ok=True)
    return {
        "method": method,
        "kind": spec["kind"],
        "pairs": [tuple(p) for p in study.pairs],
        "themes": {s: r / "themes" / f"{s}.parquet" for s in study.sets},
        "similarities": [sim / f"{p}.parquet" for p in names],
        "within": {s: sim / f"{pair_name(s, s)}.parquet" for s in within},
        "nulls": {s: r / "nulls" / method / f"{s}.parquet" for s in null_sets},
        "embeddings": {s: r / "embeddings" / method / f"{s}.parquet" for s in embedded},
        "settings": {
            "thresholds": spec["thresholds"],
            "op": spec.get("op", study.op),
            "gamma": m["gamma"],
            "baseline_z": m["baseline_z"],
            "bootstrap": m["bootstrap"],
            "null_model": m["null_model"],
            "transport": m["transport"],
            "scale": spec.get("scale", "cosine"),
            "clamp": bool(spec.get("clamp", False)),
        },
        "sweep": dict(study.sweep),
        "spec": kind.similarity_spec(spec),
        "decision": {"raw": list(spec["thresholds"]), "z": [m["baseline_z"]]},
        "reference": study.reference,
        "out_comparisons": out / "comparisons.csv",
        "out_themes": out / "themes.csv",
        "out_sweep": out / "sweep.csv",
        "out_transport": [out / "transport" / f"{p}.parquet" for p in names],
        "out_splits": out / "transport" / "splits_joins.csv",
        "out_decisions": out / "decision_changes.csv",
        "out_thresholds": out / "thresholds.csv",
    }


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
    kwargs = step_arguments(root, a.method, out)
    prof = cProfile.Profile() if a.profile else None
    t = time.perf_counter()
    if prof:
        prof.enable()
    metric_tables(**kwargs)
    if prof:
        prof.disable()
    wall = time.perf_counter() - t
    n = len(kwargs["pairs"])
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
