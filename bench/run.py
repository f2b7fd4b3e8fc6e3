"""Speed and scale figures of the workflow (issue 6, P1-P5). A benchmark, not a test: it
prints each figure and ratio and asserts nothing about time.

    PYTHONPATH=src .venv/bin/python bench/run.py [--only P0,P1,...,P7] [--workdir DIR]

P1  full run of a copy of the demo study (null k and bootstrap n made small, see --null-k,
    --bootstrap), then a threshold change: jobs per rule of the rerun (no embed*, no
    similarity*) and its wall time as a fraction of the full run.
P2  throughput of the pipeline's embed step (themesim.steps.embed_files.embed_set: read themes,
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
LOAD issue 15: a study of --load-sets realistic theme sets (5-10 themes each, sampled and
    reworded from data/demo/themes), all pairs, minilm + tfidf, null model and bootstrap at
    their defaults, `snakemake --cores 2` under /usr/bin/time. First the same study at
    --load-predict sizes (default 10,20 sets): per rule, job seconds fitted as
    a x sets + b x pairs, extrapolated to --load-sets and printed next to the measurement.
    Then a second run from a removed results/ (embedding cache kept): sha256 of every file
    under results/ must match. Peak RSS per rule from Snakemake's benchmark files, load
    average of the machine sampled during the run. --load-dry predicts only.
P7  LLM judge (issue 14): seconds per judgement with the packaged Qwen2.5-Coder-1.5B on a local
    llama.cpp server, json and logprob mode, the issue-13 settings ("before": prompt judge_v2,
    llama.cpp's default threads, 2 requests at a time) next to today's defaults ("after").
    The demo's human x llm_paraphrase themes (--p7-themes of each, default 10 x 10), a fresh
    judge cache per run; also the AUC of each mode's scores for the ground-truth paraphrase
    pairs (data/demo/README.md) against the unrelated pairs. --p7-backend native,python runs
    each with llama.cpp's own llama-server and with llama-cpp-python's server; a backend named
    twice repeats its runs and prints the largest score change between them and whether they
    are bit-identical; later backends print their score differences to the first. The server's
    CPU seconds per judgement are printed too. --p7-parallel (llama-server's slots),
    --p7-concurrency (requests in flight; the judge sends 1 to its local server) and
    --p7-server-args (extra llama-server options, also named in the cache key) vary the setup.
GPU issue 27: the project's encode on an accelerator (--device, default cuda) against a bare
    SentenceTransformer.encode(batch_size=256) of the same weights (--model-path, default
    bench/.assets/minilm from bench/gpu_assets.py, else the packaged MiniLM) at --texts texts
    (default 40,000), per --gpu-dtypes; ratio, cosine to the CPU's float32 vectors, bit
    identity in another order. Without the device it prints that it skipped. Imports only
    torch, transformers, sentence-transformers, numpy and themesim.embed.encode
    (bench/gpu_speed.py); bench/gpu_check.sh runs it on a GPU machine.
Every run uses a fresh embedding cache under the work folder and `--cores` (default 2).
"""

from __future__ import annotations

import argparse
import csv
import json
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
import yaml  # also a dependency of transformers: present on a bare GPU machine

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


