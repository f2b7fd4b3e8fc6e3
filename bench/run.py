"""Speed and scale figures of the workflow (issue 6, P1-P5). A benchmark, not a test: it
prints each figure and ratio and asserts nothing about time.

    PYTHONPATH=src .venv/bin/python bench/run.py [--only P0,P1,...,P7] [--workdir DIR]

P1  full run of a copy of the demo study (null k and bootstrap n made small, see --null-k,
    --bootstrap), then a threshold change: jobs per rule of the rerun (no embed*, no
    similarity*) and its wall time as a fraction of the full run.
P2  throughput of the pipeline's embed step (themesim.steps.embed.embed_set: read themes,
    encode, write parquet; no cache) / a bare SentenceTransformer.encode of the same texts,
    same packaged MiniLM, same batch size and threads, one process, alternating rounds.
P3  after P1's run, one theme set added to the study: how many texts each of its embedding
    jobs encoded and how many it took from the embedding cache.
P4  200 synthetic theme sets x 3 methods (minilm, mpnet, tfidf): `snakemake --dry-run` wall
    time and job count, reference-vs-each and all pairs, at 50/100/200 sets.
P5  a real run at 200 synthetic sets (--p5-methods, default tfidf), then the peak memory
    (max_rss of Snakemake's benchmark files) of each rule's largest job.
P0  one 12 x 12 two-set study (minilm, null pool and transport on, defaults otherwise), cold
    (fresh embedding cache) and warm (results removed, cache kept): wall and peak RSS.
P6  the demo study as shipped, cold (fresh embedding cache), next to its floor: per embedding
    model one fresh process that loads it and bare-encodes the distinct texts the demo embeds.
P7  LLM judge (issue 14): seconds per judgement with the packaged Qwen2.5-Coder-1.5B on a local
    llama.cpp server, json and logprob mode, the issue-13 settings ("before": prompt judge_v2,
    llama.cpp's default threads, 2 requests at a time) next to today's defaults ("after").
    The demo's human x llm_paraphrase themes (--p7-themes of each, default 10 x 10), a fresh
    judge cache per run; also the AUC of each mode's scores for the ground-truth paraphrase
    pairs (data/demo/README.md) against the unrelated pairs.
Every run uses a fresh embedding cache under the work folder and `--cores` (default 2).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
LAST_CPU = [0.0]
WORDS = (
    "care carer family parent mother father work job shift money cost budget benefit health "
    "sleep pain stress anxiety guilt duty respite support service nurse doctor hospital "
    "appointment time isolation friend loneliness home dementia memory safety night travel "
    "distance sibling conflict grief loss identity role future plan housing paperwork "
    "assessment council agency staff training skill confidence relief gratitude humour faith"
).split()


def env(cache: Path) -> dict:
    e = dict(os.environ, HF_HUB_OFFLINE="1", THEMESIM_EMBED_CACHE=str(cache))
    e["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), e.get("PYTHONPATH", "")]).strip(":")
    return e


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def snakemake(root: Path, cache: Path, *args, wrap=()) -> tuple[float, str]:
    """Wall time and output of one snakemake run; LAST_CPU holds its CPU seconds (a shared
    machine stretches wall times, CPU time much less)."""
    cmd = [*wrap, sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
    cmd += ["-d", str(root)]
    t, c = time.perf_counter(), child_cpu()
    proc = subprocess.run(cmd + list(args), capture_output=True, text=True, env=env(cache))
    wall = time.perf_counter() - t
    LAST_CPU[0] = child_cpu() - c
    if proc.returncode != 0:
        tail = f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        sys.exit(f"snakemake {' '.join(args)} failed:\n{tail}")
    return wall, proc.stdout + proc.stderr


def job_counts(out: str) -> dict[str, int]:
    counts = {}
    for line in out.split("Job stats:", 1)[-1].splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


def show(label: str, value) -> None:
    print(f"  {label:<58} {value}")


# ---------------------------------------------------------------- studies


def demo_study(work: Path, null_pool: int | None, bootstrap: int | None) -> Path:
    """A copy of the demo study; None keeps the shipped setting."""
    root = work / "demo"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(REPO / "data", root / "data")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if null_pool is not None:
        cfg["metrics"]["null_model"]["pool"] = null_pool
    if bootstrap is not None:
        cfg["metrics"]["bootstrap"]["n"] = bootstrap
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root


def synthetic_sets(folder: Path, n_sets: int, n_themes: int = 5, seed: int = 0) -> list[str]:
    """n_sets CSV theme files of n_themes seeded word-list themes each."""
    import numpy as np

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in range(n_sets):
        path = folder / f"run{s:03d}.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name", "description"])
            for t in range(n_themes):
                name = " ".join(rng.choice(WORDS, size=3)).capitalize()
                desc = " ".join(rng.choice(WORDS, size=int(rng.integers(8, 25))))
                w.writerow([f"T{t + 1}", name, desc.capitalize()])
        paths.append(str(path.relative_to(folder.parent)))
    return paths


METHODS = {
    "minilm": {"kind": "sentence_transformer", "thresholds": [0.56]},
    "mpnet": {"kind": "sentence_transformer", "thresholds": [0.62]},
    "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
}


def synthetic_study(root: Path, n_sets: int, methods: list[str], n_themes: int = 5, **cfg) -> Path:
    if root.exists():
        shutil.rmtree(root)
    paths = synthetic_sets(root / "data", n_sets, n_themes)
    config = {
        "study": {"name": f"synthetic-{n_sets}"},
        "theme_sets": [{"path": p} for p in paths],
        "methods": {m: METHODS[m] for m in methods},
    } | cfg
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


# ---------------------------------------------------------------- P0-P7


def timed_snakemake(root: Path, cache: Path, *args) -> tuple[float, float, str]:
    """Wall seconds, peak resident memory (GB, the largest single process of the run, as
    GNU time reports it) and output of one snakemake run."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        wall, out = snakemake(root, cache, *args, wrap=["/usr/bin/time", "-o", f.name, "-f", "%M"])
        kb = int(f.read().split()[-1])
    return wall, kb / 1024**2, out


