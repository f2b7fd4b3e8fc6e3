"""The archive bundle: layout, checksums, `themesim verify`, confidential mode, reproduction."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import HUMAN, LLM, TRANSCRIPT, snakemake

from themesim.archive.build import (
    WITHHELD,
    ArchiveSpec,
    archive_name,
    build_archive,
    code_files,
    environment_lock,
    place_inputs,
    sha256sums,
    write_zip,
)
from themesim.archive.verify import SUMS, read_zip, verify
from themesim.cli import main

LOCK = "numpy==2.4.6\n"  # a fixed lock, so unit tests do not depend on the environment


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_code(root: Path) -> Path:
    """A hand-made workflow folder: what code_files must take and what it must skip."""
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "Snakefile").write_text("# snakefile\n")
    (root / "workflow" / "rules" / "common.smk").write_text("# common\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "x.py").write_text("print(1)\n")
    (root / "src" / "themesim" / "__pycache__").mkdir(parents=True)
    (root / "src" / "themesim" / "__init__.py").write_text("")
    (root / "src" / "themesim" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (root / "src" / "themesim" / "b.pyc").write_bytes(b"\0")
    (root / "src" / "other").mkdir()
    (root / "src" / "other" / "y.py").write_text("")
    return root


def make_run(root: Path) -> Path:
    """A hand-made run folder: inputs, a few results, and an old archive that must stay out."""
    (root / "data" / "tr").mkdir(parents=True)
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM)
    (root / "data" / "tr" / "sam.txt").write_text(TRANSCRIPT)
    for rel, text in {
        "results/metrics/m/comparisons.csv": "set_a,set_b\nhuman,llm\n",
        "results/embeddings/m/human.parquet": "text of the themes",
        "results/plots/m/sweep.png": "png",
        "results/archive/old.zip": "an earlier archive",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


CONFIG = {
    "study": {"name": "tiny study", "description": "unit test"},
    "theme_sets": [{"path": "data/human.csv"}, "data/llm.yaml"],
    "transcripts": ["data/tr/*.txt"],
    "methods": {"m": {"kind": "tfidf", "thresholds": [0.2]}},
}


def build(run: Path, code: Path, out: Path, *, config=CONFIG, sets=None, transcripts=None, **kw):
    cwd = os.getcwd()
    os.chdir(run)  # inputs and results are relative to the run folder, as in a workflow job
    try:
        return build_archive(
            out,
            ArchiveSpec(
                config=config,
                study=config["study"],
                sets=sets or {"human": "data/human.csv", "llm": "data/llm.yaml"},
                transcripts=["data/tr/sam.txt"] if transcripts is None else transcripts,
                precomputed=kw.pop("precomputed", {}),
                results=[
                    "results/metrics/m/comparisons.csv",
                    "results/embeddings/m/human.parquet",
                    "results/plots/m/sweep.png",
                    "results/archive/old.zip",
                ],
                judge_cache=None,
                code=code_files(code),
                code_version="abc123",
                lock=LOCK,
                **kw,
            ),
        )
    finally:
        os.chdir(cwd)


@pytest.fixture
def built(tmp_path):
    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    out = tmp_path / "tiny-study.zip"
    build(run, code, out)
    return out


def run_verify(path, *args, capsys):
    rc = main(["verify", str(path), *args])
    return rc, capsys.readouterr().out


def rewrite(src: Path, dst: Path, change) -> None:
    files = read_zip(src)
    change(files)
    write_zip(dst, files)


def test_archive_name_is_a_safe_file_name():
    assert archive_name("demo-carers") == "demo-carers"
    assert archive_name("Carers study / 2025 (pilot)") == "Carers-study-2025-pilot"
    assert archive_name("../..") == "study"


def test_code_files_take_the_workflow_and_skip_caches(tmp_path):
    root = make_code(tmp_path)
    files = code_files(root)
    assert all(p == root / name for name, p in files.items())
    assert list(files) == [
        "Snakefile",
        "scripts/x.py",
        "src/themesim/__init__.py",
        "workflow/rules/common.smk",
    ]


def test_environment_lock_is_sorted_pins_without_themesim():
    from importlib import metadata

    lines = environment_lock().splitlines()
    names = [line.split("==")[0].lower().replace("_", "-") for line in lines]
    assert names == sorted(names)
    assert f"numpy=={metadata.version('numpy')}" in lines
    assert "themesim" not in names
    assert all(line.count("==") == 1 for line in lines)


def test_sha256sums_format_and_deterministic_zip(tmp_path):
    entries = {"b/x.txt": b"x\n", "a.csv": b"1,2\n"}
    a, x = sha(b"1,2\n"), sha(b"x\n")
    assert sha256sums(entries) == f"{a}  a.csv\n{x}  b/x.txt\n"
    write_zip(tmp_path / "1.zip", entries)
    write_zip(tmp_path / "2.zip", dict(reversed(entries.items())))
    assert (tmp_path / "1.zip").read_bytes() == (tmp_path / "2.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "1.zip") as zf:
        assert zf.namelist() == ["a.csv", "b/x.txt"]
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_archive_layout(built, tmp_path):
    files = read_zip(built)
    names = set(files)
    for name in (
        "Snakefile",
        "workflow/rules/common.smk",
        "scripts/x.py",
        "src/themesim/__init__.py",
        "config/config.yaml",
        "data/human.csv",
        "data/llm.yaml",
        "data/tr/sam.txt",
        "results/metrics/m/comparisons.csv",
        "results/embeddings/m/human.parquet",
        "results/plots/m/sweep.png",
        "environment/pip-freeze.txt",
        "environment/provenance.yaml",
        "CITATION.cff",
        "README.md",
        SUMS,
    ):
        assert name in names, name
    assert not any(n.startswith("results/archive/") for n in names)
    assert not any("__pycache__" in n or n.startswith("src/other") for n in names)
    assert WITHHELD not in names
    assert files["data/human.csv"] == HUMAN.encode()
    assert files["environment/pip-freeze.txt"] == LOCK.encode()
    assert yaml.safe_load(files["environment/provenance.yaml"])["git_commit"] == "abc123"
    # inputs inside the run folder: the config as run, unchanged
    assert yaml.safe_load(files["config/config.yaml"]) == CONFIG
    cff = yaml.safe_load(files["CITATION.cff"])
    assert cff["cff-version"] == "1.2.0" and cff["title"].startswith("tiny study")
    assert "themesim verify tiny-study.zip" in files["README.md"].decode()
    # every other entry is listed, with its sha256
    listed = dict(line.split("  ")[::-1] for line in files[SUMS].decode().splitlines())
    assert set(listed) == names - {SUMS}
    assert listed["data/human.csv"] == sha(HUMAN.encode())


def test_a_folder_output_goes_in_file_by_file_without_snakemake_markers(tmp_path):
    run = make_run(tmp_path / "run")
    folder = run / "results/plots/m/heatmaps"
    (folder / "sub").mkdir(parents=True)
    (folder / "a__vs__b_heatmap.png").write_text("png")
    (folder / "sub" / "b__vs__c_heatmap.svg").write_text("svg")
    (folder / ".snakemake_timestamp").write_text("")
    out = tmp_path / "z.zip"
    cwd = os.getcwd()
    os.chdir(run)
    try:
        build_archive(
            out,
            ArchiveSpec(
                config=CONFIG,
                study=CONFIG["study"],
                sets={"human": "data/human.csv", "llm": "data/llm.yaml"},
                transcripts=["data/tr/sam.txt"],
                precomputed={},
                results=["results/plots/m/sweep.png", "results/plots/m/heatmaps"],
                judge_cache=None,
                code=code_files(make_code(tmp_path / "code")),
                code_version="abc123",
                lock=LOCK,
            ),
        )
    finally:
        os.chdir(cwd)
    files = read_zip(out)
    inside = sorted(n for n in files if n.startswith("results/plots/m/heatmaps"))
    assert inside == [
        "results/plots/m/heatmaps/a__vs__b_heatmap.png",
        "results/plots/m/heatmaps/sub/b__vs__c_heatmap.svg",
    ]
    assert files[inside[0]] == b"png"


def test_same_results_give_the_same_archive_bytes(tmp_path):
    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    first, second, changed = (tmp_path / d / "tiny-study.zip" for d in ("1", "2", "3"))
    build(run, code, first)
    build(run, code, second)
    assert first.read_bytes() == second.read_bytes()
    (run / "results" / "plots" / "m" / "sweep.png").write_text("other png")
    build(run, code, changed)
    assert changed.read_bytes() != first.read_bytes()


def test_sha256sum_accepts_the_unpacked_archive(built, tmp_path):
    if shutil.which("sha256sum") is None:
        pytest.skip("coreutils sha256sum not installed")
    folder = tmp_path / "unpacked"
    zipfile.ZipFile(built).extractall(folder)
    proc = subprocess.run(["sha256sum", "--strict", "-c", SUMS], cwd=folder, capture_output=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(b": OK") == len(read_zip(built)) - 1


def test_verify_passes_an_intact_archive_and_its_folder(built, tmp_path, capsys):
    rc, out = run_verify(built, capsys=capsys)
    assert rc == 0
    n = len(read_zip(built)) - 1
    assert f"OK: all {n} files match" in out
    folder = tmp_path / "unpacked"
    zipfile.ZipFile(built).extractall(folder)
    rc, out = run_verify(folder, "--verbose", capsys=capsys)
    assert rc == 0 and "OK        data/human.csv" in out


def test_verify_reports_a_tampered_file(built, tmp_path, capsys):
    bad = tmp_path / "tampered.zip"

    def tamper(files):
        files["results/metrics/m/comparisons.csv"] = b"set_a,set_b\nhuman,llm2\n"

    rewrite(built, bad, tamper)
    rc, out = run_verify(bad, capsys=capsys)
    assert rc == 1
    assert "DIFFERS   results/metrics/m/comparisons.csv" in out
    assert "FAILED: 1 differ" in out
    v = verify(bad)
    assert v.differ == ["results/metrics/m/comparisons.csv"] and not v.missing and not v.unlisted


def test_verify_reports_a_removed_file(built, tmp_path, capsys):
    bad = tmp_path / "removed.zip"
    rewrite(built, bad, lambda files: files.pop("data/llm.yaml"))
    rc, out = run_verify(bad, capsys=capsys)
    assert rc == 1
    assert "MISSING   data/llm.yaml" in out and "1 missing" in out


def test_verify_reports_an_added_file(built, tmp_path, capsys):
    bad = tmp_path / "added.zip"
    rewrite(built, bad, lambda files: files.update({"results/metrics/m/extra.csv": b"x\n"}))
    rc, out = run_verify(bad, capsys=capsys)
    assert rc == 1
    assert "UNLISTED  results/metrics/m/extra.csv" in out and "1 not listed" in out


def test_verify_reports_bytes_changed_inside_the_zip(built, tmp_path, capsys):
    # Flip bytes of a stored entry in place: the zip's own CRC fails too; still one DIFFERS.
    data = bytearray(built.read_bytes())
    with zipfile.ZipFile(built) as zf:
        info = zf.getinfo("results/plots/m/sweep.png")
    start = info.header_offset + 30 + len(info.filename.encode())
    data[start : start + 3] = b"PNG"
    bad = tmp_path / "flipped.zip"
    bad.write_bytes(bytes(data))
    rc, out = run_verify(bad, capsys=capsys)
    assert rc == 1 and "DIFFERS   results/plots/m/sweep.png" in out


def test_verify_refuses_what_is_not_an_archive(tmp_path, capsys):
    (tmp_path / "x.zip").write_text("not a zip")
    assert main(["verify", str(tmp_path / "x.zip")]) == 2
    assert "is not a readable zip archive" in capsys.readouterr().err
    write_zip(tmp_path / "y.zip", {"a.txt": b"a"})
    assert main(["verify", str(tmp_path / "y.zip")]) == 2
    assert "has no SHA256SUMS" in capsys.readouterr().err


def test_confidential_archive_holds_hashes_not_inputs(tmp_path, capsys):
    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    out = tmp_path / "c.zip"
    build(run, code, out, confidential=True)
    files = read_zip(out)
    for name in ("data/human.csv", "data/llm.yaml", "data/tr/sam.txt"):
        assert name not in files
    assert "results/embeddings/m/human.parquet" not in files  # holds the embedded text
    assert "results/metrics/m/comparisons.csv" in files
    withheld = dict(line.split("  ")[::-1] for line in files[WITHHELD].decode().splitlines())
    assert withheld == {
        "data/human.csv": sha(HUMAN.encode()),
        "data/llm.yaml": sha(LLM.encode()),
        "data/tr/sam.txt": sha(TRANSCRIPT.encode()),
        "results/embeddings/m/human.parquet": sha(b"text of the themes"),
    }
    assert not any(HUMAN.splitlines()[1].encode() in data for data in files.values())
    assert "confidential" in files["README.md"].decode()
    assert run_verify(out, capsys=capsys)[0] == 0


PARAPHRASES = (
    "theme_id,text,paraphrase_index,paraphrase\n"
    "H1,Guilt: about respite,0,Remorse over taking a break from caring\n"
)


def test_confidential_archive_withholds_the_paraphrases_and_their_cache(tmp_path):
    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    ceiling = {
        "results/ceiling/paraphrases.csv": PARAPHRASES.encode(),
        "results/ceiling/m.parquet": b"theme ids and similarities",
        "results/cache/paraphrase.sqlite": b"Remorse over taking a break from caring",
    }
    for rel, data in ceiling.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_bytes(data)
    results = ["results/ceiling/paraphrases.csv", "results/ceiling/m.parquet"]
    caches = ["results/cache/paraphrase.sqlite"]
    cwd = os.getcwd()
    os.chdir(run)
    try:
        for confidential, out in ((False, tmp_path / "open.zip"), (True, tmp_path / "c.zip")):
            build_archive(
                out,
                ArchiveSpec(
                    config=CONFIG,
                    study=CONFIG["study"],
                    sets={"human": "data/human.csv"},
                    transcripts=[],
                    precomputed={},
                    results=results,
                    judge_cache=None,
                    caches=caches,
                    code=code_files(code),
                    code_version="abc123",
                    lock=LOCK,
                    confidential=confidential,
                ),
            )
    finally:
        os.chdir(cwd)
    files = read_zip(tmp_path / "open.zip")
    for rel, data in ceiling.items():
        assert files[rel] == data, rel
    files = read_zip(tmp_path / "c.zip")
    assert files["results/ceiling/m.parquet"] == ceiling["results/ceiling/m.parquet"]  # no text
    withheld = dict(line.split("  ")[::-1] for line in files[WITHHELD].decode().splitlines())
    for rel in ("results/ceiling/paraphrases.csv", "results/cache/paraphrase.sqlite"):
        assert rel not in files and withheld[rel] == sha(ceiling[rel]), rel
    assert not any(b"Remorse over taking a break" in data for data in files.values())


def test_inputs_outside_the_run_folder_move_under_inputs(tmp_path):
    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "judge").mkdir(parents=True)
    (elsewhere / "llm.yaml").write_text(LLM)
    (elsewhere / "judge" / "human__vs__llm.csv").write_text(",L\nH,0.5\n")
    (elsewhere / "sam.txt").write_text(TRANSCRIPT)
    config = dict(
        CONFIG,
        theme_sets=["data/human.csv", {"path": str(elsewhere / "llm.yaml")}],
        transcripts=[str(elsewhere / "*.txt")],
        methods={"j": {"kind": "precomputed", "dir": str(elsewhere / "judge")}},
    )
    build(
        run,
        code,
        tmp_path / "x.zip",
        config=config,
        sets={"human": "data/human.csv", "llm": str(elsewhere / "llm.yaml")},
        transcripts=[str(elsewhere / "sam.txt")],
        precomputed={"j": [str(elsewhere / "judge" / "human__vs__llm.csv")]},
    )
    files = read_zip(tmp_path / "x.zip")
    cfg = yaml.safe_load(files["config/config.yaml"])
    moved = cfg["theme_sets"][1]["path"]
    assert moved.startswith("inputs/external/") and moved.endswith("/llm.yaml")  # same set name
    assert files[moved] == LLM.encode()
    assert cfg["theme_sets"][0] == "data/human.csv"
    assert cfg["methods"]["j"]["dir"] == "inputs/precomputed/j"
    assert files["inputs/precomputed/j/human__vs__llm.csv"] == b",L\nH,0.5\n"
    # same folder as the theme file, so the same stable subfolder; listed, not globbed
    assert cfg["transcripts"] == [moved.replace("llm.yaml", "sam.txt")]
    assert files[cfg["transcripts"][0]] == TRANSCRIPT.encode()
    prov = yaml.safe_load(files["environment/provenance.yaml"])
    assert prov["inputs_moved"][str(elsewhere / "llm.yaml")] == moved


CODED = "document,theme,text\nsam,H1,I changed my shifts\n"


def test_coded_segments_are_archived_withheld_and_found_by_the_config(tmp_path):
    """Regression (issue 24.3): a set's `segments:` file was not archived (nor hashed when
    confidential), so an unpacked archive stopped at "theme_sets[0].segments: file not found"."""
    run = make_run(tmp_path / "run")
    (run / "data" / "coded.csv").write_text(CODED)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "llm_coded.csv").write_text(CODED.replace("H1", "L1"))
    code = make_code(tmp_path / "code")
    config = dict(
        CONFIG,
        theme_sets=[
            {"path": "data/human.csv", "segments": "data/coded.csv"},
            {"path": "data/llm.yaml", "segments": str(elsewhere / "llm_coded.csv")},
        ],
    )
    coded = {"human": "data/coded.csv", "llm": str(elsewhere / "llm_coded.csv")}
    build(run, code, tmp_path / "open.zip", config=config, coded=coded)
    files = read_zip(tmp_path / "open.zip")
    cfg = yaml.safe_load(files["config/config.yaml"])
    assert cfg["theme_sets"][0]["segments"] == "data/coded.csv"
    assert files["data/coded.csv"] == CODED.encode()
    moved = cfg["theme_sets"][1]["segments"]
    assert moved.startswith("inputs/external/") and moved.endswith("/llm_coded.csv")
    assert files[moved] == CODED.replace("H1", "L1").encode()
    assert f"{sha(CODED.encode())}  data/coded.csv" in files[SUMS].decode()
    build(run, code, tmp_path / "c.zip", config=config, coded=coded, confidential=True)
    files = read_zip(tmp_path / "c.zip")
    withheld = dict(line.split("  ")[::-1] for line in files[WITHHELD].decode().splitlines())
    assert "data/coded.csv" not in files and withheld["data/coded.csv"] == sha(CODED.encode())
    assert withheld[moved] == sha(CODED.replace("H1", "L1").encode())
    assert not any(b"I changed my shifts" in data for data in files.values())


def test_a_glob_that_would_find_archive_files_becomes_a_list():
    config = {"transcripts": ["*/*.txt"], "methods": {}}
    kept = {"transcripts": ["tr/*.txt"], "methods": {}}
    taken = {"environment/pip-freeze.txt", "README.md"}
    placed = place_inputs(config, sets={}, transcripts=["tr/sam.txt"], precomputed={}, taken=taken)
    assert placed.config["transcripts"] == ["tr/sam.txt"]  # */*.txt would add pip-freeze.txt
    placed = place_inputs(kept, sets={}, transcripts=["tr/sam.txt"], precomputed={}, taken=taken)
    assert placed.config["transcripts"] == ["tr/*.txt"] and placed.files == {
        "tr/sam.txt": "tr/sam.txt"
    }


# -- the real rule, and a rerun from the unpacked archive ----------------------------------------

LLM_SMALL = """themes:
  - id: L1
    name: Employment and caregiving conflict
    description: Balancing a job with caring duties for an older parent
  - id: L2
    name: Financial strain
    description: Paying for care puts pressure on family finances
