"""Kill -9 in the middle of embedding and of judging, then rerun: the results equal an
uninterrupted run's and no finished judgement is asked again; two runs give identical files.

The second full run is the interrupted one (one full run fewer on CI): its files must equal the
clean run's byte for byte, which needs both determinism and a clean resume.
"""

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from helpers import FakeLLM, snakemake, snakemake_cmd, snakemake_env, themes_in

HUMAN = """id,name,description
H1,Caring while working,Fitting shifts and meetings around looking after a parent
H2,Own health suffers,Carers lose sleep and neglect their own health
H3,Money worries,The costs of care strain the household budget
H4,Guilt,Feeling guilty about respite or about losing patience
"""
LLM = """- {name: Employment and caregiving conflict, description: Balancing a job with caring}
- {name: Financial strain, description: Paying for care puts pressure on family finances}
- {name: Gardening as escape, description: Tending plants offers a break from daily routine}
"""
LLM2 = """[{"name": "Work and care", "description": "Jobs squeezed around caring"},
 {"name": "Costs", "description": "Care is expensive", "keywords": ["money", "costs"]}]
"""
TRANSCRIPT = """Interviewer: How do you manage work?
Sam: I changed my shifts so I can be with Mum in the mornings.
Interviewer: And money?
Sam: The care bills are a worry.
"""


# One thread per embedding job (one per method), so two run at once on 2 cores: their
# start-up (imports, model load) dominates on a tiny study. Every run here uses the same settings.
CORES = ["--cores", "2"] + ["--set-threads"] + ["embed=1"]