def p0(a, state) -> None:
    print("P0  one 12 x 12 comparison (minilm, null pool and transport on), cold and warm")
    root = synthetic_study(a.workdir / "p0", 2, ["minilm"], n_themes=12)
    cache = a.workdir / "cache-p0"
    shutil.rmtree(cache, ignore_errors=True)
    cold, cold_gb, out = timed_snakemake(root, cache, "--cores", str(a.cores))
    show("jobs", sum(job_counts(out).values()))
    show("cold (fresh embedding cache): wall, peak RSS", f"{cold:.1f} s, {cold_gb:.2f} GB")
    show("  CPU seconds", f"{LAST_CPU[0]:.0f}")
    shutil.rmtree(root / "results")
    warm, warm_gb, _ = timed_snakemake(root, cache, "--cores", str(a.cores))
    show("warm (results removed, cache kept): wall, peak RSS", f"{warm:.1f} s, {warm_gb:.2f} GB")
    show("  CPU seconds", f"{LAST_CPU[0]:.0f}")
    show("targets (issue 14)", "cold <= 28.4 s and <= 0.55 GB; warm <= 9 s")


def floor_seconds(model: str, texts: list[str], cores: int, workdir: Path) -> float:
    """One fresh process: import, load the packaged model, encode the texts (the floor)."""
    listing = workdir / f"floor-{model.replace('/', '_')}.txt"
    listing.write_text("\n".join(texts))
    code = (
        "import sys, torch; torch.set_num_threads(int(sys.argv[3]));"
        "from themesim.embed import encode as e;"
        "from sentence_transformers import SentenceTransformer;"
        "m = SentenceTransformer(e.resolve_model(sys.argv[1]).path, device='cpu');"
        "t = open(sys.argv[2]).read().split(chr(10));"
        "m.encode(t, batch_size=64, normalize_embeddings=True, show_progress_bar=False)"
    )
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, model, str(listing), str(cores)],
        check=True,
        env=env(workdir / "cache-floor"),
    )
    return time.perf_counter() - t


def p6(a, state) -> None:
    print("P6  the demo study cold (fresh embedding cache) next to its floor")
    import pandas as pd

    root = demo_study(a.workdir, None, None)
    cache = a.workdir / "cache-p6"
    shutil.rmtree(cache, ignore_errors=True)
    wall, gb, out = timed_snakemake(root, cache, "--cores", str(a.cores))
    show("jobs", sum(job_counts(out).values()))
    show("demo cold: wall, peak RSS", f"{wall:.1f} s ({LAST_CPU[0]:.0f} s CPU), {gb:.2f} GB")
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    res = root / "results"
    seg = res / "transcripts" / "segments.parquet"
    segments = pd.read_parquet(seg)["text"].tolist() if seg.exists() else []
    floor = 0.0
    for method, spec in cfg["methods"].items():
        if spec.get("kind") != "sentence_transformer" or spec.get("active") is False:
            continue
        texts = set(segments)
        for folder, col in (("embeddings", "text"), ("keyword_embeddings", "keyword"),
                            ("nulls", "text")):  # fmt: skip
            for f in (res / folder / method).glob("*.parquet"):
                texts |= set(pd.read_parquet(f, columns=[col])[col])
        s = floor_seconds(spec["model"], sorted(texts), a.cores, a.workdir)
        show(f"floor {method}: load + bare encode of {len(texts)} texts", f"{s:.1f} s")
        floor += s
    show("floor (sum over models)", f"{floor:.1f} s")
    show("ratio demo / floor", f"{wall / floor:.2f}")
    show("targets (issue 14)", "<= 300 s; ratio <= 1.3")


