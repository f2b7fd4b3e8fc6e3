"""The bad-input corpus (tests/bad_inputs/cases.yaml): each case fails with its one-line message,
or is accepted as documented, and leaves nothing half-written in results/."""

import copy
import logging
import os
import shutil
import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from helpers import REPO, snakemake

from themesim.config import prepare
from themesim.errors import ThemesimError
from themesim.io import files
from themesim.io.files import atomic_path
from themesim.methods import DEFAULT_METHODS
from themesim.schema import check_schema
from themesim.steps import embed_files, ingest, ingest_transcripts, similarity
from themesim.steps.job import Job

CORPUS = REPO / "tests" / "bad_inputs"
CASES = yaml.safe_load((CORPUS / "cases.yaml").read_text())
TEMPLATE = "{name}: {description}"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
BASE_CONFIG = {
    "theme_sets": ["_shared/a.csv", "_shared/b.csv"],
    "methods": {"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
}


def files_in(results: Path) -> set[str]:
    return {str(p.relative_to(results)) for p in results.rglob("*") if p.is_file()}


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens once the socket is closed


def ingest_shared(results: Path) -> dict[str, str]:
    out = {}
    for s in ("a", "b"):
        out[s] = str(results / "themes" / f"{s}.parquet")
        ingest.ingest_themes(
            f"_shared/{s}.csv", out[s], set_name=s, template="{name}: {description}"
        )
    return out


def run_entry(case: dict, results: Path, monkeypatch):
    """Run the case's entry point; returns what a check of an accepted input needs."""
    entry = case["entry"]
    if entry == "themes":
        path = Path(case["input"])
        out = results / "themes" / "case.parquet"
        ingest.ingest_themes(
            str(path),
            str(out),
            set_name=None if " " in path.stem else "case",
            template=case.get("template", TEMPLATE),
        )
        return pq.read_table(out).to_pandas()
    if entry == "transcripts":
        ingest_transcripts.ingest_transcripts(
            case["inputs"], str(results / "transcripts" / "segments.parquet")
        )
        return None
    if entry in ("precomputed", "judge"):
        themes = ingest_shared(results)
        out = results / "similarity" / "m" / "a__vs__b.parquet"
        spec = {"kind": "precomputed"} | case.get("spec", {})
        if entry == "judge":
            spec = {"kind": "llm_judge", "base_url": closed_port_url()} | case["judge"]
        similarity.similarity_pairs(
            Job(
                input={
                    "themes": themes,
                    "matrices": {("a", "b"): f"{case.get('dir')}/a__vs__b.csv"},
                },
                params={
                    "method": "m",
                    "spec": spec,
                    "pairs": [("a", "b")],
                    "files": [str(out)],
                    "cache": str(results / "cache" / "judge.sqlite"),
                },
                output={"manifest": str(out.parent / "manifest.csv")},
            )
        )
        return pq.read_table(out).to_pandas()
    if entry == "config":
        config = copy.deepcopy(BASE_CONFIG) | copy.deepcopy(case["config"])
        missing = set(case.get("uninstalled", []))
        if missing:
            from importlib import metadata

            real = metadata.version

            def version(dist):
                if dist in missing:
                    raise metadata.PackageNotFoundError(dist)
                return real(dist)

            monkeypatch.setattr("themesim.embed.models.metadata.version", version)
        check_schema(config, SCHEMA)
        return prepare(config)
    if entry == "embed":
        themes = results / "themes" / "case.parquet"
        ingest.ingest_themes(
            case["input"], str(themes), set_name="case", template="{name}: {description}"
        )
        out = results / "embeddings" / "minilm" / "case.parquet"
        spec = {
            k: DEFAULT_METHODS["minilm"][k]
            for k in ("model", "path", "batch_size", "device", "dtype")
        }
        embed_files.embed_set(str(themes), str(out), method="minilm", spec=spec, threads=2)
        return pq.read_table(out).to_pandas()
    if entry == "coded":  # the segment labels of set a from a coded-segments file
        from themesim.steps.segment_labels import Coding, SetFiles, segment_labels

        themes = ingest_shared(results)
        work = results.parent / "work"  # inputs read fine live outside results/
        ingest_transcripts.ingest_transcripts(["_shared/sam.txt"], str(work / "segments.parquet"))
        segment_labels(
            set_name="a",
            files=SetFiles(
                themes=themes["a"],
                coded=case["input"],
                out=str(results / "segments" / "m" / "a.parquet"),
                out_quotes=str(results / "segments" / "m" / "a.quotes.csv"),
            ),
            coding=Coding(method="m", spec={"kind": "precomputed"}),
            segments_path=str(work / "segments.parquet"),
            transcripts=["_shared/sam.txt"],
        )
        return pq.read_table(results / "segments" / "m" / "a.parquet").to_pandas()
    raise AssertionError(f"unknown entry {entry}")


LIBRARY_CASES = [c for c in CASES if c["entry"] != "workflow"]


def test_corpus_is_complete():
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 30
    for c in CASES:
        assert c.get("what") and ("expect" in c) != ("ok" in c), c["id"]
    # Every folder of the corpus belongs to a case (or is shared).
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders - set(ids) <= {"_shared"}, folders - set(ids)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c["id"] for c in LIBRARY_CASES])
def test_bad_input(case, tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(CORPUS)  # messages then show the corpus-relative paths of the cases
    results = tmp_path / "results"
    results.mkdir()
    caplog.set_level(logging.INFO)
    if "expect" in case:
        with pytest.raises(ThemesimError) as err:
            run_entry(case, results, monkeypatch)
        message = str(err.value)
        if case["entry"] == "config":  # parse-time errors are one line
            assert "\n" not in message, f"not one line:\n{message}"
        for fragment in case["expect"]:
            assert fragment in message, f"{fragment!r} not in:\n{message}"
        # Inputs that were read fine stay; the failing step wrote nothing, not even a temp file.
        left = files_in(results)
        written_before = {"themes/a.parquet", "themes/b.parquet", "cache/judge.sqlite"}
        written_before |= {"themes/.a.parquet.sha256", "themes/.b.parquet.sha256"}  # sha256s
        assert left <= written_before, left - written_before
        return
    got = run_entry(case, results, monkeypatch)
    assert not [f for f in files_in(results) if ".tmp" in f]
    for key, want in case["ok"].items():
        if key == "n_embedded":
            assert len(got) == want and got["embedding"].map(len).eq(384).all()
        else:
            assert got[key].tolist() == want, key
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    for fragment in case.get("warn", []):
        assert fragment in warnings, f"{fragment!r} not in:\n{warnings}"


# ---------------------------------------------------------------- cases that need a real run

WORKFLOW_CASES = [c for c in CASES if c["entry"] == "workflow"]


@pytest.fixture(scope="module")
def tiny_study(tmp_path_factory):
    """Two sets, TF-IDF and a precomputed method: no model, so a run takes seconds."""
    root = tmp_path_factory.mktemp("bad_inputs_study")
    (root / "data" / "scores").mkdir(parents=True)
    for s in ("a", "b"):
        shutil.copy(CORPUS / "_shared" / f"{s}.csv", root / "data" / f"{s}.csv")
    shutil.copy(CORPUS / "matrix_bom" / "a__vs__b.csv", root / "data" / "scores" / "a__vs__b.csv")
    config = {
        "theme_sets": ["data/a.csv", "data/b.csv"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
        "metrics": {"bootstrap": {"n": 0, "seed": 0}, "null_model": {"pool": 0, "seed": 0}},
        "methods": {
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
            "scores": {"kind": "precomputed", "dir": "data/scores", "thresholds": [0.5]},
        },
    }
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root, config


@pytest.mark.parametrize("case", WORKFLOW_CASES, ids=[c["id"] for c in WORKFLOW_CASES])
def test_bad_input_in_workflow(case, tiny_study, tmp_path):
    src, config = tiny_study
    root = tmp_path / "study"
    shutil.copytree(src, root)
    for key, value in case.get("config", {}).items():
        config = config | {key: value}
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    if "matrix" in case:
        shutil.copy(CORPUS / case["matrix"], root / "data" / "scores" / "a__vs__b.csv")
    args = ["--cores", "1"] + (["-n"] if case.get("dry_run") else [])
    proc = snakemake(root, *args, "results/similarity/scores/manifest.csv", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for fragment in case["expect"]:
        assert fragment in out, f"{fragment!r} not in:\n{out[-3000:]}"
    assert "Traceback" not in out
    if case.get("dry_run"):  # a parse-time error: its one line is the last thing shown
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
        assert last.startswith("Error: config"), proc.stderr[-3000:]
        assert all(fragment in last for fragment in case["expect"]), last
    results = root / "results"
    left = files_in(results) if results.exists() else set()
    assert not [f for f in left if f.startswith("similarity/") or ".tmp" in f], left


def test_atomic_write_keeps_the_old_file_or_writes_the_whole_new_one(tmp_path):
    out = tmp_path / "results" / "x.csv"
    with atomic_path(out) as tmp:
        Path(tmp).write_text("one")
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        Path(tmp).write_text("half")
        raise RuntimeError("the step failed mid-write")
    assert out.read_text() == "one" and os.listdir(out.parent) == ["x.csv"]
    # A writer killed mid-write leaves its hidden temp file; the next process's write removes
    # it (a process lists a folder once, so forget that listing as a new process would).
    (out.parent / ".x.999999.tmp.csv").write_text("killed")
    files._LEFT_BY_KILLED.clear()
    with atomic_path(out) as tmp:
        Path(tmp).write_text("two")
    assert out.read_text() == "two" and os.listdir(out.parent) == ["x.csv"]