def snakemake(root: Path, cache: Path, *args) -> tuple[float, str]:
    """Wall time and output of one snakemake run; LAST_CPU holds its CPU seconds (a shared
    machine stretches wall times, CPU time much less)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root)]
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


def p0(a, state) -> None:
    print("P0  one 12 x 12 comparison (minilm, null pool and transport on), cold and warm")
    root = synthetic_study(a.workdir / "p0", 2, ["minilm"], n_themes=12)
    cache = a.workdir / "cache-p0"
    shutil.rmtree(cache, ignore_errors=True)
    for label, log in (("cold (fresh embedding cache)", "p0-cold.log"),
                       ("warm (results removed, cache kept)", "p0-warm.log")):  # fmt: skip
        if label.startswith("warm"):
            shutil.rmtree(root / "results")
        r = timed_snakemake(root, cache, a.cores, a.workdir / log)
        show("jobs", sum(r["jobs"].values()))
        show(f"{label}: wall, peak RSS", f"{r['wall']:.1f} s, {r['max_rss_mb'] / 1024:.2f} GB")
        show("  CPU seconds", f"{r['cpu']:.0f}")
    show("targets (issue 14)", "cold <= 28.4 s and <= 0.55 GB; warm <= 9 s")


def floor_seconds(model: str, texts: list[str], cores: int, workdir: Path) -> float:
    """One fresh process: import, load the packaged model, encode the texts (the floor)."""
    listing = workdir / f"floor-{model.replace('/', '_')}.txt"
    listing.write_text("\n".join(texts))
    code = (
        "import sys, torch; torch.set_num_threads(int(sys.argv[3]));"
        "from themesim.embed.models import resolve_model;"
        "from sentence_transformers import SentenceTransformer;"
        "m = SentenceTransformer(resolve_model(sys.argv[1]).path, device='cpu');"
        "t = open(sys.argv[2]).read().split(chr(10));"
        "m.encode(t, batch_size=64, normalize_embeddings=True, show_progress_bar=False)"
    )
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, model, str(listing), str(cores)],
        check=True,
        # As the embedding jobs: no OpenMP spin-waiting on shared cores.
        env={"OMP_WAIT_POLICY": "PASSIVE"} | env(workdir / "cache-floor"),
    )
    return time.perf_counter() - t


def judge_floor_seconds(pairs: list[tuple[str, str]], cores: int, workdir: Path) -> float:
    """One fresh process: import, start the default local judge server, score the pairs the
    demo's judge asked (read from its cache) with the default settings into a fresh cache."""
    listing = workdir / "floor-judge.json"
    listing.write_text(json.dumps(pairs))
    cache = workdir / "floor-judge.sqlite"
    cache.unlink(missing_ok=True)
    # judge_pairs starts the default local server itself, as the calibration job does.
    code = (
        "import sys, json; from dataclasses import replace;"
        "from themesim.llm.judge import judge_pairs;"
        "from themesim.llm.judge_settings import JudgeSettings;"
        "p = json.load(open(sys.argv[1])); s = replace(JudgeSettings(), threads=int(sys.argv[3]));"
        "judge_pairs([x[0] for x in p], [x[1] for x in p], s, sys.argv[2], progress=False)"
    )
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, str(listing), str(cache), str(cores)],
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
    r = timed_snakemake(root, cache, a.cores, a.workdir / "p6.log")
    wall = r["wall"]
    show("jobs", sum(r["jobs"].values()))
    gb = r["max_rss_mb"] / 1024
    show("demo cold: wall, peak RSS", f"{wall:.1f} s ({r['cpu']:.0f} s CPU), {gb:.2f} GB")
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    res = root / "results"
    seg = res / "transcripts" / "segments.parquet"
    segments = pd.read_parquet(seg)["text"].tolist() if seg.exists() else []
    floor = 0.0
    from themesim.kinds import method_defaults

    for method, given in cfg["methods"].items():
        spec = method_defaults(method, given or {})  # the demo states only what differs
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
    judged = res / "cache" / "judge.sqlite"
    if judged.exists():
        import sqlite3

        with sqlite3.connect(judged) as con:
            pairs = [tuple(r) for r in con.execute("SELECT text_a, text_b FROM judgements")]
        s = judge_floor_seconds(sorted(set(pairs)), a.cores, a.workdir)
        show(f"floor judge: server start + {len(set(pairs))} bare judgements", f"{s:.1f} s")
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
    n_texts = a.texts or 2000
    print(f"P2  embed step vs bare SentenceTransformer.encode ({n_texts} texts, batch 64)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import pandas as pd
    import torch

    from themesim.embed import encode as embed
    from themesim.embed import models, tokens
    from themesim.io.themes import read_theme_file, write_themes_parquet
    from themesim.metrics.sets.nulls import word_salad_sets
    from themesim.steps import embed_files as embed_step

    human = read_theme_file(REPO / "data/demo/themes/human.csv", set_name="human")
    k = n_texts // len(human) + 1
    texts = [t for s in word_salad_sets(human["text"].tolist(), k, seed=7) for t in s]
    texts = list(dict.fromkeys(texts))[:n_texts]
    table = pd.DataFrame({c: [human[c].iloc[0]] * len(texts) for c in human.columns})
    table["theme_id"] = [f"T{i}" for i in range(len(texts))]
    table["text"] = texts
    tmp = Path(tempfile.mkdtemp(dir=a.workdir))
    write_themes_parquet(table, tmp / "themes.parquet")

    torch.set_num_threads(a.threads)
    source = models.resolve_model(models.MINILM)
    t = time.perf_counter()
    model = embed.load_model(source)  # the pipeline's one load per job (memoised)
    load = time.perf_counter() - t
    from sentence_transformers import SentenceTransformer

    bare_model = SentenceTransformer(source.path, device="cpu")
    spec = {"model": models.MINILM, "batch_size": 64}
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
    show("token lengths (distinct)", len(set(tokens.token_lengths(model, texts))))


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


# ---------------------------------------------------------------- LOAD (issue 15)

# Small rewordings so sampled demo themes differ from set to set, as repeated runs do.
SWAPS = {
    "carers": "caregivers",
    "Carers": "Caregivers",
    "caring": "looking after someone",
    "Participants": "Interviewees",
    "describe": "talk about",
    "discuss": "reflect on",
    "challenges": "difficulties",
    "support": "help",
    "services": "agencies",
    "family": "relatives",
    "work": "employment",
    "including": "such as",
    "impact": "effect",
    "loved ones": "the person they care for",
}


def demo_themes() -> list[tuple[str, str]]:
    """(name, description) of every theme of data/demo/themes, in file order."""
    from themesim.io.themes import read_theme_file

    pool = []
    for path in sorted((REPO / "data" / "demo" / "themes").iterdir()):
        df = read_theme_file(path)
        pool += list(zip(df["name"], df["description"], strict=True))
    return pool


def reword(text: str, rng) -> str:
    """Some of SWAPS applied, and a clause dropped from a long sentence now and then."""
    for old, new in SWAPS.items():
        if re.search(rf"\b{old}\b", text) and rng.random() < 0.4:
            text = re.sub(rf"\b{old}\b", new, text)
    clauses = text.split(", ")
    if len(clauses) > 3 and rng.random() < 0.5:
        del clauses[int(rng.integers(1, len(clauses)))]
    text = ", ".join(clauses)
    return text if text.endswith(".") else text + "."


def realistic_sets(folder: Path, n_sets: int, seed: int = 0) -> list[str]:
    """n_sets CSV theme files of 5-10 demo themes each, seeded sample, each reworded."""
    rng = np.random.default_rng(seed)
    pool = demo_themes()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in range(n_sets):
        path = folder / f"run{s:03d}.csv"
        picks = rng.choice(len(pool), size=int(rng.integers(5, 11)), replace=False)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name", "description"])
            for t, i in enumerate(picks):
                name, desc = pool[i]
                w.writerow([f"T{t + 1:02d}", reword(name, rng).rstrip("."), reword(desc, rng)])
        paths.append(str(path.relative_to(folder.parent)))
    return paths


def max_pair_heatmaps_default() -> int:
    """plots.max_pair_heatmaps' default (the schema's): above it a method draws one overview,
    not a heatmap a pair."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return schema["properties"]["plots"]["properties"]["max_pair_heatmaps"]["default"]


def load_study(root: Path, n_sets: int, overview: bool = False) -> Path:
    """All pairs, minilm + tfidf, every metric setting at its default (null pool 200,
    bootstrap 1000). overview: the smaller sizes a prediction is fitted on draw the pair
    overview as the target size will (max_pair_heatmaps 0), not one heatmap a pair: the fit
    must see the cost the target size pays."""
    if root.exists():
        shutil.rmtree(root)
    paths = realistic_sets(root / "data", n_sets)
    config = {
        "study": {"name": f"load-{n_sets}"},
        "theme_sets": [{"path": p} for p in paths],
        "comparisons": {"all_pairs": True},
        "methods": {m: METHODS[m] for m in ("minilm", "tfidf")},
    } | ({"plots": {"max_pair_heatmaps": 0}} if overview else {})
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


class LoadSampler:
    """The machine's 1-minute load average every `every` seconds in a thread."""

    def __init__(self, every: float = 15.0):
        import threading

        self.values: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)

    def _run(self, every):
        while True:
            self.values.append(os.getloadavg()[0])
            if self._stop.wait(every):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        v = self.values
        return f"mean {statistics.mean(v):.1f}, min {min(v):.1f}, max {max(v):.1f} (n {len(v)})"