def p1(a, state) -> None:
    print(f"P1  threshold change after a full demo run (pool {a.null_pool}, boot {a.bootstrap})")
    root = demo_study(a.workdir, a.null_pool, a.bootstrap)
    cache = a.workdir / "cache-demo"
    shutil.rmtree(cache, ignore_errors=True)
    full, out = snakemake(root, cache, "--cores", str(a.cores))
    state["demo"] = (root, cache)
    show("full run: jobs", sum(job_counts(out).values()))
    show("full run: wall time (s)", f"{full:.1f} ({LAST_CPU[0]:.0f} s CPU)")
    cfg_path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["methods"]["minilm"]["thresholds"] = [0.5, 0.6]
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    _, dry = snakemake(root, cache, "--dry-run", "--cores", str(a.cores))
    counts = job_counts(dry)
    show("rerun jobs per rule", counts)
    show("rerun embedding jobs", sum(v for k, v in counts.items() if k.startswith("embed")))
    show("rerun similarity jobs", sum(v for k, v in counts.items() if k.startswith("similarity")))
    rerun, _ = snakemake(root, cache, "--cores", str(a.cores))
    show("rerun wall time (s)", f"{rerun:.1f} ({LAST_CPU[0]:.0f} s CPU)")
    show("rerun / full run", f"{rerun / full:.3f}")


