"""Manifests of per-pair files (themesim.io.manifest) and the similarity reader's check."""

import hashlib

import numpy as np
import pytest

from themesim.errors import InputError
from themesim.io.manifest import listed_files, missing, read_manifest, verify, write_manifest
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
    assert missing(folder / "manifest.csv") == []
    assert missing(folder / "absent.csv") == []


def test_a_file_outside_the_folder_is_refused(folder, tmp_path_factory):
    other = tmp_path_factory.mktemp("other") / "x.parquet"
    other.write_bytes(b"x")
    with pytest.raises(ValueError, match="not in the folder"):
        write_manifest([other], folder / "manifest.csv")


def test_a_missing_file_is_named_with_what_to_do(folder):
    (folder / "a__vs__c.parquet").unlink()
    assert missing(folder / "manifest.csv") == ["a__vs__c.parquet"]
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