def timed_snakemake(root: Path, cache: Path, cores: int, log: Path) -> dict:
    """One `snakemake --cores` run under /usr/bin/time -v: wall, CPU, peak RSS of the
    largest single process, jobs per rule, machine load."""
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
    cmd += ["-d", str(root), "--cores", str(cores)]
    with LoadSampler() as load, open(log, "w") as f:
        t = time.perf_counter()
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, text=True, env=env(cache))
        wall = time.perf_counter() - t
    out = log.read_text()
    if proc.returncode != 0:
        sys.exit(f"snakemake failed, see {log}:\n{out[-3000:]}")

    def field(name):
        m = re.search(rf"{re.escape(name)}: (.+)", out)
        return m.group(1).strip() if m else "?"

    return {
        "wall": wall,
        "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "max_rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024,
        "jobs": job_counts(out),
        "load": load.summary(),
    }


def rule_benchmarks(root: Path) -> dict[str, dict]:
    """Per rule from benchmarks/: jobs, summed job seconds (wall `s` and `cpu_time`),
    largest max_rss (MB)."""
    rules: dict[str, dict] = {}
    for tsv in (root / "benchmarks").rglob("*.tsv"):
        rule = tsv.relative_to(root / "benchmarks").parts[0]
        r = rules.setdefault(
            rule, {"jobs": 0, "s": 0.0, "cpu_time": 0.0, "max_rss": 0.0, "largest": ""}
        )
        for row in csv.DictReader(open(tsv), delimiter="\t"):
            r["jobs"] += 1
            r["s"] += float(row["s"])
            r["cpu_time"] += float(row.get("cpu_time") or 0.0)
            rss = float(row["max_rss"]) if row["max_rss"] not in ("", "-", "NA") else 0.0
            if rss > r["max_rss"]:
                r["max_rss"], r["largest"] = rss, str(tsv.relative_to(root / "benchmarks"))
    return rules


