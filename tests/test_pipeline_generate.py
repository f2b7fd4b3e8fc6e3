"""generate_themes in the workflow: generated runs join the study (fake endpoint, TF-IDF only)."""

import pandas as pd
import pytest
import yaml
from helpers import HUMAN, LLM, TRANSCRIPT, FakeLLM, generated_themes, job_counts, snakemake

from themesim.config import prepare
from themesim.errors import InputError


@pytest.fixture(scope="module")
def fake():
    srv = FakeLLM(generated_themes)
    yield srv
    srv.close()


def config(url: str, **gen) -> dict:
    return {
        # llm is a hand-made set in no run group: compared, but not a run
        "theme_sets": ["data/human.csv", {"path": "data/llm.yaml", "name": "llm"}],
        "transcripts": ["data/*.txt"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
        "metrics": {"bootstrap": {"n": 0, "seed": 0}, "null_model": {"pool": 0, "seed": 0}},
        "generate_themes": {
            "active": True,
            "runs": 2,
            "seeds": [7, 8],
            "base_url": url,
            "model": "fake-model",
            "n_ctx": 1024,
            "max_tokens": 256,
        }
        | gen,
        "methods": {"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
    }


@pytest.fixture(scope="module")
def generated(fake, tmp_path_factory):
    root = tmp_path_factory.mktemp("gen_study")
    (root / "data").mkdir()
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM)
    (root / "data" / "sam.txt").write_text(TRANSCRIPT)
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config(fake.url)))
    targets = ["results/metrics/tfidf/comparisons.csv", "results/metrics/tfidf/runs.csv"]
    snakemake(root, "--cores", "1", *targets)
    return root


def test_generated_runs_are_compared_and_in_run_consistency(generated, fake):
    root = generated
    assert fake.calls == 4  # one chunk and one merge per run
    assert [b["seed"] for b in fake.bodies] == [7, 8, 7, 8]
    run1 = pd.read_csv(root / "results/generated/generated_run1.csv")
    # its sha256, which the jobs reading it check (themesim.io.manifest)
    assert (root / "results/generated/.generated_run1.csv.sha256").is_file()
    assert list(run1.columns) == ["id", "name", "description", "keywords"]
    assert run1["name"].tolist() == [f"merge 7 3 {i}" for i in range(3)]
    comparisons = pd.read_csv(root / "results/metrics/tfidf/comparisons.csv")
    assert sorted(set(zip(comparisons["set_a"], comparisons["set_b"], strict=True))) == [
        ("human", "generated_run1"),
        ("human", "generated_run2"),
        ("human", "llm"),
    ]
    # The generated runs are one group by themselves; llm, in no group, is not a run.
    runs = pd.read_csv(root / "results/metrics/tfidf/runs.csv")
    assert runs["run"].tolist() == ["generated_run1", "generated_run2"]
    assert runs["group"].tolist() == ["generated", "generated"]
    matrix = pd.read_parquet(root / "results/metrics/tfidf/runs_matrix.parquet")
    assert set(matrix["group"]) == {"generated"} and "llm" not in set(matrix["run_a"])


def test_forced_rerun_is_answered_from_the_cache(generated, fake):
    before = fake.calls
    snakemake(generated, "--cores", "1", "--forcerun", "generate_themes", "generate_themes")
    assert fake.calls == before
    log = (generated / "logs/generate/themes.log").read_text()
    assert "4 answers (4 cached, 0 new) of 1 chunks, 0 calls" in log


def test_a_new_threshold_never_regenerates(generated):
    cfg = yaml.safe_load((generated / "config/config.yaml").read_text())
    cfg["methods"]["tfidf"]["thresholds"] = [0.3]
    (generated / "config/config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(generated, "-n", "--cores", "1", "results/metrics/tfidf/comparisons.csv")
    assert "generate_themes" not in job_counts(out.stdout)


def test_config_checks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.csv").write_text(HUMAN)
    (tmp_path / "t.txt").write_text(TRANSCRIPT)
    for copy in ("x.csv", "y.csv", "g.csv"):  # one file listed twice is refused
        (tmp_path / copy).write_text(HUMAN)
    base = {"theme_sets": ["h.csv"], "transcripts": ["t.txt"], "methods": {"tfidf": {}}}
    study = prepare(base | {"generate_themes": {"active": True, "runs": 2}})
    assert study.generated == {"generated_run1": 1, "generated_run2": 2}
    assert study.sets["generated_run2"] == "results/generated/generated_run2.csv"
    assert study.runs == ["generated_run1", "generated_run2"] and study.reference == "h"
    assert study.run_groups == {"generated": ["generated_run1", "generated_run2"]}
    with pytest.raises(InputError, match=r"run_groups.generated: 'generated' is the group"):
        prepare(
            base
            | {"theme_sets": ["h.csv", *({"path": f"{n}.csv", "name": n} for n in "xy")]}
            | {"run_groups": {"generated": ["x", "y"]}, "generate_themes": {"active": True}}
        )
    with pytest.raises(InputError, match="'generated_run1' is a generated run"):
        prepare(
            base
            | {"theme_sets": ["h.csv", {"path": "x.csv", "name": "x"}]}
            | {"run_groups": {"mine": ["x", "generated_run1"]}, "generate_themes": {"active": True}}
        )
    one = prepare(base | {"generate_themes": {"active": True, "runs": 1}})
    assert one.run_groups == {} and one.runs == []  # one generated run: nothing to compare
    with pytest.raises(InputError, match="at least two theme sets"):
        prepare(base)
    with pytest.raises(InputError, match="distinct seeds"):
        prepare(base | {"generate_themes": {"active": True, "runs": 2, "seeds": [1]}})
    with pytest.raises(InputError, match="also a theme set"):
        clash = [{"path": "g.csv", "name": "generated_run1"}, "h.csv"]
        prepare(base | {"theme_sets": clash, "generate_themes": {"active": True}})
    with pytest.raises(InputError, match="no transcripts"):
        prepare(base | {"transcripts": [], "generate_themes": {"active": True}})
    off = prepare(base | {"theme_sets": [{"path": "x.csv", "name": "x"}, "h.csv"]})
    assert off.generated == {} and list(off.sets) == ["x", "h"]