"""


# A colon inside a sentence once made its first half a "speaker" named in the report.
CONFIDENTIAL = """Interviewer: Who else knows about it?
Ana: Only my family and one friend.
My neighbour is HIV positive: he told me before anyone else.
Interviewer: Did that help you decide?
Ana: Yes, talking to him made the clinic feel less frightening.
"""


def sentences(text: str) -> list[str]:
    """Every sentence or colon-separated clause of four words or more, speaker labels dropped."""
    out = []
    for line in text.splitlines():
        for part in re.split(r"(?<=[.?!:])\s+", line):
            words = part.strip(" .?!:").split()
            if len(words) >= 4:
                out.append(" ".join(words))
    return out


def entry_text(name: str, data: bytes) -> str:
    """An archive entry as searchable text; parquet is compressed, so read its values."""
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(pa_buffer(data))
        meta = str(table.schema.metadata or "")
        return meta + "\n".join(str(v) for col in table.columns for v in col.to_pylist())
    return data.decode("utf-8", "replace")


def pa_buffer(data: bytes):
    import pyarrow as pa

    return pa.BufferReader(data)


def paraphrase_answers(n, body, headers):
    """k paraphrases of the theme in the request, each a sentence found nowhere else."""
    import json

    from helpers import completion

    user = body["messages"][-1]["content"]
    theme = user.split("Theme:\n", 1)[1].split("\n\n", 1)[0]
    k = int(user.split("Write ", 1)[1].split(" ", 1)[0])
    items = [f"Said another way ({i}), {theme}" for i in range(k)]
    return 200, completion(json.dumps({"paraphrases": items})), 0


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    from helpers import FakeLLM

    srv = FakeLLM(paraphrase_answers)
    root = tmp_path_factory.mktemp("archived")
    (root / "data").mkdir()
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM_SMALL)
    (root / "data" / "sam.txt").write_text(TRANSCRIPT)
    (root / "data" / "ana.txt").write_text(CONFIDENTIAL)
    (root / "data" / "coded.csv").write_text(CODED)
    cfg = {
        "study": {"name": "tiny archive", "description": "archive test"},
        "reference": "human",
        "theme_sets": [{"path": "data/human.csv", "segments": "data/coded.csv"}, "data/llm.yaml"],
        "transcripts": ["data/*.txt"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.1},
        "metrics": {"bootstrap": {"n": 10, "seed": 1}, "null_model": {"pool": 10, "seed": 2}},
        "ceiling": {"active": True, "k": 2, "base_url": srv.url, "model": "fake"},
        "methods": {
            "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
        },
    }
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(root, "--cores", "2")
    assert not (root / "results" / "archive").exists()  # not part of `all`
    snakemake(root, "--cores", "2", "archive")
    yield root  # the server stays up: a rerun from the unpacked archive paraphrases again
    srv.close()


def zip_of(root: Path) -> Path:
    return root / "results" / "archive" / "tiny-archive.zip"


def test_rule_archives_the_study(study, capsys):
    files = read_zip(zip_of(study))
    for name in (
        "config/config.yaml",
        "data/human.csv",
        "data/coded.csv",
        "data/sam.txt",
        "results/metrics/minilm/comparisons.csv",
        "results/metrics/tfidf/sweep.csv",
        "results/metrics/minilm/transport/splits_joins.csv",
        "results/similarity/minilm/human__vs__llm.parquet",
        "results/embeddings/minilm/human.parquet",
        "results/plots/minilm/sweep.png",
        "results/report/summary.html",
        "results/ceiling/paraphrases.csv",
        "results/ceiling/minilm.parquet",
        "results/ceiling/tfidf.parquet",
        "results/cache/paraphrase.sqlite",
        "Snakefile",
        "workflow/rules/archive.smk",
        "workflow/schemas/config.schema.yaml",
        "scripts/archive.py",
        "src/themesim/archive/build.py",
        "environment/pip-freeze.txt",
        "CITATION.cff",
        "README.md",
    ):
        assert name in files, name
    for name in files:
        if name.startswith("results/"):
            assert files[name] == (study / name).read_bytes(), name
    # The coded segments are an input of the report too (issue 24.3), with their row count.
    assert f"| data/coded.csv | coded segments of human | 1 | {sha(CODED.encode())}" in (
        files["results/report/summary.md"].decode()
    )
    # The ceiling ran: the report and the paper's headline table show its columns.
    assert "| Normalised alignment |" in files["results/report/summary.md"].decode()
    assert b"normalised_alignment" in files["results/report/headline.csv"]
    cfg = yaml.safe_load(files["config/config.yaml"])
    assert cfg["study"]["name"] == "tiny archive"
    assert cfg["archive"] == {"confidential": False, "authors": []}  # schema defaults filled in
    assert cfg["metrics"]["null_model"] == {"pool": 10, "seed": 2, "alpha": 0.05}
    rc, out = run_verify(zip_of(study), capsys=capsys)
    assert rc == 0, out


def test_rule_archive_is_deterministic_and_tampering_shows(study, tmp_path, capsys):
    first = zip_of(study).read_bytes()
    snakemake(study, "--cores", "1", "archive", "--forcerun", "archive")
    assert zip_of(study).read_bytes() == first
    bad = tmp_path / "bad.zip"

    def tamper(files):
        files["results/metrics/minilm/comparisons.csv"] += b"\n"

    rewrite(zip_of(study), bad, tamper)
    rc, out = run_verify(bad, capsys=capsys)
    assert rc == 1 and "DIFFERS   results/metrics/minilm/comparisons.csv" in out


def test_rerun_from_the_unpacked_archive_gives_identical_metric_tables(study, tmp_path):
    folder = tmp_path / "unpacked"
    zipfile.ZipFile(zip_of(study)).extractall(folder)
    (folder / "results").rename(folder / "results.archived")
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(folder / "src"))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(folder / "Snakefile"), "-d", str(folder)]
    proc = subprocess.run(cmd + ["--cores", "2"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-5000:]
    archived, rerun = folder / "results.archived", folder / "results"
    old = sorted(p.relative_to(archived) for p in archived.glob("metrics/**/*.csv"))
    new = sorted(p.relative_to(rerun) for p in rerun.glob("metrics/**/*.csv"))
    assert old == new and len(old) >= 8
    for rel in old:
        assert (rerun / rel).read_bytes() == (archived / rel).read_bytes(), rel


def test_rule_confidential_archive(study, tmp_path, capsys):
    cfg_path = study / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["archive"] = {"confidential": True, "authors": [{"given-names": "A.", "family-names": "B"}]}
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(study, "--cores", "2", "archive")
    files = read_zip(zip_of(study))
    assert not {"data/human.csv", "data/llm.yaml", "data/sam.txt", "data/coded.csv"} & set(files)
    assert not any(n.startswith(("results/embeddings/", "results/transcripts/")) for n in files)
    assert "results/metrics/minilm/comparisons.csv" in files
    withheld = dict(line.split("  ")[::-1] for line in files[WITHHELD].decode().splitlines())
    assert withheld["data/human.csv"] == sha((study / "data" / "human.csv").read_bytes())
    assert withheld["data/sam.txt"] == sha(TRANSCRIPT.encode())
    assert withheld["data/coded.csv"] == sha(CODED.encode())
    assert "results/embeddings/minilm/human.parquet" in withheld
    # The paraphrases and their cache hold theme text: hashes only; the similarities stay.
    for name in ("results/ceiling/paraphrases.csv", "results/cache/paraphrase.sqlite"):
        assert withheld[name] == sha((study / name).read_bytes()), name
    assert "results/ceiling/minilm.parquet" in files
    assert yaml.safe_load(files["CITATION.cff"])["authors"] == [
        {"given-names": "A.", "family-names": "B"}
    ]
    assert run_verify(zip_of(study), capsys=capsys)[0] == 0
    # Regression (issue 15): no transcript text, not even a speaker name, in any entry.
    said = sentences(TRANSCRIPT) + sentences(CONFIDENTIAL)
    assert "My neighbour is HIV positive" in said and len(said) >= 8
    paraphrases = pd.read_csv(study / "results/ceiling/paraphrases.csv")["paraphrase"]
    said += [" ".join(p.split()) for p in paraphrases]
    assert len(paraphrases) == 8 and said[-1].startswith("Said another way (1), ")
    for name, data in files.items():
        text = " ".join(entry_text(name, data).split())
        leaked = [x for x in said if x in text]
        assert not leaked, (name, leaked)
        if not name.startswith(("src/", "scripts/", "workflow/")):
            assert not re.search(r"\b(Ana|Sam)\b", text), name
            # The config as run (in config.yaml and the report) names the role as a setting.
            setting = re.sub(r"exclude_speakers:\s*(- Interviewer|\[Interviewer\])", "", text)
            assert not re.search(r"\bInterviewer\b", setting), name
    html = files["results/report/summary.html"].decode()
    assert "<td>2 (names withheld: archive.confidential)</td>" in html
    md = files["results/report/summary.md"].decode()
    assert r"| 2 \(names withheld: archive.confidential\) |" in md


def test_verify_refuses_unsafe_entry_names(built, tmp_path, capsys):
    # Regression (issue 15): '../../x' and '/abs/x', listed with their true sums, were OK.
    bad = tmp_path / "unsafe.zip"

    def add(files):
        for name, data in (("../../x", b"escape\n"), ("/abs/x", b"absolute\n")):
            files[name] = data
            files["SHA256SUMS"] += f"{sha(data)}  {name}\n".encode()

    rewrite(built, bad, add)
    assert {"../../x", "/abs/x"} <= {i.filename for i in zipfile.ZipFile(bad).infolist()}
    rc, out = run_verify(bad, "--verbose", capsys=capsys)
    assert rc == 1, out
    assert "UNSAFE    ../../x" in out and "UNSAFE    /abs/x" in out
    assert "OK        ../../x" not in out and "OK        /abs/x" not in out
    assert "2 unsafe names (absolute or '..'" in out
    v = verify(bad)
    assert v.unsafe == ["../../x", "/abs/x"] and not v.ok and "../../x" not in v.matched


def test_verify_refuses_a_huge_checksum_list(built, tmp_path, capsys):
    # Regression (issue 15): SHA256SUMS was read whole (a 1 GiB entry took 2.2 GB of memory).
    files = read_zip(built)
    big = tmp_path / "big.zip"
    files["SHA256SUMS"] += b"#" * ((8 << 20) + 1)
    write_zip(big, files)
    assert main(["verify", str(big)]) == 2
    err = capsys.readouterr().err
    assert "SHA256SUMS" in err and "is larger than 8 MiB" in err
    folder = tmp_path / "unpacked"
    zipfile.ZipFile(big).extractall(folder)
    assert main(["verify", str(folder)]) == 2
    assert "is larger than 8 MiB" in capsys.readouterr().err


def test_an_edited_results_table_is_never_archived(tmp_path):
    """A table with its sha256 recorded (io.files.write_csv) that was edited afterwards stops
    the archive with one line naming it: a paper's archive never carries a number no job
    computed. The untouched table is archived as written, without its hidden sha256 file."""
    from themesim.errors import InputError
    from themesim.io.files import write_csv

    run = make_run(tmp_path / "run")
    code = make_code(tmp_path / "code")
    table = run / "results/metrics/m/comparisons.csv"
    write_csv(pd.DataFrame({"set_a": ["human"], "hungarian_f1": [0.0]}), table)
    out = tmp_path / "tiny-study.zip"
    build(run, code, out)
    files = read_zip(out)
    assert files["results/metrics/m/comparisons.csv"] == table.read_bytes()
    assert not [n for n in files if n.endswith(".sha256")]
    table.write_text(table.read_text().replace("human,0", "human,0.999"))
    with pytest.raises(InputError) as e:
        build(run, code, tmp_path / "again.zip")
    assert str(e.value).startswith(
        "results/metrics/m/comparisons.csv: has changed since its job wrote it"
    )
    assert not (tmp_path / "again.zip").exists()