def p2(a, state) -> None:
    print(f"P2  embed step vs bare SentenceTransformer.encode ({a.texts} texts, batch 64)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import pandas as pd
    import torch

    from themesim.embed import encode as embed
    from themesim.io.themes import read_theme_file, write_themes_parquet
    from themesim.metrics.nulls import word_salad_sets
    from themesim.steps import embed as embed_step

    human = read_theme_file(REPO / "data/demo/themes/human.csv", set_name="human")
    k = a.texts // len(human) + 1
    texts = [t for s in word_salad_sets(human["text"].tolist(), k, seed=7) for t in s]
    texts = list(dict.fromkeys(texts))[: a.texts]
    table = pd.DataFrame({c: [human[c].iloc[0]] * len(texts) for c in human.columns})
    table["theme_id"] = [f"T{i}" for i in range(len(texts))]
    table["text"] = texts
    tmp = Path(tempfile.mkdtemp(dir=a.workdir))
    write_themes_parquet(table, tmp / "themes.parquet")

    torch.set_num_threads(a.threads)
    source = embed.resolve_model(embed.MINILM)
    t = time.perf_counter()
    model = embed.load_model(source)  # the pipeline's one load per job (memoised)
    load = time.perf_counter() - t
    from sentence_transformers import SentenceTransformer

    bare_model = SentenceTransformer(source.path, device="cpu")
    spec = {"model": embed.MINILM, "batch_size": 64}
    model.encode(texts[:64], batch_size=64)  # warm both code paths once
    bare_model.encode(texts[:64], batch_size=64)

    def bare():
        bare_model.encode(
            texts,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def step():
        embed_step.embed_set(
            tmp / "themes.parquet",
            tmp / "emb.parquet",
            method="minilm",
            spec=spec,
            threads=a.threads,
            cache=False,
        )

    times = {"bare": [], "step": []}
    for r in range(a.rounds):
        for name, fn in (("bare", bare), ("step", step))[:: 1 if r % 2 == 0 else -1]:
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    bare_s, step_s = statistics.median(times["bare"]), statistics.median(times["step"])
    show("model load, once per job (s)", f"{load:.2f}")
    n = len(texts)
    show(f"bare encode, median of {a.rounds} (s)", f"{bare_s:.2f} ({n / bare_s:.0f} texts/s)")
    show(f"embed step, median of {a.rounds} (s)", f"{step_s:.2f} ({n / step_s:.0f} texts/s)")
    show("throughput ratio step / bare", f"{bare_s / step_s:.3f}")
    show("token lengths (distinct)", len(set(embed.token_lengths(model, texts))))


def p3(a, state) -> None:
    print("P3  one theme set added to the demo study after its full run")
    if "demo" not in state:
        root = demo_study(a.workdir, a.null_pool, a.bootstrap)
        cache = a.workdir / "cache-demo"
        shutil.rmtree(cache, ignore_errors=True)
        snakemake(root, cache, "--cores", str(a.cores))
    else:
        root, cache = state["demo"]
    # Three themes copied from llm_paraphrase, one reworded, one new.
    from themesim.io.themes import read_theme_file

    base = read_theme_file(root / "data/demo/themes/llm_paraphrase.yaml", set_name="x")
    rows = [(r["name"], r["description"]) for _, r in base.head(3).iterrows()]
    rows[2] = (rows[2][0], rows[2][1] + " Reworded for the new run.")
    rows.append(("Pets as companions", "Carers mention the family dog as company and comfort."))
    new = root / "data/demo/themes/llm_run5.csv"
    with open(new, "w", newline="") as f:
        csv.writer(f).writerows([["name", "description"], *rows])
    cfg_path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["theme_sets"].append({"path": "data/demo/themes/llm_run5.csv"})
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    _, dry = snakemake(root, cache, "--dry-run", "--cores", str(a.cores))
    show("jobs per rule", job_counts(dry))
    snakemake(root, cache, "--cores", str(a.cores))
    show("new set: themes (2 unchanged, 1 reworded, 1 new)", len(rows))
    for log in sorted((root / "logs/embed").glob("*.log")):  # one embedding job per method
        for line in log.read_text().splitlines():
            if " encoded, " in line:
                show(log.stem, line.split(": ", 1)[1].split(" (cache")[0])


def p4(a, state) -> None:
    print("P4  snakemake --dry-run over synthetic sets x 3 methods (minilm, mpnet, tfidf)")
    methods = ["minilm", "mpnet", "tfidf"]
    for all_pairs in (False, True):
        for n in a.p4_sets:
            root = synthetic_study(
                a.workdir / f"p4-{n}", n, methods, comparisons={"all_pairs": all_pairs}
            )
            wall, out = snakemake(root, a.workdir / "cache-p4", "--dry-run", "--cores", "2")
            counts = job_counts(out)
            total = sum(counts.values())
            pairs = n * (n - 1) // 2 if all_pairs else n - 1
            label = f"{n} sets, {'all pairs' if all_pairs else 'ref vs each'} ({pairs} pairs)"
            per = total / (n * len(methods))
            cpu = LAST_CPU[0]
            show(
                label,
                f"{total} jobs, {wall:.1f} s ({cpu:.1f} s CPU), jobs/(sets x methods) {per:.2f}",
            )
            if n == max(a.p4_sets):
                show("  jobs per rule", counts)


def p5(a, state) -> None:
    methods = a.p5_methods
    print(f"P5  peak memory per rule, real run at {a.p5_sets} synthetic sets ({','.join(methods)})")
    root = synthetic_study(
        a.workdir / "p5",
        a.p5_sets,
        methods,
        metrics={"bootstrap": {"n": a.bootstrap, "seed": 0}, "null_model": {"pool": a.null_pool}},
    )
    cache = a.workdir / "cache-p5"
    shutil.rmtree(cache, ignore_errors=True)
    wall, out = snakemake(root, cache, "--cores", str(a.cores))
    show("jobs", sum(job_counts(out).values()))
    show("wall time (s)", f"{wall:.1f}")
    peak: dict[str, tuple[float, str]] = {}
    for tsv in (root / "benchmarks").rglob("*.tsv"):
        rows = list(csv.DictReader(open(tsv), delimiter="\t"))
        rss = max(float(r["max_rss"]) for r in rows if r["max_rss"] not in ("", "-"))
        rule = tsv.relative_to(root / "benchmarks").parts[0]
        if rss > peak.get(rule, (0, ""))[0]:
            peak[rule] = (rss, str(tsv.relative_to(root / "benchmarks")))
    for rule, (rss, where) in sorted(peak.items(), key=lambda kv: -kv[1][0]):
        show(f"{rule} (largest: {where})", f"{rss:.0f} MB max_rss")


# Ground truth of data/demo/README.md: human theme -> its llm_paraphrase counterpart.
PARAPHRASE = {
    "H01": "P02", "H02": "P04", "H03": "P01", "H04": "P06", "H05": "P03",
    "H06": "P08", "H07": "P05", "H08": "P10", "H09": "P09", "H10": "P07",
}  # fmt: skip


def p7(a, state) -> None:
    from dataclasses import replace

    from sklearn.metrics import roc_auc_score

    from themesim.io.themes import read_theme_file
    from themesim.llm.judge import JudgeSettings, judge_matrix
    from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

    themes = REPO / "data" / "demo" / "themes"
    ta = read_theme_file(themes / "human.csv").head(a.p7_themes)
    tb = read_theme_file(themes / "llm_paraphrase.yaml").head(a.p7_themes)
    truth = [[PARAPHRASE[i] == j for j in tb["theme_id"]] for i in ta["theme_id"]]
    n = len(ta) * len(tb)
    print(f"P7  LLM judge, {len(ta)} x {len(tb)} demo themes (human x llm_paraphrase), {n} pairs")
    new = JudgeSettings()
    # (settings, server threads, logits of every prompt token); "before" as in issue 13 but
    # for the threads: LlamaServer(threads=None) now means every available core.
    runs = {
        "before": (replace(new, prompt="judge_v2", concurrency=2), None, lambda mode: True),
        "after": (new, a.cores, lambda mode: mode == "logprob"),
    }
    for label in a.p7_runs:
        base, threads, logits_all = runs[label]
        for mode in ("json", "logprob"):
            with LlamaServer(
                packaged_model_path(),
                n_ctx=base.n_ctx,
                threads=threads,
                logits_all=logits_all(mode),
            ) as srv:
                s = replace(
                    base, score_mode=mode, base_url=srv.base_url, model=packaged_model_name()
                )
                cache = a.workdir / f"p7-{label}-{mode}.sqlite"
                cache.unlink(missing_ok=True)
                load = os.getloadavg()[0]
                t = time.perf_counter()
                scores, stats = judge_matrix(
                    ta["text"].tolist(), tb["text"].tolist(), s, cache, progress=False
                )
                wall = time.perf_counter() - t
                import sqlite3

                with sqlite3.connect(cache) as con:
                    per = [r[0] for r in con.execute("SELECT seconds FROM judgements")]
                auc = roc_auc_score(np.ravel(truth), np.ravel(scores))
                show(
                    f"{label} {mode} ({s.prompt}, threads {threads or 'default'}, "
                    f"concurrency {s.concurrency})",
                    f"{wall / n:.2f} s/judgement (wall {wall:.0f} s); median request "
                    f"{statistics.median(per):.2f} s; AUC {auc:.3f}; load {load:.1f}",
                )
                state[f"p7-{label}-{mode}"] = scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default="P1,P2,P3,P4,P5", help="comma-separated parts")
    ap.add_argument("--workdir", type=Path, help="kept; default a temporary folder, removed")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--null-pool", type=int, default=50, help="word-salad pool texts (P1, P3, P5)")
    ap.add_argument("--bootstrap", type=int, default=100, help="bootstrap draws (P1, P3, P5)")
    ap.add_argument("--texts", type=int, default=2000, help="texts encoded in P2")
    ap.add_argument("--threads", type=int, default=2, help="torch threads in P2")
    ap.add_argument("--rounds", type=int, default=3, help="alternating timing rounds in P2")
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    ap.add_argument("--p4-sets", type=ints, default=[50, 100, 200])
    ap.add_argument("--p5-sets", type=int, default=200)
    ap.add_argument("--p5-methods", type=lambda s: s.split(","), default=["tfidf"])
    ap.add_argument("--p7-themes", type=int, default=10, help="themes of each set in P7")
    ap.add_argument("--p7-runs", type=lambda s: s.split(","), default=["before", "after"])
    a = ap.parse_args()
    parts = [p.strip().upper() for p in a.only.split(",")]
    keep = a.workdir is not None
    a.workdir = (a.workdir or Path(tempfile.mkdtemp(prefix="themesim-bench-"))).resolve()
    a.workdir.mkdir(parents=True, exist_ok=True)
    print(f"work folder {a.workdir}; {time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} CPUs")
    state: dict = {}
    try:
        parts_fn = (("P0", p0), ("P1", p1), ("P2", p2), ("P3", p3), ("P4", p4), ("P5", p5))
        for name, fn in (*parts_fn, ("P6", p6), ("P7", p7)):
            if name in parts:
                t = time.perf_counter()
                fn(a, state)
                print(f"  ({name} took {time.perf_counter() - t:.0f} s)\n", flush=True)
    finally:
        if not keep:
            shutil.rmtree(a.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