def start(root: Path, *args) -> subprocess.Popen:
    """Snakemake in its own process group, so one killpg reaches every job it started."""
    return subprocess.Popen(
        snakemake_cmd(root) + list(args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=snakemake_env(),
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_group_gone(proc.pid)


def wait_group_gone(pgid: int) -> None:
    for _ in range(200):  # the jobs die with snakemake; wait until the group is empty
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError("processes of the killed snakemake are still running")


def resume(root: Path, *targets: str) -> None:
    snakemake(root, "--unlock")  # the killed run could not release its lock
    snakemake(root, *CORES, "--rerun-incomplete", *targets)


def write_study(root: Path, config: dict) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM)
    (root / "data" / "llm2.json").write_text(LLM2)
    (root / "data" / "sam.txt").write_text(TRANSCRIPT)
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


STUDY = {
    "study": {"name": "reliability"},
    "reference": "human",
    "theme_sets": ["data/human.csv", "data/llm.yaml", "data/llm2.json"],
    "run_groups": {"llms": ["llm", "llm2"]},
    "transcripts": ["data/*.txt"],
    "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
    "metrics": {"bootstrap": {"n": 20, "seed": 1}, "null_model": {"pool": 10, "seed": 2}},
    "methods": {
        "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
        "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
    },
}


def result_files(root: Path) -> dict[str, str]:
    """sha256 of every metric table and parquet file under results/."""
    results = root / "results"
    paths = [*results.glob("metrics/**/*.csv"), *results.glob("**/*.parquet")]
    return {
        str(p.relative_to(results)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(set(paths))
    }


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    root = write_study(tmp_path_factory.mktemp("run1"), STUDY)
    snakemake(root, *CORES)
    return root


EMBED_TARGET = "results/embeddings/minilm/human.parquet"


@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory):
    """A second full run, killed (SIGKILL to snakemake and its jobs) while it embeds the
    reference set, then resumed as the docs say: --unlock, then --rerun-incomplete."""
    root = write_study(tmp_path_factory.mktemp("run2"), STUDY)
    log = root / "logs/embed/minilm.log"
    proc = start(root, *CORES)
    for _ in range(6000):  # the job's log appears as its script starts, before the model loads
        if log.exists() or proc.poll() is not None:
            break
        time.sleep(0.05)
    running = proc.poll() is None
    kill_group(proc)
    at_kill = {"running": running, "log": log.exists(), "output": (root / EMBED_TARGET).exists()}
    at_kill["done"] = sorted(str(p.relative_to(root)) for p in root.glob("results/**/*.parquet"))
    resume(root)
    return root, at_kill


def test_kill_during_embedding_then_rerun(clean_run, interrupted_run):
    root, at_kill = interrupted_run
    assert at_kill["running"] and at_kill["log"] and not at_kill["output"]
    assert "results/themes/human.parquet" in at_kill["done"]  # killed mid-run, not at the start
    assert (root / EMBED_TARGET).read_bytes() == (clean_run / EMBED_TARGET).read_bytes()
    assert not list((root / "results").rglob("*.tmp*"))


def test_two_full_runs_give_identical_tables_and_parquet_files(clean_run, interrupted_run):
    other, _ = interrupted_run
    first, second = result_files(clean_run), result_files(other)
    assert len(first) > 20 and "metrics/minilm/comparisons.csv" in first
    for path in (
        "embeddings/minilm/human.parquet",
        "nulls/minilm/llm.parquet",
        "segment_embeddings/minilm.parquet",
        "similarity/tfidf/human__vs__llm.parquet",
        "metrics/minilm/transport/human__vs__llm.parquet",
        "metrics/tfidf/runs_matrix.parquet",
        "metrics/minilm/sets.csv",
    ):
        assert path in first, path
    differ = [p for p in first if first[p] != second.get(p)]
    assert set(first) == set(second) and not differ, differ


# ---------------------------------------------------------------- the judge

N = 5  # themes per set: 25 judgements
KILL_AT = 8  # the request during which the run is killed


def judge_study(root: Path, url: str) -> Path:
    (root / "data").mkdir(parents=True)
    for s in ("a", "b"):
        rows = [f"{s}{i},Theme {s} {i},Description {i} of set {s}" for i in range(N)]
        (root / "data" / f"{s}.csv").write_text("id,name,description\n" + "\n".join(rows) + "\n")
    config = {
        "theme_sets": ["data/a.csv", "data/b.csv"],
        "methods": {
            "judge": {
                "kind": "llm_judge",
                "base_url": url,
                "model": "fake-model",
                "prompt": "judge_v1",
                "score_mode": "json",
                "concurrency": 1,
                "max_retries": 0,
                "timeout_s": 30,
                "thresholds": [0.5],
            }
        },
    }
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def score(a: str, b: str) -> float:
    return int(hashlib.sha256(f"{a}|{b}".encode()).hexdigest(), 16) % 101 / 100


def cached_ok(cache: Path) -> list[tuple[str, str]]:
    if not cache.exists():
        return []
    with sqlite3.connect(cache, timeout=30) as db:
        return db.execute("SELECT text_a, text_b FROM judgements WHERE status = 'ok'").fetchall()


def test_kill_during_judging_then_rerun_asks_no_finished_pair_again(tmp_path):
    target = "results/similarity/judge/a__vs__b.parquet"
    job = "results/similarity/judge/manifest.csv"  # the folder's manifest: a rule's output
    killed = {}

    def behave(n, body, headers):
        pair = themes_in(body)
        if n == KILL_AT and "proc" in killed:
            # Kill while this request is in flight, once every earlier answer is cached.
            cache = killed["root"] / "results/cache/judge.sqlite"
            for _ in range(600):
                if len(cached_ok(cache)) == KILL_AT - 1:
                    break
                time.sleep(0.05)
            killed["cached"] = cached_ok(cache)
            os.killpg(killed.pop("proc").pid, signal.SIGKILL)
            return 500, {"error": "killed"}, 0
        return 200, {"choices": [{"message": {"content": json.dumps({"score": score(*pair)})}}]}, 0

    srv = FakeLLM(behave)
    try:
        root = judge_study(tmp_path / "killed", srv.url)
        killed["root"] = root
        proc = killed["proc"] = start(root, "--cores", "1", job)
        proc.wait(timeout=300)
        wait_group_gone(proc.pid)
        assert "proc" not in killed, "the run finished before it could be killed"
        assert srv.calls == KILL_AT and not (root / target).exists()
        first_run = [themes_in(b) for b in srv.bodies]
        resume(root, job)
        asked = Counter(themes_in(b) for b in srv.bodies)

        clean = judge_study(tmp_path / "clean", srv.url)
        before = srv.calls
        snakemake(clean, "--cores", "1", job)
        assert srv.calls - before == N * N
    finally:
        srv.close()

    # Every pair was asked; the finished ones (cached before the kill) exactly once; only
    # the request the kill interrupted was asked a second time.
    in_flight = first_run[-1]
    assert len(asked) == N * N
    assert len(killed["cached"]) == KILL_AT - 1 and in_flight not in killed["cached"]
    assert {p: c for p, c in asked.items() if c != 1} == {in_flight: 2}
    assert (root / target).read_bytes() == (clean / target).read_bytes()
