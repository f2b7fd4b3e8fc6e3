"""Manifests of per-pair files (themesim.io.manifest) and the similarity reader's check."""

import hashlib

import numpy as np
import pytest

from themesim.errors import InputError
from themesim.io.manifest import listed_files, read_manifest, verify, write_manifest
from themesim.similarity import read_similarity, write_similarity


@pytest.fixture
def folder(tmp_path):
    S = np.array([[0.25, 0.5], [1.0, -0.125]])
    for name in ("a__vs__b", "a__vs__c"):
        write_similarity(tmp_path / f"{name}.parquet", S, ["A1", "A2"], ["B1", "B2"], {})
    paths = [tmp_path / "a__vs__b.parquet", tmp_path / "a__vs__c.parquet"]
    write_manifest(paths, tmp_path / "manifest.csv")
    return tmp_path


def test_manifest_lists_names_and_sha256_in_order(folder):
    lines = (folder / "manifest.csv").read_text().splitlines()
    digest = hashlib.sha256((folder / "a__vs__b.parquet").read_bytes()).hexdigest()
    assert lines[0] == "file,sha256"
    assert lines[1] == f"a__vs__b.parquet,{digest}"
    assert [r.split(",")[0] for r in lines[1:]] == ["a__vs__b.parquet", "a__vs__c.parquet"]
    assert listed_files(folder / "manifest.csv") == [
        folder / "a__vs__b.parquet",
        folder / "a__vs__c.parquet",
    ]


def test_a_file_outside_the_folder_is_refused(folder, tmp_path_factory):
    other = tmp_path_factory.mktemp("other") / "x.parquet"
    other.write_bytes(b"x")
    with pytest.raises(ValueError, match="not in the folder"):
        write_manifest([other], folder / "manifest.csv")


def test_a_missing_file_is_named_with_what_to_do(folder):
    (folder / "a__vs__c.parquet").unlink()
    with pytest.raises(InputError, match=r"a__vs__c.parquet: is missing \(listed in .*manifest"):
        read_similarity(folder / "a__vs__c.parquet", ["A1"], ["B1"])


def test_a_changed_file_fails_and_an_unlisted_one_passes(folder):
    S = read_similarity(folder / "a__vs__b.parquet", ["A2", "A1"], ["B2"])
    assert S.tolist() == [[-0.125], [0.5]]
    write_similarity(folder / "a__vs__b.parquet", np.eye(2), ["A1", "A2"], ["B1", "B2"], {})
    with pytest.raises(InputError, match="has changed since its job wrote it") as e:
        read_similarity(folder / "a__vs__b.parquet", ["A1"], ["B1"])
    assert "Delete " in str(e.value) and "manifest.csv and run snakemake again" in str(e.value)
    write_similarity(folder / "x__vs__y.parquet", np.eye(1), ["A1"], ["B1"], {})
    verify(folder / "x__vs__y.parquet")  # not listed: written outside a job
    assert read_similarity(folder / "x__vs__y.parquet", ["A1"], ["B1"]).tolist() == [[1.0]]


def test_a_manifest_with_another_header_is_refused(tmp_path):
    (tmp_path / "manifest.csv").write_text("path,hash\n")
    with pytest.raises(InputError, match="is not a manifest"):
        read_manifest(tmp_path / "manifest.csv")


# ---------------------------------------------------------------- a results table's own manifest


def test_a_table_records_its_sha256_and_an_edit_is_refused(tmp_path):
    import pandas as pd

    from themesim.io.files import write_csv, write_parquet
    from themesim.io.manifest import checksum_of, verify_inputs

    out = tmp_path / "metrics" / "m" / "comparisons.csv"
    df = pd.DataFrame({"method": ["m"], "hungarian_f1": [0.0]})
    write_csv(df, out)
    side = checksum_of(out)
    assert side == out.with_name(".comparisons.csv.sha256")
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert side.read_text() == f"file,sha256\ncomparisons.csv,{digest}\n"
    verify(out)  # untouched: passes
    verify_inputs([out, tmp_path / "metrics"])
    write_csv(df, out)  # the same table again: the same bytes, still passing
    assert hashlib.sha256(out.read_bytes()).hexdigest() == digest
    verify(out)
    out.write_text(out.read_text().replace("m,0\n", "m,0.999\n"))  # an edit by hand
    for check in (
        lambda: verify(out),
        lambda: verify_inputs([out]),
        lambda: verify_inputs([tmp_path]),
    ):
        with pytest.raises(InputError) as e:
            check()
        msg = str(e.value)
        assert "\n" not in msg
        assert msg.startswith(f"{out}: has changed since its job wrote it")
        assert f"Delete {out} and run snakemake again: the rule that writes it reruns" in msg
    write_csv(df, out)  # its job runs again
    verify(out)
    pq = tmp_path / "t.parquet"
    write_parquet(df, pq)
    verify(pq)
    write_parquet(df, tmp_path / "p.parquet", checksum=False)  # a pair file: the folder manifest
    assert not checksum_of(tmp_path / "p.parquet").exists()


def test_the_runner_checks_a_jobs_input_tables(tmp_path, monkeypatch, caplog):
    import sys
    import types

    import pandas as pd

    from themesim.io.files import write_csv
    from themesim.steps.runner import run

    table = tmp_path / "comparisons.csv"
    write_csv(pd.DataFrame({"x": [1]}), table)
    ran = []
    job = types.SimpleNamespace(input=[str(table)])
    monkeypatch.setattr(sys.modules["__main__"], "snakemake", job, raising=False)
    run(tmp_path / "ok.log", lambda: ran.append(1))
    assert ran == [1]
    table.write_text("x\n2\n")
    with pytest.raises(SystemExit):
        run(tmp_path / "bad.log", lambda: ran.append(2))
    assert ran == [1]  # the step never ran
    assert "comparisons.csv: has changed since its job wrote it" in caplog.text