def results_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under results/."""
    import hashlib

    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "results").rglob("*"))
        if p.is_file()
    }


def pairs_of(n: int) -> int:
    return n * (n - 1) // 2


def predict(
    fits: dict[int, dict[str, dict]], n: int, cores: int, key: str = "s"
) -> tuple[dict, float]:
    """Per rule, job seconds (`key`: wall `s` or `cpu_time`) at n sets, from the measured
    sizes: with three or more, c + a x sets + b x pairs by least squares (c: the job's fixed
    start-up, which two small sizes confuse with the per-set term); with two, a x sets +
    b x pairs. And a wall time: every job shares the cores, the two metrics jobs (one per
    method) side by side."""
    from scipy.optimize import nnls

    sizes = sorted(fits)
    three = len(sizes) >= 3
    A = np.array([([1.0] if three else []) + [m, pairs_of(m)] for m in sizes], dtype=float)
    x_n = np.array(([1.0] if three else []) + [n, pairs_of(n)])
    out = {}
    for rule in sorted(set().union(*(fits[m] for m in sizes))):
        y = np.array([fits[m].get(rule, {key: 0.0})[key] for m in sizes])
        # Non-negative least squares: a negative term would be noise of a shared machine.
        coef = nnls(A, y)[0]
        out[rule] = float(max(x_n @ coef, 0.0))
    per_metrics_job = out.get("metrics", 0.0) / 2  # two methods, two jobs
    rest = sum(v for k, v in out.items() if k != "metrics")
    return out, rest / cores + max(per_metrics_job, out.get("metrics", 0.0) / cores)


def load(a, state) -> None:
    n = a.load_sets
    print(f"LOAD  {n} realistic sets, all pairs, minilm + tfidf, nulls on, --cores {a.cores}")
    fits: dict[int, dict] = {}
    # The target's pairs without the reference (n - 1 are the reference's) decide whether it
    # draws the overview; the sizes the prediction is fitted on draw it then too.
    overview = pairs_of(n) - (n - 1) > max_pair_heatmaps_default()
    for m in a.load_predict:
        if a.load_keep and (a.workdir / f"load-{m}" / "benchmarks").is_dir():
            fits[m] = rule_benchmarks(a.workdir / f"load-{m}")  # measured by an earlier call
            show(f"{m} sets: benchmarks of the earlier run kept", f"{a.workdir / f'load-{m}'}")
            continue
        root = load_study(a.workdir / f"load-{m}", m, overview=overview)
        cache = a.workdir / f"cache-load-{m}"
        shutil.rmtree(cache, ignore_errors=True)
        r = timed_snakemake(root, cache, a.cores, a.workdir / f"load-{m}.log")
        fits[m] = rule_benchmarks(root)
        met = fits[m].get("metrics", {"s": 0.0})["s"]
        show(
            f"{m} sets, {pairs_of(m)} pairs: wall / CPU / peak RSS",
            f"{r['wall']:.0f} s / {r['cpu']:.0f} s / {r['max_rss_mb']:.0f} MB, load {r['load']}",
        )
        show(
            "  metrics job seconds per comparison (2 methods)",
            f"{met / (2 * pairs_of(m)):.3f} s ({met:.0f} s in all)",
        )
    rules, wall = {}, float("nan")
    for size in sorted(set(a.load_predict_at) | {n}) if len(fits) >= 2 else ():
        rules_at, wall_at = predict(fits, size, a.cores)
        cpu_at = sum(predict(fits, size, a.cores, key="cpu_time")[0].values())
        show(
            f"prediction at {size} sets ({pairs_of(size)} pairs per method)",
            f"{wall_at:.0f} s; job CPU {cpu_at:.0f} s ({cpu_at / a.cores:.0f} s on idle cores)",
        )
        if size == n:
            rules, wall = rules_at, wall_at
    for rule, s in sorted(rules.items(), key=lambda kv: -kv[1]):
        show(f"  {rule} job seconds at {n} sets", f"{s:.0f}")
    state["load-prediction"] = (wall, rules)
    if a.load_dry:
        return
    root = load_study(a.workdir / f"load-{n}", n)
    cache = a.workdir / f"cache-load-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    first = timed_snakemake(root, cache, a.cores, a.workdir / f"load-{n}-first.log")
    measured = rule_benchmarks(root)
    digest = results_digest(root)
    shutil.rmtree(root / "results")
    shutil.move(root / "benchmarks", a.workdir / f"load-{n}-first-benchmarks")
    second = timed_snakemake(root, cache, a.cores, a.workdir / f"load-{n}-second.log")
    again = results_digest(root)
    differ = sorted(k for k in set(digest) | set(again) if digest.get(k) != again.get(k))
    show("jobs", f"{sum(first['jobs'].values())} {first['jobs']}")
    show("wall, first run (fresh cache)", f"{first['wall']:.0f} s (predicted {wall:.0f} s)")
    show("CPU, first run", f"{first['cpu']:.0f} s; load average {first['load']}")
    show("peak RSS of one process, first run", f"{first['max_rss_mb']:.0f} MB")
    show("wall, second run (results removed, cache kept)", f"{second['wall']:.0f} s")
    show("load average, second run", second["load"])
    show("files under results/", len(digest))
    show("byte-identical", "yes" if not differ else f"NO: {len(differ)} differ: {differ[:20]}")
    for rule, r in sorted(measured.items(), key=lambda kv: -kv[1]["max_rss"]):
        show(
            f"  {rule}: {r['jobs']} jobs, {r['s']:.0f} job-s (predicted {rules.get(rule, 0):.0f})",
            f"{r['max_rss']:.0f} MB max_rss ({r['largest']})",
        )


# Ground truth of data/demo/README.md: human theme -> its llm_paraphrase counterpart.
PARAPHRASE = {
    "H01": "P02", "H02": "P04", "H03": "P01", "H04": "P06", "H05": "P03",
    "H06": "P08", "H07": "P05", "H08": "P10", "H09": "P09", "H10": "P07",
}  # fmt: skip


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def p7(a, state) -> None:
    from dataclasses import replace

    from themesim.io.themes import read_theme_file
    from themesim.llm.judge_settings import JudgeSettings

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
        # as the judge runs its local server: one slot, one request at a time
        "after": (replace(new, concurrency=1), a.cores, lambda mode: mode == "logprob"),
    }
    for backend in a.p7_backend:
        for label in a.p7_runs:
            p7_run(a, state, backend, label, runs[label], ta, tb, truth, n)


def p7_run(a, state, backend, label, run, ta, tb, truth, n) -> None:
    """One server per mode; s/judgement, median request, AUC (and the change to a repeat)."""
    import sqlite3
    from dataclasses import replace

    from sklearn.metrics import roc_auc_score

    from themesim.llm.judge import judge_matrix
    from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

    base, threads, logits_all = run
    for mode in a.p7_modes:
        with LlamaServer(
            packaged_model_path(),
            n_ctx=base.n_ctx,
            threads=threads,
            logits_all=logits_all(mode),
            backend=backend,
            parallel=a.p7_parallel,
            extra_args=a.p7_server_args.split(),
        ) as srv:
            s = replace(
                base,
                concurrency=a.p7_concurrency or base.concurrency,
                score_mode=mode,
                base_url=srv.base_url,
                model=packaged_model_name(),
                server_id=srv.backend_id,
            )
            cache = a.workdir / f"p7-{backend}-{label}-{mode}.sqlite"
            cache.unlink(missing_ok=True)
            load = os.getloadavg()[0]
            cpu0 = proc_cpu_s(srv.proc.pid)
            t = time.perf_counter()
            scores, stats = judge_matrix(
                ta["text"].tolist(), tb["text"].tolist(), s, cache, progress=False
            )
            wall = time.perf_counter() - t
            cpu = proc_cpu_s(srv.proc.pid) - cpu0
            with sqlite3.connect(cache) as con:
                per = [r[0] for r in con.execute("SELECT seconds FROM judgements")]
            auc = roc_auc_score(np.ravel(truth), np.ravel(scores))
            show(
                f"{srv.backend_id} {label} {mode} ({s.prompt}, threads "
                f"{threads or 'default'}, concurrency {s.concurrency}, slots {srv.parallel})",
                f"{wall / n:.2f} s/judgement (wall {wall:.0f} s); median request "
                f"{statistics.median(per):.2f} s; AUC {auc:.3f}; load {load:.1f}; "
                f"{stats.prompt_tokens / n:.1f} prompt tokens/judgement; "
                f"server CPU {cpu / n:.2f} s/judgement",
            )
            key = f"p7-{backend}-{label}-{mode}"
            if key in state:  # the same run again (e.g. --p7-backend native,native)
                diff = np.nanmax(np.abs(state[key] - scores))
                show("  max |score difference| to the previous identical run", f"{diff:.2g}")
                bits = np.array_equal(state[key], scores)
                show("  bit-identical to the previous identical run", "yes" if bits else "NO")
            state[key] = scores
            first = state.setdefault(f"p7-first-{label}-{mode}", (backend, scores))
            if first[0] != backend:  # against the first backend's scores of this mode
                d = np.abs(first[1] - scores)
                show(
                    f"  |score difference| to {first[0]}",
                    f"median {np.nanmedian(d):.2g}, max {np.nanmax(d):.2g}",
                )


# ---------------------------------------------------------------- INTERVIEW (issue 52)


def study_texts(res: Path, method: str) -> list[str]:
    """The distinct texts a study embedded with one model: transcript segments, themes,
    keywords, null pools (what the floor encodes)."""
    import pandas as pd

    texts: set[str] = set()
    seg = res / "transcripts" / "segments.parquet"
    if seg.exists():
        texts |= set(pd.read_parquet(seg, columns=["text"])["text"])
    for folder, col in (
        ("embeddings", "text"),
        ("keyword_embeddings", "keyword"),
        ("nulls", "text"),
    ):
        for f in (res / folder / method).glob("*.parquet"):
            texts |= set(pd.read_parquet(f, columns=[col])[col])
    return sorted(texts)


def interview_run(root: Path, a, log: Path, *extra) -> dict:
    """One `snakemake --cores` run of an INTERVIEW study under /usr/bin/time -v, its jobs
    followed through /proc (bench/interview.py ProcJobs)."""
    from interview import ProcJobs, rule_of_script

    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
    cmd += ["-d", str(root), *(extra or ("--cores", str(a.cores)))]
    shutil.rmtree(root / "results", ignore_errors=True)
    with LoadSampler() as load, open(log, "w") as f:
        t = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=f, stderr=subprocess.STDOUT, text=True, env=env(root / "cache")
        )
        with ProcJobs(proc.pid, rule_of_script(REPO)) as jobs:
            proc.wait()
        wall = time.perf_counter() - t
    out = log.read_text()
    if proc.returncode != 0:
        sys.exit(f"snakemake failed, see {log}:\n{out[-3000:]}")

    def field(name):
        return re.search(rf"{re.escape(name)}: (.+)", out).group(1).strip()

    html = root / "results" / "report" / "summary.html"
    return {
        "wall": wall,
        "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "max_rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024,
        "jobs": job_counts(out),
        "load": load.summary(),
        "rules": jobs.rules(),
        "snakemake": dict(jobs.main),
        "html_mb": html.stat().st_size / 2**20 if html.exists() else float("nan"),
    }


# The study's turns are drawn at this size at least; a smaller one keeps each transcript's
# first turns, so 8,000 is the first half of the 16,000-turn study whatever --interview-turns.
LARGEST = 16000
ST_MODELS = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
}


def interview_floor(root: Path, a) -> dict[str, tuple[int, float]]:
    """Per embedding model of the study: (distinct texts, wall and CPU seconds of one fresh
    process that loads it and bare-encodes them)."""
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    out = {}
    for method, spec in cfg["methods"].items():
        if spec.get("kind") != "sentence_transformer":
            continue
        model = spec.get("model") or ST_MODELS[method]
        texts = study_texts(root / "results", method)
        cpu = child_cpu()
        wall = floor_seconds(model, texts, a.cores, a.workdir)
        out[method] = (len(texts), wall, child_cpu() - cpu)
    return out


def med_min(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{min(values):.0f} / {statistics.median(values):.0f}"


def interview(a, state) -> None:
    from interview import argkp_folder, build_study

    if a.interview_runs:  # the figures of earlier runs, e.g. of two sizes run side by side
        runs: dict[int, list[dict]] = {}
        for path in a.interview_runs:
            for line in Path(path).read_text().splitlines():
                r = json.loads(line)
                runs.setdefault(r["turns"], []).append(r)
        print(f"INTERVIEW  runs read from {', '.join(map(str, a.interview_runs))}")
        interview_summary(runs)
        return

    sizes, methods = sorted(a.interview_turns), tuple(a.interview_methods)
    data = argkp_folder(a.argkp, REPO)
    print(
        f"INTERVIEW  {','.join(map(str, sizes))} turns in {a.interview_transcripts} transcripts "
        f"({data}), 3 analysts + 3 generators x 3 runs of 15 themes, {'+'.join(methods)}, "
        f"grounding on, --cores {a.cores}, {a.interview_repeats} round(s)"
    )
    show("load average before (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for rep in range(a.interview_repeats):  # sizes alternate, the floor right after each run
        for n in sizes if rep % 2 == 0 else sizes[::-1]:
            root = a.workdir / f"interview-{n}"
            info = build_study(
                root, data, n, max(sizes + [LARGEST]), a.interview_transcripts, methods
            )
            r = interview_run(root, a, a.workdir / f"interview-{n}-{rep}.log")
            r["floor"] = interview_floor(root, a)
            r["floor_s"] = sum(f[1] for f in r["floor"].values())
            r["floor_cpu"] = sum(f[2] for f in r["floor"].values())
            runs[n].append(r)
            state[("interview", n)] = root
            with open(a.workdir / "interview-runs.jsonl", "a") as f:  # kept if a print fails
                f.write(json.dumps({"turns": n, "round": rep} | r) + "\n")
            show(
                f"{n} turns, round {rep + 1}: {info['sets']} sets, {sum(r['jobs'].values())} jobs",
                f"wall {r['wall']:.0f} s, CPU {r['cpu']:.0f} s, floor {r['floor_s']:.0f} s, "
                f"load {r['load']}",
            )
    interview_summary(runs)


def interview_summary(runs: dict[int, list[dict]]) -> None:
    """The figures of INTERVIEW's runs (turns -> runs): per size, then the largest size's
    time against the smallest's."""
    runs = {n: rs for n, rs in sorted(runs.items()) if rs}
    sizes = list(runs)
    print()
    for n in sizes:
        rs = runs[n]
        walls, floors = [r["wall"] for r in rs], [r["floor_s"] for r in rs]
        print(f"  {n} turns ({len(rs)} run(s); min / median where more than one)")
        show("wall (s)", med_min(walls))
        show("CPU, every process (s)", med_min([r["cpu"] for r in rs]))
        for m, (k, *_) in rs[0]["floor"].items():
            show(
                f"floor {m}: load + bare encode of {k} distinct texts (s)",
                med_min([r["floor"][m][1] for r in rs]),
            )
        show("floor, sum over models (s)", med_min(floors))
        if all("floor_cpu" in r for r in rs):  # a shared machine stretches wall, CPU less
            show("floor CPU; study CPU / floor CPU",
                 f"{med_min([r['floor_cpu'] for r in rs])} s; "
                 f"{statistics.median(r['cpu'] / r['floor_cpu'] for r in rs):.2f}")  # fmt: skip
        ratio = [w / f for w, f in zip(walls, floors, strict=True)]
        show(
            "whole study / floor (target <= 1.5)",
            " / ".join(
                f"{x:.2f}"
                for x in ([min(ratio), statistics.median(ratio)] if len(rs) > 1 else ratio)
            ),
        )
        show(
            "peak RSS, largest process (GB; target <= 4)",
            f"{max(r['max_rss_mb'] for r in rs) / 1024:.2f}",
        )
        show("report HTML (MB; target <= 10)", f"{rs[-1]['html_mb']:.2f}")
        show(
            "snakemake itself: CPU (s), peak RSS (MB)",
            f"{med_min([r['snakemake']['cpu'] for r in rs])}, "
            f"{max(r['snakemake']['rss'] for r in rs):.0f}",
        )
        print(f"  {'rule':<22} {'jobs':>4} {'wall s':>12} {'CPU s':>12} {'peak RSS MB':>11}")
        cpu_of = {
            k: max(r["rules"][k]["cpu"] for r in rs if k in r["rules"])
            for r in rs
            for k in r["rules"]
        }
        names = sorted(cpu_of, key=lambda k: -cpu_of[k])
        for k in names:
            got = [r["rules"][k] for r in rs if k in r["rules"]]
            print(
                f"  {k:<22} {got[0]['jobs']:>4} {med_min([g['wall'] for g in got]):>12} "
                f"{med_min([g['cpu'] for g in got]):>12} {max(g['rss'] for g in got):>11.0f}"
            )
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        w_lo, w_hi = [r["wall"] for r in runs[lo]], [r["wall"] for r in runs[hi]]
        c_lo, c_hi = [r["cpu"] for r in runs[lo]], [r["cpu"] for r in runs[hi]]
        show(
            f"{hi} / {lo} turns, wall: min/min, median/median (target <= 2.1)",
            f"{min(w_hi) / min(w_lo):.2f}, {statistics.median(w_hi) / statistics.median(w_lo):.2f}",
        )
        show(
            f"{hi} / {lo} turns, CPU: min/min, median/median",
            f"{min(c_hi) / min(c_lo):.2f}, {statistics.median(c_hi) / statistics.median(c_lo):.2f}",
        )
    show("load average after (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg()))


# The report's provenance names the checkout's commit (-dirty with changes), or none.
COMMIT = re.compile(r"\b[0-9a-f]{40}(?:-dirty)?\b|not recorded")
TABLES = (".csv", ".tsv", ".parquet", ".tex", ".xlsx", ".json")


def results_tables(root: Path) -> dict[str, str]:
    """sha256 of every table under results/, and of the report's summary.* with the git
    commit it names made the same (the checkout may change between two runs; the tables are
    what must not differ)."""
    import hashlib

    out = {}
    for p in sorted((root / "results").rglob("*")):
        name = str(p.relative_to(root / "results"))
        if p.suffix in TABLES and p.is_file():
            out[name] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.name in ("summary.md", "summary.html"):
            text = COMMIT.sub("<commit>", p.read_text())
            out[name + " (commit line normalised)"] = hashlib.sha256(text.encode()).hexdigest()
    return out


def slurm_node() -> tuple[int, int] | None:
    """(CPUs, memory MB) of an idle or busy node that takes jobs, None without one."""
    if shutil.which("sinfo") is None:
        return None
    up = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True)
    states = {s.rstrip("*~#!%$@^-") for s in up.stdout.split()}
    if up.returncode or not states & {"idle", "mix", "alloc", "comp"}:
        return None
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%c %m"], capture_output=True, text=True)
    cpus, mem = out.stdout.split()[:2]
    return int(cpus), int(mem)


