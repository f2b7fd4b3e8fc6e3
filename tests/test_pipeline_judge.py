"""The llm_judge method inside the workflow, with a real llama.cpp server on 127.0.0.1."""

import re
import sqlite3

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from helpers import job_counts, snakemake

A = "name,description\nWork and caring,Fitting a job around caring for a parent\nMoney,Care costs\n"
B = "name,description\nJob versus care,Balancing employment with caregiving\nGardening,Plants\n"


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge_study")
    (root / "data").mkdir()
    (root / "data" / "a.csv").write_text(A)
    (root / "data" / "b.csv").write_text(B)
    cfg = {
        "theme_sets": ["data/a.csv", "data/b.csv"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
        "metrics": {"bootstrap": {"n": 0, "seed": 0}, "null_model": {"pool": 0, "seed": 0}},
        "methods": {"judge": {"kind": "llm_judge", "max_tokens": 16, "thresholds": [0.5]}},
    }
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(root, "--cores", "2", "results/metrics/judge/comparisons.csv")
    return root, cfg


def test_judge_scores_written_and_cached(judged):
    root, _ = judged
    table = pq.read_table(root / "results/similarity/judge/a__vs__b.parquet")
    scores = np.array(table.column("similarity").to_pylist())
    assert scores.shape == (4,) and ((scores >= 0) & (scores <= 1)).all()
    with sqlite3.connect(root / "results/cache/judge.sqlite") as db:
        rows = db.execute("select status, count(*) from judgements group by status").fetchall()
    assert rows == [("ok", 4)]
    meta = table.schema.metadata[b"themesim.similarity"].decode()
    assert "qwen2.5-coder-1.5b" in meta and "api_key" not in meta


def test_the_workflow_runs_one_local_server_at_a_time(judged):
    """The run provides one llm_server, which the judge's jobs hold."""
    root, _ = judged
    first = sorted((root / ".snakemake" / "log").glob("*.snakemake.log"))[0].read_text()
    provided = re.search(r"^Provided resources: (.*)$", first, re.MULTILINE).group(1)
    assert re.search(r'\bllm_server=(Resource\("llm_server", )?1\b', provided), provided
    held = re.findall(r"^\s+resources: .*\bllm_server=(\d+)", first, re.MULTILINE)
    assert held == ["1"], held  # the one similarity_judge job


def test_new_threshold_never_rejudges(judged):
    root, cfg = judged
    cfg["methods"]["judge"]["thresholds"] = [0.3, 0.7]
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(root, "-n", "--cores", "2", "results/metrics/judge/comparisons.csv").stdout
    counts = job_counts(out)
    assert "similarity_judge" not in counts and counts["metrics"] == 1


def test_forced_rerun_answers_from_cache(judged):
    root, _ = judged
    snakemake(
        root,
        "--cores",
        "2",
        "--forcerun",
        "similarity_judge",
        "results/similarity/judge/manifest.csv",
    )
    log = (root / "logs/similarity/judge.log").read_text()
    assert "(4 cached, 0 new, " in log and " 0 calls, " in log and "JudgeStats(" not in log
