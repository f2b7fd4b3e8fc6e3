"""A threshold's walk from config to figure: the files it crosses.

The tests' tiny study (tests/helpers.make_study) gets one marked MiniLM threshold; Snakemake
then builds that method's first heatmap. Every Python process of the run (Snakemake and its
jobs) records, through a sitecustomize on its path, the project functions whose arguments or
return value hold the marked value: itself, or within three levels of containers, objects'
fields, a table's columns or a text (not through the whole Study or Setup, which every job
binder is given). Printed: those Python files, then the walk's count, which adds the config
file and the scripts and rule files of the steps among them.

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/threshold_walk.py [--repo DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MARK = "0.4321"

TRACER = """
import os, sys, threading
X = float(os.environ["THEMESIM_WALK"])
ROOTS = tuple(os.environ["THEMESIM_WALK_ROOTS"].split(os.pathsep))
LOG = os.environ["THEMESIM_WALK_LOG"]
seen = set()


def holds(v, depth=0):
    try:
        t = type(v)
        if t is float or t is int:
            return v == X
        if t is str:
            return os.environ["THEMESIM_WALK"] in v
        mod = t.__module__
        if mod.startswith("numpy"):
            import numpy as np
            if isinstance(v, np.ndarray):
                if v.dtype.kind == "f":
                    return bool(np.any(v == X))
                if v.dtype.kind == "O":
                    return any(holds(e, depth + 1) for e in v.ravel()[:1000])
                return False
            return isinstance(v, np.floating) and float(v) == X
        if mod.startswith("pandas"):
            import pandas as pd
            if isinstance(v, pd.DataFrame):
                return any(holds(v[c].to_numpy(), depth + 1) for c in v.columns)
            if isinstance(v, (pd.Series, pd.Index)):
                return holds(v.to_numpy(), depth + 1)
            return False
        if depth >= 3:
            return False
        # the whole study: every job binder is given it; reading a threshold out of it shows
        # as the function that receives the threshold
        if mod.startswith("themesim") and t.__name__ in ("Study", "Setup"):
            return False
        if t in (list, tuple, set, frozenset):
            return any(holds(e, depth + 1) for e in list(v)[:500])
        if isinstance(v, dict):
            if "THEMESIM_WALK" in v:  # a copy of the environment, not the study
                return False
            return any(holds(e, depth + 1) for e in list(v.values())[:500])
        if hasattr(v, "__dataclass_fields__"):
            return any(holds(getattr(v, f, None), depth + 1) for f in v.__dataclass_fields__)
        d = getattr(v, "__dict__", None)
        if isinstance(d, dict) and not mod.startswith("snakemake"):
            return any(holds(e, depth + 1) for e in list(d.values())[:100])
    except Exception:
        return False
    return False


def record(frame, event, arg):
    if event not in ("call", "return"):
        return
    fn = frame.f_code.co_filename
    key = (fn, frame.f_code.co_name)
    # a module's frame holds its globals (a rule file's: the whole config): not a step
    if not fn.startswith(ROOTS) or key in seen or key[1] == "<module>":
        return
    values = list(frame.f_locals.values()) + ([arg] if event == "return" else [])
    if any(holds(v) for v in values):
        seen.add(key)
        with open(LOG, "a") as f:
            f.write(fn + "\\t" + frame.f_code.co_name + "\\n")


sys.setprofile(record)
threading.setprofile(record)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=Path.cwd(), help="the checkout to trace")
    ap.add_argument("--functions", action="store_true", help="also list each function")
    a = ap.parse_args()
    repo = a.repo.resolve()
    sys.path.insert(0, str(repo / "tests"))
    from helpers import make_study

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = make_study(tmp / "study", thresholds=(float(MARK),))
        (tmp / "tracer").mkdir()
        (tmp / "tracer" / "sitecustomize.py").write_text(TRACER)
        log = tmp / "walk.tsv"
        roots = [repo / "src", repo / "scripts", repo / "workflow", repo / "Snakefile", root]
        env = dict(
            os.environ,
            THEMESIM_WALK=MARK,
            THEMESIM_WALK_LOG=str(log),
            THEMESIM_WALK_ROOTS=os.pathsep.join(map(str, roots)),
            PYTHONPATH=os.pathsep.join([str(tmp / "tracer"), str(repo / "src")]),
            THEMESIM_EMBED_CACHE=str(tmp / "cache"),
            HF_HUB_OFFLINE="1",
        )
        target = "results/plots/minilm/human__vs__llm_heatmap.svg"
        cmd = [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(root)]
        proc = subprocess.run(
            [*cmd, "--cores", "2", target], env=env, capture_output=True, text=True
        )
        if proc.returncode:
            sys.exit(proc.stderr[-3000:])
        rows = sorted({tuple(line.split("\t")) for line in log.read_text().splitlines()})

    files: dict[str, list[str]] = {}
    for fn, func in rows:
        path = Path(fn)
        if path.is_relative_to(root):  # Snakemake runs a copy of the rule's script
            path = repo / "scripts" / (path.name.split(".", 1)[1])
        files.setdefault(str(path.relative_to(repo)), []).append(func)
    files = {f: fs for f, fs in files.items() if f.endswith(".py")}
    for f, fs in files.items():
        print(f"{f}: {', '.join(fs)}" if a.functions else f)
    jobs = job_files(repo, [f for f in files if "/steps/" in f])
    print(f"\n{len(files)} Python files hold the marked threshold; with config/config.yaml and")
    print(f"the {len(jobs)} scripts and rule files that run those steps ({', '.join(jobs)}):")
    print(f"walk: {len(files) + 1 + len(jobs)} files")


def job_files(repo: Path, steps: list[str]) -> list[str]:
    """The scripts that call those steps' modules, and the rule files that run the scripts."""
    # every script imports steps.runner; the step module names the rule
    mods = [f"themesim.steps.{Path(s).stem} " for s in steps if Path(s).stem != "runner"]
    scripts = [
        p for p in sorted((repo / "scripts").glob("*.py")) if any(m in p.read_text() for m in mods)
    ]
    rules = [
        smk
        for smk in sorted((repo / "workflow" / "rules").glob("*.smk"))
        if any(f'scripts/{p.name}"' in smk.read_text() for p in scripts)
    ]
    return [str(p.relative_to(repo)) for p in scripts + rules]


if __name__ == "__main__":
    main()