def slurm_args(cpus: int, mem_mb: int) -> list[str]:
    """profiles/slurm as it is, plus what a one-node cluster without accounting needs
    (README, "Running on a cluster")."""
    profile = REPO / "profiles" / "slurm"
    args = [
        "--executor",
        "slurm",
        "--profile",
        str(profile),
        "--max-threads",
        str(cpus),
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "2",
    ]
    res = yaml.safe_load((profile / "config.yaml").read_text())["set-resources"]
    big = [r for r, v in res.items() if v.get("mem_mb", 0) > mem_mb]
    return args + (["--set-resources", *(f"{r}:mem_mb={mem_mb}" for r in big)] if big else [])


def interview_slurm(a, state) -> None:
    """The INTERVIEW study through profiles/slurm on a SLURM node that is up
    (tools/slurm-local/up.sh), its tables against a local run's, sha256 by sha256."""
    from interview import argkp_folder, build_study

    sizes = sorted(a.interview_turns)
    n = a.interview_slurm_turns or sizes[0]
    print(f"INTERVIEW_SLURM  the {n}-turn INTERVIEW study through profiles/slurm vs --cores")
    node = slurm_node()
    if node is None:
        sys.exit("INTERVIEW_SLURM: no SLURM node up (sinfo); start one: tools/slurm-local/up.sh")
    data, methods = argkp_folder(a.argkp, REPO), tuple(a.interview_methods)
    local = state.get(("interview", n))
    if local is None:
        local = a.workdir / f"interview-{n}"
        build_study(local, data, n, max(sizes + [n, LARGEST]), a.interview_transcripts, methods)
        r = interview_run(local, a, a.workdir / f"interview-{n}-local.log")
        show("local run: wall, CPU", f"{r['wall']:.0f} s, {r['cpu']:.0f} s")
    root = a.workdir / f"interview-{n}-slurm"
    build_study(root, data, n, max(sizes + [n, LARGEST]), a.interview_transcripts, methods)
    r = interview_run(root, a, a.workdir / f"interview-{n}-slurm.log", *slurm_args(*node))
    show(f"SLURM run (node: {node[0]} CPUs, {node[1]} MB): wall", f"{r['wall']:.0f} s")
    show("jobs", f"{sum(r['jobs'].values())} {r['jobs']}")
    want, got = results_tables(local), results_tables(root)
    differ = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    show("tables compared (sha256)", len(want))
    show("byte-identical to the local run", "yes" if not differ else f"NO: {differ}")
    if differ:
        sys.exit(1)


DTYPES = ["float16", "bfloat16", "float32"]


def gpu(a, state) -> None:
    from gpu_speed import probe, run_gpu  # bench/ is the script's folder, first on sys.path

    (probe if a.gpu_probe else run_gpu)(a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default="P1,P2,P3,P4,P5", help="comma-separated parts")
    ap.add_argument("--workdir", type=Path, help="kept; default a temporary folder, removed")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--null-pool", type=int, default=50, help="word-salad pool texts (P1, P3, P5)")
    ap.add_argument("--bootstrap", type=int, default=100, help="bootstrap draws (P1, P3, P5)")
    ap.add_argument("--texts", type=int, help="texts encoded in P2 (2000) and GPU (40000)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads in P2")
    ap.add_argument("--rounds", type=int, default=3, help="alternating timing rounds in P2")
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    ap.add_argument("--p4-sets", type=ints, default=[50, 100, 200])
    ap.add_argument("--p5-sets", type=int, default=200)
    ap.add_argument("--p5-methods", type=lambda s: s.split(","), default=["tfidf"])
    ap.add_argument("--device", default="cuda", help="GPU: the accelerator (cuda, cuda:1, mps)")
    ap.add_argument("--model-path", help="GPU: sentence-transformers folder (bench/gpu_assets.py)")
    ap.add_argument("--gpu-dtypes", type=lambda s: s.split(","), default=DTYPES)
    ap.add_argument("--gpu-rows", type=ints, default=[32, 64, 256, 512], help="GPU: float16 rows")
    ap.add_argument("--gpu-rounds", dest="rounds_gpu", type=int, default=2, help="GPU: timings")
    ap.add_argument("--cpu-ref-texts", type=int, default=2000, help="GPU: CPU reference texts")
    ap.add_argument("--gpu-probe", action="store_true", help="GPU: where vectors lose bits")
    ap.add_argument("--budget-s", type=float, default=240, help="GPU: later steps skipped")
    ap.add_argument("--p7-themes", type=int, default=10, help="themes of each set in P7")
    ap.add_argument("--load-sets", type=int, default=100, help="theme sets of LOAD")
    ap.add_argument("--load-predict", type=ints, default=[10, 20], help="LOAD's smaller sizes")
    ap.add_argument("--load-dry", action="store_true", help="LOAD: the prediction only")
    ap.add_argument("--load-keep", action="store_true", help="LOAD: reuse --workdir's runs")
    ap.add_argument("--load-predict-at", type=ints, default=[40, 60, 100], help="LOAD: sizes")
    ap.add_argument("--p7-runs", type=lambda s: s.split(","), default=["before", "after"])
    ap.add_argument(
        "--p7-backend",
        type=lambda s: s.split(","),
        default=["native", "python"],
        help="local servers in P7: native (llama-server), python (llama-cpp-python), auto",
    )
    ap.add_argument("--p7-modes", type=lambda s: s.split(","), default=["json", "logprob"])
    ap.add_argument("--p7-parallel", type=int, default=1, help="P7: llama-server's slots")
    ap.add_argument(
        "--p7-concurrency", type=int, help="P7: requests in flight (after: 1, before: 2)"
    )
    ap.add_argument("--p7-server-args", default="", help="P7: extra llama-server options")
    ap.add_argument("--argkp", help="INTERVIEW: the ArgKP train split (../shared/data/argkp_train)")
    ap.add_argument("--interview-turns", type=ints, default=[8000, 16000], help="INTERVIEW")
    ap.add_argument("--interview-transcripts", type=int, default=40, help="INTERVIEW")
    ap.add_argument(
        "--interview-methods",
        type=lambda s: s.split(","),
        default=["minilm", "tfidf"],
        help="INTERVIEW: minilm, tfidf, mpnet",
    )
    ap.add_argument("--interview-repeats", type=int, default=1, help="INTERVIEW: rounds")
    ap.add_argument(
        "--interview-runs", type=lambda s: s.split(","), help="INTERVIEW: print the figures of "
        "earlier runs (their interview-runs.jsonl files), run nothing",
    )  # fmt: skip
    ap.add_argument("--interview-slurm-turns", type=int, help="INTERVIEW_SLURM (smallest size)")
    a = ap.parse_args()
    parts = [p.strip().upper() for p in a.only.split(",")]
    keep = a.workdir is not None
    a.workdir = (a.workdir or Path(tempfile.mkdtemp(prefix="themesim-bench-"))).resolve()
    a.workdir.mkdir(parents=True, exist_ok=True)
    print(f"work folder {a.workdir}; {time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} CPUs")
    state: dict = {}
    try:
        parts_fn = (("P0", p0), ("P1", p1), ("P2", p2), ("P3", p3), ("P4", p4), ("P5", p5))
        more = (("P6", p6), ("P7", p7), ("LOAD", load), ("GPU", gpu), ("INTERVIEW", interview))
        for name, fn in (*parts_fn, *more, ("INTERVIEW_SLURM", interview_slurm)):
            if name in parts:
                t = time.perf_counter()
                fn(a, state)
                print(f"  ({name} took {time.perf_counter() - t:.0f} s)\n", flush=True)
    finally:
        if not keep:
            shutil.rmtree(a.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
